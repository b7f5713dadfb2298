// Package live turns the block explorer's transaction list into a push
// feed: one poller reads the explorer's newest transactions and fans them
// out to every subscription of the process, each filtered in the process
// (docs/architecture.md, The live feed). With a Coordinator (Redis), one
// process of a fleet polls at a time and the others receive what it finds.
//
// This file is the package's contract: the types and functions the graph
// layer (the GraphQL subscription), redisstate (the Redis coordinator) and
// the root package (configuration, metrics, shutdown) build against.
package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/tradenet/gateway/upstream"
)

// Explorer is the part of the upstream client the feed reads
// (*upstream.Client satisfies it). The explorer's `after=C, first=N`
// answers the N transactions immediately newer than C, newest first;
// `first=N` alone the N newest (docs/explorer.md).
type Explorer interface {
	ListTransactions(ctx context.Context, p upstream.TransactionsParams) (*upstream.TransactionPage, error)
}

// Coordinator decides which process of a fleet polls, and carries what it
// finds to every process (redisstate's LiveCoordinator). A Feed without
// one polls for itself.
//
// A Feed calls Run while it has subscribers (from New to Close with
// Config.AlwaysPoll) and ends Run's context when it has had none for
// Config.Linger; only processes with subscribers (or AlwaysPoll) contend
// for the lease.
type Coordinator interface {
	// Run takes part in the fleet until ctx ends. It calls deliver with
	// every message any process publishes (this one's included), one at a
	// time, in the order published. While this process holds the polling
	// lease it runs lead with a context that ends when the lease is lost
	// (or ctx ends); lead returns soon after. A lease whose holder died is
	// taken over within a few seconds. While the shared store is
	// unreachable, Run runs lead itself (each process then polls for
	// itself) and goes back to the lease when the store returns. Run
	// returns after ctx ends, once lead has returned and the lease is
	// released; its error is only for a coordinator that could not start.
	Run(ctx context.Context, lead func(ctx context.Context), deliver func(msg []byte)) error
	// Publish sends msg to every process's Run (the lease holder's lead
	// calls it). An error means the message may not reach the fleet; the
	// Feed then delivers the batch to its own subscriptions itself.
	Publish(ctx context.Context, msg []byte) error
}

// A Feed does not take a coordinator's messages on trust: besides
// decoding them (DecodeBatch), it refuses a batch of more transactions
// than a poll can find (max(PageSize, MaxBacklog)), and one reaching more
// than a few blocks past the newest position this process has read from
// the explorer itself, unless the explorer's head (read then, one
// request) reaches it too; a batch whose gap fill finds the explorer's
// head before the batch's start is refused too, rather than ending the
// subscriptions. Refused messages are counted (Stats.BadMessages) and
// logged at most once a minute. Authenticating the messages is the
// coordinator's work (redisstate signs them).

// MaxBatchBytes bounds the wire form of a Batch: EncodeBatch refuses to
// make a larger one and DecodeBatch to read one, before parsing it (a
// real batch is one explorer page, at most PageSize transactions, far
// below it).
const MaxBatchBytes = 4 << 20

