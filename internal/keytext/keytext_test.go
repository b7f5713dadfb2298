package keytext

import (
	"slices"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	a, b := strings.Repeat("a", 32), strings.Repeat("b", 40)
	got, err := Split(" "+a+" ,"+b, "key", 32)
	if err != nil || !slices.Equal(got, []string{a, b}) {
		t.Errorf("Split: %q, %v", got, err)
	}
	for _, setting := range []string{"", a + ",", a + "," + strings.Repeat("s", 31)} {
		_, err := Split(setting, "cursor key", 32)
		if err == nil || !strings.HasPrefix(err.Error(), "cursor key ") || strings.Contains(err.Error(), "sss") {
			t.Errorf("Split(%q): %v, want an error naming the key by its place, not its text", setting, err)
		}
	}
}
