package sampleservice

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// txCursors decodes an explorer page into its transactions' cursors.
func txCursors(t *testing.T, r fetched) []string {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200; body %s", r.status, r.body)
	}
	var page struct {
		Transactions []struct {
			Cursor string `json:"cursor"`
		} `json:"transactions"`
	}
	if err := json.Unmarshal(r.body, &page); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	if page.Transactions == nil {
		t.Fatalf("transactions missing or null: %s", r.body)
	}
	out := []string{}
	for _, tx := range page.Transactions {
		out = append(out, tx.Cursor)
	}
	return out
}

var allTxsNewestFirst = []string{"105.1", "105.0", "104.0", "103.2", "103.1", "103.0", "102.0", "101.2", "101.1", "101.0", "100.1", "100.0"}

func TestExplorerPaging(t *testing.T) {
	srv := startFixture(t, Config{Defects: DefaultDefects()})
	for _, tc := range []struct {
		name, query string
		want        []string
	}{
		{"§5 no parameters: the 50 newest, newest first", "", allTxsNewestFirst},
		{"§5 first=N alone: the N newest", qstr("first", "3"), []string{"105.1", "105.0", "104.0"}},
		{"§5 last=N alone: the N oldest, still newest first", qstr("last", "3"), []string{"101.0", "100.1", "100.0"}},
		{"§5 before=C alone: up to 50 immediately older than C", qstr("before", "103.0"), []string{"102.0", "101.2", "101.1", "101.0", "100.1", "100.0"}},
		{"§5 before=C with last=N: the N immediately older than C", qstr("before", "103.0", "last", "2"), []string{"102.0", "101.2"}},
		{"§5 after=C alone: up to 50 immediately newer than C", qstr("after", "103.2"), []string{"105.1", "105.0", "104.0"}},
		{"§5 after=C with first=N: the N immediately newer than C", qstr("after", "101.0", "first", "2"), []string{"101.2", "101.1"}},
		{"§5 a cursor need not name an existing transaction", qstr("before", "102.7"), []string{"102.0", "101.2", "101.1", "101.0", "100.1", "100.0"}},
		{"§5 no maximum page size", qstr("first", "1000000"), allTxsNewestFirst},
		{"§5 first=0 counts as unset", qstr("first", "0"), allTxsNewestFirst},
		{"§4 an inverted two-cursor window is accepted and empty", qstr("after", "104.0", "before", "101.0"), []string{}},
		{"§5 cmdTypes keeps only those types", qstr("cmdTypes", typeBatch), []string{"105.0", "103.0", "101.2", "100.1"}},
		{"§5 cmdTypes repeats", qstr("cmdTypes", typeBatch, "cmdTypes", typeVote), []string{"105.0", "104.0", "103.0", "101.2", "101.1", "100.1"}},
		{"§1 cmd_types (snake_case) is accepted", qstr("cmd_types", typeVote), []string{"104.0", "101.1"}},
		{"§5 cmdTypes is not split on commas", qstr("cmdTypes", typeBatch+","+typeOrder), []string{}},
		{"§5 an unknown cmdType matches nothing", qstr("cmdTypes", "Nope"), []string{}},
		{"§5 excludeCmdTypes drops those types", qstr("excludeCmdTypes", typeOrder, "excludeCmdTypes", typeBatch), []string{"104.0", "103.1", "101.1", "101.0"}},
		{"§5 parties matches the submitter only, not a receiver", qstr("parties", partyB), []string{"105.0", "103.1", "102.0", "101.1", "100.1"}},
		{"§5 parties repeats (any of them)", qstr("parties", partyA, "parties", partyB), allTxsNewestFirst},
		{"§5 parties with no transactions", qstr("parties", partyC), []string{}},
		{"§5 filters[tx.submitter] matches the sender only", qstr("filters[tx.submitter]", partyB), []string{"105.0", "103.1", "102.0", "101.1", "100.1"}},
		{"§5 filters[tx.submitter] combines with parties (AND)", qstr("filters[tx.submitter]", partyA, "parties", partyB), []string{}},
		{"§5 filters[tx.submitter] and parties of the same key", qstr("filters[tx.submitter]", partyB, "parties", partyB, "parties", partyA), []string{"105.0", "103.1", "102.0", "101.1", "100.1"}},
		{"§5 filters[block.height] combines with filters[tx.submitter] and cmdTypes", qstr("filters[block.height]", "101", "filters[tx.submitter]", partyB, "cmdTypes", typeVote), []string{"101.1"}},
		{"§5 filters[block.height] of a block without transactions", qstr("filters[block.height]", "99"), []string{}},
		{"§5 filters[block.height] with paging", qstr("filters[block.height]", "103", "after", "103.0", "first", "1"), []string{"103.1"}},
		{"§5 filters[cmd.type] keeps one type", qstr("filters[cmd.type]", typeVote), []string{"104.0", "101.1"}},
		{"§5 filters[block.height] keeps one block", qstr("filters[block.height]", "103"), []string{"103.2", "103.1", "103.0"}},
		{"§5 unknown filters keys are ignored", qstr("filters[foo.bar]", "x"), allTxsNewestFirst},
		{"§5 filters combine with paging: cmdTypes, after, first", qstr("cmdTypes", typeOrder, "after", "100.0", "first", "2"), []string{"103.2", "102.0"}},
		{"§5 filters combine with paging: parties and last", qstr("parties", partyB, "last", "2"), []string{"101.1", "100.1"}},
		{"§5 filters combine with paging: excludeCmdTypes and before", qstr("excludeCmdTypes", typeBatch, "before", "103.0", "last", "2"), []string{"102.0", "101.1"}},
		{"§1 unknown explorer parameters are ignored", qstr("limit", "2", "foo", "bar"), allTxsNewestFirst},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/rest/transactions", "/transactions"} {
				got := txCursors(t, fetch(t, srv.URL+path+tc.query))
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("%s: cursors (-want +got):\n%s", path, diff)
				}
			}
		})
	}
}

