package sampleservice

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// flags is the pair of page-info booleans a case expects.
type flags struct{ next, prev bool }

// listCase is one data-node paging rule: a request and the rows (one
// field of each node, in order) and page info it must give.
type listCase struct {
	name  string
	path  string
	field string
	want  []string
	flags flags
}

func runListCases(t *testing.T, srv *Server, list string, cases []listCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := fetch(t, srv.URL+tc.path)
			c := decodeConnection(t, r, list)
			got := nodeField(t, c, tc.field)
			if tc.field == "id" {
				got = shortIDs(got)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			if gotFlags := (flags{c.PageInfo.HasNextPage, c.PageInfo.HasPreviousPage}); gotFlags != tc.flags {
				t.Errorf("pageInfo hasNextPage, hasPreviousPage = %v, want %v", gotFlags, tc.flags)
			}
			wantStart, wantEnd := "", ""
			if len(c.Edges) > 0 {
				wantStart, wantEnd = c.Edges[0].Cursor, c.Edges[len(c.Edges)-1].Cursor
			}
			if c.PageInfo.StartCursor != wantStart || c.PageInfo.EndCursor != wantEnd {
				t.Errorf("start/end cursor = %q/%q, want the first and last edge's %q/%q",
					c.PageInfo.StartCursor, c.PageInfo.EndCursor, wantStart, wantEnd)
			}
		})
	}
}

func TestAssetPaging(t *testing.T) {
	srv := startFixture(t, Config{Defects: DefaultDefects()})
	a := func(n int) string { return "ee" + string(rune('0'+n)) }
	deleted := asset2 + "0" // sorts between asset2 and asset3, no such row
	runListCases(t, srv, "assets", []listCase{
		{"§3 assets default to id descending, no size means all (up to 1000)", "/api/v2/assets", "id",
			[]string{a(5), a(4), a(3), a(2), a(1)}, flags{false, false}},
		{"§3 newestFirst=false orders assets by id ascending", "/api/v2/assets" + qstr("pagination.newestFirst", "false"), "id",
			[]string{a(1), a(2), a(3), a(4), a(5)}, flags{false, false}},
		{"§3 snake_case pagination.newest_first is accepted", "/api/v2/assets" + qstr("pagination.newest_first", "false"), "id",
			[]string{a(1), a(2), a(3), a(4), a(5)}, flags{false, false}},
		{"§3 first without cursor: hasNextPage when more rows exist, hasPreviousPage false", "/api/v2/assets" + qstr("pagination.first", "2"), "id",
			[]string{a(5), a(4)}, flags{true, false}},
		{"§3 first=5000 is the largest size allowed", "/api/v2/assets" + qstr("pagination.first", "5000"), "id",
			[]string{a(5), a(4), a(3), a(2), a(1)}, flags{false, false}},
		{"§3 first after a cursor: the rows after it, hasPreviousPage true", "/api/v2/assets" + qstr("pagination.first", "2", "pagination.after", assetCursorFor(asset4)), "id",
			[]string{a(3), a(2)}, flags{true, true}},
		{"§3 first after a cursor reaching the end: hasNextPage false", "/api/v2/assets" + qstr("pagination.first", "2", "pagination.after", assetCursorFor(asset2)), "id",
			[]string{a(1)}, flags{false, true}},
		{"§3 after without a size pages forwards by 1000", "/api/v2/assets" + qstr("pagination.after", assetCursorFor(asset4)), "id",
			[]string{a(3), a(2), a(1)}, flags{false, true}},
		{"§3 after honours newestFirst=false", "/api/v2/assets" + qstr("pagination.after", assetCursorFor(asset2), "pagination.newestFirst", "false"), "id",
			[]string{a(3), a(4), a(5)}, flags{false, true}},
		{"§3 last without cursor: the last rows, in forward order, hasPreviousPage when more before", "/api/v2/assets" + qstr("pagination.last", "2"), "id",
			[]string{a(2), a(1)}, flags{false, true}},
		{"§3 last before a cursor: the rows just before it in forward order, hasNextPage true", "/api/v2/assets" + qstr("pagination.last", "2", "pagination.before", assetCursorFor(asset2)), "id",
			[]string{a(4), a(3)}, flags{true, true}},
		{"§3 last before a cursor reaching the start: hasPreviousPage false", "/api/v2/assets" + qstr("pagination.last", "5", "pagination.before", assetCursorFor(asset3)), "id",
			[]string{a(5), a(4)}, flags{true, false}},
		{"§3 before without a size pages backwards by 1000", "/api/v2/assets" + qstr("pagination.before", assetCursorFor(asset1)), "id",
			[]string{a(5), a(4), a(3), a(2)}, flags{true, false}},
		{"§3 first wins over last and before", "/api/v2/assets" + qstr("pagination.first", "2", "pagination.last", "1", "pagination.before", assetCursorFor(asset1)), "id",
			[]string{a(5), a(4)}, flags{true, false}},
		{"§3 last wins over after", "/api/v2/assets" + qstr("pagination.last", "2", "pagination.after", assetCursorFor(asset5)), "id",
			[]string{a(2), a(1)}, flags{false, true}},
		{"§3 a cursor whose row no longer exists positions by its key", "/api/v2/assets" + qstr("pagination.after", assetCursorFor(deleted)), "id",
			[]string{a(2), a(1)}, flags{false, true}},
		{"§1 an empty page has edges [] and empty cursors", "/api/v2/assets" + qstr("pagination.after", assetCursorFor(asset1)), "id",
			[]string{}, flags{false, false}},
		{"§3 assetId returns one edge and ignores paging", "/api/v2/assets" + qstr("assetId", asset3, "pagination.first", "0", "pagination.after", "!!"), "id",
			[]string{a(3)}, flags{false, false}},
		{"§1 parameters accept snake_case: asset_id", "/api/v2/assets" + qstr("asset_id", asset2), "id",
			[]string{a(2)}, flags{false, false}},
		{"§1 unknown parameters are ignored", "/api/v2/assets" + qstr("foo", "bar", "pagination.size", "x"), "id",
			[]string{a(5), a(4), a(3), a(2), a(1)}, flags{false, false}},
		{"§3 an empty assetId lists all assets", "/api/v2/assets" + qstr("assetId", ""), "id",
			[]string{a(5), a(4), a(3), a(2), a(1)}, flags{false, false}},
	})
}

