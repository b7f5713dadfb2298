package graph

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tradenet/gateway/graph/model"
	"github.com/tradenet/gateway/internal/clip"
	"github.com/tradenet/gateway/upstream"
)

// transactionFilter is what a transactions connection is filtered by: the
// arguments of Query.transactions and Party.transactions.
type transactionFilter struct {
	Types, ExcludeTypes []upstream.TransactionType
	Block               *upstream.Uint64
	Submitter           *string
	// CmdTypes and ExcludeCmdTypes are the deprecated string forms of
	// Types and ExcludeTypes; a list of each combines into one.
	CmdTypes, ExcludeCmdTypes, Parties []string
}

// params validates f and turns it into the explorer's filters: type
// strings checked against the explorer's (typeStrings), each enum value
// sent as every string history spells it, party keys lower-cased as the
// explorer stores them. Bad input is refused before any request.
func (f transactionFilter) params() (upstream.TransactionsParams, error) {
	var p upstream.TransactionsParams
	for i := range f.Parties {
		if err := checkID(fmt.Sprintf("parties[%d]", i), "party", &f.Parties[i]); err != nil {
			return p, err
		}
		p.Parties = append(p.Parties, strings.ToLower(f.Parties[i]))
	}
	if f.Submitter != nil {
		if err := checkID("submitter", "party", f.Submitter); err != nil {
			return p, err
		}
		p.Submitter = strings.ToLower(*f.Submitter)
	}
	if f.Block != nil {
		height := uint64(*f.Block)
		p.BlockHeight = &height
	}
	var err error
	if p.CmdTypes, err = typeFilter("cmdTypes", f.Types, f.CmdTypes); err != nil {
		return p, err
	}
	if p.ExcludeCmdTypes, err = typeFilter("excludeCmdTypes", f.ExcludeTypes, f.ExcludeCmdTypes); err != nil {
		return p, err
	}
	return p, nil
}

// typeFilter is the explorer's type strings for a list of enum values and
// one of strings (arg names the strings' argument): every string of each
// value, then the strings, each once. A string the explorer does not use
// would silently match nothing: it is refused, naming the valid ones.
func typeFilter(arg string, types []upstream.TransactionType, names []string) ([]string, error) {
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, t := range types {
		for _, s := range typeStrings[t] {
			add(s)
		}
	}
	for i, name := range names {
		if _, ok := typeOfString[name]; !ok {
			return nil, unknownTypeString(fmt.Sprintf("%s[%d]", arg, i), name)
		}
		add(name)
	}
	return out, nil
}

// unknownTypeString is the error for a type string the explorer does not
// use: it says which spelling was meant when only the letter case differs,
// and lists the valid strings.
func unknownTypeString(arg, name string) error {
	// In sorted order, so that the hint is the same on every call: of two
	// spellings differing only in case, the current one ("Register New
	// Node") sorts before the old one ("Register new Node").
	hint := ""
	for _, s := range slices.Sorted(maps.Keys(typeOfString)) {
		if strings.EqualFold(strings.Join(strings.Fields(s), ""), strings.Join(strings.Fields(name), "")) {
			hint = fmt.Sprintf(" (did you mean %q?)", s)
			break
		}
	}
	valid := make([]string, 0, len(typeOfString))
	for _, s := range slices.Sorted(maps.Keys(typeOfString)) {
		valid = append(valid, strconv.Quote(s))
	}
	return badInput("%s: %q is not a transaction type%s; use `types` (enum TransactionType) or one of the explorer's type strings, matched exactly: %s",
		arg, clip.Cut(name, 80), hint, strings.Join(valid, ", "))
}

