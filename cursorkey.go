package main

import (
	"log/slog"

	"github.com/tradenet/gateway/graph"
)

// signingKeys returns the keys that sign and verify cursors: CURSOR_KEY's
// (parsed by validate), or, unset, a random key of this process's own,
// which the log says (cursors then stop working across replicas and
// restarts). The key is never logged.
func (c *config) signingKeys(logger *slog.Logger) *graph.CursorKeys {
	if c.cursorKeys != nil {
		return c.cursorKeys
	}
	logger.Info("no CURSOR_KEY configured: cursors are signed with a random key, valid only for this process; replicas behind one address need a shared CURSOR_KEY")
	return graph.RandomCursorKeys()
}
