package graph

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tradenet/gateway/upstream"
)

// fuzzTarget is one list's cursor payload type.
type fuzzTarget struct {
	list cursorList
	new  func() any
}

var fuzzTargets = []fuzzTarget{
	{listAssets, func() any { return &dataNodeCursor{} }},
	{listDelegations, func() any { return &dataNodeCursor{} }},
	{listTransactions, func() any { return &txCursor{} }},
	{listFundingPayments, func() any { return &fundingCursor{} }},
}

// otherCursorKeys are a key the fuzzers' gateway does not hold.
var otherCursorKeys = func() *CursorKeys {
	k, err := NewCursorKeys("another-gateway-key-0123456789abcdef")
	if err != nil {
		panic(err)
	}
	return k
}()

// FuzzDecodeCursor feeds arbitrary cursors to every list's decoder: a
// cursor is either refused with a short BAD_USER_INPUT error, or it is
// exactly the cursor the gateway issues for the payload it decodes to:
// no forged cursor decodes, however close to a genuine one.
// The seed corpus (f.Add and testdata/fuzz/FuzzDecodeCursor) runs with go
// test; go test -fuzz=FuzzDecodeCursor ./graph explores further.
func FuzzDecodeCursor(f *testing.F) {
	genuine := []string{
		encodeCursor(testCursorKeys, listTransactions, txCursor{B: 34514203, I: 2}),
		encodeCursor(testCursorKeys, listAssets, dataNodeCursor{C: upstream.Cursor("eyJpZCI6Ij4+Pz8/In0+/w==")}),
		encodeCursor(testCursorKeys, listDelegations, dataNodeCursor{C: "<&>\"\\\u2028"}),
		encodeCursor(testCursorKeys, listFundingPayments, fundingCursor{K: fundingKey{T: 1710417600123456789, M: strings.Repeat("b2", 32), S: 7, P: strings.Repeat("a1", 32)}, H: true, D: 4999}),
	}
	for _, c := range genuine {
		f.Add(c)
		f.Add(c[:len(c)-1])                      // truncated
		f.Add(c[:len(c)-2] + "A" + c[len(c)-1:]) // tampered MAC
		f.Add(c[:10] + "A" + c[11:])             // tampered header
		f.Add(c[:20] + "\n" + c[20:])            // a newline the decoder would skip
	}
	for _, c := range []string{
		"", "x", "====", "not a cursor", "34514203.2",
		// Earlier gateways' unsigned formats, and forgeries in them.
		base64.RawURLEncoding.EncodeToString([]byte("v1:assets:{}")),
		base64.RawURLEncoding.EncodeToString([]byte("v9:assets:{}")),
		base64.RawURLEncoding.EncodeToString([]byte("v1:transactions:{\"b\":-1,\"i\":4294967296}")),
		base64.RawURLEncoding.EncodeToString([]byte("v1:transactions:{\"b\":1e30}")),
		base64.RawURLEncoding.EncodeToString([]byte("v1:" + strings.Repeat("x", 600) + ":{}")),
		base64.RawURLEncoding.EncodeToString([]byte("v1:\xff\xfe:{}")),
		base64.RawURLEncoding.EncodeToString([]byte("v1:funding-payments:{\"k\":{\"m\":\"\\ud800\"}}")),
		base64.StdEncoding.EncodeToString([]byte("v1:assets:{\"c\":\"x\"}")),
		base64.RawURLEncoding.EncodeToString([]byte("v1:assets:{\"c\":\"eyJpZCI6IjEifQ==\"}")),
		base64.RawURLEncoding.EncodeToString([]byte("v2:assets:bxyz")),
		base64.RawURLEncoding.EncodeToString([]byte("v2:funding-payments:\x02s\x01m\x04s\x01p\x01\x06")),
		// The signed format with a made-up MAC, and signed under another key.
		base64.RawURLEncoding.EncodeToString([]byte("v3:assets:bxyz\x00\x01\x02\x03\x04\x05\x06\x07")),
		base64.RawURLEncoding.EncodeToString([]byte("v3:transactions:{\"b\":1,\"i\":2}12345678")),
		encodeCursor(otherCursorKeys, listAssets, dataNodeCursor{C: "eyJpZCI6IjEifQ=="}),
		encodeCursor(otherCursorKeys, listFundingPayments, fundingCursor{K: fundingKey{T: 1, M: "m", S: 2, P: "p"}, D: 3}),
		// Signed, but not what a gateway would issue: refused, not trusted.
		testCursorKeys.sealCursor([]byte("v3:funding-payments:\x02s\x01m\x04s\x01p\x01\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01")),
		testCursorKeys.sealCursor([]byte("v3:transactions:{\"b\":1e30}")),
		testCursorKeys.sealCursor([]byte("v3:assets:")),
	} {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, cursor string) {
		for _, tg := range fuzzTargets {
			p := tg.new()
			err := decodeListCursor(testCursorKeys, cursor, tg.list, p)
			if err != nil {
				var gwErr *Error
				if !errors.As(err, &gwErr) || gwErr.Code != CodeBadUserInput {
					t.Fatalf("%s: error %v, want BAD_USER_INPUT", tg.list, err)
				}
				if len(gwErr.Message) > 400 || !utf8.ValidString(gwErr.Message) {
					t.Fatalf("%s: message of %d bytes (valid UTF-8: %v): %q", tg.list, len(gwErr.Message), utf8.ValidString(gwErr.Message), gwErr.Message)
				}
				continue
			}
			if again := encodeCursor(testCursorKeys, tg.list, payloadOf(p)); again != cursor {
				t.Fatalf("%s: %q decoded to %+v, whose cursor is %q: a cursor the gateway did not issue was accepted", tg.list, cursor, payloadOf(p), again)
			}
			if decodeListCursor(otherCursorKeys, cursor, tg.list, tg.new()) == nil {
				t.Fatalf("%s: %q decoded under another key", tg.list, cursor)
			}
		}
	})
}

