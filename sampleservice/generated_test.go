package sampleservice

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGeneratedDataset serves the default generated dataset end to end.
func TestGeneratedDataset(t *testing.T) {
	gen, err := Start(Config{Defects: DefaultDefects()}, "")
	if err != nil {
		t.Fatalf("start with the generated dataset: %v", err)
	}
	t.Cleanup(func() { gen.Close() })
	d := gen.Service.Dataset()
	if len(d.Delegations) == 0 || len(d.Assets) == 0 || len(d.FundingPayments) == 0 || d.Transactions == nil || d.Transactions.Len() == 0 {
		t.Fatalf("generated dataset is missing a list: %d assets, %d funding payments, %d delegations",
			len(d.Assets), len(d.FundingPayments), len(d.Delegations))
	}

	t.Run("§3 walking all delegation pages forwards gives the dataset in descending order", func(t *testing.T) {
		want := slices.Clone(d.Delegations)
		slices.SortStableFunc(want, func(a, b Delegation) int { return compareDelegation(b, a) })
		var got []Delegation
		after := ""
		pages := 0
		for {
			c := decodeConnection(t, fetch(t, gen.URL+"/api/v2/delegations?pagination.first=1000"+after), "delegations")
			pages++
			if len(c.Edges) > 0 && c.PageInfo.HasPreviousPage != (after != "") {
				t.Errorf("page %d: hasPreviousPage = %v", pages, c.PageInfo.HasPreviousPage)
			}
			for _, e := range c.Edges {
				var dl Delegation
				if err := json.Unmarshal(e.Node, &dl); err != nil {
					t.Fatalf("node %s: %v", e.Node, err)
				}
				got = append(got, dl)
			}
			if !c.PageInfo.HasNextPage || pages > 100 {
				break
			}
			after = "&pagination.after=" + urlEscape(c.PageInfo.EndCursor)
		}
		for i := range want {
			want[i].VegaTime = 0 // not on the wire
		}
		if pages < 2 {
			t.Errorf("only %d page(s): paging not exercised", pages)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("delegations (-want +got):\n%s", diff)
		}
	})

	t.Run("§3 assets come sorted by id descending", func(t *testing.T) {
		c := decodeConnection(t, fetch(t, gen.URL+"/api/v2/assets"), "assets")
		ids := nodeField(t, c, "id")
		if len(ids) != len(d.Assets) || !slices.IsSortedFunc(ids, func(a, b string) int { return strings.Compare(b, a) }) {
			t.Errorf("%d ids, sorted descending %v; want all %d", len(ids), slices.IsSortedFunc(ids, func(a, b string) int { return strings.Compare(b, a) }), len(d.Assets))
		}
	})

	t.Run("§3 a party's funding payments, first page", func(t *testing.T) {
		party := d.FundingPayments[0].PartyID
		var want []string
		for _, f := range d.FundingPayments {
			if f.PartyID == party {
				want = append(want, f.MarketID+"/"+fmt.Sprint(f.FundingPeriodSeq))
			}
		}
		c := decodeConnection(t, fetch(t, gen.URL+"/api/v2/funding-payments?pagination.first=5000&partyId="+party), "fundingPayments")
		if len(c.Edges) != len(want) {
			t.Errorf("%d edges, want %d", len(c.Edges), len(want))
		}
		var prev FundingPayment
		for i, e := range c.Edges {
			var f FundingPayment
			if err := json.Unmarshal(e.Node, &f); err != nil {
				t.Fatal(err)
			}
			if i > 0 && compareFunding(prev, f) <= 0 {
				t.Fatalf("edge %d out of order", i)
			}
			prev = f
		}
	})

	t.Run("§5 walking the explorer backwards visits every transaction once, newest first", func(t *testing.T) {
		src := d.Transactions
		n := src.Len()
		seen := 0
		// first alone gives the newest; then last and before go back.
		next := "/rest/transactions?first=1000"
		for page := 0; page < 1000; page++ {
			got := txCursors(t, fetch(t, gen.URL+next))
			for _, c := range got {
				m := src.Meta(n - 1 - seen)
				if want := fmt.Sprintf("%d.%d", m.Block, m.Index); c != want {
					t.Fatalf("transaction %d: cursor %s, want %s", seen, c, want)
				}
				seen++
			}
			if len(got) < 1000 {
				break
			}
			next = "/rest/transactions?last=1000&before=" + got[len(got)-1]
		}
		if seen != n {
			t.Errorf("saw %d transactions, want %d", seen, n)
		}
	})

	t.Run("§5 the submitter is the first of TxMeta.Parties (the tx.submitter filter relies on it)", func(t *testing.T) {
		src := d.Transactions
		for i := 0; i < src.Len(); i += max(1, src.Len()/500) {
			var tx struct {
				Submitter string `json:"submitter"`
				Type      string `json:"type"`
				Cursor    string `json:"cursor"`
			}
			raw := src.AppendJSON(nil, i)
			if err := json.Unmarshal(raw, &tx); err != nil {
				t.Fatalf("transaction %d: %v", i, err)
			}
			m := src.Meta(i)
			if len(m.Parties) == 0 || m.Parties[0] != tx.Submitter || m.Type != tx.Type || tx.Cursor != fmt.Sprintf("%d.%d", m.Block, m.Index) {
				t.Fatalf("transaction %d: Meta %+v disagrees with JSON submitter %s, type %s, cursor %s", i, m, tx.Submitter, tx.Type, tx.Cursor)
			}
		}
	})

	t.Run("§1 generated transactions: 64-bit ints strings, 32-bit numbers, error only when code != 0", func(t *testing.T) {
		r := fetch(t, gen.URL+"/rest/transactions?first=3000")
		var page struct {
			Transactions []map[string]json.RawMessage `json:"transactions"`
		}
		if err := json.Unmarshal(r.body, &page); err != nil {
			t.Fatal(err)
		}
		failed := 0
		for _, tx := range page.Transactions {
			if !bytes.HasPrefix(tx["block"], []byte(`"`)) || bytes.HasPrefix(tx["index"], []byte(`"`)) || bytes.HasPrefix(tx["code"], []byte(`"`)) {
				t.Fatalf("block %s, index %s, code %s: want a string, a number, a number", tx["block"], tx["index"], tx["code"])
			}
			_, hasError := tx["error"]
			if hasError != (string(tx["code"]) != "0") {
				t.Fatalf("code %s with error present = %v", tx["code"], hasError)
			}
			if hasError {
				failed++
			}
		}
		if failed == 0 {
			t.Errorf("no failed transaction among %d: the error rule was not exercised", len(page.Transactions))
		}
	})

	t.Run("§1 generated transactions: one command member, unset nested objects null, unset optional scalars omitted", func(t *testing.T) {
		r := fetch(t, gen.URL+"/rest/transactions?first=3000")
		var page struct {
			Transactions []struct {
				Type    string         `json:"type"`
				Command map[string]any `json:"command"`
			} `json:"transactions"`
		}
		if err := json.Unmarshal(r.body, &page); err != nil {
			t.Fatal(err)
		}
		nullPegged, amendmentsWithoutSize := 0, 0
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				if p, ok := v["peggedOrder"]; ok && p == nil {
					nullPegged++
				}
				if _, isAmendment := v["sizeDelta"]; isAmendment {
					if _, hasSize := v["size"]; !hasSize {
						amendmentsWithoutSize++
					}
				}
				for _, c := range v {
					walk(c)
				}
			case []any:
				for _, c := range v {
					walk(c)
				}
			}
		}
		for i, tx := range page.Transactions {
			members := 0
			for k := range tx.Command {
				if k != "nonce" && k != "blockHeight" {
					members++
				}
			}
			// A kind newer than the explorer has no member (docs/wire.md, Newer and older networks).
			want := 1
			if tx.Type == "Submit AMM" {
				want = 0
			}
			if members != want {
				t.Fatalf("transaction %d (%s): command has %d members besides nonce and blockHeight", i, tx.Type, members)
			}
			walk(tx.Command)
		}
		if nullPegged == 0 || amendmentsWithoutSize == 0 {
			t.Errorf("%d null peggedOrder, %d amendments without size: rules not exercised", nullPegged, amendmentsWithoutSize)
		}
	})

	t.Run("§5 cmdTypes and parties filter the generated transactions", func(t *testing.T) {
		party := d.Parties[0]
		r := fetch(t, gen.URL+"/rest/transactions?first=200&cmdTypes=Batch+Market+Instructions&parties="+party)
		var page struct {
			Transactions []struct {
				Type      string `json:"type"`
				Submitter string `json:"submitter"`
			} `json:"transactions"`
		}
		if err := json.Unmarshal(r.body, &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Transactions) == 0 {
			t.Fatalf("no Batch Market Instructions by %s", party)
		}
		for _, tx := range page.Transactions {
			if tx.Type != "Batch Market Instructions" || tx.Submitter != party {
				t.Fatalf("got a %q by %s", tx.Type, tx.Submitter)
			}
		}
	})
}

