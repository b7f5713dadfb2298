package graph

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tradenet/gateway/upstream"
)

// referenceCursor is a signed cursor as encoding/json writes its payload:
// what the transaction list's own encoder must reproduce byte for byte.
func referenceCursor(t *testing.T, list cursorList, payload any) string {
	t.Helper()
	body, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return testCursorKeys.sealCursor([]byte(signedCursorVersion + ":" + string(list) + ":" + string(body)))
}

// unsignedCursor is a cursor in the unsigned format of earlier gateways
// (version 1, JSON), which is refused.
func unsignedCursor(t *testing.T, list cursorList, payload any) string {
	t.Helper()
	body, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString([]byte("v1:" + string(list) + ":" + string(body)))
}

// wantUnsignedRefused fails the test unless err refuses an unsigned cursor.
func wantUnsignedRefused(t *testing.T, err error) {
	t.Helper()
	var gwErr *Error
	if !errors.As(err, &gwErr) || gwErr.Code != CodeBadUserInput || !strings.Contains(gwErr.Message, "unsigned format of earlier gateway versions") {
		t.Fatalf("unsigned cursor: %v, want BAD_USER_INPUT naming the old format", err)
	}
}

func TestCursorEncodersMatchEncodingJSON(t *testing.T) {
	strs := []string{
		"", "e63a4d13", "eyJpZCI6IjAwMDEifQ==", "a+b/c=", `quote"back\slash`, "<html>&amp;",
		"tab\there", "\x00\x1f\x7f", "ünïcödé", "\u2028\u2029", "invalid \xff utf-8",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		b := make([]byte, rng.IntN(300))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		strs = append(strs, string(b))
	}
	lists := []cursorList{listAssets, listDelegations, listFundingPayments, listTransactions}
	for i, s := range strs {
		c := dataNodeCursor{C: upstream.Cursor(s)}
		for _, list := range lists {
			// The packed, signed cursor round-trips; the unsigned JSON
			// of earlier gateways is refused.
			got, err := decodeDataNodeCursor(testCursorKeys, "after", c.encode(testCursorKeys, list), list)
			if s == "" {
				if err == nil {
					t.Fatalf("an empty data-node cursor decoded")
				}
			} else if err != nil || got != c.C {
				t.Fatalf("dataNodeCursor %q for %s: decoded %q, %v", s, list, got, err)
			}
			if utf8.ValidString(s) { // JSON cannot carry invalid UTF-8
				_, err := decodeDataNodeCursor(testCursorKeys, "after", unsignedCursor(t, list, c), list)
				wantUnsignedRefused(t, err)
			}
		}
		f := fundingCursor{K: fundingKey{T: rng.Int64() - math.MaxInt64/2, M: s, S: rng.Uint64(), P: strs[(i+1)%len(strs)]}, H: i%2 == 0, D: rng.IntN(maxFundingWindow)}
		if got, want := encodeCursor(testCursorKeys, listFundingPayments, f), f.encode(testCursorKeys); got != want {
			t.Fatalf("encodeCursor(fundingCursor) differs from its encode")
		}
		back, err := decodeFundingCursor(testCursorKeys, "after", f.encode(testCursorKeys))
		if err != nil || back != f {
			t.Fatalf("fundingCursor %+v: %+v, %v", f, back, err)
		}
		_, err = decodeFundingCursor(testCursorKeys, "after", unsignedCursor(t, listFundingPayments, f))
		wantUnsignedRefused(t, err)
	}
	for _, c := range []txCursor{{}, {B: 34514203, I: 2}, {B: math.MaxUint64, I: math.MaxUint32}, {B: rng.Uint64(), I: rng.Uint32()}} {
		if got, want := c.encode(testCursorKeys), referenceCursor(t, listTransactions, c); got != want {
			t.Fatalf("txCursor %+v:\n got %s\nwant %s", c, got, want)
		}
		var back txCursor
		if err := decodeCursor(testCursorKeys, "after", c.encode(testCursorKeys), listTransactions, &back); err != nil || back != c {
			t.Fatalf("txCursor %+v round trip: %+v, %v", c, back, err)
		}
	}
}

// TestCursorEncodingAllocations: a cursor costs one allocation, its
// string (a page of 1000 rows builds 1000 of them).
func TestCursorEncodingAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts of the pooled cursor MACs are not meaningful under the race detector")
	}
	long := upstream.Cursor(base64.StdEncoding.EncodeToString(make([]byte, 200)))
	for name, fn := range map[string]func(){
		"transactions": func() { _ = txCursor{B: 34514203, I: 2}.encode(testCursorKeys) },
		"data node":    func() { _ = dataNodeCursor{C: long}.encode(testCursorKeys, listDelegations) },
		"funding": func() {
			_ = fundingCursor{K: fundingKey{T: 1710446400123456000, M: "e63a4d13e63a4d13e63a4d13e63a4d13e63a4d13e63a4d13e63a4d13e63a4d13", S: 12, P: "3b6c"}, H: true, D: 7}.encode(testCursorKeys)
		},
	} {
		if n := testing.AllocsPerRun(100, fn); n > 1 {
			t.Errorf("%s cursor: %.0f allocations, want 1", name, n)
		}
	}
}

func TestPackedDataNodeCursorsAreShorter(t *testing.T) {
	up := upstream.Cursor(base64.StdEncoding.EncodeToString([]byte(`{"vegaTime":"2024-03-14T12:00:00.123456Z","partyId":"` +
		"a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1" + `","nodeId":"` +
		"b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2" + `","epochId":12}`)))
	c := dataNodeCursor{C: up}
	v2, v1 := c.encode(testCursorKeys, listDelegations), unsignedCursor(t, listDelegations, c)
	if len(v2)*4 > len(v1)*3 {
		t.Fatalf("packed cursor %d bytes, JSON-wrapped %d: want at least a quarter shorter", len(v2), len(v1))
	}
}