func TestFundingPaymentPaging(t *testing.T) {
	// Cursors on funding payments need the defect off.
	srv := startFixture(t, Config{})
	list := func(extra ...string) string {
		return "/api/v2/funding-payments" + qstr(append([]string{"partyId", partyA}, extra...)...)
	}
	sec := int64(time.Second)
	runListCases(t, srv, "fundingPayments", []listCase{
		{"§3 funding payments order by time, market, period, party descending", list(), "amount",
			[]string{"15", "-14", "13", "0", "12", "-5", "100"}, flags{false, false}},
		{"§3 funding payments newestFirst=false ascends", list("pagination.newestFirst", "false"), "amount",
			[]string{"100", "-5", "12", "0", "13", "-14", "15"}, flags{false, false}},
		{"§3 funding payments marketId filters by market", list("marketId", market2), "amount",
			[]string{"-14", "0"}, flags{false, false}},
		{"§1 funding payments accept party_id and market_id", "/api/v2/funding-payments" + qstr("party_id", partyB, "market_id", market1), "amount",
			[]string{"-100"}, flags{false, false}},
		{"§3 funding payments first page", list("pagination.first", "3"), "amount",
			[]string{"15", "-14", "13"}, flags{true, false}},
		{"§3 funding payments last page", list("pagination.last", "2"), "amount",
			[]string{"-5", "100"}, flags{false, true}},
		{"§3 funding payments after a cursor (defect off)", list("pagination.first", "2", "pagination.after", fundingCursorFor(t0+3*sec, market2, partyA)), "amount",
			[]string{"12", "-5"}, flags{true, true}},
		{"§3 funding payments before a cursor (defect off)", list("pagination.before", fundingCursorFor(t0+3*sec, market1, partyA)), "amount",
			[]string{"15", "-14", "13", "0"}, flags{true, false}},
		{"§3 funding payments of a party with none: empty page", "/api/v2/funding-payments" + qstr("partyId", partyC), "amount",
			[]string{}, flags{false, false}},
	})
}

