package live

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tradenet/gateway/upstream"
)

// The clients' fair share of the feed. Every explorer request of the feed
// waits on the gateway's shared rate budget (Config.Budget, a FairBudget
// in the gateway, which serves clients in turn by client key):
//
//   - the poller's own requests (head reads, polls, gap fills) are marked
//     upstream.WithPriority (feed.ctxFor): every subscriber waits for the
//     poll, so it goes before any client's waiting turn, at the rate;
//   - a catch-up (a subscription resuming from a cursor) is charged to the
//     subscriber's own client key (upstream.ClientFrom of Subscribe's
//     ctx; without one, a key of the subscription's own), and at most
//     MaxCatchUpsPerClient of one client read the explorer at once: the
//     others wait, in the order they came, for one of them to finish;
//   - the feed remembers the newest transactions it delivered (history,
//     Config.History of them): a resume from a cursor within them is
//     caught up from memory without any request, one that the history
//     proves has more than MaxBacklog matching transactions to replay is
//     refused (*BacklogError) without any request, and a resume older than
//     the history reads only what precedes it from the explorer;
//   - a client holds at most MaxSubscriptionsPerClient subscriptions
//     (*ClientLimitError past it), whose upstream requests for each
//     transaction delivered (SubscribeOptions.Calls) add up to at most
//     MaxCallsPerClient (*ClientCallsError past it): one client's
//     subscriptions cannot make the upstream work per event without
//     bound.

// defaultMaxCatchUpsPerClient is Config.MaxCatchUpsPerClient's default.
const defaultMaxCatchUpsPerClient = 2

// maxSubscriptionsPerClient is Config.MaxSubscriptionsPerClient or its
// default, a tenth of MaxSubscriptions (c has its defaults).
func (c *Config) maxSubscriptionsPerClient() int {
	if c.MaxSubscriptionsPerClient > 0 {
		return c.MaxSubscriptionsPerClient
	}
	return max(c.MaxSubscriptions/10, 1)
}

// defaultMaxCallsPerClient is Config.MaxCallsPerClient's default.
const defaultMaxCallsPerClient = 20

func (c *Config) maxCallsPerClient() int {
	if c.MaxCallsPerClient > 0 {
		return c.MaxCallsPerClient
	}
	return defaultMaxCallsPerClient
}

func (c *Config) maxCatchUpsPerClient() int {
	if c.MaxCatchUpsPerClient > 0 {
		return c.MaxCatchUpsPerClient
	}
	return defaultMaxCatchUpsPerClient
}

// historySize is Config.History or its default, 2×MaxBacklog.
func (c *Config) historySize() int {
	if c.History > 0 {
		return c.History
	}
	return 2 * c.MaxBacklog
}

// ClientLimitError is returned by Subscribe when the client (the
// upstream.ClientFrom key of its ctx) already holds Max subscriptions
// (Config.MaxSubscriptionsPerClient).
type ClientLimitError struct {
	Client string
	Max    int
}

func (e *ClientLimitError) Error() string {
	return fmt.Sprintf("live: client %s holds %d subscriptions, the most one client may", e.Client, e.Max)
}

// ClientCallsError is returned by Subscribe when the client's open
// subscriptions already make Held upstream requests for each transaction
// delivered, and this one's Calls would take them past Max
// (Config.MaxCallsPerClient).
type ClientCallsError struct {
	Client           string
	Held, Calls, Max int
}

func (e *ClientCallsError) Error() string {
	return fmt.Sprintf("live: client %s's subscriptions make %d upstream requests per transaction; %d more would pass its limit of %d", e.Client, e.Held, e.Calls, e.Max)
}

// fairState is the feed's share-keeping, guarded by feed.mu.
type fairState[T any] struct {
	hist history[T]
	// clients are the clients (non-empty keys) with subscriptions.
	clients map[string]*clientShare
	// seq numbers the keys of subscriptions without a client key.
	seq uint64
	// refusedClient counts Subscribe calls refused by
	// MaxSubscriptionsPerClient; fromHistory catch-ups served from memory
	// alone, and historyRefused resumes the history refused.
	refusedClient, fromHistory, historyRefused uint64
	// refusedCalls counts Subscribe calls refused by MaxCallsPerClient.
	refusedCalls uint64
}

// clientShare is one client's subscriptions and catch-ups.
type clientShare struct {
	subs     int // reserved: from Subscribe to the subscription's end
	calls    int // the reserved subscriptions' upstream requests per event
	catchUps int // reading the explorer
	// queue are the catch-ups waiting for a slot, oldest first.
	queue []*catchUpWaiter
}

