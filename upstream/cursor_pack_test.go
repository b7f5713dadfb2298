package upstream

import (
	"encoding/base64"
	"testing"
)

func TestCursorPackRoundTrips(t *testing.T) {
	dn := Cursor(base64.StdEncoding.EncodeToString([]byte(`{"vegaTime":"2024-03-14T12:00:00.123456Z","partyId":"ab","nodeId":"cd","epochId":12}`)))
	for _, c := range []Cursor{dn, "", "34514203.2", "not base64!", "YQ", "YQ==", "a+/=", "\x00\xff"} {
		packed := c.Pack()
		got, err := UnpackCursor(packed)
		if err != nil || got != c {
			t.Errorf("Unpack(Pack(%q)) = %q, %v", c, got, err)
		}
	}
	if n, m := len(dn.Pack()), len(dn); n > m*3/4+2 {
		t.Errorf("a data-node cursor of %d bytes packs into %d", m, n)
	}
	for _, bad := range [][]byte{nil, {}, {'x', 'y'}} {
		if _, err := UnpackCursor(bad); err == nil {
			t.Errorf("UnpackCursor(%q) accepted", bad)
		}
	}
}