// typeStrings are the explorer's `type` strings of each TransactionType
// value (docs/explorer.md): the current one first, then the spelling cores
// before v0.72 wrote (docs/wire.md, Command kinds), which history keeps.
// TestTransactionTypeStrings checks it against the enum's descriptions.
var typeStrings = map[upstream.TransactionType][]string{
	upstream.TransactionTypeSubmitOrder:                   {"Submit Order"},
	upstream.TransactionTypeCancelOrder:                   {"Cancel Order"},
	upstream.TransactionTypeAmendOrder:                    {"Amend Order"},
	upstream.TransactionTypeWithdraw:                      {"Withdraw"},
	upstream.TransactionTypeProposal:                      {"Proposal"},
	upstream.TransactionTypeVoteOnProposal:                {"Vote on Proposal"},
	upstream.TransactionTypeLiquidityProvisionOrder:       {"Liquidity Provision Order"},
	upstream.TransactionTypeDelegate:                      {"Delegate"},
	upstream.TransactionTypeUndelegate:                    {"Undelegate"},
	upstream.TransactionTypeCancelLiquidityProvisionOrder: {"Cancel Liquidity Provision Order", "Cancel LiquidityProvision Order"},
	upstream.TransactionTypeAmendLiquidityProvisionOrder:  {"Amend Liquidity Provision Order", "Amend LiquidityProvision Order"},
	upstream.TransactionTypeTransferFunds:                 {"Transfer Funds"},
	upstream.TransactionTypeCancelTransferFunds:           {"Cancel Transfer Funds"},
	upstream.TransactionTypeRegisterNewNode:               {"Register New Node", "Register new Node"},
	upstream.TransactionTypeBatchMarketInstructions:       {"Batch Market Instructions"},
	upstream.TransactionTypeStopOrdersSubmission:          {"Stop Orders Submission"},
	upstream.TransactionTypeStopOrdersCancellation:        {"Stop Orders Cancellation"},
	upstream.TransactionTypeCreateReferralSet:             {"Create Referral Set"},
	upstream.TransactionTypeUpdateReferralSet:             {"Update Referral Set"},
	upstream.TransactionTypeApplyReferralCode:             {"Apply Referral Code"},
	upstream.TransactionTypeUpdateMarginMode:              {"Update Margin Mode"},
	upstream.TransactionTypeJoinTeam:                      {"Join Team"},
	upstream.TransactionTypeBatchProposal:                 {"Batch Proposal"},
	upstream.TransactionTypeUpdatePartyProfile:            {"Update Party Profile"},
	upstream.TransactionTypeNodeVote:                      {"Node Vote"},
	upstream.TransactionTypeNodeSignature:                 {"Node Signature"},
	upstream.TransactionTypeChainEvent:                    {"Chain Event"},
	upstream.TransactionTypeKeyRotateSubmission:           {"Key Rotate Submission"},
	upstream.TransactionTypeStateVariableProposal:         {"State Variable Proposal"},
	upstream.TransactionTypeValidatorHeartbeat:            {"Validator Heartbeat"},
	upstream.TransactionTypeEthereumKeyRotateSubmission:   {"Ethereum Key Rotate Submission"},
	upstream.TransactionTypeProtocolUpgrade:               {"Protocol Upgrade"},
	upstream.TransactionTypeIssueSignatures:               {"Issue Signatures"},
	upstream.TransactionTypeSubmitOracleData:              {"Submit Oracle Data"},
}

// typeOfString is typeStrings reversed: the valid type strings.
var typeOfString = func() map[string]upstream.TransactionType {
	m := map[string]upstream.TransactionType{}
	for t, names := range typeStrings {
		for _, s := range names {
			m[s] = t
		}
	}
	return m
}()

// transaction serves Query.transaction: one lookup by hash, shared by the
// request's lookups of the same hash in any case (requestUpstream).
func (r *Resolver) transaction(ctx context.Context, hash string) (*upstream.Transaction, error) {
	if !isHexID(hash) {
		return nil, badInput("hash: %q is not a transaction hash; hashes are 64 hexadecimal characters", clip.Cut(hash, 80))
	}
	tx, err := r.upstreamFor(ctx).GetTransaction(ctx, hash)
	switch {
	case upstream.IsNotFound(err):
		return nil, notFound("no transaction has hash %s", strings.ToUpper(hash))
	case errors.Is(err, upstream.ErrHashNotUnique):
		return nil, &Error{Code: CodeUpstreamError, Err: err,
			Message: fmt.Sprintf("the block explorer holds more than one transaction with hash %s, so it returns none", strings.ToUpper(hash))}
	case err != nil:
		return nil, fmt.Errorf("transaction %s: %w", hash, err)
	}
	// The command, as far as the operation reads it (commanduse.go).
	rows, err := commandsFor(ctx, []upstream.Transaction{*tx}, upstream.EndpointTransaction)
	if err != nil {
		return nil, fmt.Errorf("transaction %s: get transaction %s: %w", hash, strings.ToUpper(hash), err)
	}
	batchPageAssets(ctx, rows)
	return &rows[0], nil
}

