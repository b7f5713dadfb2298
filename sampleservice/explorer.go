package sampleservice

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Explorer page size when neither first nor last is given (docs/explorer.md,
// Paging). The explorer has no maximum; defaultExplorerCap only keeps a
// request for millions of transactions from exhausting this process.
const (
	defaultExplorerPage = 50
	defaultExplorerCap  = 100_000
)

// txKey is a transaction's position on the chain; its cursor is
// "<block>.<index>".
type txKey struct {
	block uint64
	index uint32
}

func compareTxKey(a, b txKey) int {
	return cmp.Or(cmp.Compare(a.block, b.block), cmp.Compare(a.index, b.index))
}

// txIndex is what the explorer needs to page and filter transactions
// without decoding them: per position its key and type, and per party the
// ascending positions it takes part in. Transaction JSON is produced only
// for the rows of a page.
type txIndex struct {
	src         TransactionSource
	keys        []txKey
	types       []uint16
	typeIDs     map[string]uint16
	bySubmitter map[string][]int32

	// hashes is the lookup index, shared by the snapshots of one chain
	// (live.go: an append makes a new txIndex that extends these slices).
	hashes *hashIndex
}

// hashIndex finds a transaction by hash: the initial chain's hashes in a
// map built on the first lookup, and the hashes of appended transactions,
// added as they are appended.
type hashIndex struct {
	src TransactionSource // the initial chain
	n   int               // its length

	// byHash maps an upper-case hash to its position, or to
	// hashNotUnique; it is built on the first lookup.
	once   sync.Once
	byHash map[string]int32

	mu       sync.RWMutex
	appended map[string]int32
}

// hashNotUnique marks a hash held by more than one transaction.
const hashNotUnique = -1

// newTxIndex reads every transaction's metadata once. The submitter is
// the first of TxMeta.Parties; the explorer's `parties` filter matches it
// alone, like filters[tx.submitter] (docs/explorer.md), so receivers
// are not indexed.
func newTxIndex(src TransactionSource) (*txIndex, error) {
	x := &txIndex{src: src, typeIDs: map[string]uint16{}, bySubmitter: map[string][]int32{}, hashes: &hashIndex{src: src}}
	if src == nil {
		return x, nil
	}
	n := src.Len()
	x.hashes.n = n
	x.keys = make([]txKey, 0, n)
	x.types = make([]uint16, 0, n)
	for i := 0; i < n; i++ {
		if err := x.add(i, src.Meta(i)); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// add indexes m, the metadata of the transaction at position i ==
// x.len(). It appends to x's slices and maps in place.
func (x *txIndex) add(i int, m TxMeta) error {
	k := txKey{m.Block, m.Index}
	if i > 0 && compareTxKey(x.keys[i-1], k) >= 0 {
		return fmt.Errorf("transactions out of order at position %d: %d.%d after %d.%d",
			i, m.Block, m.Index, x.keys[i-1].block, x.keys[i-1].index)
	}
	id, ok := x.typeIDs[m.Type]
	if !ok {
		if len(x.typeIDs) == 1<<16-1 {
			return errors.New("too many transaction types")
		}
		id = uint16(len(x.typeIDs))
		x.typeIDs[m.Type] = id
	}
	x.keys = append(x.keys, k)
	x.types = append(x.types, id)
	if len(m.Parties) > 0 {
		x.bySubmitter[m.Parties[0]] = append(x.bySubmitter[m.Parties[0]], int32(i))
	}
	return nil
}

// len is the number of transactions.
func (x *txIndex) len() int { return len(x.keys) }

// search is the first position whose key is >= k (or > k when strict).
func (x *txIndex) search(k txKey, strict bool) int {
	return sort.Search(len(x.keys), func(i int) bool {
		c := compareTxKey(x.keys[i], k)
		if strict {
			return c > 0
		}
		return c >= 0
	})
}

// parseTxCursor reads "<block>.<index>" as the explorer does.
func parseTxCursor(s string) (txKey, error) {
	parts := strings.Split(s, ".")
	if len(parts) != 2 {
		return txKey{}, fmt.Errorf("invalid cursor string: %s", s)
	}
	block, err := strconv.ParseUint(parts[0], 10, 64)
	if err != nil {
		return txKey{}, fmt.Errorf("invalid block number: %w", err)
	}
	index, err := strconv.ParseUint(parts[1], 10, 32)
	if err != nil {
		return txKey{}, fmt.Errorf("invalid transaction index: %w", err)
	}
	return txKey{block, uint32(index)}, nil
}

// explorerError is the explorer's 400: an InvalidArgument status with one
// detail.
func explorerError(msg string) *apiError {
	return vegaError(http.StatusBadRequest, grpcInvalidArgument, detailNotMapped, msg, "")
}

// candidates is the set of positions a query can match: every position,
// or an ascending list when a party filter narrows it.
type candidates struct {
	all  bool
	list []int32
}

func (c candidates) at(k int) int {
	if c.all {
		return k
	}
	return int(c.list[k])
}

// lowerBound is the first k whose position is >= pos.
func (c candidates) lowerBound(pos int) int {
	if c.all {
		return pos
	}
	return sort.Search(len(c.list), func(k int) bool { return int(c.list[k]) >= pos })
}

// unionSorted merges ascending lists, dropping duplicates.
func unionSorted(lists [][]int32) []int32 {
	switch len(lists) {
	case 0:
		return nil
	case 1:
		return lists[0]
	}
	var out []int32
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// intersectSorted keeps the positions present in both ascending lists.
func intersectSorted(a, b []int32) []int32 {
	var out []int32
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}

// txRequest is a validated explorer request.
type txRequest struct {
	first, last   uint32
	after, before *txKey
	cmdTypes      []string
	excludeTypes  []string
	parties       []string
	filters       map[string]string
}

// parseTxRequest reads the explorer's parameters and applies its rules
// (docs/explorer.md; docs/wire.md, Known defects).
func parseTxRequest(q query, defects Defects) (txRequest, *apiError) {
	var r txRequest
	for _, f := range []struct {
		name string
		dst  *uint32
	}{{"first", &r.first}, {"last", &r.last}} {
		if v, ok := q.lookup(f.name); ok {
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil {
				return r, typeMismatch(f.name, err)
			}
			*f.dst = uint32(n)
		}
	}
	before, hasBefore := q.lookup("before")
	after, hasAfter := q.lookup("after")
	if hasBefore && hasAfter && (r.first > 0 || r.last > 0) {
		return r, explorerError("cannot use neither limits `first`, nor `last` when both cursors `before` and `after` are set")
	}
	if r.first > 0 && r.last > 0 {
		return r, explorerError("cannot use both limits `first` and `last` within the same query")
	}
	if hasBefore {
		k, err := parseTxCursor(before)
		if err != nil {
			return r, explorerError(err.Error())
		}
		r.before = &k
	}
	if hasAfter {
		k, err := parseTxCursor(after)
		if err != nil {
			return r, explorerError(err.Error())
		}
		r.after = &k
	}
	// Defect 2: the window check is inverted, so a valid window is refused
	// and an inverted one is accepted (and can hold nothing).
	if r.before != nil && r.after != nil && defects.ExplorerTwoCursorWindows && compareTxKey(*r.after, *r.before) < 0 {
		return r, explorerError("cursors `before` and `after` do not create a valid window")
	}
	if r.first > 0 && r.before != nil {
		return r, explorerError("cannot use cursor `before` when using limit `first`")
	}
	if r.last > 0 && r.after != nil {
		return r, explorerError("cannot use cursor `after` when using limit `last`")
	}
	r.cmdTypes = q.all("cmdTypes", "cmd_types")
	r.excludeTypes = q.all("excludeCmdTypes", "exclude_cmd_types")
	r.parties = q.all("parties")
	for k, vs := range q {
		if key, ok := strings.CutPrefix(k, "filters["); ok && strings.HasSuffix(key, "]") && len(vs) > 0 {
			if r.filters == nil {
				r.filters = map[string]string{}
			}
			r.filters[strings.TrimSuffix(key, "]")] = vs[0]
		}
	}
	return r, nil
}

// selectTransactions returns the positions of the page, newest first.
func (x *txIndex) selectTransactions(r txRequest, maxRows int) []int {
	// Type filter: allowed[t] for every known type id; nil allows all.
	var allowed []bool
	restrictType := func(keep func(name string) bool) {
		if allowed == nil {
			allowed = make([]bool, len(x.typeIDs))
			for i := range allowed {
				allowed[i] = true
			}
		}
		for name, id := range x.typeIDs {
			if !keep(name) {
				allowed[id] = false
			}
		}
	}
	if len(r.cmdTypes) > 0 {
		restrictType(func(name string) bool { return slices.Contains(r.cmdTypes, name) })
	}
	if len(r.excludeTypes) > 0 {
		restrictType(func(name string) bool { return !slices.Contains(r.excludeTypes, name) })
	}

	// Position range from the cursors: strictly newer than after, strictly
	// older than before.
	lo, hi := 0, x.len()
	if r.after != nil {
		lo = x.search(*r.after, true)
	}
	if r.before != nil {
		hi = min(hi, x.search(*r.before, false))
	}

	c := candidates{all: true}
	if len(r.parties) > 0 {
		lists := make([][]int32, 0, len(r.parties))
		for _, p := range r.parties {
			lists = append(lists, x.bySubmitter[p])
		}
		c = candidates{list: unionSorted(lists)}
	}
	// Filters the real explorer answers from dedicated columns; any other
	// key is matched against event attributes this dataset does not have,
	// and is ignored.
	for key, value := range r.filters {
		switch key {
		case "tx.submitter":
			subs := x.bySubmitter[value]
			if c.all {
				c = candidates{list: subs}
			} else {
				c = candidates{list: intersectSorted(c.list, subs)}
			}
		case "cmd.type":
			restrictType(func(name string) bool { return name == value })
		case "block.height":
			h, err := strconv.ParseUint(value, 10, 64)
			if err != nil {
				return []int{}
			}
			lo = max(lo, x.search(txKey{block: h}, false))
			hi = min(hi, x.search(txKey{block: h, index: 1<<32 - 1}, true))
		}
	}
	if lo >= hi {
		return []int{}
	}

	// Direction and size: after pages towards the newest, so it takes the
	// oldest rows of its range; before and first take the newest; last
	// alone takes the oldest. Results are always newest first.
	ascending := false
	size := uint32(defaultExplorerPage)
	switch {
	case r.after != nil && r.before != nil:
		// A window (only reachable with the defect off, or inverted).
	case r.after != nil:
		ascending = true
		if r.first > 0 {
			size = r.first
		}
	case r.before != nil:
		if r.last > 0 {
			size = r.last
		}
	case r.first > 0:
		size = r.first
	case r.last > 0:
		ascending = true
		size = r.last
	}
	limit := int(min(uint64(size), uint64(max(maxRows, 1))))

	match := func(pos int) bool { return allowed == nil || allowed[x.types[pos]] }
	kLo, kHi := c.lowerBound(lo), c.lowerBound(hi)
	out := make([]int, 0, min(limit, kHi-kLo))
	if ascending {
		for k := kLo; k < kHi && len(out) < limit; k++ {
			if pos := c.at(k); match(pos) {
				out = append(out, pos)
			}
		}
		slices.Reverse(out)
	} else {
		for k := kHi - 1; k >= kLo && len(out) < limit; k-- {
			if pos := c.at(k); match(pos) {
				out = append(out, pos)
			}
		}
	}
	return out
}

// encodeTransactions renders the explorer's pretty-printed response, the
// same shape json.MarshalIndent gives with a two-space indent. A
// transaction whose JSON does not parse is skipped, as the explorer skips
// rows it cannot decode.
func (x *txIndex) encodeTransactions(positions []int) []byte {
	if len(positions) == 0 {
		return []byte("{\n  \"transactions\": []\n}")
	}
	var out, pretty bytes.Buffer
	var raw []byte
	out.WriteString("{\n  \"transactions\": [")
	n := 0
	for _, pos := range positions {
		raw = x.src.AppendJSON(raw[:0], pos)
		pretty.Reset()
		if err := json.Indent(&pretty, raw, "    ", "  "); err != nil {
			continue
		}
		if n > 0 {
			out.WriteByte(',')
		}
		out.WriteString("\n    ")
		out.Write(pretty.Bytes())
		n++
	}
	if n == 0 {
		return []byte("{\n  \"transactions\": []\n}")
	}
	out.WriteString("\n  ]\n}")
	return out.Bytes()
}

// listTransactions serves GET /transactions and /rest/transactions.
func (x *txIndex) listTransactions(q query, defects Defects, maxRows int) ([]byte, *apiError) {
	r, err := parseTxRequest(q, defects)
	if err != nil {
		return nil, err
	}
	return x.encodeTransactions(x.selectTransactions(r, maxRows)), nil
}

// TxHasher is what a TransactionSource may implement to give transaction
// i's hash (as in its JSON) without encoding the transaction. Without it
// the lookup index encodes every transaction once, on the first lookup.
type TxHasher interface {
	Hash(i int) string
}

// initial builds the initial chain's lookup index once: upper-case hash to
// position.
func (h *hashIndex) initial() map[string]int32 {
	h.once.Do(func() {
		n := h.n
		hashes := make([]string, n)
		if hs, ok := h.src.(TxHasher); ok {
			for i := range n {
				hashes[i] = hs.Hash(i)
			}
		} else {
			// Encoding is the cost (tens of microseconds a transaction):
			// spread it over the processors.
			workers := min(runtime.GOMAXPROCS(0), max(n/1024, 1))
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var raw []byte
					for i := w; i < n; i += workers {
						hashes[i], raw = decodeHash(h.src, i, raw)
					}
				}()
			}
			wg.Wait()
		}
		h.byHash = make(map[string]int32, n)
		for i, hash := range hashes {
			if hash == "" {
				continue
			}
			hash = strings.ToUpper(hash)
			if _, dup := h.byHash[hash]; dup {
				h.byHash[hash] = hashNotUnique
			} else {
				h.byHash[hash] = int32(i)
			}
		}
	})
	return h.byHash
}

// decodeHash reads transaction i's hash from its JSON ("" when it does not
// decode), using raw as the buffer, which it returns for reuse.
func decodeHash(src TransactionSource, i int, raw []byte) (string, []byte) {
	raw = src.AppendJSON(raw[:0], i)
	var tx struct {
		Hash string `json:"hash"`
	}
	if json.Unmarshal(raw, &tx) != nil {
		return "", raw
	}
	return tx.Hash, raw
}

// find returns the position of the transaction with the given upper-case
// hash, or hashNotUnique.
func (h *hashIndex) find(hash string) (int32, bool) {
	if pos, ok := h.initial()[hash]; ok {
		return pos, true
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	pos, ok := h.appended[hash]
	return pos, ok
}

// errHashNotUnique is the explorer's answer to a hash stored twice.
var errHashNotUnique = vegaError(http.StatusBadRequest, grpcFailedPrecondition, detailNotMapped,
	"multiple transactions found for the hash", "")

// errTransactionNotFound is the explorer's answer to an unknown hash.
var errTransactionNotFound = vegaError(http.StatusNotFound, grpcNotFound, detailNotMapped, "transaction not found", "")

// getTransaction serves GET /transactions/{hash} (and under /rest): the
// hash is matched case-insensitively (the explorer upper-cases it), and
// the answer is {"transaction": {…}}, pretty-printed like the list.
func (x *txIndex) getTransaction(hash string) ([]byte, *apiError) {
	if x.src == nil {
		return nil, errTransactionNotFound
	}
	pos, ok := x.hashes.find(strings.ToUpper(hash))
	switch {
	case !ok, int(pos) >= x.len():
		// Not in this snapshot (appended since it was taken).
		return nil, errTransactionNotFound
	case pos == hashNotUnique:
		return nil, errHashNotUnique
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, x.src.AppendJSON(nil, int(pos)), "  ", "  "); err != nil {
		// The list skips such a row; a lookup has nothing else to show.
		return nil, plainError(http.StatusInternalServerError, grpcInternal, "failed to decode transaction")
	}
	out := make([]byte, 0, pretty.Len()+24)
	out = append(out, "{\n  \"transaction\": "...)
	out = append(out, pretty.Bytes()...)
	return append(out, "\n}"...), nil
}
