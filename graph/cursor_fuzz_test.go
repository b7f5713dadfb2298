package graph

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tradenet/gateway/upstream"
)

// FuzzDecodeCursor feeds arbitrary cursors to every list's decoder: a
// cursor is either refused with a short BAD_USER_INPUT error, or decodes
// to a payload that encodes to a cursor decoding to the same payload.
// The seed corpus (f.Add and testdata/fuzz/FuzzDecodeCursor) runs with go
// test; go test -fuzz=FuzzDecodeCursor ./graph explores further.
func FuzzDecodeCursor(f *testing.F) {
	for _, c := range []string{
		encodeCursor(listTransactions, txCursor{B: 34514203, I: 2}),
		encodeCursor(listAssets, dataNodeCursor{C: upstream.Cursor("eyJpZCI6Ij4+Pz8/In0+/w==")}),
		encodeCursor(listDelegations, dataNodeCursor{C: "<&>\"\\\u2028"}),
		encodeCursor(listFundingPayments, fundingCursor{K: fundingKey{T: 1710417600123456789, M: strings.Repeat("b2", 32), S: 7, P: strings.Repeat("a1", 32)}, H: true, D: 4999}),
		"", "x", "====", "not a cursor", "34514203.2",
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
		base64.RawURLEncoding.EncodeToString([]byte("v2:assets:")),
		base64.RawURLEncoding.EncodeToString([]byte("v2:transactions:{}")),
		base64.RawURLEncoding.EncodeToString([]byte("v1:funding-payments:{\"k\":{\"t\":1,\"m\":\"m\",\"s\":2,\"p\":\"p\"},\"h\":true,\"d\":3}")),
		base64.RawURLEncoding.EncodeToString([]byte("v2:funding-payments:\x02s\x01m\x04s\x01p\x01\x06")),
		base64.RawURLEncoding.EncodeToString([]byte("v2:funding-payments:\x02x\x01")),
		base64.RawURLEncoding.EncodeToString([]byte("v2:funding-payments:\x02s\xff\xff\xff\xff\x0f")),
	} {
		f.Add(c)
	}
	type target struct {
		list cursorList
		new  func() any
	}
	targets := []target{
		{listAssets, func() any { return &dataNodeCursor{} }},
		{listDelegations, func() any { return &dataNodeCursor{} }},
		{listTransactions, func() any { return &txCursor{} }},
		{listFundingPayments, func() any { return &fundingCursor{} }},
	}
	f.Fuzz(func(t *testing.T, cursor string) {
		for _, tg := range targets {
			p := tg.new()
			err := decodeListCursor(cursor, tg.list, p)
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
			again := encodeCursor(tg.list, payloadOf(p))
			q := tg.new()
			if err := decodeListCursor(again, tg.list, q); err != nil {
				t.Fatalf("%s: %q decoded to %+v, which encodes to %q, which does not decode: %v", tg.list, cursor, p, again, err)
			}
			if payloadOf(p) != payloadOf(q) {
				t.Fatalf("%s: %q decoded to %+v, re-encoded and decoded to %+v", tg.list, cursor, payloadOf(p), payloadOf(q))
			}
		}
	})
}

// decodeListCursor decodes with the decoder the list's resolvers use.
func decodeListCursor(cursor string, list cursorList, p any) error {
	if d, ok := p.(*dataNodeCursor); ok {
		c, err := decodeDataNodeCursor("after", cursor, list)
		d.C = c
		return err
	}
	if f, ok := p.(*fundingCursor); ok {
		c, err := decodeFundingCursor("after", cursor)
		*f = c
		return err
	}
	return decodeCursor("after", cursor, list, p)
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