func TestExplorerErrors(t *testing.T) {
	srv := startFixture(t, Config{Defects: DefaultDefects()})
	bad := func(msg string) errorJSON { return invalidArgument(detail(10000, msg, "")) }
	tx := func(pairs ...string) string { return "/rest/transactions" + qstr(pairs...) }
	runErrorCases(t, srv, []errorCase{
		{name: "§5 first and last together → 400", path: tx("first", "2", "last", "2"),
			status: 400, want: bad("cannot use both limits `first` and `last` within the same query")},
		{name: "§5 first with before → 400", path: tx("first", "2", "before", "103.0"),
			status: 400, want: bad("cannot use cursor `before` when using limit `first`")},
		{name: "§5 last with after → 400", path: tx("last", "2", "after", "103.0"),
			status: 400, want: bad("cannot use cursor `after` when using limit `last`")},
		{name: "§5 a limit with both cursors → 400", path: tx("first", "2", "after", "101.0", "before", "104.0"),
			status: 400, want: bad("cannot use neither limits `first`, nor `last` when both cursors `before` and `after` are set")},
		{name: "§4 a valid two-cursor window → 400", path: tx("after", "101.0", "before", "103.1"),
			status: 400, want: bad("cursors `before` and `after` do not create a valid window")},
		{name: "§5 a malformed cursor → 400 (shape)", path: tx("before", "abc"),
			status: 400, want: bad("invalid cursor string: abc")},
		{name: "§5 a malformed cursor → 400 (block)", path: tx("after", "x.1"),
			status: 400, want: bad(`invalid block number: strconv.ParseUint: parsing "x": invalid syntax`)},
		{name: "§5 a malformed cursor → 400 (index)", path: tx("before", "100.-1"),
			status: 400, want: bad(`invalid transaction index: strconv.ParseUint: parsing "-1": invalid syntax`)},
		{name: "§5 an empty cursor → 400", path: tx("after", ""),
			status: 400, want: bad("invalid cursor string: ")},
		{name: "§5 a non-integer first → 400", path: tx("first", "ten"),
			status: 400, want: errorJSON{Code: 3, Message: `type mismatch, parameter: first, error: strconv.ParseUint: parsing "ten": invalid syntax`, Details: noDetails}},
		{name: "§5 a non-integer last → 400", path: tx("last", "1.5"),
			status: 400, want: errorJSON{Code: 3, Message: `type mismatch, parameter: last, error: strconv.ParseUint: parsing "1.5": invalid syntax`, Details: noDetails}},
	})
}

