package sampleservice

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDefects(t *testing.T) {
	sec := int64(time.Second)
	fundingAfter := "/api/v2/funding-payments" + qstr("partyId", partyA, "pagination.first", "2",
		"pagination.after", fundingCursorFor(t0+3*sec, market2, partyA))
	fundingBefore := "/api/v2/funding-payments" + qstr("partyId", partyA,
		"pagination.before", fundingCursorFor(t0+3*sec, market2, partyA))
	fundingErr := errorJSON{Code: 13, Message: "Internal error",
		Details: detail(10000, "building cursor predicate: no field matching column name funding_period_seq", "")}
	assetsErr := errorJSON{Code: 13, Message: "Internal error",
		Details: detail(200001, "failed to get assets", "rpc error: code = InvalidArgument desc = InvalidArgument error")}

	on := startFixture(t, Config{Defects: DefaultDefects()})
	off := startFixture(t, Config{Defects: Defects{}})

	t.Run("on", func(t *testing.T) {
		runErrorCases(t, on, []errorCase{
			{name: "§4.1 funding payments with an after cursor → 500", path: fundingAfter, status: 500, want: fundingErr},
			{name: "§4.1 funding payments with a before cursor → 500", path: fundingBefore, status: 500, want: fundingErr},
			{name: "§4.1 funding payments with last and a before cursor → 500",
				path:   "/api/v2/funding-payments" + qstr("partyId", partyA, "pagination.last", "1", "pagination.before", fundingCursorFor(t0, market1, partyA)),
				status: 500, want: fundingErr},
			{name: "§4.3 assets with size 0 → 500 200001", path: "/api/v2/assets" + qstr("pagination.first", "0"), status: 500, want: assetsErr},
			{name: "§4.3 assets with size above 5000 → 500 200001", path: "/api/v2/assets" + qstr("pagination.last", "5001"), status: 500, want: assetsErr},
			{name: "§4.3 assets with before and after → 500 200001", path: "/api/v2/assets" + qstr("pagination.before", "a", "pagination.after", "b"), status: 500, want: assetsErr},
			{name: "§4.3 assets with a bad cursor → 500 200001", path: "/api/v2/assets" + qstr("pagination.after", "%%%"), status: 500, want: assetsErr},
			{name: "§4.2 explorer valid two-cursor window → 400", path: "/rest/transactions" + qstr("after", "100.1", "before", "104.0"),
				status: 400, want: invalidArgument(detail(10000, "cursors `before` and `after` do not create a valid window", ""))},
		})
		t.Run("§4.1 funding payments first page without a cursor still works, up to 5000", func(t *testing.T) {
			c := decodeConnection(t, fetch(t, on.URL+"/api/v2/funding-payments"+qstr("partyId", partyA, "pagination.first", "5000")), "fundingPayments")
			if len(c.Edges) != 7 {
				t.Errorf("got %d edges, want 7", len(c.Edges))
			}
		})
		t.Run("§4.1 funding payments with first ignore a before cursor (no cursor, no 500)", func(t *testing.T) {
			c := decodeConnection(t, fetch(t, on.URL+"/api/v2/funding-payments"+qstr("partyId", partyA, "pagination.first", "1",
				"pagination.before", fundingCursorFor(t0, market1, partyA))), "fundingPayments")
			if got := nodeField(t, c, "amount"); !cmp.Equal(got, []string{"15"}) {
				t.Errorf("amounts = %v, want [15]", got)
			}
		})
		t.Run("§4.2 explorer inverted two-cursor window → 200 and empty", func(t *testing.T) {
			if got := txCursors(t, fetch(t, on.URL+"/rest/transactions"+qstr("after", "104.0", "before", "100.1"))); len(got) != 0 {
				t.Errorf("got %v, want none", got)
			}
		})
	})

	t.Run("off", func(t *testing.T) {
		t.Run("§4.1 off: funding payments after a cursor → 200, the next rows", func(t *testing.T) {
			c := decodeConnection(t, fetch(t, off.URL+fundingAfter), "fundingPayments")
			if got := nodeField(t, c, "amount"); !cmp.Equal(got, []string{"12", "-5"}) {
				t.Errorf("amounts = %v, want [12 -5]", got)
			}
		})
		t.Run("§4.1 off: funding payments before a cursor → 200, the previous rows", func(t *testing.T) {
			c := decodeConnection(t, fetch(t, off.URL+fundingBefore), "fundingPayments")
			if got := nodeField(t, c, "amount"); !cmp.Equal(got, []string{"15", "-14", "13"}) {
				t.Errorf("amounts = %v, want [15 -14 13]", got)
			}
		})
		runErrorCases(t, off, []errorCase{
			{name: "§4.3 off: assets with size 0 → 400 10028", path: "/api/v2/assets" + qstr("pagination.first", "0"),
				status: 400, want: invalidArgument(detail(10028, "invalid pagination", "pagination limit must be in range 0-5000"))},
			{name: "§4.3 off: assets with before and after → 400 10028", path: "/api/v2/assets" + qstr("pagination.before", "a", "pagination.after", "b"),
				status: 400, want: invalidArgument(detail(10028, "invalid pagination", "cannot set both a before and after cursor"))},
			{name: "§4.3 off: assets with a bad cursor → 400 10028", path: "/api/v2/assets" + qstr("pagination.before", "@"),
				status: 400, want: invalidArgument(detail(10028, "invalid pagination", "failed to decode before cursor: failed to decode cursor: illegal base64 data at input byte 0"))},
		})
		t.Run("§4.2 off: explorer valid two-cursor window → the transactions inside it", func(t *testing.T) {
			got := txCursors(t, fetch(t, off.URL+"/rest/transactions"+qstr("after", "101.0", "before", "103.1")))
			if diff := cmp.Diff([]string{"103.0", "102.0", "101.2", "101.1"}, got); diff != "" {
				t.Errorf("cursors (-want +got):\n%s", diff)
			}
		})
		t.Run("§4.2 off: explorer inverted window is still empty", func(t *testing.T) {
			if got := txCursors(t, fetch(t, off.URL+"/rest/transactions"+qstr("after", "104.0", "before", "100.1"))); len(got) != 0 {
				t.Errorf("got %v, want none", got)
			}
		})
	})

	t.Run("§4 SetDefects switches defects at run time, cached answers included", func(t *testing.T) {
		srv := startFixture(t, Config{})
		window := srv.URL + "/rest/transactions" + qstr("after", "101.0", "before", "103.1")
		if r := fetch(t, window); r.status != http.StatusOK {
			t.Fatalf("defect off: status %d, want 200", r.status)
		}
		srv.Service.SetDefects(DefaultDefects())
		if r := fetch(t, window); r.status != http.StatusBadRequest {
			t.Errorf("defect on: status %d, want 400", r.status)
		}
		if r := fetch(t, srv.URL+fundingAfter); r.status != http.StatusInternalServerError {
			t.Errorf("defect on: funding cursor status %d, want 500", r.status)
		}
		srv.Service.SetDefects(Defects{})
		if r := fetch(t, window); r.status != http.StatusOK {
			t.Errorf("defect off again: status %d, want 200", r.status)
		}
	})
}

func TestDefectFlags(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Defects
	}{
		{"-defects on is every defect", "on", DefaultDefects()},
		{"-defects off is none", "off", Defects{}},
		{"-defects takes a list", "funding-cursors, asset-paging-500", Defects{FundingCursors: true, AssetPagingErrors500: true}},
		{"-defects takes one name", "explorer-windows", Defects{ExplorerTwoCursorWindows: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseDefects(tc.in)
			if err != nil || got != tc.want {
				t.Fatalf("ParseDefects(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
			back, err := ParseDefects(FormatDefects(got))
			if err != nil || back != got {
				t.Errorf("FormatDefects does not round-trip: %q gives %+v, %v", FormatDefects(got), back, err)
			}
		})
	}
	t.Run("-defects refuses an unknown name", func(t *testing.T) {
		if _, err := ParseDefects("funding-cursors,nope"); err == nil {
			t.Error("ParseDefects accepted an unknown defect")
		}
	})
}