// Config configures a Feed. Zero fields take the defaults below.
type Config struct {
	// Explorer is read by the poller and by catch-up from a cursor.
	Explorer Explorer
	// Budget, if not nil, is waited on before every explorer request the
	// feed makes (polls, head reads, catch-up and gap fills), so polling
	// stays inside the gateway's shared rate budget.
	Budget upstream.Budget
	// ClientKey keys the poller's requests (polls, head reads, gap fills)
	// for the fair budget (upstream.WithClient), which also marks them
	// upstream.WithPriority: they go before every client's, and
	// upstream.WithoutCache: they always ask the explorer, since they are
	// how the feed sees new blocks. A catch-up is charged to its
	// subscriber's own client key (fair.go) and may be answered from the
	// cache. Default "live-feed".
	ClientKey string
	// Interval is the time between polls of the explorer's newest page;
	// default 500ms (p50 delivery latency under a second).
	Interval time.Duration
	// PageSize is the number of transactions a poll or catch-up request
	// asks for; default 100. A poll reads the explorer's newest page (its
	// head); when that page does not reach back to the feed's position,
	// it reads the pages after that position up to the head at once, at
	// most MaxBacklog transactions a tick.
	PageSize int
	// MaxBacklog is the most transactions a subscription resuming from a
	// cursor may replay before going live (and the most a gap fill
	// fetches); past it Subscribe fails with *BacklogError. Default 1000.
	MaxBacklog int
	// Buffer is how many transactions may wait undelivered in one
	// subscription's channel. What a poll brings beyond it (a block larger
	// than Buffer) waits behind the channel and moves in as the reader
	// takes; a subscription whose reader leaves anything waiting there for
	// a poll interval (at least a second), or more than two polls' worth,
	// is dropped (ErrTooSlow). A reader that keeps up with the
	// chain is never dropped because one block is large. Default 256.
	Buffer int
	// MaxSubscriptions bounds the subscriptions of the process; past it
	// Subscribe fails with ErrTooManySubscriptions. Default 10,000.
	MaxSubscriptions int
	// MaxSubscriptionsPerClient bounds the subscriptions of one client
	// (the upstream.ClientFrom key of Subscribe's ctx; a subscription
	// without one is not counted); past it Subscribe fails with
	// *ClientLimitError. Default MaxSubscriptions/10 (at least 1).
	MaxSubscriptionsPerClient int
	// MaxCallsPerClient bounds the upstream requests one client's
	// subscriptions may make for each transaction delivered: the sum of
	// their SubscribeOptions.Calls (what each selects beyond the
	// transaction: a submitter's own transactions, delegations, …). Past
	// it Subscribe fails with *ClientCallsError. Default 20.
	MaxCallsPerClient int
	// MaxCatchUpsPerClient bounds the catch-ups of one client (resumes
	// from a cursor the history cannot serve) reading the explorer at
	// once; the others wait, in turn, for one to finish (or for their
	// ctx to end). Default 2.
	MaxCatchUpsPerClient int
	// History is how many of the newest transactions delivered the feed
	// remembers, to catch up resumes from memory and to refuse those it
	// proves too old without an explorer request. Default 2×MaxBacklog.
	History int
	// Linger is how long polling (or the coordinator) keeps running after
	// the last subscription ends; default 2×Interval.
	Linger time.Duration
	// HeadTimeout bounds how long Subscribe waits for the chain head;
	// default HeadTimeout, which the gateway's error message names (tests
	// shorten it).
	HeadTimeout time.Duration
	// Coordinator, if not nil, shares one poller among processes.
	Coordinator Coordinator
	// Logger receives poll failures and lease changes; default
	// slog.Default().
	Logger *slog.Logger
	// OnHead, if set, is told where the explorer's head is whenever the
	// feed learns it: exact when head is the explorer's newest transaction
	// just read (a poll of its newest page, the polling process's
	// heartbeat), else a position known to be on the chain (a batch of
	// the fleet). The gateway gives it to the upstream client
	// (upstream.Client.ObserveHead), whose cache drops the answers that
	// reached an older head. It must be fast and safe for concurrent use.
	OnHead func(head upstream.TxCursor, exact bool)
	// OnTransactions, if set, is told every run of the chain's
	// transactions the feed delivers, before its subscriptions receive
	// them: txs are every transaction after prev up to the last of them,
	// in chain order, none missing (a poll's batch, the fleet's, with
	// what the feed read to fill a gap before it). The gateway gives it
	// to the upstream client (upstream.Client.ObserveTransactions), whose
	// cache keeps the explorer lists none of them matches. It must be
	// fast, safe for concurrent use, and must not modify txs.
	OnTransactions func(prev upstream.TxCursor, txs []upstream.Transaction)
	// AlwaysPoll keeps the feed polling (or taking part in the fleet)
	// from New to Close, with or without subscribers, so that OnHead and
	// OnTransactions learn of every block as it comes (the gateway sets
	// it while the upstream cache is on). Without it the feed polls only
	// while it has subscribers, and for Linger after.
	AlwaysPoll bool
}