func TestDelegationPaging(t *testing.T) {
	srv := startFixture(t, Config{Defects: DefaultDefects()})
	sec := int64(time.Second)
	runListCases(t, srv, "delegations", []listCase{
		{"§3 delegations without epochId return all epochs, by time, party, node, epoch descending", "/api/v2/delegations", "amount",
			[]string{"5000", "4000", "3000", "2000", "1001", "1000"}, flags{false, false}},
		{"§3 delegation epochs sort as numbers (10 after 9)", "/api/v2/delegations" + qstr("pagination.newestFirst", "false", "pagination.first", "2"), "amount",
			[]string{"1000", "1001"}, flags{true, false}},
		{"§3 delegations partyId filter", "/api/v2/delegations" + qstr("partyId", partyA), "amount",
			[]string{"5000", "3000", "1001", "1000"}, flags{false, false}},
		{"§3 delegations nodeId filter", "/api/v2/delegations" + qstr("nodeId", node1), "amount",
			[]string{"5000", "2000", "1001", "1000"}, flags{false, false}},
		{"§3 delegations partyId and nodeId together", "/api/v2/delegations" + qstr("partyId", partyA, "nodeId", node1), "amount",
			[]string{"5000", "1001", "1000"}, flags{false, false}},
		{"§3 delegations epochId filter", "/api/v2/delegations" + qstr("epochId", "10"), "amount",
			[]string{"3000", "2000", "1001"}, flags{false, false}},
		{"§1 delegations accept party_id, node_id, epoch_id", "/api/v2/delegations" + qstr("party_id", partyB, "node_id", node2, "epoch_id", "11"), "amount",
			[]string{"4000"}, flags{false, false}},
		{"§3 delegations of an unknown party: empty page", "/api/v2/delegations" + qstr("partyId", partyC), "amount",
			[]string{}, flags{false, false}},
		{"§3 delegations after a cursor", "/api/v2/delegations" + qstr("pagination.after", delegationCursorFor(t0+1*sec, partyA, node1, 10)), "amount",
			[]string{"1000"}, flags{false, true}},
		{"§3 delegations before a cursor", "/api/v2/delegations" + qstr("pagination.last", "1", "pagination.before", delegationCursorFor(t0+2*sec, partyA, node2, 10)), "amount",
			[]string{"4000"}, flags{true, true}},
		{"§3 delegations first page then hasNextPage", "/api/v2/delegations" + qstr("pagination.first", "4"), "amount",
			[]string{"5000", "4000", "3000", "2000"}, flags{true, false}},
	})
}

// TestWalkAllPages pages every list forwards and backwards through the
// cursors the service hands out and checks the union is the whole list.
func TestWalkAllPages(t *testing.T) {
	srv := startFixture(t, Config{})
	for _, tc := range []struct {
		name, list, base string
		total            int
	}{
		{"§3 walking asset pages forwards and backwards visits every row once", "assets", "/api/v2/assets?", 5},
		{"§3 walking funding payment pages (defect off) visits every row once", "fundingPayments", "/api/v2/funding-payments?partyId=" + partyA + "&", 7},
		{"§3 walking delegation pages visits every row once", "delegations", "/api/v2/delegations?", 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var forward, backward []string
			after := ""
			for range 10 {
				c := decodeConnection(t, fetch(t, srv.URL+tc.base+"pagination.first=2"+after), tc.list)
				for _, e := range c.Edges {
					forward = append(forward, e.Cursor)
				}
				if !c.PageInfo.HasNextPage {
					break
				}
				after = "&pagination.after=" + urlEscape(c.PageInfo.EndCursor)
			}
			before := ""
			for range 10 {
				c := decodeConnection(t, fetch(t, srv.URL+tc.base+"pagination.last=2"+before), tc.list)
				var page []string
				for _, e := range c.Edges {
					page = append(page, e.Cursor)
				}
				backward = append(page, backward...)
				if !c.PageInfo.HasPreviousPage {
					break
				}
				before = "&pagination.before=" + urlEscape(c.PageInfo.StartCursor)
			}
			if len(forward) != tc.total {
				t.Errorf("forward walk saw %d rows, want %d", len(forward), tc.total)
			}
			if diff := cmp.Diff(forward, backward); diff != "" {
				t.Errorf("backward walk differs from forward walk (-forward +backward):\n%s", diff)
			}
		})
	}
}

