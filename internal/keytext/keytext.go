// Package keytext reads the gateway's key settings (CURSOR_KEY for the
// cursors' MACs, package graph; LIVE_BATCH_KEY for the live feed's
// messages between replicas, package redisstate): one key text, or several
// separated by commas, the first of which signs.
package keytext

import (
	"fmt"
	"strings"
)

// Split returns the key texts of setting, trimmed, in order; what names a
// key in its errors ("cursor key"). A text shorter than min characters is
// an error, which never quotes the text.
func Split(setting, what string, min int) ([]string, error) {
	texts := strings.Split(setting, ",")
	for i, text := range texts {
		texts[i] = strings.TrimSpace(text)
		if len(texts[i]) < min {
			return nil, fmt.Errorf("%s %d of the list is %d characters long: want at least %d (e.g. openssl rand -hex 32)", what, i+1, len(texts[i]), min)
		}
	}
	return texts, nil
}