type catchUpWaiter struct {
	turn  chan struct{} // closed when the slot is handed over
	given bool
}

// admitLocked counts a subscription of client making calls upstream
// requests per event; the error is why it is refused: the client holds
// cfg's most subscriptions, or calls would take its requests per event
// past cfg's most. A subscription without a client key is not counted.
func (s *fairState[T]) admitLocked(client string, calls int, cfg *Config) error {
	if client == "" {
		return nil
	}
	if s.clients == nil {
		s.clients = map[string]*clientShare{}
	}
	c := s.clients[client]
	if c == nil {
		c = &clientShare{}
		s.clients[client] = c
	}
	switch maxCalls := cfg.maxCallsPerClient(); {
	case c.subs >= cfg.maxSubscriptionsPerClient():
		s.refusedClient++
		s.forgetLocked(client, c)
		return &ClientLimitError{Client: client, Max: cfg.maxSubscriptionsPerClient()}
	case calls > 0 && c.calls+calls > maxCalls:
		s.refusedCalls++
		s.forgetLocked(client, c)
		return &ClientCallsError{Client: client, Held: c.calls, Calls: calls, Max: maxCalls}
	}
	c.subs++
	c.calls += max(calls, 0)
	return nil
}

// leaveLocked gives back a subscription admitLocked counted.
func (s *fairState[T]) leaveLocked(client string, calls int) {
	if c := s.clients[client]; c != nil {
		c.subs--
		c.calls -= max(calls, 0)
		s.forgetLocked(client, c)
	}
}

func (s *fairState[T]) forgetLocked(client string, c *clientShare) {
	if c.subs <= 0 && c.catchUps == 0 && len(c.queue) == 0 {
		delete(s.clients, client)
	}
}

// budgetKey is the client key a subscription's catch-up is charged to.
func (s *fairState[T]) budgetKeyLocked(client string) string {
	if client != "" {
		return client
	}
	s.seq++
	return "live-subscription-" + strconv.FormatUint(s.seq, 10)
}

