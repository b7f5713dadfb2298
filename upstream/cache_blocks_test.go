package upstream

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// An explorer list until the next block (a party's newest transactions)
// is kept across a block none of whose transactions it lists, when the
// live feed tells the client every transaction of that block
// (ObserveTransactions); one the block's transactions match is dropped
// and fetched again, the unfiltered newest page follows every block, and
// a batch that does not start where the cache's lists are true (a gap)
// keeps nothing.

// feedTransactions does what the live feed does for a new block: read
// the explorer's head (WithoutCache: the head moves), then tell the
// client every transaction after prev, in chain order. It returns the
// new head.
func feedTransactions(t *testing.T, c *Client, prev TxCursor) TxCursor {
	t.Helper()
	poll(t, c)
	page, err := c.ListTransactions(WithoutCache(context.Background()), TransactionsParams{First: 100, After: &prev})
	if err != nil {
		t.Fatal(err)
	}
	rows := slices.Clone(page.Transactions)
	slices.SortFunc(rows, chainOrder)
	if len(rows) == 0 {
		t.Fatalf("nothing after %s", prev)
	}
	c.ObserveTransactions(prev, rows)
	return rows[len(rows)-1].Position()
}

func chainOrder(a, b Transaction) int {
	switch pa, pb := a.Position(), b.Position(); {
	case pa.before(pb):
		return -1
	case pb.before(pa):
		return 1
	}
	return 0
}

func lastPosition(t *testing.T, added []SampleTx) TxCursor {
	t.Helper()
	pos, err := ParseTxCursor(added[len(added)-1].Cursor)
	if err != nil {
		t.Fatal(err)
	}
	return pos
}

func TestAPartysPageIsKeptAcrossABlockWithoutItsTransactions(t *testing.T) {
	srv := startSample(t)
	// Only blocks may drop an answer here, never its age.
	c, _ := cachingClient(t, srv, CacheConfig{HeadTTL: time.Hour})
	ctx, last := recording(context.Background())

	// The feed is at the head: its first batch is the newest transaction.
	newest := poll(t, c)
	slices.SortFunc(newest, chainOrder)
	head := newest[len(newest)-1].Position()
	c.ObserveTransactions(newest[len(newest)-2].Position(), newest[len(newest)-1:])

	// Every party's page (and a few other filters), cached.
	pages := map[string]TransactionsParams{}
	for _, p := range srv.Parties {
		pages["parties="+p] = TransactionsParams{First: 10, Parties: []string{p}}
	}
	party := srv.Parties[0]
	pages["submitter"] = TransactionsParams{First: 10, Submitter: party}
	pages["newest"] = TransactionsParams{First: 10}
	get := func(p TransactionsParams) ([]Transaction, Answer) {
		t.Helper()
		page, err := c.ListTransactions(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return page.Transactions, last()
	}
	for _, p := range pages {
		get(p)
		if _, a := get(p); !a.Cached || a.Kind != CacheUntilNextBlock {
			t.Fatalf("%+v is not cached until the next block: %+v", p, a)
		}
	}

	added, err := srv.AppendBlockOf(6) // some parties' transactions, not all
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]bool{}
	for _, tx := range added {
		in[strings.ToLower(tx.Submitter)] = true
	}

	// The head read alone (no batch yet) vouches for nothing: no list of
	// the old head is served.
	poll(t, c)
	if _, a := get(pages["parties="+srv.Parties[1]]); a.Cached {
		t.Fatalf("a party's page was served after a head read without the block's transactions: %+v", a)
	}
	head = feedTransactions(t, c, head)
	if head != lastPosition(t, added) {
		t.Fatalf("the feed reached %s, want the new block's last transaction %s", head, added[len(added)-1].Cursor)
	}

	kept, refetched := 0, 0
	for name, p := range pages {
		if name == "parties="+srv.Parties[1] {
			continue // asked again above
		}
		before := explorerRequests(srv)
		rows, a := get(p)
		fresh, err := c.ListTransactions(WithoutCache(context.Background()), p)
		if err != nil {
			t.Fatal(err)
		}
		if !sameAnswer(rows, fresh.Transactions) {
			t.Fatalf("%s after the block: %d rows differ from the explorer's answer", name, len(rows))
		}
		matched := name == "newest" || in[strings.ToLower(strings.TrimPrefix(name, "parties="))] ||
			name == "submitter" && in[strings.ToLower(party)]
		switch {
		case matched && a.Cached:
			t.Fatalf("%s, which the block's transactions match, was served from the cache", name)
		case matched:
			if rows[0].Position() != lastPositionOf(t, added, p) {
				t.Fatalf("%s after the block starts at %s, want its new transaction %s", name, rows[0].Position(), lastPositionOf(t, added, p))
			}
			refetched++
		case !a.Cached || explorerRequests(srv) != before+1: // the WithoutCache read only
			t.Fatalf("%s, which no transaction of the block matches, was not served from the cache: %+v, %d requests", name, a, explorerRequests(srv)-before)
		default:
			kept++
		}
	}
	if kept == 0 || refetched < 2 {
		t.Fatalf("%d pages kept, %d fetched again: the test needs both", kept, refetched)
	}

	// A gap: the client hears of a block without the one before it. The
	// lists true at the old head cannot be vouched for: none is served.
	if _, err := srv.AppendBlock(); err != nil {
		t.Fatal(err)
	}
	missed := poll(t, c)
	added, err = srv.AppendBlock()
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(missed, chainOrder)
	gapStart := missed[len(missed)-1].Position()
	feedTransactions(t, c, gapStart)
	for name, p := range pages {
		if _, a := get(p); a.Cached {
			t.Fatalf("%s was served from the cache after a gap in the feed's transactions", name)
		}
	}
}

// lastPositionOf is the position of the newest transaction of added that
// p lists.
func lastPositionOf(t *testing.T, added []SampleTx, p TransactionsParams) TxCursor {
	t.Helper()
	f := NewTxFilter(p)
	for i := len(added) - 1; i >= 0; i-- {
		a := added[i]
		pos := lastPosition(t, added[:i+1])
		if f.Match(&Transaction{Block: Uint64(pos.Block), Index: Int32(pos.Index), Type: a.Type, Submitter: a.Submitter}) {
			return pos
		}
	}
	t.Fatalf("no transaction of the block matches %+v", p)
	return TxCursor{}
}
