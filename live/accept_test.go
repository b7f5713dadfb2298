package live

import (
	"testing"
	"testing/synctest"

	"github.com/tradenet/gateway/upstream"
)

// forged is a well-formed batch after prev of transactions at positions.
func forged(t *testing.T, prev upstream.TxCursor, positions ...upstream.TxCursor) []byte {
	t.Helper()
	b := Batch{Prev: prev}
	for _, p := range positions {
		b.Transactions = append(b.Transactions, upstream.Transaction{
			Block: upstream.Uint64(p.Block), Index: upstream.Int32(p.Index),
			Hash: "FORGED", Submitter: testParties[0], Type: testTypes[0],
		})
	}
	msg, err := EncodeBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

// A batch the coordinator delivers is checked against the chain the
// explorer shows before it is applied: one reaching far past the head,
// one starting past it, and one of more transactions than a poll finds
// are refused and counted, without ending any subscription, and the real
// transactions at those positions are delivered when they come.
func TestCoordinatedBatchesPastTheExplorersHeadAreRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 2)
		_, a, z, sa, sz, start := fleet(t, c, Config{PageSize: 4, MaxBacklog: 5})
		fleetRun(c, 2)
		synctest.Wait()
		head := c.head()
		if got := z.feed.Stats().DeliveredAt; got != head {
			t.Fatalf("follower at %s, chain head %s", got, head)
		}
		next := func(blocks uint64, index uint32) upstream.TxCursor {
			return upstream.TxCursor{Block: head.Block + blocks, Index: index}
		}
		zRequests := z.view.requestCount()
		for _, msg := range [][]byte{
			// Right after the follower's position, a million blocks ahead:
			// the explorer's head is read, and does not reach it.
			forged(t, head, next(1_000_000, 0)),
			// A heartbeat far past the head.
			forged(t, next(500, 0)),
			// A few blocks ahead (no head read), starting past the head: the
			// gap fill finds nothing after the head.
			forged(t, next(3, 0), next(3, 1), next(4, 0)),
			// More transactions than a poll finds (MaxBacklog 5), at the
			// positions the next blocks will really take.
			forged(t, head, next(1, 0), next(1, 1), next(1, 2), next(2, 0), next(2, 1), next(2, 2)),
		} {
			z.m.send(msg)
		}
		synctest.Wait()
		if n := z.view.requestCount() - zRequests; n != 3 {
			t.Errorf("the follower made %d explorer requests for the forged batches, want 3 (two head reads, a gap fill)", n)
		}
		fleetRun(c, 3)
		fleetDelivered(t, c, start, sa, sz)
		st := z.feed.Stats()
		if st.BadMessages != 4 || st.DroppedGap != 0 || st.Subscriptions != 1 || st.DeliveredAt != c.head() {
			t.Errorf("follower %+v, want 4 bad messages, no gap, at %s", st, c.head())
		}
		if st := a.feed.Stats(); st.BadMessages != 0 {
			t.Errorf("leader %+v", st)
		}
	})
}

// Within the allowance, a follower takes the poller's batches without a
// request; past it, one head read moves the reference to the head.
func TestCoordinatedFollowerChecksThePollerOncePerAllowance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newChain(1, 1)
		_, _, z, _, sz, start := fleet(t, c, Config{})
		fleetRun(c, unverifiedBlocks+5)
		want := c.after(start, upstream.TransactionsParams{})
		expect(t, "follower", sz, want)
		// The head read at the start, and one check past the allowance.
		if n := z.view.requestCount(); n != 2 {
			t.Errorf("the follower made %d explorer requests, want 2", n)
		}
		if st := z.feed.Stats(); st.BadMessages != 0 {
			t.Errorf("follower %+v", st)
		}
	})
}

func TestEncodeAndDecodeBatchRefuseMoreThanMaxBatchBytes(t *testing.T) {
	big := Batch{Prev: upstream.TxCursor{Block: 1}, Transactions: []upstream.Transaction{{Block: 2, Hash: string(make([]byte, MaxBatchBytes))}}}
	if _, err := EncodeBatch(big); err == nil {
		t.Error("EncodeBatch made a batch over MaxBatchBytes")
	}
	prefix := `{"prev":"1.0","transactions":[]}`
	msg := append([]byte(prefix), make([]byte, MaxBatchBytes)...)
	for i := len(prefix); i < len(msg); i++ {
		msg[i] = ' '
	}
	if _, err := DecodeBatch(msg); err == nil {
		t.Error("DecodeBatch read a message over MaxBatchBytes")
	}
	if _, err := DecodeBatch(msg[:MaxBatchBytes]); err != nil {
		t.Errorf("DecodeBatch refused a message of MaxBatchBytes: %v", err)
	}
}
