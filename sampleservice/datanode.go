package sampleservice

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// dataNode holds the three data-node lists, sorted once at start-up in
// ascending key order, with every row's node JSON and cursor pre-encoded
// so that a page is a concatenation.
type dataNode struct {
	assets       []Asset
	assetNodes   [][]byte
	assetCursors []string
	assetByID    map[string]int32
	assetAll     []int32

	funding        []FundingPayment
	fundingNodes   [][]byte
	fundingCursors []string
	fundingByParty map[string][]int32

	delegations       []Delegation
	delegationEpochs  []int64
	delegationNodes   [][]byte
	delegationCursors []string
	delegationAll     []int32
	delegationByParty map[string][]int32
	delegationByNode  map[string][]int32
}

// Cursor payloads, exactly as the v0.74 data node encodes them.
type assetCursor struct {
	ID string `json:"id"`
}

type fundingCursor struct {
	VegaTime time.Time `json:"vegaTime"`
	MarketID string    `json:"marketID"`
	PartyID  string    `json:"partyID"`
}

type delegationCursor struct {
	VegaTime time.Time `json:"vegaTime"`
	PartyID  string    `json:"partyId"`
	NodeID   string    `json:"nodeId"`
	EpochID  int64     `json:"epochId"`
}

// marshalCompact encodes v as compact JSON without HTML escaping, as
// protojson does.
func marshalCompact(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// The record types are plain structs; this cannot happen.
		return []byte("null")
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// encodeCursor is the data node's cursor: standard base64, with padding,
// of the cursor's JSON.
func encodeCursor(v any) string {
	b, _ := json.Marshal(v)
	return base64.StdEncoding.EncodeToString(b)
}

// vegaTime turns Unix nanoseconds into the UTC time that cursors carry.
func vegaTime(ns int64) time.Time { return time.Unix(0, ns).UTC() }

func newDataNode(d *Dataset) *dataNode {
	n := &dataNode{
		assetByID:         map[string]int32{},
		fundingByParty:    map[string][]int32{},
		delegationByParty: map[string][]int32{},
		delegationByNode:  map[string][]int32{},
	}

	n.assets = slices.Clone(d.Assets)
	slices.SortStableFunc(n.assets, func(a, b Asset) int { return strings.Compare(a.ID, b.ID) })
	for i, a := range n.assets {
		n.assetNodes = append(n.assetNodes, marshalCompact(a))
		n.assetCursors = append(n.assetCursors, encodeCursor(assetCursor{ID: a.ID}))
		n.assetByID[a.ID] = int32(i)
		n.assetAll = append(n.assetAll, int32(i))
	}

	n.funding = slices.Clone(d.FundingPayments)
	slices.SortStableFunc(n.funding, compareFunding)
	for i, f := range n.funding {
		n.fundingNodes = append(n.fundingNodes, marshalCompact(f))
		n.fundingCursors = append(n.fundingCursors, encodeCursor(fundingCursor{
			VegaTime: vegaTime(int64(f.Timestamp)), MarketID: f.MarketID, PartyID: f.PartyID,
		}))
		n.fundingByParty[f.PartyID] = append(n.fundingByParty[f.PartyID], int32(i))
	}

	n.delegations = slices.Clone(d.Delegations)
	slices.SortStableFunc(n.delegations, compareDelegation)
	for i, dl := range n.delegations {
		epoch := parseEpoch(dl.EpochSeq)
		n.delegationEpochs = append(n.delegationEpochs, epoch)
		n.delegationNodes = append(n.delegationNodes, marshalCompact(dl))
		n.delegationCursors = append(n.delegationCursors, encodeCursor(delegationCursor{
			VegaTime: vegaTime(dl.VegaTime), PartyID: dl.Party, NodeID: dl.NodeID, EpochID: epoch,
		}))
		n.delegationAll = append(n.delegationAll, int32(i))
		n.delegationByParty[dl.Party] = append(n.delegationByParty[dl.Party], int32(i))
		n.delegationByNode[dl.NodeID] = append(n.delegationByNode[dl.NodeID], int32(i))
	}
	return n
}

// parseEpoch reads an epoch sequence number; a malformed one sorts as 0.
func parseEpoch(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// compareFunding is the funding-payment order: time, market, funding
// period, party (the service returns it reversed, newest first).
func compareFunding(a, b FundingPayment) int {
	return cmp.Or(
		cmp.Compare(a.Timestamp, b.Timestamp),
		strings.Compare(a.MarketID, b.MarketID),
		cmp.Compare(a.FundingPeriodSeq, b.FundingPeriodSeq),
		strings.Compare(a.PartyID, b.PartyID),
	)
}

// compareDelegation is the delegation order: time, party, node, epoch.
func compareDelegation(a, b Delegation) int {
	return cmp.Or(
		cmp.Compare(a.VegaTime, b.VegaTime),
		strings.Compare(a.Party, b.Party),
		strings.Compare(a.NodeID, b.NodeID),
		cmp.Compare(parseEpoch(a.EpochSeq), parseEpoch(b.EpochSeq)),
	)
}

// isVegaID reports whether s is a party or market id: 64 lowercase hex
// characters.
func isVegaID(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// invalidPagination is the 400 the funding-payment and delegation lists
// answer to bad paging, with the reason in inner.
func invalidPagination(err error) *apiError {
	return vegaError(http.StatusBadRequest, grpcInvalidArgument, detailInvalidPagination, "invalid pagination", err.Error())
}

// resolvePagination validates raw paging and decodes the cursor's JSON
// into cursor.
func resolvePagination(raw rawPagination, cursor any) (pagination, error) {
	p, err := raw.resolve()
	if err != nil {
		return p, err
	}
	if p.cursor != nil {
		if err := json.Unmarshal(p.cursor, cursor); err != nil {
			return p, p.cursorError(err)
		}
	}
	return p, nil
}

// listAssets serves GET /api/v2/assets.
func (n *dataNode) listAssets(q query, defects Defects) ([]byte, *apiError) {
	raw, perr := parsePagination(q)
	if perr != nil {
		return nil, perr
	}
	if id, _ := q.lookup("assetId", "asset_id"); id != "" {
		// One asset: paging is ignored, page info is all false.
		i, ok := n.assetByID[id]
		if !ok {
			return nil, vegaError(http.StatusNotFound, grpcNotFound, detailAssetGetByID, "failed to get asset for ID",
				"failed to get asset by ID: "+id+": no resource corresponding to this id")
		}
		return appendConnection(nil, "assets", page{rows: []int32{i}}, n.assetNodes, n.assetCursors), nil
	}
	var cur assetCursor
	p, err := resolvePagination(raw, &cur)
	if err != nil {
		if defects.AssetPagingErrors500 {
			// Defect 3: the list wraps the pagination status error in an
			// internal one.
			return nil, vegaError(http.StatusInternalServerError, grpcInternal, detailAssetsGetAll, "failed to get assets",
				"rpc error: code = InvalidArgument desc = InvalidArgument error")
		}
		return nil, invalidPagination(err)
	}
	pg := paginate(n.assetAll, p, func(r int32) int { return strings.Compare(n.assets[r].ID, cur.ID) })
	return appendConnection(nil, "assets", pg, n.assetNodes, n.assetCursors), nil
}

// errFundingCursor is defect 1 of docs/wire.md, Known defects.
const errFundingCursor = "building cursor predicate: no field matching column name funding_period_seq"

// listFundingPayments serves GET /api/v2/funding-payments.
func (n *dataNode) listFundingPayments(q query, defects Defects) ([]byte, *apiError) {
	raw, perr := parsePagination(q)
	if perr != nil {
		return nil, perr
	}
	party, _ := q.lookup("partyId", "party_id")
	if !isVegaID(party) {
		return nil, vegaError(http.StatusBadRequest, grpcInvalidArgument, detailNotMapped, "invalid party id", "")
	}
	market, hasMarket := q.lookup("marketId", "market_id")
	if hasMarket && !isVegaID(market) {
		return nil, vegaError(http.StatusBadRequest, grpcInvalidArgument, detailNotMapped, "invalid market ID", "")
	}
	var cur fundingCursor
	p, err := resolvePagination(raw, &cur)
	if err != nil {
		return nil, invalidPagination(err)
	}
	if p.cursor != nil && defects.FundingCursors {
		return nil, vegaError(http.StatusInternalServerError, grpcInternal, detailNotMapped, errFundingCursor, "")
	}
	list := n.fundingByParty[party]
	if hasMarket {
		list = keepRows(list, func(r int32) bool { return n.funding[r].MarketID == market })
	}
	// The cursor has no funding period, so rows are located by time,
	// market and party (the list is for one party: rows of one market at
	// one instant are one position).
	curTime := cur.VegaTime.UnixNano()
	pg := paginate(list, p, func(r int32) int {
		f := &n.funding[r]
		return cmp.Or(
			cmp.Compare(int64(f.Timestamp), curTime),
			strings.Compare(f.MarketID, cur.MarketID),
			strings.Compare(f.PartyID, cur.PartyID),
		)
	})
	return appendConnection(nil, "fundingPayments", pg, n.fundingNodes, n.fundingCursors), nil
}

// keepRows returns, in a new slice, the rows of list that keep accepts
// (list is an index the service shares: it is never modified).
func keepRows(list []int32, keep func(r int32) bool) []int32 {
	out := make([]int32, 0, len(list))
	for _, r := range list {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// listDelegations serves GET /api/v2/delegations. Without epochId it
// returns every epoch's rows, as v0.74 does (the interface document says
// the current epoch).
func (n *dataNode) listDelegations(q query, _ Defects) ([]byte, *apiError) {
	raw, perr := parsePagination(q)
	if perr != nil {
		return nil, perr
	}
	var cur delegationCursor
	p, err := resolvePagination(raw, &cur)
	if err != nil {
		return nil, invalidPagination(err)
	}
	var epoch *int64
	if s, ok := q.lookup("epochId", "epoch_id"); ok {
		e, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, vegaError(http.StatusBadRequest, grpcInvalidArgument, detailEpochIDParse, "failed to parse epoch id",
				"epochID: "+s+": "+err.Error())
		}
		epoch = &e
	}
	party, hasParty := q.lookup("partyId", "party_id")
	node, hasNode := q.lookup("nodeId", "node_id")
	list := n.delegationAll
	switch {
	case hasParty:
		list = n.delegationByParty[party]
	case hasNode:
		list = n.delegationByNode[node]
	}
	if (hasParty && hasNode) || epoch != nil {
		list = keepRows(list, func(r int32) bool {
			return (!hasNode || n.delegations[r].NodeID == node) && (epoch == nil || n.delegationEpochs[r] == *epoch)
		})
	}
	curTime := cur.VegaTime.UnixNano()
	pg := paginate(list, p, func(r int32) int {
		d := &n.delegations[r]
		return cmp.Or(
			cmp.Compare(d.VegaTime, curTime),
			strings.Compare(d.Party, cur.PartyID),
			strings.Compare(d.NodeID, cur.NodeID),
			cmp.Compare(n.delegationEpochs[r], cur.EpochID),
		)
	})
	return appendConnection(nil, "delegations", pg, n.delegationNodes, n.delegationCursors), nil
}