// FuzzSignedCursor builds every list's cursor from arbitrary payloads: a
// signed cursor always round-trips; truncated, with any one character
// changed, or read under another key, it never decodes.
func FuzzSignedCursor(f *testing.F) {
	f.Add(uint8(0), "eyJpZCI6IjEifQ==", int64(1710417600123456789), uint64(7), strings.Repeat("a1", 32), true, 4999, uint16(3), uint8('A'))
	f.Add(uint8(1), "<&>\"\\\u2028", int64(-1), uint64(0), "", false, 0, uint16(0), uint8('_'))
	f.Add(uint8(2), "", int64(34514203), uint64(1<<63), "x", false, 2, uint16(200), uint8('-'))
	f.Add(uint8(3), strings.Repeat("b2", 32), int64(0), uint64(12), "\xff", true, 17, uint16(65535), uint8(0))
	f.Fuzz(func(t *testing.T, which uint8, s string, n int64, u uint64, s2 string, h bool, d int, at uint16, with uint8) {
		tg := fuzzTargets[int(which)%len(fuzzTargets)]
		var payload any
		switch tg.list {
		case listAssets, listDelegations:
			if s == "" {
				return // never issued: the data node's cursors are not empty
			}
			payload = dataNodeCursor{C: upstream.Cursor(s)}
		case listTransactions:
			payload = txCursor{B: u, I: uint32(n)}
		case listFundingPayments:
			payload = fundingCursor{K: fundingKey{T: n, M: s, S: u, P: s2}, H: h, D: int(uint(d) % maxFundingWindow)}
		}
		cursor := encodeCursor(testCursorKeys, tg.list, payload)
		p := tg.new()
		if err := decodeListCursor(testCursorKeys, cursor, tg.list, p); err != nil || payloadOf(p) != payload {
			t.Fatalf("%s: %+v encoded to %q, decoded to %+v, %v", tg.list, payload, cursor, payloadOf(p), err)
		}
		if err := decodeListCursor(otherCursorKeys, cursor, tg.list, tg.new()); err == nil {
			t.Fatalf("%s: %q decoded under another key", tg.list, cursor)
		}
		i := int(at) % len(cursor)
		if err := decodeListCursor(testCursorKeys, cursor[:i], tg.list, tg.new()); err == nil {
			t.Fatalf("%s: %q truncated to %d characters decoded", tg.list, cursor, i)
		}
		if c := cursor[i]; c != with {
			tampered := cursor[:i] + string(rune(with)) + cursor[i+1:]
			if err := decodeListCursor(testCursorKeys, tampered, tg.list, tg.new()); err == nil {
				t.Fatalf("%s: %q with character %d changed (%q) decoded", tg.list, cursor, i, tampered)
			}
		}
	})
}

// decodeListCursor decodes with the decoder the list's resolvers use.
func decodeListCursor(keys *CursorKeys, cursor string, list cursorList, p any) error {
	if d, ok := p.(*dataNodeCursor); ok {
		c, err := decodeDataNodeCursor(keys, "after", cursor, list)
		d.C = c
		return err
	}
	if f, ok := p.(*fundingCursor); ok {
		c, err := decodeFundingCursor(keys, "after", cursor)
		*f = c
		return err
	}
	return decodeCursor(keys, "after", cursor, list, p)
}

// payloadOf returns the payload a pointer from the targets points to.
func payloadOf(p any) any {
	switch v := p.(type) {
	case *dataNodeCursor:
		return *v
	case *txCursor:
		return *v
	case *fundingCursor:
		return *v
	}
	return nil
}
