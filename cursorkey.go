package main

import (
	"fmt"
	"log/slog"

	"github.com/tradenet/gateway/graph"
)

// cursorKeys returns the keys that sign and verify cursors: CURSOR_KEY's,
// or, unset, a random key of this process's own, which the log says
// (cursors then stop working across replicas and restarts). The key is
// never logged.
func (c *config) cursorKeys(logger *slog.Logger) (*graph.CursorKeys, error) {
	if c.CursorKey == "" {
		logger.Info("no CURSOR_KEY configured: cursors are signed with a random key, valid only for this process; replicas behind one address need a shared CURSOR_KEY")
		return graph.RandomCursorKeys(), nil
	}
	keys, err := graph.NewCursorKeys(c.CursorKey)
	if err != nil {
		return nil, fmt.Errorf("CURSOR_KEY: %w", err)
	}
	return keys, nil
}
