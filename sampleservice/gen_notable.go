package sampleservice

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tradenet/gateway/upstream"
)

// The notable transactions: built on purpose rather than drawn, so that
// tests can find one of each command and change kind, every nested shape
// and enum value, and the wire's edge cases (Dataset.Notable names them).
// notables.json lists them as data: for each, its names, what it shows,
// its command kind and how its body is made:
//
//   - drawn like any transaction of its kind (no "build"), or by a named
//     scenario (scenarios below: a shape the generator draws on purpose,
//     such as a batch of given change kinds, or every value of an enum);
//   - then edited where the edge case lies: "set" and "remove" take JSON
//     pointers (RFC 6901) into the command member's body as the wire
//     shows it ("/submissions/0/side": 7, an enum value beyond the
//     schema), "body" replaces the whole body; the result is decoded back
//     into package upstream's type, so it is encoded as every other body.
//
// An entry may instead expand to one entry per kind ("each": one
// transaction per command kind, per batch change kind, per chain event
// action, per single-proposal change kind), so a new kind has its notable
// transaction without an entry here.

//go:embed notables.json
var notablesJSON []byte

// specialSpec is a notable transaction, ready to build.
type specialSpec struct {
	names   []string
	kind    cmdKind
	code    uint8
	version string
	// typeName, when set, is the explorer's type string instead of the
	// kind's: a string older cores wrote, or the type of a kind the
	// explorer does not know.
	typeName string
	// noReceiver: a transfer into a reward pool, not to another party.
	noReceiver bool
	build      func(c *txCtx) upstream.CommandKind
}

// notableEntry is an entry of notables.json.
type notableEntry struct {
	Names []string `json:"names"`
	// About says what the transaction shows.
	About string `json:"about"`
	// Each expands the entry to one per kind (expansions).
	Each string `json:"each"`
	// Kind is the command's member name.
	Kind string `json:"kind"`
	// Build names the scenario and its arguments ("batch newMarket
	// newFreeform"); empty: the kind's ordinary body.
	Build    string                     `json:"build"`
	Body     json.RawMessage            `json:"body"`
	Set      map[string]json.RawMessage `json:"set"`
	Remove   []string                   `json:"remove"`
	NoMember bool                       `json:"noMember"`
	// Code is the result code of a failed transaction, Version its
	// transaction version, Type its type string, when not the usual.
	Code       uint8  `json:"code"`
	Version    string `json:"version"`
	Type       string `json:"type"`
	NoReceiver bool   `json:"noReceiver"`
}

// notables are the three lists of notables.json, in layout order:
// "spread" over the whole dataset, "history" among the oldest
// transactions, "later" over the range between them.
var notables = loadNotables(notablesJSON)

type notableLists struct {
	spread, history, later []specialSpec
}

