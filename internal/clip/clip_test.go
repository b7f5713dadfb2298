package clip

import "testing"

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"", 0, ""},
		{"é", 1, "…"},     // no whole character fits
		{"aéb", 2, "a…"},  // the cut moves back to the start of é
		{"aéb", 3, "aé…"}, // é ends at 3
		{"日本語", 4, "日…"},  // three-byte characters
	} {
		if got := Cut(tc.s, tc.n); got != tc.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

func TestID(t *testing.T) {
	short := string(make([]byte, IDLength))
	if got := ID(short); got != short {
		t.Errorf("ID of %d bytes cut to %q", IDLength, got)
	}
	if got := ID(short + "x"); got != short+"…" {
		t.Errorf("ID of %d bytes: %q", IDLength+1, got)
	}
}
