package jsonscan

import "testing"

func TestSkipSpace(t *testing.T) {
	for _, tc := range []struct {
		in       string
		from, to int
	}{
		{"", 0, 0},
		{"x", 0, 0},
		{" \t\r\nx", 0, 4},
		{"a  ", 1, 3},
		{"\v x", 0, 0}, // vertical tab is not JSON whitespace
		{"  ", 5, 5},   // past the end stays
	} {
		if got := SkipSpace([]byte(tc.in), tc.from); got != tc.to {
			t.Errorf("SkipSpace(%q, %d) = %d, want %d", tc.in, tc.from, got, tc.to)
		}
	}
}
