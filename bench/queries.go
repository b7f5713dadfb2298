package main

import (
	"context"
	"embed"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tradenet/gateway/sampleservice"
	"github.com/tradenet/gateway/upstream"
)

//go:embed queries/*.graphql
var queryFiles embed.FS

func queryText(name string) string {
	b, err := queryFiles.ReadFile("queries/" + name + ".graphql")
	if err != nil {
		panic(err) // embedded: cannot fail
	}
	return string(b)
}

// describedKinds are the explorer types of the four command kinds the
// schema describes: the transactions query filters on them so that every
// union fragment has data to select (the newest transactions are mostly
// kinds that reach the client as UnknownCommand).
var describedKinds = []string{"Batch Market Instructions", "Batch Proposal", "Register New Node", "Apply Referral Code"}

// query is one query of the comparison: the GraphQL request, the direct
// client's way of fetching the same data, and how to list the items each
// returns, so that the harness can check both paths return the same.
type query struct {
	name string
	// rows is the number of rows a response holds (for per-row figures).
	rows int
	doc  string
	vars map[string]any
	// direct fetches the data from the REST service and decodes it.
	direct func(ctx context.Context, c *directClient) (any, error)
	// directAny is direct with the bodies decoded generically (generic.go).
	directAny func(ctx context.Context, c *directClient) (any, error)
	// directItems and gatewayItems list the items of a direct result and
	// of a GraphQL response's data, one comparable line each, and whether
	// more rows exist.
	directItems  func(v any) ([]string, bool)
	gatewayItems func(data any) ([]string, bool, error)
}

// transactionsQuery is a page of the newest transactions of the described
// kinds, every field of every command kind selected, asset references
// resolved.
func transactionsQuery(first int) query {
	return query{
		name: "transactions-" + strconv.Itoa(first),
		rows: first,
		doc:  queryText("transactions"),
		vars: map[string]any{"first": first, "cmdTypes": describedKinds},
		direct: func(ctx context.Context, c *directClient) (any, error) {
			return c.transactions(ctx, first, describedKinds)
		},
		directAny: func(ctx context.Context, c *directClient) (any, error) {
			return c.transactionsAny(ctx, first, describedKinds)
		},
		directItems: func(v any) ([]string, bool) {
			p := v.(*directTransactions)
			items := make([]string, len(p.Rows))
			for i := range p.Rows {
				items[i] = directTransactionItem(&p.Rows[i], p.Assets)
			}
			return items, p.HasNext
		},
		gatewayItems: func(data any) ([]string, bool, error) {
			return connectionItems(data, []string{"transactions"}, gatewayTransactionItem)
		},
	}
}

// assetsQuery is a page of assets with every field.
func assetsQuery(first int) query {
	return query{
		name: "assets-" + strconv.Itoa(first),
		rows: first,
		doc:  queryText("assets"),
		vars: map[string]any{"first": first},
		direct: func(ctx context.Context, c *directClient) (any, error) {
			return c.assets(ctx, first)
		},
		directAny: func(ctx context.Context, c *directClient) (any, error) {
			return c.getAny(ctx, c.dataNode+"/api/v2/assets?pagination.first="+strconv.Itoa(first))
		},
		directItems: func(v any) ([]string, bool) {
			p := v.(*upstream.AssetPage)
			items := make([]string, len(p.Edges))
			for i := range p.Edges {
				a := &p.Edges[i].Node
				items[i] = assetItem(a.ID, string(a.Status), a.Details.Name, a.Details.Symbol, strconv.FormatUint(uint64(a.Details.Decimals), 10), a.Details.Quantum)
			}
			return items, p.PageInfo.HasNextPage
		},
		gatewayItems: func(data any) ([]string, bool, error) {
			return connectionItems(data, []string{"assets"}, func(n map[string]any) string {
				return assetItem(str(n, "id"), str(n, "status"), str(n, "details", "name"), str(n, "details", "symbol"), str(n, "details", "decimals"), str(n, "details", "quantum"))
			})
		},
	}
}