// TestMainCommand runs the standalone command until its context ends.
func TestMainCommand(t *testing.T) {
	t.Run("-help prints the flags and exits cleanly", func(t *testing.T) {
		var out bytes.Buffer
		if err := run(context.Background(), []string{"-help"}, &out); err != nil {
			t.Fatalf("run -help: %v", err)
		}
		for _, flag := range []string{"-listen", "-seed", "-scale", "-rate-limit", "-rate", "-burst", "-ban", "-defects"} {
			if !strings.Contains(out.String(), flag) {
				t.Errorf("help does not mention %s", flag)
			}
		}
	})
	t.Run("bad flags are an error", func(t *testing.T) {
		for _, args := range [][]string{{"-defects", "nope"}, {"-scale", "x"}, {"extra"}} {
			if err := run(context.Background(), args, io.Discard); err == nil {
				t.Errorf("run %v: no error", args)
			}
		}
	})
	t.Run("serves until stopped", func(t *testing.T) {
		printed, stop := startMain(t, "data node: ", "-listen", "127.0.0.1:0", "-defects", "off", "-rate-limit")
		defer stop()
		rest, _ := strings.CutPrefix(printed[len(printed)-1], "data node: ")
		base, _, _ := strings.Cut(rest, "/api/v2/assets")
		r := fetch(t, base+"/api/v2/assets?pagination.first=1")
		if r.status != http.StatusOK || r.header.Get("Ratelimit-Limit") != "20" {
			t.Errorf("status %d, Ratelimit-Limit %q; want 200 and 20", r.status, r.header.Get("Ratelimit-Limit"))
		}
	})
}