// txCursor is the gateway's transaction cursor: the row's place in the
// chain, which is also the explorer's cursor.
type txCursor struct {
	B uint64 `json:"b"`
	I uint32 `json:"i"`
}

// encode returns the cursor: its JSON ({"b":…,"i":…}) written without
// reflection, in a stack buffer.
func (c txCursor) encode(keys *CursorKeys) string {
	var raw [cursorBuffer]byte
	b := appendCursorHeader(raw[:0], listTransactions)
	b = append(b, `{"b":`...)
	b = strconv.AppendUint(b, c.B, 10)
	b = append(b, `,"i":`...)
	b = strconv.AppendUint(b, uint64(c.I), 10)
	return keys.sealCursor(append(b, '}'))
}

// maxExplorerFollowUps bounds the extra requests made when the explorer
// answers short pages (it skips rows it cannot decode).
const maxExplorerFollowUps = 4

// listTransactions serves Query.transactions and Party.transactions.
func (r *Resolver) listTransactions(ctx context.Context, f transactionFilter, args pageArgs) (*model.TransactionConnection, error) {
	filters, err := f.params()
	if err != nil {
		return nil, err
	}
	req, err := r.pagingFor(ctx).resolve(args)
	if err != nil {
		return nil, err
	}
	var from *upstream.Transaction
	if req.Cursor != "" {
		var c txCursor
		if err := decodeCursor(r.Cursors, req.cursorArg(), req.Cursor, listTransactions, &c); err != nil {
			return nil, err
		}
		from = &upstream.Transaction{Block: upstream.Uint64(c.B), Index: upstream.Int32(c.I)}
	}
	paging := explorerPaging[upstream.Transaction]{
		MaxFollowUps: maxExplorerFollowUps,
		Oldest:       firstOfBlock(filters.BlockHeight),
		Fetch: func(ctx context.Context, older bool, cursor *upstream.Transaction, n int) ([]upstream.Transaction, error) {
			p := filters
			var at *upstream.TxCursor
			if cursor != nil {
				pos := cursor.Position()
				at = &pos
			}
			if older {
				p.Last, p.Before = n, at
			} else {
				p.First, p.After = n, at
			}
			pg, err := r.upstreamFor(ctx).ListTransactions(ctx, p)
			if err != nil {
				return nil, fmt.Errorf("list transactions: %w", err)
			}
			return pg.Transactions, nil
		},
	}
	rows, hasNext, hasPrev, err := paging.page(ctx, req.Backward, from, req.Size)
	if err != nil {
		return nil, err
	}
	// The commands, as far as the operation reads them (commanduse.go).
	if rows, err = commandsFor(ctx, rows, upstream.EndpointTransactions); err != nil {
		return nil, fmt.Errorf("list transactions: %w", err)
	}
	batchPageAssets(ctx, rows)
	conn := &model.TransactionConnection{Edges: make([]model.TransactionEdge, len(rows))}
	for i := range rows {
		conn.Edges[i].Node = &rows[i]
	}
	// The cursors, when the operation reads them (cursoruse.go).
	var cursors []string
	if readsCursors(ctx, listTransactions) {
		cursors = make([]string, len(rows))
		for i := range rows {
			pos := rows[i].Position()
			cursors[i] = txCursor{B: pos.Block, I: pos.Index}.encode(r.Cursors)
			conn.Edges[i].Cursor = cursors[i]
		}
	}
	conn.PageInfo = pageInfo(cursors, hasNext, hasPrev)
	return conn, nil
}

// firstOfBlock is explorerPaging.Oldest for a list of one block's
// transactions (nil for any other list): a transaction's index is its
// place in its block, from 0, so nothing in that block is older than the
// one at index 0. A block page that reaches it needs no follow-up
// request to learn that the block has no more rows; for a block of a few
// transactions that halves the requests of the page.
func firstOfBlock(height *uint64) func(*upstream.Transaction) bool {
	if height == nil {
		return nil
	}
	return func(tx *upstream.Transaction) bool {
		return tx.Index == 0 && uint64(tx.Block) == *height
	}
}

// txCursorOf is the cursor of a transaction's row.
func txCursorOf(tx *upstream.Transaction) txCursor {
	pos := tx.Position()
	return txCursor{B: pos.Block, I: pos.Index}
}
