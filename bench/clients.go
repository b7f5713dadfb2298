package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/tradenet/gateway/internal/httpcompress"
	"github.com/tradenet/gateway/upstream"
)

// directClient fetches data straight from the REST service, as a client
// without the gateway would: plain GETs, the bodies decoded into the wire
// types of package upstream, and the extra requests the data needs
// (references to resolve) made by itself. It neither caches nor
// coalesces: each caller's requests are its own.
type directClient struct {
	dataNode, explorer string
	http               *http.Client
}

// graphqlClient POSTs queries to a gateway and decodes the responses.
type graphqlClient struct {
	http *http.Client
}

var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// zstdDecoder decodes the zstd responses; DecodeAll is safe for
// concurrent use.
var zstdDecoder = func() *zstd.Decoder {
	d, err := zstd.NewReader(nil)
	if err != nil {
		panic(err)
	}
	return d
}()

// get GETs u and decodes its JSON body into out.
func (c *directClient) get(ctx context.Context, u string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer bodyBuffers.Put(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return fmt.Errorf("GET %s: read body: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return &statusError{url: u, status: resp.StatusCode, body: clip(buf.Bytes())}
	}
	if err := json.Unmarshal(buf.Bytes(), out); err != nil {
		return fmt.Errorf("GET %s: decode: %w", u, err)
	}
	return nil
}

// statusError is a response other than 200.
type statusError struct {
	url    string
	status int
	body   string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("GET %s: status %d: %s", e.url, e.status, e.body)
}

// The list bodies of the REST service.
type (
	assetsBody struct {
		Assets *upstream.AssetPage `json:"assets"`
	}
	fundingBody struct {
		FundingPayments *upstream.FundingPaymentPage `json:"fundingPayments"`
	}
	delegationsBody struct {
		Delegations *upstream.DelegationPage `json:"delegations"`
	}
	transactionsBody struct {
		Transactions []upstream.Transaction `json:"transactions"`
	}
)

// directTransactions is a page of transactions with its asset references
// resolved: what the transactions query returns.
type directTransactions struct {
	Rows    []upstream.Transaction
	HasNext bool
	// Assets are the referenced assets by id; a dangling reference (no
	// such asset) has none.
	Assets map[string]*upstream.Asset
}

// transactions fetches the newest first transactions of the given kinds
// (one more, to learn whether more exist: the explorer has no page info)
// and the assets they refer to.
func (c *directClient) transactions(ctx context.Context, first int, cmdTypes []string) (*directTransactions, error) {
	q := url.Values{"first": {strconv.Itoa(first + 1)}}
	if len(cmdTypes) > 0 {
		q["cmdTypes"] = cmdTypes
	}
	var body transactionsBody
	if err := c.get(ctx, c.explorer+"/transactions?"+q.Encode(), &body); err != nil {
		return nil, err
	}
	out := &directTransactions{Rows: body.Transactions}
	if len(out.Rows) > first {
		out.Rows, out.HasNext = out.Rows[:first], true
	}
	assets, err := c.assetsByID(ctx, assetRefs(out.Rows))
	if err != nil {
		return nil, err
	}
	out.Assets = assets
	return out, nil
}

// fewAssets is the largest number of assets looked up one by one; more
// are found by listing every asset. (The gateway's loader does the same.)
const fewAssets = 4

// assetsByID looks up assets: a few by id, concurrently; more by listing
// all assets in pages of the data node's maximum.
func (c *directClient) assetsByID(ctx context.Context, ids []string) (map[string]*upstream.Asset, error) {
	return findAssets(ctx, c, ids, func(ctx context.Context, u string) (assetPage[*upstream.Asset], error) {
		var body assetsBody
		if err := c.get(ctx, u, &body); err != nil || body.Assets == nil {
			return assetPage[*upstream.Asset]{}, err
		}
		p := assetPage[*upstream.Asset]{list: true, hasNext: body.Assets.PageInfo.HasNextPage, end: string(body.Assets.PageInfo.EndCursor)}
		for i := range body.Assets.Edges {
			p.ids = append(p.ids, body.Assets.Edges[i].Node.ID)
			p.nodes = append(p.nodes, &body.Assets.Edges[i].Node)
		}
		return p, nil
	})
}

// assetPage is one response of the data node's assets list, decoded by
// either client: its nodes and their ids, and its page info. list is false
// when the body was not an asset list.
type assetPage[A any] struct {
	ids     []string
	nodes   []A
	list    bool
	hasNext bool
	end     string
}

// findAssets is the lookup both direct clients make, whatever their
// decoding (fetch GETs an assets URL): fewAssets ids or fewer one by one,
// concurrently (a 404 is a dangling reference: no asset); more by listing
// every asset, page after page.
func findAssets[A any](ctx context.Context, c *directClient, ids []string, fetch func(ctx context.Context, u string) (assetPage[A], error)) (map[string]A, error) {
	out := make(map[string]A, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	if len(ids) > fewAssets {
		u := c.dataNode + "/api/v2/assets?pagination.first=5000"
		for {
			p, err := fetch(ctx, u)
			if err != nil {
				return nil, err
			}
			if !p.list {
				return nil, fmt.Errorf("GET %s: not an asset list", u)
			}
			for i, id := range p.ids {
				out[id] = p.nodes[i]
			}
			if !p.hasNext {
				return out, nil
			}
			u = c.dataNode + "/api/v2/assets?pagination.first=5000&pagination.after=" + url.QueryEscape(p.end)
		}
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for _, id := range ids {
		wg.Go(func() {
			p, err := fetch(ctx, c.dataNode+"/api/v2/assets?assetId="+url.QueryEscape(id))
			mu.Lock()
			defer mu.Unlock()
			var status *statusError
			switch {
			case errors.As(err, &status) && status.status == http.StatusNotFound:
				// A dangling reference: no such asset.
			case err != nil:
				first = cmpOr(first, err)
			case len(p.nodes) != 1:
				first = cmpOr(first, fmt.Errorf("asset %s: not one asset", id))
			default:
				out[id] = p.nodes[0]
			}
		})
	}
	wg.Wait()
	return out, first
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// assetRefs lists the distinct asset ids the transactions refer to, in
// the fields the schema resolves into Asset objects.
func assetRefs(rows []upstream.Transaction) []string {
	var ids []string
	seen := map[string]bool{}
	add := func(id string) {
		if id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	instrument := func(in *upstream.Instrument) {
		if in == nil {
			return
		}
		if in.Future != nil {
			add(in.Future.SettlementAsset)
		}
		if in.Perpetual != nil {
			add(in.Perpetual.SettlementAsset)
		}
		if in.Spot != nil {
			add(in.Spot.BaseAsset)
			add(in.Spot.QuoteAsset)
		}
	}
	for i := range rows {
		bp, ok := rows[i].Command.Kind.(*upstream.BatchProposalSubmission)
		if !ok || bp.Terms == nil {
			continue
		}
		for _, ch := range bp.Terms.Changes {
			switch k := ch.Change.(type) {
			case *upstream.NewMarket:
				if k.Changes != nil {
					instrument(k.Changes.Instrument)
				}
			case *upstream.NewSpotMarket:
				if k.Changes != nil {
					instrument(k.Changes.Instrument)
				}
			case *upstream.NewTransfer:
				if t := k.Changes; t != nil {
					add(t.Asset)
					if t.Recurring != nil && t.Recurring.DispatchStrategy != nil {
						add(t.Recurring.DispatchStrategy.AssetForMetric)
					}
				}
			case *upstream.UpdateAsset:
				add(k.AssetID)
			}
		}
	}
	return ids
}

// assets fetches the first page of assets.
func (c *directClient) assets(ctx context.Context, first int) (*upstream.AssetPage, error) {
	var body assetsBody
	if err := c.get(ctx, c.dataNode+"/api/v2/assets?pagination.first="+strconv.Itoa(first), &body); err != nil {
		return nil, err
	}
	if body.Assets == nil {
		return nil, fmt.Errorf("assets: not an asset list")
	}
	return body.Assets, nil
}

// delegations fetches the first page of delegations (of every epoch), or
// of one party's.
func (c *directClient) delegations(ctx context.Context, party string, first int) (*upstream.DelegationPage, error) {
	q := url.Values{"pagination.first": {strconv.Itoa(first)}}
	if party != "" {
		q.Set("partyId", party)
	}
	var body delegationsBody
	if err := c.get(ctx, c.dataNode+"/api/v2/delegations?"+q.Encode(), &body); err != nil {
		return nil, err
	}
	if body.Delegations == nil {
		return nil, fmt.Errorf("delegations: not a delegation list")
	}
	return body.Delegations, nil
}

// directParty is a party's first page of funding payments and of
// delegations: what the party query returns.
type directParty struct {
	Funding     *upstream.FundingPaymentPage
	Delegations *upstream.DelegationPage
}

// party fetches a party's funding payments and delegations, concurrently.
func (c *directClient) party(ctx context.Context, id string, first int) (*directParty, error) {
	var (
		out        directParty
		fundingErr error
		wg         sync.WaitGroup
	)
	wg.Go(func() {
		q := url.Values{"partyId": {id}, "pagination.first": {strconv.Itoa(first)}}
		var body fundingBody
		if fundingErr = c.get(ctx, c.dataNode+"/api/v2/funding-payments?"+q.Encode(), &body); fundingErr == nil {
			if out.Funding = body.FundingPayments; out.Funding == nil {
				fundingErr = fmt.Errorf("funding payments: not a funding-payment list")
			}
		}
	})
	d, err := c.delegations(ctx, id, first)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if fundingErr != nil {
		return nil, fundingErr
	}
	out.Delegations = d
	return &out, nil
}

// gqlRequest is a GraphQL request body.
type gqlRequest struct {
	Query     string         `json:"query"`
	Variables map[string]any `json:"variables,omitempty"`
}

// gqlError is a GraphQL error as the client sees it.
type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// assetFields are the fields that resolve an asset reference: a dangling
// reference keeps its id, and its status and details are null with a
// NOT_FOUND error, the rest of the response intact (the sample dataset has
// such references on purpose).
var assetFields = map[string]bool{"asset": true, "settlementAsset": true, "baseAsset": true, "quoteAsset": true, "assetForMetric": true}

// danglingAsset reports whether e is the NOT_FOUND of a dangling asset
// reference.
func (e gqlError) danglingAsset() bool {
	if len(e.Path) == 0 || e.Extensions["code"] != "NOT_FOUND" {
		return false
	}
	if len(e.Path) < 2 {
		return false
	}
	field, _ := e.Path[len(e.Path)-1].(string)
	ref, _ := e.Path[len(e.Path)-2].(string)
	return assetFields[ref] && (field == "status" || field == "details")
}

// unknownEnum reports whether e is the UPSTREAM_ERROR of an enum value
// the schema does not know (null there, the rest intact; the sample
// dataset has such values on purpose).
func (e gqlError) unknownEnum() bool {
	return e.Extensions["code"] == "UPSTREAM_ERROR" && strings.Contains(e.Message, "which this schema does not know")
}

// nonFiniteFloat reports whether e is the error of a wire "NaN" or
// "Infinity" where the schema has a Float (the dataset has such values on
// purpose).
func (e gqlError) nonFiniteFloat() bool {
	return e.Extensions["code"] == "UPSTREAM_ERROR" && strings.Contains(e.Message, "which a GraphQL Float cannot express")
}

// dataErrors counts the errors that the data itself causes: dangling
// asset references, unknown enum values and non-finite floats. The
// harness checks them against what the direct client finds in the same
// data.
type dataErrors struct {
	dangling, unknownEnums, nonFinite int
}

// post POSTs body (a GraphQL request) to endpoint, asking for coding
// when it is set, and reads the whole response into buf.
func (c *graphqlClient) post(ctx context.Context, endpoint string, body []byte, coding string, buf *bytes.Buffer) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if coding != "" {
		req.Header.Set("Accept-Encoding", coding)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return nil, fmt.Errorf("POST %s: read body: %w", endpoint, err)
	}
	return resp, nil
}

// readOnly posts body (a GraphQL request) to endpoint and reads the
// response without decoding it: an error if the status is not 200 or the
// response names errors.
func (c *graphqlClient) readOnly(ctx context.Context, endpoint string, body []byte) error {
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer bodyBuffers.Put(buf)
	resp, err := c.post(ctx, endpoint, body, "", buf)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || bytes.Contains(buf.Bytes(), []byte(`"errors"`)) {
		return fmt.Errorf("POST %s: status %d: %s", endpoint, resp.StatusCode, clip(buf.Bytes()))
	}
	return nil
}

// query POSTs a query to endpoint and decodes the response. A GraphQL
// error fails the call, except the data errors it counts: the benchmark
// queries must otherwise succeed whole.
func (c *graphqlClient) query(ctx context.Context, g *gatewayServer, query string, vars map[string]any) (data any, counts dataErrors, err error) {
	endpoint := g.url
	body, err := json.Marshal(gqlRequest{Query: query, Variables: vars})
	if err != nil {
		return nil, counts, err
	}
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer bodyBuffers.Put(buf)
	resp, err := c.post(ctx, endpoint, body, g.clientCoding, buf)
	if err != nil {
		return nil, counts, err
	}
	payload := buf.Bytes()
	switch coding := resp.Header.Get("Content-Encoding"); coding {
	case "": // as sent, or decompressed by the transport
	case httpcompress.Zstd:
		plain := bodyBuffers.Get().(*bytes.Buffer)
		defer bodyBuffers.Put(plain)
		plain.Reset()
		out, err := zstdDecoder.DecodeAll(payload, plain.AvailableBuffer())
		if err != nil {
			return nil, counts, fmt.Errorf("POST %s: zstd: %w", endpoint, err)
		}
		plain.Grow(cap(out)) // the buffer's next use decodes in place
		payload = out
	default:
		return nil, counts, fmt.Errorf("POST %s: unexpected Content-Encoding %q", endpoint, coding)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, counts, fmt.Errorf("POST %s: status %d: %s", endpoint, resp.StatusCode, clip(payload))
	}
	var out struct {
		Data   any        `json:"data"`
		Errors []gqlError `json:"errors"`
	}
	if err := json.Unmarshal(payload, &out); err != nil {
		return nil, counts, fmt.Errorf("POST %s: decode: %w", endpoint, err)
	}
	for _, e := range out.Errors {
		switch {
		case e.danglingAsset():
			counts.dangling++
		case e.unknownEnum():
			counts.unknownEnums++
		case e.nonFiniteFloat():
			counts.nonFinite++
		default:
			return nil, counts, fmt.Errorf("GraphQL error at %v (%v): %s (%d errors in all)", e.Path, e.Extensions["code"], e.Message, len(out.Errors))
		}
	}
	return out.Data, counts, nil
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