func assetItem(fields ...string) string { return strings.Join(fields, " ") }

// delegationsQuery is a page of delegations of every epoch.
func delegationsQuery(first int) query {
	return query{
		name: "delegations-" + strconv.Itoa(first),
		rows: first,
		doc:  queryText("delegations"),
		vars: map[string]any{"first": first},
		direct: func(ctx context.Context, c *directClient) (any, error) {
			return c.delegations(ctx, "", first)
		},
		directAny: func(ctx context.Context, c *directClient) (any, error) {
			return c.getAny(ctx, c.dataNode+"/api/v2/delegations?pagination.first="+strconv.Itoa(first))
		},
		directItems: func(v any) ([]string, bool) {
			return directDelegationItems(v.(*upstream.DelegationPage))
		},
		gatewayItems: func(data any) ([]string, bool, error) {
			return connectionItems(data, []string{"delegations"}, gatewayDelegationItem)
		},
	}
}

// partyQuery is a party with its first page of funding payments and of
// delegations, references as objects.
func partyQuery(party string, first int) query {
	return query{
		name: "party-" + strconv.Itoa(first),
		rows: 2 * first,
		doc:  queryText("party"),
		vars: map[string]any{"id": party, "first": first},
		direct: func(ctx context.Context, c *directClient) (any, error) {
			return c.party(ctx, party, first)
		},
		directAny: func(ctx context.Context, c *directClient) (any, error) {
			return c.partyAny(ctx, party, first)
		},
		directItems: func(v any) ([]string, bool) {
			p := v.(*directParty)
			var items []string
			for i := range p.Funding.Edges {
				f := &p.Funding.Edges[i].Node
				items = append(items, fundingItem(f.PartyID, f.MarketID, strconv.FormatUint(uint64(f.FundingPeriodSeq), 10),
					f.Timestamp.Time().Format(time.RFC3339Nano), f.Amount))
			}
			d, more := directDelegationItems(p.Delegations)
			return append(items, d...), p.Funding.PageInfo.HasNextPage || more
		},
		gatewayItems: func(data any) ([]string, bool, error) {
			funding, more1, err := connectionItems(data, []string{"party", "fundingPayments"}, func(n map[string]any) string {
				if str(n, "party", "id") != str(n, "partyId") {
					return "party.id differs from partyId"
				}
				return fundingItem(str(n, "partyId"), str(n, "marketId"), str(n, "fundingPeriodSeq"), str(n, "timestamp"), str(n, "amount"))
			})
			if err != nil {
				return nil, false, err
			}
			d, more2, err := connectionItems(data, []string{"party", "delegations"}, gatewayDelegationItem)
			return append(funding, d...), more1 || more2, err
		},
	}
}

func fundingItem(fields ...string) string { return "funding " + strings.Join(fields, " ") }

func directDelegationItems(p *upstream.DelegationPage) ([]string, bool) {
	items := make([]string, len(p.Edges))
	for i := range p.Edges {
		d := &p.Edges[i].Node
		items[i] = "delegation " + strings.Join([]string{d.Party, d.NodeID, d.EpochSeq, d.Amount}, " ")
	}
	return items, p.PageInfo.HasNextPage
}

func gatewayDelegationItem(n map[string]any) string {
	if str(n, "node", "id") != str(n, "nodeId") {
		return "node.id differs from nodeId"
	}
	return "delegation " + strings.Join([]string{str(n, "party", "id"), str(n, "nodeId"), str(n, "epochSeq"), str(n, "amount")}, " ")
}