// SubscribeOptions says what a subscription receives.
type SubscribeOptions struct {
	// Filter selects transactions the way the explorer does
	// (docs/explorer.md): CmdTypes (any of, exact strings),
	// ExcludeCmdTypes (none of), Parties (the submitter is one of them),
	// Submitter and BlockHeight (equal). Paging fields are ignored. The
	// same filter is sent to the explorer when catching up.
	Filter upstream.TransactionsParams
	// After, if set, resumes: every matching transaction newer than After
	// is delivered first (at most MaxBacklog of them), then the live feed,
	// with no gap and no duplicate. Unset, the subscription starts at the
	// chain head: it receives the transactions newer than the newest one
	// when it subscribed.
	After *upstream.TxCursor
	// Calls is how many upstream requests the subscriber makes for each
	// transaction it receives, at most (its selection's figure, counted
	// before it runs); it counts against Config.MaxCallsPerClient while
	// the subscription is open.
	Calls int
}

// Errors a subscription can end with (Subscription.Err) or Subscribe can
// return.
var (
	// ErrTooSlow ends a subscription whose consumer let transactions wait
	// undelivered beyond its Buffer for longer than it takes to read them
	// (Config.Buffer).
	ErrTooSlow = errors.New("live: subscriber too slow")
	// ErrGap ends the subscriptions of a process that missed transactions
	// it could not fetch again (more than MaxBacklog behind the fleet's
	// poller); clients resubscribe from their last cursor.
	ErrGap = errors.New("live: feed lost transactions")
	// ErrTooManySubscriptions is returned by Subscribe at
	// MaxSubscriptions.
	ErrTooManySubscriptions = errors.New("live: too many subscriptions")
	// ErrClosed is returned by Subscribe after Close.
	ErrClosed = errors.New("live: feed closed")
)

// BacklogError is returned by Subscribe when more than Max matching
// transactions are newer than the cursor resumed from.
type BacklogError struct {
	After upstream.TxCursor
	Max   int
}

func (e *BacklogError) Error() string {
	return fmt.Sprintf("live: more than %d transactions are newer than %s", e.Max, e.After)
}

// Stats are a Feed's figures, read for metrics at each scrape.
type Stats struct {
	// Subscriptions is the number of open subscriptions.
	Subscriptions int
	// Delivered counts transactions handed to subscriptions (one per
	// subscription per transaction, catch-up included).
	Delivered uint64
	// DroppedSlow and DroppedGap count subscriptions ended by ErrTooSlow
	// and ErrGap; Refused counts Subscribe calls refused by
	// MaxSubscriptions, BacklogRefused those refused by MaxBacklog.
	DroppedSlow, DroppedGap, Refused, BacklogRefused uint64
	// RefusedClient counts Subscribe calls refused by
	// MaxSubscriptionsPerClient; CaughtUpFromHistory resumes caught up
	// from the history alone, and HistoryRefused resumes the history
	// refused (both without an explorer request; HistoryRefused is also
	// counted in BacklogRefused). History is the number of transactions
	// remembered.
	RefusedClient, CaughtUpFromHistory, HistoryRefused uint64
	// RefusedCalls counts Subscribe calls refused by MaxCallsPerClient.
	RefusedCalls uint64
	History      int
	// Polls and PollErrors count this process's explorer polls.
	Polls, PollErrors uint64
	// BadMessages counts the coordinator's messages the feed refused:
	// undecodable, more transactions than a poll finds, or reaching past
	// the chain head the explorer shows (see Coordinator).
	BadMessages uint64
	// State is the poller's state: "idle" (no subscriptions), "starting"
	// (reading the chain head), "polling" (this process polls), "following"
	// (another process holds the lease), "backoff" (polls failing),
	// "stalled" (polling or following, but Lag has reached StallAfter:
	// the explorer answers, yet the feed does not reach its head).
	State string
	// Head is the explorer's head as the poller last read it (following:
	// the newest position the fleet's batches reached), and DeliveredAt
	// the newest position fanned out: equal at the head; Head is ahead
	// while the feed catches up or is stuck, behind while the explorer is
	// behind the feed (until the feed re-anchors).
	Head, DeliveredAt upstream.TxCursor
	// Lag is how long ago the feed last knew it had delivered up to the
	// chain head: a poll whose head read the feed had reached, or
	// (following) a batch or heartbeat of the polling process that
	// reached no further than the feed. It grows while polls fail, while
	// the explorer's head is ahead of what the feed can deliver, and
	// while the explorer's head is behind the feed's position; 0 while
	// idle.
	Lag time.Duration
	// RefusedPositions counts transactions (and fleet batches) the feed
	// refused for their position: further past the transaction before it
	// than a chain goes (maxBlockJump blocks, past the feed's own
	// position plus maxBlockRate a second since it reached it; README,
	// Live transactions, Positions), past the explorer's head read
	// (fleet batches: past the explorer's head as this process reads it),
	// or at an index no block has. The rows of the same page at valid
	// positions are delivered.
	RefusedPositions uint64
	// Reanchors counts the times the feed moved back to the explorer's
	// head (or the fleet's) after it stayed behind the feed's position:
	// a position refused too late, or an explorer reset or reindexed.
	Reanchors uint64
	// StallAfter is the Lag past which the feed counts as stalled: ten
	// poll intervals, at least 30 s. /readyz fails while the feed has
	// subscriptions and its Lag exceeds it.
	StallAfter time.Duration
}