// acquireCatchUp takes one of client's catch-up slots, waiting for one
// while max are taken, until ctx ends or the feed closes. Called without
// f.mu. A subscription without a client key needs no slot.
func (f *feed[T]) acquireCatchUp(ctx context.Context, client string) error {
	if client == "" {
		return nil
	}
	f.mu.Lock()
	c := f.fair.clients[client] // the subscription being made counts: never nil
	if c.catchUps < f.cfg.maxCatchUpsPerClient() {
		c.catchUps++
		f.mu.Unlock()
		return nil
	}
	w := &catchUpWaiter{turn: make(chan struct{})}
	c.queue = append(c.queue, w)
	f.mu.Unlock()
	var err error
	select {
	case <-w.turn:
		return nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-f.closedCh:
		err = ErrClosed
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if w.given {
		f.releaseCatchUpLocked(client) // pass it on unused
		return err
	}
	for i, q := range c.queue {
		if q == w {
			c.queue = append(c.queue[:i], c.queue[i+1:]...)
			break
		}
	}
	return err
}

// releaseCatchUpLocked gives back a catch-up slot of client: to its
// oldest waiting catch-up, if any.
func (f *feed[T]) releaseCatchUpLocked(client string) {
	if client == "" {
		return
	}
	c := f.fair.clients[client]
	if c == nil {
		return
	}
	if len(c.queue) > 0 {
		w := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		w.given = true
		close(w.turn)
		return
	}
	c.catchUps--
	f.fair.forgetLocked(client, c)
}

// listFor waits for the budget as client key, then asks the explorer: a
// catch-up's request, charged to its subscriber.
func (f *feed[T]) listFor(ctx context.Context, key string, p upstream.TransactionsParams) ([]upstream.Transaction, error) {
	ctx = upstream.WithClient(ctx, key)
	if f.cfg.Budget != nil {
		if err := f.cfg.Budget.Wait(ctx); err != nil {
			return nil, err
		}
	}
	page, err := f.cfg.Explorer.ListTransactions(ctx, p)
	if err != nil {
		return nil, err
	}
	rows, err := decodeCommands(page.Transactions)
	if err != nil {
		return nil, fmt.Errorf("list transactions: %w", err)
	}
	return rows, nil
}

// remember records tx, the transaction fanned out after prev, in the
// history. f.mu is held (the fan-out's).
func (f *feed[T]) remember(prev upstream.TxCursor, tx *upstream.Transaction) {
	f.fair.hist.add(f.cfg.historySize(), prev, tx)
}

// history is a ring of the newest transactions the feed delivered, every
// one of the chain in (from, newest]: the feed's polls are unfiltered, so
// the history is the chain itself there, and a subscription's filter
// picks from it what the explorer would answer.
type history[T any] struct {
	ring        []historyEntry[T]
	start, n    int
	from        upstream.TxCursor // the position before the oldest remembered
	newest      upstream.TxCursor
	initialised bool
}

// historyEntry is a remembered transaction, and its prepared form once a
// catch-up has needed it.
type historyEntry[T any] struct {
	tx       upstream.Transaction
	v        T
	prepared bool
}

// add appends tx, which follows prev on the chain. When prev is not the
// newest remembered (the feed jumped over a gap, or restarted at a newer
// head), the history starts again from prev: it never has holes.
func (h *history[T]) add(size int, prev upstream.TxCursor, tx *upstream.Transaction) {
	if size <= 0 {
		return
	}
	if !h.initialised || prev != h.newest {
		clear(h.ring)
		h.start, h.n, h.from, h.initialised = 0, 0, prev, true
	}
	if len(h.ring) != size {
		h.ring = make([]historyEntry[T], size)
		h.start, h.n, h.from = 0, 0, prev
	}
	if h.n == size {
		h.from = h.ring[h.start].tx.Position()
		h.ring[h.start] = historyEntry[T]{}
		h.start = (h.start + 1) % size
		h.n--
	}
	h.ring[(h.start+h.n)%size] = historyEntry[T]{tx: *tx}
	h.n++
	h.newest = tx.Position()
}

// at is the i-th remembered entry, oldest first.
func (h *history[T]) at(i int) *historyEntry[T] { return &h.ring[(h.start+i)%len(h.ring)] }

// count counts the remembered transactions newer than after that fl
// selects, stopping past limit.
func (h *history[T]) count(fl *filter, after upstream.TxCursor, limit int) int {
	n := 0
	for i := 0; i < h.n && n <= limit; i++ {
		e := h.at(i)
		if older(after, e.tx.Position()) && fl.Match(&e.tx) {
			n++
		}
	}
	return n
}

// matching returns the remembered transactions newer than after that fl
// selects, prepared (each once for every catch-up).
func (h *history[T]) matching(fl *filter, after upstream.TxCursor, prepare func(*upstream.Transaction) T) []T {
	var out []T
	for i := range h.n {
		e := h.at(i)
		if !older(after, e.tx.Position()) || !fl.Match(&e.tx) {
			continue
		}
		if !e.prepared {
			e.v, e.prepared = prepare(&e.tx), true
		}
		out = append(out, e.v)
	}
	return out
}

// catchUpPlan is how a resume from a cursor older than the feed's
// position is caught up.
type catchUpPlan[T any] struct {
	kind planKind
	// rows: planMemory, the whole catch-up; planExplorer, the part after
	// to, from the history.
	rows []T
	// planExplorer: the explorer is read after the cursor up to and
	// including to, at most limit matching transactions.
	to    upstream.TxCursor
	limit int
}

type planKind int

const (
	planMemory planKind = iota
	planRefuse
	planExplorer
)

// planLocked decides how a resume after `after` (older than f.last)
// with filter fl is caught up. f.mu is held.
func (f *feed[T]) planLocked(fl *filter, after upstream.TxCursor) catchUpPlan[T] {
	h := &f.fair.hist
	limit := f.cfg.MaxBacklog
	if !h.initialised || h.n == 0 {
		return catchUpPlan[T]{kind: planExplorer, to: f.last, limit: limit}
	}
	// Everything the history holds after the cursor is to be replayed:
	// more than MaxBacklog of it is refusal enough.
	if h.count(fl, after, limit) > limit {
		return catchUpPlan[T]{kind: planRefuse}
	}
	if h.newest != f.last {
		// The history stops short of the feed's position (the feed
		// restarted at a newer head and has not delivered since): the
		// explorer has the rest.
		return catchUpPlan[T]{kind: planExplorer, to: f.last, limit: limit}
	}
	rows := h.matching(fl, after, f.prepare)
	if !older(after, h.from) {
		return catchUpPlan[T]{kind: planMemory, rows: rows}
	}
	return catchUpPlan[T]{kind: planExplorer, rows: rows, to: h.from, limit: limit - len(rows)}
}

// statsLocked adds the share's figures to st.
func (s *fairState[T]) statsLocked(st *Stats) {
	st.RefusedClient = s.refusedClient
	st.RefusedCalls = s.refusedCalls
	st.CaughtUpFromHistory = s.fromHistory
	st.HistoryRefused = s.historyRefused
	st.History = s.hist.n
}