// directTransactionItem describes a transaction and its command: kind,
// the size of its lists, proposal change kinds, and the assets its
// references resolve to.
func directTransactionItem(t *upstream.Transaction, assets map[string]*upstream.Asset) string {
	head := fmt.Sprintf("%d.%d %s %s nonce=%d", t.Block, t.Index, t.Hash, t.Type, t.Command.Nonce)
	var cmd string
	switch k := t.Command.Kind.(type) {
	case *upstream.AnnounceNode:
		cmd = "AnnounceNode " + k.ID + " " + k.Name + " " + k.NetPubKey
	case *upstream.ApplyReferralCode:
		cmd = "ApplyReferralCode " + k.ID
	case *upstream.BatchMarketInstructions:
		cmd = fmt.Sprintf("BatchMarketInstructions amend=%d cancel=%d stopCancel=%d stopSubmit=%d submit=%d margin=%d",
			len(k.Amendments), len(k.Cancellations), len(k.StopOrdersCancellation), len(k.StopOrdersSubmission), len(k.Submissions), len(k.UpdateMarginMode))
		for _, s := range k.Submissions {
			cmd += " " + s.Price + "x" + strconv.FormatUint(uint64(s.Size), 10)
		}
	case *upstream.BatchProposalSubmission:
		var kinds []string
		if k.Terms != nil {
			for _, ch := range k.Terms.Changes {
				kinds = append(kinds, changeTypename(ch.Change))
			}
		}
		var refs []string
		for _, id := range assetRefs([]upstream.Transaction{*t}) {
			if a := assets[id]; a != nil {
				refs = append(refs, id+":"+a.Details.Symbol)
			}
		}
		slices.Sort(refs)
		cmd = "BatchProposalSubmission [" + strings.Join(kinds, ",") + "] assets=[" + strings.Join(refs, ",") + "]"
	case *upstream.UnknownCommand:
		cmd = "UnknownCommand " + k.Name
	case nil:
		cmd = "null"
	}
	return head + " " + cmd
}

func changeTypename(c upstream.ProposalChangeKind) string {
	if c == nil {
		return "null"
	}
	// Each member's GraphQL type is bound to the upstream type of its
	// name (gqlgen.yml's autobind).
	return reflect.TypeOf(c).Elem().Name()
}

// gatewayTransactionItem is directTransactionItem for a GraphQL node.
func gatewayTransactionItem(n map[string]any) string {
	head := fmt.Sprintf("%s.%s %s %s nonce=%s", str(n, "block"), str(n, "index"), str(n, "hash"), str(n, "type"), str(n, "commandNonce"))
	c, _ := n["command"].(map[string]any)
	var cmd string
	switch str(c, "__typename") {
	case "AnnounceNode":
		cmd = "AnnounceNode " + str(c, "id") + " " + str(c, "name") + " " + str(c, "netPubKey")
	case "ApplyReferralCode":
		cmd = "ApplyReferralCode " + str(c, "id")
	case "BatchMarketInstructions":
		cmd = fmt.Sprintf("BatchMarketInstructions amend=%d cancel=%d stopCancel=%d stopSubmit=%d submit=%d margin=%d",
			length(c, "amendments"), length(c, "cancellations"), length(c, "stopOrdersCancellation"),
			length(c, "stopOrdersSubmission"), length(c, "submissions"), length(c, "updateMarginMode"))
		subs, _ := c["submissions"].([]any)
		for _, s := range subs {
			s, _ := s.(map[string]any)
			cmd += " " + str(s, "price") + "x" + str(s, "size")
		}
	case "BatchProposalSubmission":
		var kinds []string
		changes, _ := at(c, "terms", "changes").([]any)
		for _, ch := range changes {
			ch, _ := ch.(map[string]any)
			kinds = append(kinds, str(ch, "change", "__typename"))
		}
		seen := map[string]bool{}
		var refs []string
		walkObjects(c, func(o map[string]any) {
			// An asset reference resolved: the AssetRef fragment's shape.
			if _, ok := o["status"]; ok && o["details"] != nil && o["id"] != nil {
				ref := str(o, "id") + ":" + str(o, "details", "symbol")
				if !seen[ref] {
					seen[ref] = true
					refs = append(refs, ref)
				}
			}
		})
		slices.Sort(refs)
		cmd = "BatchProposalSubmission [" + strings.Join(kinds, ",") + "] assets=[" + strings.Join(refs, ",") + "]"
	case "UnknownCommand":
		cmd = "UnknownCommand " + str(c, "name")
	case "":
		cmd = "null"
	default:
		cmd = str(c, "__typename")
	}
	return head + " " + cmd
}