// Feed is the live transaction feed of one process, with T the form in
// which subscriptions receive a transaction (prepared once per
// transaction, whatever the number of subscriptions).
type Feed[T any] struct {
	feed *feed[T]
}

// New returns a feed that prepares each delivered transaction with
// prepare. Nothing polls until the first Subscribe, unless
// Config.AlwaysPoll (then polling starts now). prepare runs during
// the fan-out, with the feed's lock held: it must be quick and must not
// call the Feed.
func New[T any](cfg Config, prepare func(*upstream.Transaction) T) *Feed[T] {
	return &Feed[T]{feed: newFeed(cfg, prepare)}
}

// Subscribe opens a subscription, bound to ctx: it ends when ctx ends.
// It returns once the feed knows the chain head and, with opts.After, once
// the catch-up is fetched (its transactions are then already waiting in
// the channel). Errors: ErrClosed, ErrTooManySubscriptions,
// *ClientLimitError, *ClientCallsError, *BacklogError, ctx's error, or an upstream error of
// the head read or catch-up.
func (f *Feed[T]) Subscribe(ctx context.Context, opts SubscribeOptions) (*Subscription[T], error) {
	return f.feed.subscribe(ctx, opts)
}

// Close ends every subscription cleanly (channels close with Err nil:
// a completion), stops polling and the coordinator (releasing the lease),
// and waits for them. Later Subscribe calls fail with ErrClosed. Close is
// idempotent.
func (f *Feed[T]) Close() { f.feed.close() }

// Stats returns the feed's figures.
func (f *Feed[T]) Stats() Stats { return f.feed.stats() }

// Subscription is one subscriber's view of the feed.
type Subscription[T any] struct {
	sub *subscriber[T]
}

// C delivers the subscription's transactions in chain order, each once.
// It is closed when the subscription ends; Err then says why.
func (s *Subscription[T]) C() <-chan T { return s.sub.channel() }

// Err is why C was closed: nil for a clean end (ctx ended, Close,
// Feed.Close), ErrTooSlow or ErrGap otherwise. It is nil while C is open.
func (s *Subscription[T]) Err() error { return s.sub.err() }

// Close ends the subscription (as its ctx ending does).
func (s *Subscription[T]) Close() { s.sub.close() }

// Batch is what a poll finds: transactions in chain order (oldest first),
// the first immediately after Prev. A batch without transactions is a
// heartbeat: the poller is at the chain head, Prev.
type Batch struct {
	Prev         upstream.TxCursor
	Transactions []upstream.Transaction
}

// EncodeBatch and DecodeBatch are the wire form of a Batch between
// processes (Coordinator messages).
func EncodeBatch(b Batch) ([]byte, error) { return encodeBatch(b) }

// DecodeBatch parses EncodeBatch's form; a malformed message is an error,
// never a panic.
func DecodeBatch(msg []byte) (Batch, error) { return decodeBatch(msg) }
