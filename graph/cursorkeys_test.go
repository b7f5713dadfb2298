package graph

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
)

const (
	oldKey = "old-cursor-key-0123456789abcdef0123456789"
	newKey = "new-cursor-key-0123456789abcdef0123456789"
)

func mustKeys(t *testing.T, setting string) *CursorKeys {
	t.Helper()
	k, err := NewCursorKeys(setting)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestCursorKeyRotation: a cursor signed under the old key is accepted
// while that key is still in the list (second), and refused, with a
// message that says why, once it is removed; the first key signs.
func TestCursorKeyRotation(t *testing.T) {
	c := txCursor{B: 34514203, I: 2}.encode(mustKeys(t, oldKey))
	rotating := mustKeys(t, newKey+", "+oldKey)
	var got txCursor
	if err := decodeCursor(rotating, "after", c, listTransactions, &got); err != nil || got != (txCursor{B: 34514203, I: 2}) {
		t.Fatalf("old cursor during the rotation: %+v, %v", got, err)
	}
	if again := got.encode(rotating); again != got.encode(mustKeys(t, newKey)) || again == c {
		t.Fatalf("during the rotation, cursors are not signed with the new (first) key")
	}
	err := decodeCursor(mustKeys(t, newKey), "after", c, listTransactions, &got)
	var gwErr *Error
	if !errors.As(err, &gwErr) || gwErr.Code != CodeBadUserInput ||
		gwErr.Message != "after: this cursor was not issued by this gateway, or was issued under another cursor key (cursors from before a key change are refused); start again from the first page" {
		t.Fatalf("old cursor after the rotation: %v", err)
	}
}

func TestNewCursorKeysRefusesShortKeys(t *testing.T) {
	long := strings.Repeat("k", MinCursorKeyLength)
	for _, bad := range []string{"", "short", long + ",short", long + ",", strings.Repeat("k", MinCursorKeyLength-1)} {
		_, err := NewCursorKeys(bad)
		if err == nil {
			t.Errorf("%q accepted", bad)
			continue
		}
		if strings.Contains(err.Error(), "short") || strings.Contains(err.Error(), "kkkk") {
			t.Errorf("%q: the error quotes the key: %v", bad, err)
		}
	}
	if _, err := NewCursorKeys(long + " , " + strings.Repeat("j", 64)); err != nil {
		t.Errorf("two keys: %v", err)
	}
	// Keys are derived from the text, not used raw: two settings with the
	// same first key sign alike.
	if mustKeys(t, long).sealCursor([]byte("v3:assets:x")) != mustKeys(t, long+","+newKey).sealCursor([]byte("v3:assets:x")) {
		t.Error("the first key of a list does not sign as it does alone")
	}
	if RandomCursorKeys().sealCursor([]byte("v3:assets:x")) == RandomCursorKeys().sealCursor([]byte("v3:assets:x")) {
		t.Error("two random keys sign alike")
	}
}

// TestCursorMACConcurrent signs and verifies from many goroutines at once
// (the pooled HMAC states must not be shared; run with -race).
func TestCursorMACConcurrent(t *testing.T) {
	keys := mustKeys(t, newKey+","+oldKey)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				want := txCursor{B: uint64(g), I: uint32(i)}
				var got txCursor
				if err := decodeCursor(keys, "after", want.encode(keys), listTransactions, &got); err != nil || got != want {
					t.Errorf("%+v: %+v, %v", want, got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestFundingCursorPositionIsBounded: a funding cursor's position hint
// sizes the next upstream window. Only what the gateway issues (0 <= D <
// maxFundingWindow) decodes, even when signed; and the window size
// computed from any hint and page size stays within the largest window
// without overflowing.
func TestFundingCursorPositionIsBounded(t *testing.T) {
	key := fundingKey{T: 1, M: "m", S: 2, P: "p"}
	for _, d := range []int{0, 1, maxFundingWindow - 1} {
		c := fundingCursor{K: key, H: true, D: d}
		got, err := decodeFundingCursor(testCursorKeys, "after", c.encode(testCursorKeys))
		if err != nil || got != c {
			t.Errorf("D=%d: %+v, %v", d, got, err)
		}
	}
	for _, d := range []int{-1, maxFundingWindow, maxFundingWindow + 1, math.MaxInt32, math.MaxInt, math.MinInt} {
		c := fundingCursor{K: key, H: false, D: d}
		_, err := decodeFundingCursor(testCursorKeys, "after", c.encode(testCursorKeys))
		var gwErr *Error
		if !errors.As(err, &gwErr) || gwErr.Code != CodeBadUserInput {
			t.Errorf("signed D=%d: %v, want BAD_USER_INPUT", d, err)
		}
	}
	for _, tc := range []struct{ dist, size, want int }{
		{0, 0, 2},
		{10, 50, 62},
		{maxFundingWindow - 3, 1, maxFundingWindow},
		{maxFundingWindow - 3, 0, maxFundingWindow - 1},
		{maxFundingWindow, 1, maxFundingWindow},
		{math.MaxInt, 1000, maxFundingWindow},
		{math.MaxInt - 1, math.MaxInt, maxFundingWindow},
		{1, math.MaxInt, maxFundingWindow},
		{-1, 10, maxFundingWindow},
		{math.MinInt, 10, maxFundingWindow},
	} {
		if got := nearWindow(tc.dist, tc.size, maxFundingWindow); got != tc.want {
			t.Errorf("nearWindow(%d, %d) = %d, want %d", tc.dist, tc.size, got, tc.want)
		}
	}
}