// connectionItems lists the nodes of the connection at path in data, and
// its pageInfo.hasNextPage.
func connectionItems(data any, path []string, item func(map[string]any) string) ([]string, bool, error) {
	conn, ok := at(data, path...).(map[string]any)
	if !ok {
		return nil, false, fmt.Errorf("no connection at %s", strings.Join(path, "."))
	}
	edges, ok := conn["edges"].([]any)
	if !ok {
		return nil, false, fmt.Errorf("no edges at %s", strings.Join(path, "."))
	}
	items := make([]string, len(edges))
	for i, e := range edges {
		node, ok := at(e, "node").(map[string]any)
		if !ok {
			return nil, false, fmt.Errorf("%s.edges[%d]: no node", strings.Join(path, "."), i)
		}
		if str(e.(map[string]any), "cursor") == "" {
			return nil, false, fmt.Errorf("%s.edges[%d]: no cursor", strings.Join(path, "."), i)
		}
		items[i] = item(node)
	}
	more, _ := at(conn, "pageInfo", "hasNextPage").(bool)
	return items, more, nil
}

// at walks object keys from v.
func at(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// str is the value at path as text: strings as they are, numbers in
// decimal, anything else empty.
func str(v any, path ...string) string {
	switch x := at(v, path...).(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

func length(v any, path ...string) int {
	l, _ := at(v, path...).([]any)
	return len(l)
}

// walkObjects calls fn for every object in v, depth first.
func walkObjects(v any, fn func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		fn(x)
		for _, c := range x {
			walkObjects(c, fn)
		}
	case []any:
		for _, c := range x {
			walkObjects(c, fn)
		}
	}
}

// verify runs q once on both paths and checks they return the same items:
// as many as asked (or fewer only at the end of the list), the same page
// info, and for every row the same content. It returns the number of rows.
func verify(ctx context.Context, e *env, g *gatewayServer, q query) (int, error) {
	n, err := verifyRows(ctx, e, g, q)
	if err != nil {
		return 0, fmt.Errorf("verify %s (scale %d): %w", q.name, e.scale, err)
	}
	return n, nil
}

func verifyRows(ctx context.Context, e *env, g *gatewayServer, q query) (int, error) {
	dv, err := q.direct(ctx, e.direct)
	if err != nil {
		return 0, fmt.Errorf("direct: %w", err)
	}
	want, wantMore := q.directItems(dv)
	// The generic direct client (what is measured by default) makes the
	// same requests: the same asset references found, no error.
	gv, err := q.directAny(ctx, e.direct)
	if err != nil {
		return 0, fmt.Errorf("direct (generic): %w", err)
	}
	if t, ok := dv.(*directTransactions); ok {
		if g := gv.(*genericTransactions); !sameRefs(assetRefs(t.Rows), g.Refs) || len(g.Rows) != len(t.Rows) || g.HasNext != t.HasNext {
			return 0, fmt.Errorf("the generic direct client found other rows or references: %d rows, refs %v; typed: %d rows, refs %v", len(g.Rows), g.Refs, len(t.Rows), assetRefs(t.Rows))
		}
	}
	data, counts, err := e.graphql.query(ctx, g, q.doc, q.vars)
	if err != nil {
		return 0, fmt.Errorf("gateway: %w", err)
	}
	if missing := danglingRefs(dv); (missing > 0) != (counts.dangling > 0) {
		return 0, fmt.Errorf("dangling asset references: %d found directly, %d NOT_FOUND errors from the gateway", missing, counts.dangling)
	}
	if unknown := countLeaves(reflect.ValueOf(dv), unknownEnum); unknown != counts.unknownEnums {
		return 0, fmt.Errorf("unknown enum values: %d found directly, %d errors from the gateway", unknown, counts.unknownEnums)
	}
	if nonFinite := countLeaves(reflect.ValueOf(dv), nonFiniteFloat); nonFinite != counts.nonFinite {
		return 0, fmt.Errorf("non-finite floats: %d found directly, %d errors from the gateway", nonFinite, counts.nonFinite)
	}
	got, gotMore, err := q.gatewayItems(data)
	if err != nil {
		return 0, fmt.Errorf("gateway: %w", err)
	}
	if len(want) == 0 {
		return 0, fmt.Errorf("the direct call returned no rows: the query measures nothing")
	}
	if len(want) < q.rows && wantMore {
		return 0, fmt.Errorf("%d rows, want a full page of %d (or the whole list)", len(want), q.rows)
	}
	if wantMore != gotMore {
		return 0, fmt.Errorf("hasNextPage: direct %v, gateway %v", wantMore, gotMore)
	}
	if len(got) != len(want) {
		return 0, fmt.Errorf("direct returned %d rows, gateway %d", len(want), len(got))
	}
	for i := range want {
		if want[i] != got[i] {
			return 0, fmt.Errorf("row %d differs:\n  direct:  %s\n  gateway: %s", i, want[i], got[i])
		}
	}
	return len(want), nil
}

// danglingRefs counts the asset references of a direct result that name
// no asset.
func danglingRefs(v any) int {
	p, ok := v.(*directTransactions)
	if !ok {
		return 0
	}
	n := 0
	for _, id := range assetRefs(p.Rows) {
		if p.Assets[id] == nil {
			n++
		}
	}
	return n
}

// countLeaves counts the values in v, walked through its exported
// fields, that leaf reports.
func countLeaves(v reflect.Value, leaf func(reflect.Value) bool) int {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return 0
		}
		return countLeaves(v.Elem(), leaf)
	case reflect.Struct:
		n := 0
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				n += countLeaves(v.Field(i), leaf)
			}
		}
		return n
	case reflect.Slice, reflect.Array:
		n := 0
		for i := range v.Len() {
			n += countLeaves(v.Index(i), leaf)
		}
		return n
	case reflect.Map:
		n := 0
		for it := v.MapRange(); it.Next(); {
			n += countLeaves(it.Value(), leaf)
		}
		return n
	}
	if v.IsValid() && v.CanInterface() && leaf(v) {
		return 1
	}
	return 0
}

// unknownEnum reports an enum value the schema does not know (every enum
// type of package upstream has a Known method).
func unknownEnum(v reflect.Value) bool {
	k, ok := v.Interface().(interface{ Known() bool })
	return ok && v.Kind() == reflect.String && v.Len() > 0 && !k.Known()
}

// nonFiniteFloat reports a wire "NaN" or "Infinity" (upstream.Float64).
func nonFiniteFloat(v reflect.Value) bool {
	f, ok := v.Interface().(upstream.Float64)
	return ok && (math.IsNaN(float64(f)) || math.IsInf(float64(f), 0))
}

// busiestParty is the dataset's party with the most funding payments and
// delegations (the fewer of the two counts), for the party query.
func busiestParty(ds *sampleservice.Dataset) (string, int) {
	funding, delegations := map[string]int{}, map[string]int{}
	for _, f := range ds.FundingPayments {
		funding[f.PartyID]++
	}
	for _, d := range ds.Delegations {
		delegations[d.Party]++
	}
	best, bestN := "", -1
	for _, p := range ds.Parties {
		if n := min(funding[p], delegations[p]); n > bestN {
			best, bestN = p, n
		}
	}
	return best, bestN
}