func loadNotables(data []byte) notableLists {
	var file struct {
		About   []string       `json:"about"`
		Spread  []notableEntry `json:"spread"`
		History []notableEntry `json:"history"`
		Later   []notableEntry `json:"later"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		panic("sampleservice: notables.json: " + err.Error())
	}
	specs := func(entries []notableEntry) []specialSpec {
		var out []specialSpec
		for _, e := range entries {
			s, err := e.specs()
			if err != nil {
				panic(fmt.Sprintf("sampleservice: notables.json: %v %s: %v", e.Names, e.Each, err))
			}
			out = append(out, s...)
		}
		return out
	}
	return notableLists{specs(file.Spread), specs(file.History), specs(file.Later)}
}

// specs returns the transaction of e, or those it expands to.
func (e notableEntry) specs() ([]specialSpec, error) {
	if e.Each != "" {
		expand, ok := expansions[e.Each]
		if !ok {
			return nil, fmt.Errorf("no expansion %q", e.Each)
		}
		return expand(), nil
	}
	if len(e.Names) == 0 {
		return nil, fmt.Errorf("no names")
	}
	kind, ok := kindOfMember(e.Kind)
	if !ok {
		return nil, fmt.Errorf("unknown command kind %q", e.Kind)
	}
	s := specialSpec{names: e.Names, kind: kind, code: e.Code, version: e.Version, typeName: e.Type, noReceiver: e.NoReceiver}
	var base func(c *txCtx) upstream.CommandKind
	switch {
	case e.NoMember:
		s.build = func(*txCtx) upstream.CommandKind { return nil }
		return []specialSpec{s}, nil
	case e.Body != nil:
		if _, err := decodeMember(kind, e.Body); err != nil {
			return nil, err
		}
		base = func(*txCtx) upstream.CommandKind { k, _ := decodeMember(kind, e.Body); return k }
	case e.Build != "":
		words := strings.Fields(e.Build)
		scenario, ok := scenarios[words[0]]
		if !ok {
			return nil, fmt.Errorf("no scenario %q", words[0])
		}
		args := words[1:]
		base = func(c *txCtx) upstream.CommandKind { return scenario(c, args) }
	default:
		base = func(c *txCtx) upstream.CommandKind { return c.buildCommand(kind) }
	}
	if len(e.Set) == 0 && len(e.Remove) == 0 {
		s.build = base
		return []specialSpec{s}, nil
	}
	edits := e.edits()
	s.build = func(c *txCtx) upstream.CommandKind {
		k, err := edits.apply(kind, base(c))
		if err != nil {
			panic(fmt.Sprintf("sampleservice: notable %v: %v", e.Names, err))
		}
		return k
	}
	return []specialSpec{s}, nil
}

// kindOfMember is the command kind whose member is name.
func kindOfMember(name string) (cmdKind, bool) {
	for k, info := range cmdKinds {
		if info.member == name {
			return cmdKind(k), true
		}
	}
	return 0, false
}

// decodeMember decodes body as the member of kind, with upstream's
// decoder.
func decodeMember(kind cmdKind, body []byte) (upstream.CommandKind, error) {
	var cmd upstream.Command
	doc := `{"` + cmdKinds[kind].member + `":` + string(body) + `}`
	if err := json.Unmarshal([]byte(doc), &cmd); err != nil {
		return nil, err
	}
	if _, unknown := cmd.Kind.(*upstream.UnknownCommand); unknown || cmd.Kind == nil {
		return nil, fmt.Errorf("%s does not decode as %s", body, cmdKinds[kind].member)
	}
	return cmd.Kind, nil
}

// notableEdits are an entry's edits of a body: values set at JSON pointers
// (parents before their children) and pointers removed.
type notableEdits struct {
	set    []string
	values map[string]json.RawMessage
	remove []string
}

func (e notableEntry) edits() notableEdits {
	set := make([]string, 0, len(e.Set))
	for p := range e.Set {
		set = append(set, p)
	}
	slices.Sort(set)
	return notableEdits{set: set, values: e.Set, remove: e.Remove}
}

// apply edits body (of kind) as JSON and decodes the result.
func (ed notableEdits) apply(kind cmdKind, body upstream.CommandKind) (upstream.CommandKind, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	for _, p := range ed.set {
		var v any
		dec := json.NewDecoder(bytes.NewReader(ed.values[p]))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("set %s: %v", p, err)
		}
		if doc, err = editPointer(doc, p, v, false); err != nil {
			return nil, err
		}
	}
	for _, p := range ed.remove {
		if doc, err = editPointer(doc, p, nil, true); err != nil {
			return nil, err
		}
	}
	if b, err = json.Marshal(doc); err != nil {
		return nil, err
	}
	return decodeMember(kind, b)
}

// editPointer sets v at the JSON pointer p in doc, or removes what p
// points at (nothing to remove is no error), and returns doc.
func editPointer(doc any, p string, v any, remove bool) (any, error) {
	if p == "" {
		return v, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("pointer %q does not start with /", p)
	}
	tokens := strings.Split(p[1:], "/")
	for i, t := range tokens {
		tokens[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(t)
	}
	parent := doc
	for i, t := range tokens[:len(tokens)-1] {
		next, ok := child(parent, t)
		if !ok {
			return nil, fmt.Errorf("pointer %q: nothing at %s", p, strings.Join(tokens[:i+1], "/"))
		}
		parent = next
	}
	last := tokens[len(tokens)-1]
	switch x := parent.(type) {
	case map[string]any:
		if remove {
			delete(x, last)
		} else {
			x[last] = v
		}
	case []any:
		i, err := strconv.Atoi(last)
		if err != nil || i < 0 || i >= len(x) || remove {
			return nil, fmt.Errorf("pointer %q: cannot edit element %s", p, last)
		}
		x[i] = v
	default:
		return nil, fmt.Errorf("pointer %q: not in an object or array", p)
	}
	return doc, nil
}

// child is the member t of an object or the element t of an array.
func child(v any, t string) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		c, ok := x[t]
		return c, ok
	case []any:
		i, err := strconv.Atoi(t)
		if err != nil || i < 0 || i >= len(x) {
			return nil, false
		}
		return x[i], true
	}
	return nil, false
}

// expansions make one notable transaction per kind.
var expansions = map[string]func() []specialSpec{
	// One of each command kind, with a drawn body: "command.<member>".
	"command": func() []specialSpec {
		var s []specialSpec
		for k := range numCmdKinds {
			names := []string{"command." + cmdKinds[k].member}
			if k == kindTransfer {
				names = append(names, "parties.receiver")
			}
			s = append(s, specialSpec{names: names, kind: k, build: func(c *txCtx) upstream.CommandKind { return c.buildCommand(k) }})
		}
		return s
	},
	// A batch proposal of a single change of each kind: "change.<member>".
	"batchChange": func() []specialSpec {
		var s []specialSpec
		for k := range numChangeKinds {
			names := []string{"change." + changeKinds[k].member}
			if k == changeNewSpotMarket {
				names = append(names, "market.spot")
			}
			s = append(s, specialSpec{names: names, kind: kindBatchProposalSubmission, build: func(c *txCtx) upstream.CommandKind {
				return c.batchProposalOf(k)
			}})
		}
		return s
	},
	// Every action of every chain event group:
	// "chainEvent.<group>.<action>"; a contract call names its chain.
	"chainEvent": func() []specialSpec {
		var s []specialSpec
		for k := range numChainEventKinds {
			s = append(s, specialSpec{names: []string{"chainEvent." + chainEventKinds[k].name}, kind: kindChainEvent, build: func(c *txCtx) upstream.CommandKind {
				e := c.chainEventOf(k)
				if e.ContractCall != nil {
					e.ContractCall.SourceChainID = ptr(upstream.Uint64(100))
				}
				return e
			}})
		}
		return s
	},
	// A single proposal of each change kind: "proposal.<member>".
	"proposalChange": func() []specialSpec {
		var s []specialSpec
		for k := range numChangeKinds {
			s = append(s, specialSpec{names: []string{"proposal." + changeKinds[k].member}, kind: kindProposalSubmission, build: func(c *txCtx) upstream.CommandKind {
				p := c.newProposal()
				c.proposalChange(p, k)
				return p
			}})
		}
		return s
	},
}

// scenario builds a body on purpose; args are the words after its name in
// the entry's "build".
type scenario func(c *txCtx, args []string) upstream.CommandKind

// scenarios are the bodies notables.json names. Those taking arguments
// are general; the others build one transaction's shapes.
var scenarios = map[string]scenario{
	// batch <change member>...: a batch proposal of these changes; a
	// member written newTransfer:recurring (or :rank) is then given a
	// recurring governance transfer (with a rank table).
	"batch": func(c *txCtx, args []string) upstream.CommandKind {
		kinds := make([]changeKind, len(args))
		for i, a := range args {
			kinds[i] = changeKindOf(strings.Split(a, ":")[0])
		}
		p := c.batchProposalOf(kinds...)
		for i, a := range args {
			switch _, opt, _ := strings.Cut(a, ":"); opt {
			case "recurring":
				changeAt[*upstream.NewTransfer](p, i).Changes = c.governanceTransfer(transferOptions{recurring: true})
			case "rank":
				changeAt[*upstream.NewTransfer](p, i).Changes = c.governanceTransfer(transferOptions{recurring: true, distribution: 3})
			}
		}
		return p
	},
	// orders <perpetual> <element>...: batch market instructions on the
	// given perpetual market (an index into the perpetuals), its elements
	// drawn in order: order, limit (a good-till-cancelled limit order,
	// not pegged, no expiry), amend, stop1 (a rises-above stop order),
	// margin (a margin mode row, mode unspecified).
	"orders": func(c *txCtx, args []string) upstream.CommandKind {
		m := c.perp(args[0])
		b := emptyBatch()
		for _, a := range args[1:] {
			switch a {
			case "order":
				b.Submissions = append(b.Submissions, c.orderSubmission(m))
			case "limit":
				o := c.orderSubmission(m)
				o.Type, o.TimeInForce, o.Price, o.ExpiresAt, o.PeggedOrder = "TYPE_LIMIT", "TIME_IN_FORCE_GTC", c.price(m), 0, nil
				b.Submissions = append(b.Submissions, o)
			case "amend":
				b.Amendments = append(b.Amendments, c.orderAmendment(m))
			case "stop1":
				b.StopOrdersSubmission = append(b.StopOrdersSubmission, c.stopOrdersSubmission(m, 1))
			case "margin":
				b.UpdateMarginMode = append(b.UpdateMarginMode, upstream.UpdateMarginMode{MarketID: m.id, Mode: upstream.MarginModeUnspecified})
			default:
				panic("sampleservice: orders: no element " + a)
			}
		}
		return b
	},
	// order <perpetual>: an order on that perpetual market.
	"order": func(c *txCtx, args []string) upstream.CommandKind {
		o := c.orderSubmission(c.perp(args[0]))
		return &o
	},
	// stopOrders <perpetual> <which>: a stop order on that perpetual
	// market, both sides (which 0), rises above (1) or falls below (2).
	"stopOrders": func(c *txCtx, args []string) upstream.CommandKind {
		which, _ := strconv.Atoi(args[1])
		so := c.stopOrdersSubmission(c.perp(args[0]), which)
		return &so
	},
	// proposal [<change member> [simple]]: a single proposal with that
	// change (none without one; "simple" gives a new market a simple risk
	// model); proposal newAsset erc20|builtinAsset: a new asset.
	"proposal": func(c *txCtx, args []string) upstream.CommandKind {
		p := c.newProposal()
		switch {
		case len(args) == 0:
		case args[0] == "newAsset":
			c.newAsset(p, args[1] == "erc20")
		default:
			c.proposalChange(p, changeKindOf(args[0]))
			if slices.Contains(args, "simple") {
				cfg := p.Terms.Change.(*upstream.NewMarket).Changes
				cfg.Simple, cfg.LogNormal = c.simple(), nil
			}
		}
		return p
	},
	// withdraw erc20|builtinAsset: a withdrawal of an asset of that source.
	"withdraw": func(c *txCtx, args []string) upstream.CommandKind {
		return c.withdrawSubmission(c.sourcedAsset(args[0] == "erc20"))
	},
	// chainEvent <group.action>: that chain event.
	"chainEvent": func(c *txCtx, args []string) upstream.CommandKind {
		for k, info := range chainEventKinds {
			if info.name == args[0] {
				return c.chainEventOf(chainEventKind(k))
			}
		}
		panic("sampleservice: no chain event " + args[0])
	},
	// stateVariable scalarVal|vectorVal|matrixVal: a state variable
	// proposal of values of that shape.
	"stateVariable": func(c *txCtx, args []string) upstream.CommandKind {
		shapes := map[string]stateVarKind{"scalarVal": stateVarScalar, "vectorVal": stateVarVector, "matrixVal": stateVarMatrix}
		return c.stateVariableProposal(shapes[args[0]])
	},
	// standingOrder: a party's recurring transfer to another party.
	"standingOrder": func(c *txCtx, _ []string) upstream.CommandKind {
		t := c.transfer()
		c.standingOrder(t)
		return t
	},

	"change.all":              buildEveryChange,
	"batch.allLists":          buildAllLists,
	"stopOrder.setups":        buildStopOrderSetups,
	"stopOrder.triggers":      buildStopOrderTriggers,
	"coverage.orders":         buildOrderCoverage,
	"rationale.long":          buildLongRationale,
	"asset.dangling":          buildDanglingAssets,
	"market.future":           buildFutureMarket,
	"market.perpetual":        buildPerpetualMarket,
	"coverage.markets":        buildMarketCoverage,
	"updateMarket.both":       buildUpdateMarkets,
	"marketState.all":         buildMarketStates,
	"coverage.accountTypes":   buildAccountTypeCoverage,
	"coverage.dispatch":       buildDispatchCoverage,
	"proposal.newAsset":       buildNewAssetProposal,
	"transferFunds.oneOff":    buildOneOffTransfer,
	"transferFunds.recurring": buildRecurringTransfer,
}

// changeKindOf is the change kind whose member is name.
func changeKindOf(name string) changeKind {
	for k, info := range changeKinds {
		if info.member == name {
			return changeKind(k)
		}
	}
	panic("sampleservice: no change kind " + name)
}

// perp is the perpetual market of index i (a decimal) among the
// perpetuals.
func (c *txCtx) perp(i string) *genMarket {
	n, err := strconv.Atoi(i)
	if err != nil {
		panic("sampleservice: perpetual " + i)
	}
	return &c.g.markets[c.g.perps[n]]
}

// buildEveryChange: a batch proposal of one change of every kind; the
// asset update is of a built-in asset (no source details).
func buildEveryChange(c *txCtx, _ []string) upstream.CommandKind {
	kinds := make([]changeKind, numChangeKinds)
	for i := range kinds {
		kinds[i] = changeKind(i)
	}
	p := c.batchProposalOf(kinds...)
	p.Terms.Changes[changeUpdateAsset].Change = c.updateAsset(c.g.asset("tDAI"))
	return p
}

// buildAllLists: batch market instructions with every list populated.
func buildAllLists(c *txCtx, _ []string) upstream.CommandKind {
	r := c.r
	m := &c.g.markets[c.g.perps[0]]
	b := emptyBatch()
	b.Cancellations = append(b.Cancellations,
		upstream.OrderCancellation{OrderID: hexID(r), MarketID: m.id},
		upstream.OrderCancellation{MarketID: m.id})
	neg := c.orderAmendment(m)
	neg.Size, neg.SizeDelta = nil, -5
	sized := c.orderAmendment(m)
	sized.Size, sized.SizeDelta = ptr(upstream.Uint64(250)), 0
	b.Amendments = append(b.Amendments, neg, sized)

	limit := c.orderSubmission(m)
	limit.Type, limit.TimeInForce, limit.Price, limit.ExpiresAt = "TYPE_LIMIT", "TIME_IN_FORCE_GTC", c.price(m), 0
	limit.PeggedOrder, limit.IcebergOpts = nil, nil
	pegged := limit
	pegged.Price = ""
	pegged.PeggedOrder = &upstream.PeggedOrder{Reference: "PEGGED_REFERENCE_BEST_BID", Offset: "150"}
	iceberg := limit
	iceberg.Size = 1_000
	iceberg.IcebergOpts = &upstream.IcebergOpts{PeakSize: 100, MinimumVisibleSize: 20}
	b.Submissions = append(b.Submissions, limit, pegged, iceberg)

	b.StopOrdersCancellation = append(b.StopOrdersCancellation, upstream.StopOrderCancellation{MarketID: ptr(m.id), StopOrderID: ptr(hexID(r))})
	b.StopOrdersSubmission = append(b.StopOrdersSubmission, c.stopOrdersSubmission(m, 0))
	b.UpdateMarginMode = append(b.UpdateMarginMode,
		upstream.UpdateMarginMode{MarketID: m.id, Mode: "MODE_ISOLATED_MARGIN", MarginFactor: ptr("0.25")})
	return b
}

// buildStopOrderSetups: both sides, rises-above only, falls-below only;
// prices and trailing offsets; size overrides; expiries.
func buildStopOrderSetups(c *txCtx, _ []string) upstream.CommandKind {
	m := &c.g.markets[c.g.perps[1]]
	b := emptyBatch()
	both := c.stopOrdersSubmission(m, 0)
	both.RisesAbove.Price, both.RisesAbove.TrailingPercentOffset = ptr(utoa(m.price+m.price/10)), nil
	both.FallsBelow.Price, both.FallsBelow.TrailingPercentOffset = nil, ptr("0.05")
	both.RisesAbove.ExpiresAt = ptr(upstream.UnixNanos(c.now + 86_400e9))
	both.RisesAbove.ExpiryStrategy = ptr(upstream.StopOrderExpiryStrategySubmit)
	both.FallsBelow.SizeOverrideSetting = ptr(upstream.SizeOverrideSettingPosition)
	both.FallsBelow.SizeOverrideValue = &upstream.SizeOverrideValue{Percentage: "0.5"}
	rises := c.stopOrdersSubmission(m, 1)
	rises.RisesAbove.Price, rises.RisesAbove.TrailingPercentOffset = nil, ptr("0.025")
	falls := c.stopOrdersSubmission(m, 2)
	falls.FallsBelow.Price, falls.FallsBelow.TrailingPercentOffset = ptr(utoa(m.price-m.price/10)), nil
	falls.FallsBelow.ExpiresAt, falls.FallsBelow.ExpiryStrategy = nil, nil
	falls.FallsBelow.SizeOverrideSetting = ptr(upstream.SizeOverrideSettingNone)
	falls.FallsBelow.SizeOverrideValue = nil
	b.StopOrdersSubmission = append(b.StopOrdersSubmission, both, rises, falls)
	return b
}

// buildStopOrderTriggers: a stop order on both sides, one triggered by a
// price 5% above the market's, the other by a trailing offset.
func buildStopOrderTriggers(c *txCtx, _ []string) upstream.CommandKind {
	m := &c.g.markets[c.g.perps[0]]
	so := c.stopOrdersSubmission(m, 0)
	so.RisesAbove.Price, so.RisesAbove.TrailingPercentOffset = ptr(utoa(m.price+m.price/20)), nil
	so.FallsBelow.Price, so.FallsBelow.TrailingPercentOffset = nil, ptr("0.01")
	return &so
}

// buildOrderCoverage: every value of the order enums.
func buildOrderCoverage(c *txCtx, _ []string) upstream.CommandKind {
	m := &c.g.markets[c.g.perps[2]]
	b := emptyBatch()
	for i, tif := range enumTimeInForce {
		o := c.orderSubmission(m)
		o.TimeInForce = upstream.TimeInForce(tif)
		o.Side = upstream.Side(enumSide[i%len(enumSide)])
		o.Type = upstream.OrderType(enumOrderType[i%len(enumOrderType)])
		o.ExpiresAt = 0
		if tif == "TIME_IN_FORCE_GTT" {
			o.ExpiresAt = upstream.UnixNanos(c.now + 3_600e9)
		}
		o.PeggedOrder = &upstream.PeggedOrder{Reference: upstream.PeggedReference(enumPeggedReference[i%len(enumPeggedReference)]), Offset: itoa(int64(i * 10))}
		b.Submissions = append(b.Submissions, o)

		a := c.orderAmendment(m)
		a.TimeInForce = upstream.TimeInForce(tif)
		a.PeggedReference = upstream.PeggedReference(enumPeggedReference[i%len(enumPeggedReference)])
		b.Amendments = append(b.Amendments, a)
	}
	for i, mode := range enumMarginMode {
		u := upstream.UpdateMarginMode{MarketID: m.id, Mode: upstream.MarginMode(mode)}
		if mode == "MODE_ISOLATED_MARGIN" {
			u.MarginFactor = ptr("0.1")
		}
		b.UpdateMarginMode = append(b.UpdateMarginMode, u)
		s := c.stopOrdersSubmission(m, 0)
		s.RisesAbove.ExpiresAt = ptr(upstream.UnixNanos(c.now + 7*86_400e9))
		s.RisesAbove.ExpiryStrategy = ptr(upstream.StopOrderExpiryStrategy(enumExpiryStrategy[i]))
		s.FallsBelow.SizeOverrideSetting = ptr(upstream.SizeOverrideSetting(enumSizeOverride[i]))
		s.FallsBelow.SizeOverrideValue = &upstream.SizeOverrideValue{Percentage: "1"}
		b.StopOrdersSubmission = append(b.StopOrdersSubmission, s)
	}
	return b
}

// Lengths of the long-rationale edge case, in Unicode code points.
const (
	maxDescriptionChars = 20_000
	maxTitleChars       = 100
)

// longText returns exactly n code points of mixed-script prose.
func longText(n int) string {
	const chunk = "Rationale ¶ détaillée — 詳細な説明 🚀 with data, fees & limits. "
	var b strings.Builder
	count := 0
	for count < n {
		for _, r := range chunk {
			if count == n {
				break
			}
			b.WriteRune(r)
			count++
		}
	}
	return b.String()
}

// buildLongRationale: a 20,000-character description and a 100-character
// title (in code points, some of them multi-byte).
func buildLongRationale(c *txCtx, _ []string) upstream.CommandKind {
	p := c.batchProposalOf(changeNewFreeform, changeUpdateNetworkParameter)
	title := "Révision complète des paramètres — 市場 🚀 "
	title += strings.Repeat("x", maxTitleChars-utf8.RuneCountInString(title))
	p.Rationale = &upstream.ProposalRationale{Title: title, Description: longText(maxDescriptionChars)}
	return p
}

// danglingAsset returns an asset id that is not in the dataset.
func danglingAsset(c *txCtx) string {
	r := newRand(c.g.seed, streamMisc, 1)
	for {
		id := hexID(r)
		if _, ok := c.g.assetByID(id); !ok {
			return id
		}
	}
}

// buildDanglingAssets: asset references to an asset the dataset lacks, in
// every place a change names an asset.
func buildDanglingAssets(c *txCtx, _ []string) upstream.CommandKind {
	missing := danglingAsset(c)
	p := c.batchProposalOf(changeNewMarket, changeNewSpotMarket, changeNewTransfer, changeUpdateAsset)
	nm := changeAt[*upstream.NewMarket](p, 0).Changes
	nm.Instrument = &upstream.Instrument{Code: "GHOST/USDT-JUN24", Name: "Ghost / Tether USD Future", Future: c.future(marketOptions{settlement: missing})}
	changeAt[*upstream.NewSpotMarket](p, 1).Changes.Instrument.Spot.BaseAsset = missing
	changeAt[*upstream.NewTransfer](p, 2).Changes = c.governanceTransfer(transferOptions{recurring: true, asset: missing})
	changeAt[*upstream.UpdateAsset](p, 3).AssetID = missing
	return p
}

// buildFutureMarket: a future with a simple risk model, oracle settlement
// signed by a key and an address, termination on the network clock, and a
// successor configuration.
func buildFutureMarket(c *txCtx, _ []string) upstream.CommandKind {
	p := c.batchProposalOf(changeNewMarket)
	o := marketOptions{successor: true, settlement: c.g.assets[c.g.asset("USDT")].ID}
	cfg := c.newMarketConfig(o)
	prop := "prices.ETH.value"
	f := c.future(o)
	f.DataSourceSpecForSettlementData = c.oracleSourceSigned(prop, "TYPE_INTEGER", 0, 2)
	f.DataSourceSpecForTradingTermination = c.internalTimeSource(0)
	f.DataSourceSpecBinding = &upstream.DataSourceSpecToFutureBinding{SettlementDataProperty: prop, TradingTerminationProperty: "vegaprotocol.builtin.timestamp"}
	cfg.Instrument = &upstream.Instrument{Code: "ETH/USDT-SEP24", Name: "Ether / Tether USD Future (Sep 2024)", Future: f}
	cfg.LogNormal, cfg.Simple = nil, c.simple()
	changeAt[*upstream.NewMarket](p, 0).Changes = cfg
	return p
}

// buildPerpetualMarket: a perpetual with a log-normal risk model, settlement
// data from an Ethereum call (with Pyth arguments, a time trigger with an
// end), a funding schedule on the network's time trigger, and composite
// prices fed by an Ethereum call without an end and a signed oracle.
func buildPerpetualMarket(c *txCtx, _ []string) upstream.CommandKind {
	p := c.batchProposalOf(changeNewMarket)
	o := marketOptions{perpetual: true, logNormal: true, ethOracle: true, until: true, settlement: c.g.assets[c.g.asset("USDC")].ID}
	cfg := c.newMarketConfig(o)
	prop := "btc.price"
	perp := c.perpetual(o)
	eth := c.ethOracleSource(prop, true, 0)
	spec := eth.External.EthOracle
	c.pythCall(spec, prop)
	spec.Trigger.TimeTrigger.Initial = ptr(upstream.UnixSeconds(c.now/1e9 + 600))
	perp.DataSourceSpecForSettlementData = eth
	perp.DataSourceSpecForSettlementSchedule = c.internalTimeTriggerSource(true, 0)
	perp.DataSourceSpecBinding = &upstream.DataSourceSpecToPerpetualBinding{SettlementDataProperty: prop, SettlementScheduleProperty: "vegaprotocol.builtin.timetrigger"}
	composite := c.compositePrice(1, 0) // weighted
	composite.DataSourcesSpec = []upstream.DataSourceDefinition{*c.ethOracleSource(prop, false, 0), *c.oracleSourceSigned(prop, "TYPE_INTEGER", 0, 0)}
	composite.DataSourcesSpecBinding = []upstream.SpecBindingForCompositePrice{{PriceSourceProperty: prop}, {PriceSourceProperty: prop}}
	composite.SourceWeights = []string{"0", "0", "1", "1"}
	composite.SourceStalenessTolerance = []string{"1m0s", "1m0s", "10m0s", "10m0s"}
	perp.InternalCompositePriceConfiguration = composite
	cfg.Instrument = &upstream.Instrument{Code: "BTC/USDC-PERP", Name: "Bitcoin / USD Coin Perpetual", Perpetual: perp}
	cfg.Simple, cfg.LogNormal, cfg.Successor = nil, c.logNormal(), nil
	changeAt[*upstream.NewMarket](p, 0).Changes = cfg
	return p
}

// sameChanges is a batch proposal of n changes of kind k.
func (c *txCtx) sameChanges(k changeKind, n int) *upstream.BatchProposalSubmission {
	kinds := make([]changeKind, n)
	for i := range kinds {
		kinds[i] = k
	}
	return c.batchProposalOf(kinds...)
}

// buildMarketCoverage: four new markets that together use every liquidity
// fee method, composite price type, condition operator and property key
// type.
func buildMarketCoverage(c *txCtx, _ []string) upstream.CommandKind {
	p := c.sameChanges(changeNewMarket, 4)
	for i := range p.Terms.Changes {
		o := marketOptions{perpetual: i%2 == 1, logNormal: i < 2, successor: i == 3, feeMethod: 1 + i, priceType: 1 + i, coverage: 1 + i, ethOracle: i == 2, until: false}
		changeAt[*upstream.NewMarket](p, i).Changes = c.newMarketConfig(o)
	}
	return p
}

// buildUpdateMarkets: an update of a future and of a perpetual.
func buildUpdateMarkets(c *txCtx, _ []string) upstream.CommandKind {
	p := c.sameChanges(changeUpdateMarket, 2)
	var future, perp *genMarket
	for i := range c.g.markets {
		m := &c.g.markets[i]
		switch {
		case m.product == productFuture && future == nil:
			future = m
		case m.product == productPerpetual && perp == nil:
			perp = m
		}
	}
	p.Terms.Changes[0].Change = c.updateMarket(future)
	p.Terms.Changes[1].Change = c.updateMarket(perp)
	return p
}

// buildMarketStates: every market state update type, terminate with a
// settlement price and the others without.
func buildMarketStates(c *txCtx, _ []string) upstream.CommandKind {
	p := c.sameChanges(changeUpdateMarketState, len(enumMarketState)+1)
	for i := range enumMarketState {
		p.Terms.Changes[i].Change = c.updateMarketState(i, enumMarketState[i] == "MARKET_STATE_UPDATE_TYPE_TERMINATE")
	}
	p.Terms.Changes[len(enumMarketState)].Change = c.updateMarketState(1, false)
	return p
}

// buildAccountTypeCoverage: one-off governance transfers whose source and
// destination types run through every account type.
func buildAccountTypeCoverage(c *txCtx, _ []string) upstream.CommandKind {
	n := (len(enumAccountType) + 1) / 2
	p := c.sameChanges(changeNewTransfer, n)
	for i := range n {
		src := 2 * i
		dst := (2*i + 1) % len(enumAccountType)
		changeAt[*upstream.NewTransfer](p, i).Changes = c.governanceTransfer(transferOptions{
			source: 1 + src, destination: 1 + dst, oneOff: true, transferType: 1 + i%len(enumTransferType),
		})
	}
	return p
}

// buildDispatchCoverage: recurring transfers over every dispatch metric,
// distribution strategy (rank tables included), entity and individual
// scope; one recurring without a dispatch strategy; one one-off.
func buildDispatchCoverage(c *txCtx, _ []string) upstream.CommandKind {
	n := len(enumDispatchMetric)
	p := c.sameChanges(changeNewTransfer, n+2)
	for i := range n {
		changeAt[*upstream.NewTransfer](p, i).Changes = c.governanceTransfer(transferOptions{
			recurring:    true,
			metric:       1 + i,
			distribution: 1 + i%len(enumDistribution),
			entity:       1 + i%len(enumEntityScope),
			individual:   1 + i%len(enumIndividualScope),
			transferType: 1 + i%len(enumTransferType),
		})
	}
	changeAt[*upstream.NewTransfer](p, n).Changes = c.governanceTransfer(transferOptions{recurring: true, noDispatch: true})
	changeAt[*upstream.NewTransfer](p, n+1).Changes = c.governanceTransfer(transferOptions{oneOff: true})
	return p
}

// buildNewAssetProposal: a new token-contract asset, enacted a day after
// voting closes.
func buildNewAssetProposal(c *txCtx, _ []string) upstream.CommandKind {
	p := &upstream.ProposalSubmission{Reference: c.reference("proposal"), Terms: &upstream.ProposalTerms{ClosingTimestamp: upstream.UnixSeconds(c.closing())}}
	p.Terms.EnactmentTimestamp = p.Terms.ClosingTimestamp + 86_400
	c.newAsset(p, true)
	return p
}

// buildOneOffTransfer: a party's one-off transfer, delivered an hour after
// the block.
func buildOneOffTransfer(c *txCtx, _ []string) upstream.CommandKind {
	t := c.transfer()
	t.Recurring = nil
	t.OneOff = &upstream.OneOffTransfer{DeliverOn: upstream.UnixNanos(c.now + 3_600e9)}
	return t
}

// buildRecurringTransfer: a party's recurring transfer into the maker
// fees reward pool for 30 epochs, with a dispatch strategy.
func buildRecurringTransfer(c *txCtx, _ []string) upstream.CommandKind {
	t := c.transfer()
	metric := 1 // maker fees paid
	t.ToAccountType = upstream.AccountType(rewardAccountFor(metric))
	t.Recurring.EndEpoch = ptr(t.Recurring.StartEpoch + 30)
	t.Recurring.DispatchStrategy = c.dispatchStrategy(metric, -1)
	return t
}

// assetByID finds an asset of the dataset.
func (g *generator) assetByID(id string) (int, bool) {
	for i, a := range g.assets {
		if a.ID == id {
			return i, true
		}
	}
	return 0, false
}