func TestExplorerWire(t *testing.T) {
	srv := startFixture(t, Config{Defects: DefaultDefects()})
	src := fixtureTxs()
	t.Run("§1 explorer JSON is pretty-printed with a two-space indent", func(t *testing.T) {
		r := fetch(t, srv.URL+"/rest/transactions?first=2")
		compact := []byte(`{"transactions":[`)
		compact = src.AppendJSON(compact, 11)
		compact = append(compact, ',')
		compact = src.AppendJSON(compact, 10)
		compact = append(compact, "]}"...)
		var want bytes.Buffer
		if err := json.Indent(&want, compact, "", "  "); err != nil {
			t.Fatal(err)
		}
		if string(r.body) != want.String() {
			t.Errorf("body =\n%s\nwant\n%s", r.body, want.String())
		}
		if ct := r.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q, want application/json", ct)
		}
	})
	t.Run("§1 an empty explorer page is an empty array", func(t *testing.T) {
		r := fetch(t, srv.URL+"/rest/transactions?parties="+partyC)
		if want := "{\n  \"transactions\": []\n}"; string(r.body) != want {
			t.Errorf("body = %q, want %q", r.body, want)
		}
	})
	t.Run("§2 each transaction's cursor is <block>.<index>", func(t *testing.T) {
		r := fetch(t, srv.URL+"/rest/transactions?first=1")
		var page struct {
			Transactions []struct {
				Block  string `json:"block"`
				Index  int    `json:"index"`
				Cursor string `json:"cursor"`
			} `json:"transactions"`
		}
		if err := json.Unmarshal(r.body, &page); err != nil || len(page.Transactions) != 1 {
			t.Fatalf("decode %s: %v", r.body, err)
		}
		got := page.Transactions[0]
		if got.Block != "105" || got.Index != 1 || got.Cursor != "105.1" {
			t.Errorf("block, index, cursor = %q, %d, %q; want \"105\", 1, \"105.1\"", got.Block, got.Index, got.Cursor)
		}
	})
	t.Run("§5 rows that fail to decode are skipped, so a page can be short", func(t *testing.T) {
		d := fixtureDataset()
		txs := fixtureTxs()
		txs[10].raw = `{"block":"105","index":0, broken`
		d.Transactions = txs
		srv := startFixture(t, Config{Data: d})
		got := txCursors(t, fetch(t, srv.URL+"/rest/transactions?first=3"))
		if diff := cmp.Diff([]string{"105.1", "104.0"}, got); diff != "" {
			t.Errorf("cursors (-want +got):\n%s", diff)
		}
	})
	t.Run("§5 a dataset without transactions serves empty pages", func(t *testing.T) {
		d := fixtureDataset()
		d.Transactions = nil
		srv := startFixture(t, Config{Data: d})
		if got := txCursors(t, fetch(t, srv.URL+"/rest/transactions?before=1.0")); len(got) != 0 {
			t.Errorf("got %v, want none", got)
		}
	})
	t.Run("§5 transactions out of order are refused at start-up", func(t *testing.T) {
		d := fixtureDataset()
		txs := fixtureTxs()
		txs[3], txs[4] = txs[4], txs[3]
		d.Transactions = txs
		if _, err := New(Config{Data: d}); err == nil {
			t.Errorf("New accepted transactions out of (block, index) order")
		}
	})
}
