package upstream

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
)

// ignoreDerived leaves out of a comparison of pages the store of what
// their callers derive from them (Page.Derive): not a part of the answer.
var ignoreDerived = cmp.FilterPath(func(p cmp.Path) bool {
	f, ok := p.Last().(cmp.StructField)
	return ok && f.Name() == "derived"
}, cmp.Ignore())

// TestDerivedOncePerKey: the callers sharing a Derived make each key's
// value once, whoever comes first, and all get that value; another key is
// another value; a nil Derived makes it for each caller.
func TestDerivedOncePerKey(t *testing.T) {
	// Callers at once, whoever comes first (sync.Once's waiters block on
	// a mutex, which a synctest bubble cannot wait for: no bubble here,
	// and no order is assumed).
	d := new(Derived)
	var made [2]atomic.Int32
	start := make(chan struct{})
	var wg sync.WaitGroup
	got := make([]any, 40)
	for i := range got {
		wg.Go(func() {
			<-start
			key := i % 2
			got[i] = d.value(key, func() any {
				made[key].Add(1)
				return []int{key}
			})
		})
	}
	close(start)
	wg.Wait()
	for k := range made {
		if n := made[k].Load(); n != 1 {
			t.Errorf("key %d made %d times by 20 callers", k, n)
		}
	}
	for i, v := range got {
		if s, _ := v.([]int); !slices.Equal(s, []int{i % 2}) {
			t.Errorf("caller %d got %v", i, v)
		}
	}
	if &got[0].([]int)[0] != &got[2].([]int)[0] {
		t.Error("two callers of one key got different values")
	}

	var nilDerived *Derived
	n := 0
	for range 3 {
		nilDerived.value("k", func() any { n++; return n })
	}
	if n != 3 {
		t.Errorf("a nil Derived made the value %d times for 3 callers, want 3", n)
	}
}

// TestDerivedPanicGoesUp: a value whose making panics panics in the
// caller that made it; the others get nil, not a hang.
func TestDerivedPanicGoesUp(t *testing.T) {
	d := new(Derived)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the maker's panic did not go up")
			}
		}()
		d.value("k", func() any { panic("boom") })
	}()
	if v := d.value("k", func() any { return "again" }); v != nil {
		t.Errorf("after a panic: %v, want nil", v)
	}
}

// TestFlightsShareDerived: every caller of one flight gets the same
// Derived; a flight that fails gives none.
func TestFlightsShareDerived(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var f flights
		release := make(chan struct{})
		var wg sync.WaitGroup
		results := make([]flightResult, 10)
		for i := range results {
			wg.Go(func() {
				results[i], _, _ = f.do(context.Background(), "k", func(context.Context) (flightResult, error) {
					<-release
					return flightResult{}, nil
				})
			})
		}
		synctest.Wait()
		close(release)
		wg.Wait()
		for i, r := range results {
			if r.derived == nil || r.derived != results[0].derived {
				t.Fatalf("caller %d: derived %p, the first's %p", i, r.derived, results[0].derived)
			}
		}
		res, err, _ := f.do(context.Background(), "k", func(context.Context) (flightResult, error) {
			return flightResult{}, errors.New("failed")
		})
		if err == nil || res.derived != nil {
			t.Errorf("a failed flight: %v, derived %p", err, res.derived)
		}
	})
}

// TestCoalescedPagesShareDerived: two identical delegation listings in
// flight together, over HTTP, get pages (each its own copy) that derive a
// value once between them; a later listing served by a flight of its own
// makes its own.
func TestCoalescedPagesShareDerived(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case entered <- struct{}{}:
			<-release
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"delegations":{"edges":[{"node":{"party":"p","nodeId":"n","epochSeq":"1","amount":"5"},"cursor":"c1"}],"pageInfo":{}}}`))
	}))
	defer srv.Close()
	c, err := New(Config{DataNodeURL: srv.URL, ExplorerURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	pages := make([]*DelegationPage, 2)
	list := func(i int) {
		var err error
		if pages[i], err = c.ListDelegations(context.Background(), DelegationsParams{PartyID: "p"}); err != nil {
			t.Error(err)
		}
	}
	wg.Go(func() { list(0) })
	<-entered // the first caller's request is at the server
	wg.Go(func() { list(1) })
	for c.flightWaiters() < 2 { // the second caller joined the flight
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	if t.Failed() {
		return
	}
	if pages[0] == pages[1] {
		t.Fatal("the two callers got the same page object, not copies")
	}
	made := 0
	derive := func(p *DelegationPage) any {
		return p.Derive("cursors", func() any { made++; return p.Edges[0].Cursor })
	}
	if a, b := derive(pages[0]), derive(pages[1]); made != 1 || a != b {
		t.Errorf("two pages of one flight: made %d times, values %v and %v", made, a, b)
	}
	later, err := c.ListDelegations(context.Background(), DelegationsParams{PartyID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if derive(later); made != 2 {
		t.Errorf("a page of a later flight: made %d times in all, want 2", made)
	}
}

// flightWaiters is how many callers wait on the client's flights.
func (c *Client) flightWaiters() int {
	c.flights.mu.Lock()
	defer c.flights.mu.Unlock()
	n := 0
	for _, f := range c.flights.calls {
		n += f.waiters
	}
	return n
}
