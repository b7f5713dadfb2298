package sampleservice

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestNotablesFile: every entry of notables.json says what it shows, and
// every scenario of gen_notable.go is used by some entry (the others'
// bodies are checked by TestNotablePositions, on the dataset).
func TestNotablesFile(t *testing.T) {
	var file map[string]json.RawMessage
	if err := json.Unmarshal(notablesJSON, &file); err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, list := range []string{"spread", "history", "later"} {
		var entries []notableEntry
		if err := json.Unmarshal(file[list], &entries); err != nil {
			t.Fatalf("%s: %v", list, err)
		}
		for _, e := range entries {
			if e.About == "" {
				t.Errorf("%s: entry %v %s says nothing about itself", list, e.Names, e.Each)
			}
			if f := strings.Fields(e.Build); len(f) > 0 {
				used[f[0]] = true
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(scenarios)) {
		if !used[name] {
			t.Errorf("scenario %q is used by no entry of notables.json", name)
		}
	}
}

// TestNotableEdits: a pointer that leads nowhere, or edits an array's
// length, is an error rather than a silent no-op; removing an absent key
// is not.
func TestNotableEdits(t *testing.T) {
	doc := func() any { return map[string]any{"a": []any{map[string]any{"b": "1"}}} }
	for _, c := range []struct {
		p      string
		remove bool
		ok     bool
	}{
		{"/a/0/b", false, true},
		{"/a/0/c", false, true},
		{"/a/0/c", true, true},
		{"/x/0/b", false, false},
		{"/a/1/b", false, false},
		{"/a/0", true, false},
		{"a", false, false},
	} {
		if _, err := editPointer(doc(), c.p, "v", c.remove); (err == nil) != c.ok {
			t.Errorf("edit %s (remove %v): error %v, want ok %v", c.p, c.remove, err, c.ok)
		}
	}
}