func TestDataNodeCursors(t *testing.T) {
	srv := startFixture(t, Config{})
	first := func(path, list string) string {
		c := decodeConnection(t, fetch(t, srv.URL+path), list)
		if len(c.Edges) == 0 {
			t.Fatalf("%s: no edges", path)
		}
		return cursorJSON(t, c.Edges[0].Cursor)
	}
	for _, tc := range []struct {
		name, path, list, want string
	}{
		{"§2 asset cursor is base64 of {\"id\":…}", "/api/v2/assets", "assets", `{"id":"` + asset5 + `"}`},
		{"§2 funding cursor is base64 of {vegaTime (RFC 3339 nano, UTC), marketID, partyID}", "/api/v2/funding-payments?partyId=" + partyA, "fundingPayments",
			`{"vegaTime":"2024-03-14T12:00:06.123456789Z","marketID":"` + market1 + `","partyID":"` + partyA + `"}`},
		{"§2 delegation cursor is base64 of {vegaTime, partyId, nodeId, epochId as a number}", "/api/v2/delegations", "delegations",
			`{"vegaTime":"2024-03-14T12:00:04Z","partyId":"` + partyA + `","nodeId":"` + node1 + `","epochId":11}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := first(tc.path, tc.list); got != tc.want {
				t.Errorf("cursor JSON = %s, want %s", got, tc.want)
			}
		})
	}
	t.Run("§2 data-node cursors are standard base64 with padding", func(t *testing.T) {
		c := decodeConnection(t, fetch(t, srv.URL+"/api/v2/assets"), "assets")
		padded := false
		for _, e := range c.Edges {
			cursorJSON(t, e.Cursor) // fails on anything but padded standard base64
			if len(e.Cursor)%4 != 0 {
				t.Errorf("cursor %q is not padded", e.Cursor)
			}
			padded = padded || e.Cursor[len(e.Cursor)-1] == '='
		}
		if !padded {
			t.Errorf("no asset cursor ends in '=': padding not exercised")
		}
	})
}

func TestBlockHeaders(t *testing.T) {
	srv := startFixture(t, Config{Defects: DefaultDefects()})
	for _, tc := range []struct{ name, path string }{
		{"§1 a data-node page carries X-Block-Height and X-Block-Timestamp", "/api/v2/assets"},
		{"§1 a data-node error carries X-Block-Height and X-Block-Timestamp", "/api/v2/funding-payments"},
		{"§1 a data-node 404 carries X-Block-Height and X-Block-Timestamp", "/api/v2/assets" + qstr("assetId", "nope")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fetch(t, srv.URL+tc.path)
			if got := r.header.Get("X-Block-Height"); got != "105" {
				t.Errorf("X-Block-Height = %q, want 105", got)
			}
			if got := r.header.Get("X-Block-Timestamp"); got != "1710417600123456789" {
				t.Errorf("X-Block-Timestamp = %q, want 1710417600123456789", got)
			}
		})
	}
	t.Run("§1 explorer responses carry no block headers", func(t *testing.T) {
		r := fetch(t, srv.URL+"/rest/transactions")
		if r.status != http.StatusOK || r.header.Get("X-Block-Height") != "" {
			t.Errorf("status %d, X-Block-Height %q; want 200 and none", r.status, r.header.Get("X-Block-Height"))
		}
	})
}
