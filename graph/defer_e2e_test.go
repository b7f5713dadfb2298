package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tradenet/gateway/graph"
)

// deferPart is one part of an incremental delivery response.
type deferPart struct {
	Data        json.RawMessage `json:"data"`
	HasNext     bool            `json:"hasNext"`
	Errors      []gqlError      `json:"errors"`
	Incremental []struct {
		Data   json.RawMessage `json:"data"`
		Label  string          `json:"label"`
		Path   []any           `json:"path"`
		Errors []gqlError      `json:"errors"`
	} `json:"incremental"`
}

// TestDeferOverMultipart: a query with @defer, POSTed accepting
// multipart/mixed (as Apollo Client does), is answered with its initial
// part while the deferred fragments still wait for the data node (held at
// a gate), then with incremental parts carrying them at their paths. The
// direct executor answers it, initial part and incremental parts.
func TestDeferOverMultipart(t *testing.T) {
	var mu sync.Mutex
	var executors []string
	g := newLiveGateway(t, liveOptions{NoFeed: true, Gate: "/api/v2/", Executor: graph.ExecutorConfig{Hooks: graph.Hooks{
		Execution: func(executor string) {
			mu.Lock()
			executors = append(executors, executor)
			mu.Unlock()
		},
	}}})
	// gqlgen defers the resolver fields of a deferred fragment (not root
	// fields, nor plain ones): an asset reference, a party's connection.
	const query = `{ transactions(first: 2, types: [WITHDRAW]) { edges { cursor node { hash
		submitter { id ... @defer(label: "party") { delegations(first: 1) { edges { cursor } } } }
		command { __typename ... on WithdrawSubmission { amount
			... @defer(label: "asset") { asset { id details { symbol } } } } } } } } }`
	body, _ := json.Marshal(map[string]any{"query": query})
	req, _ := http.NewRequest(http.MethodPost, g.URL, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "multipart/mixed;deferSpec=20220824, application/json")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: streamDeadline}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	mediaType, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mediaType != "multipart/mixed" {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("Content-Type %q: %s", resp.Header.Get("Content-Type"), raw)
	}
	parts := multipart.NewReader(resp.Body, params["boundary"])
	next := func() (deferPart, bool) {
		p, err := parts.NextPart()
		if err == io.EOF {
			return deferPart{}, false
		}
		if err != nil {
			t.Fatalf("next part: %v", err)
		}
		var out deferPart
		raw, _ := io.ReadAll(p)
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("part %s: %v", raw, err)
		}
		return out, true
	}

	// The initial part, while every data-node call is held at the gate.
	initial, ok := next()
	if !ok || !initial.HasNext || len(initial.Errors) > 0 {
		t.Fatalf("initial part %+v", initial)
	}
	var first struct {
		Transactions struct {
			Edges []struct {
				Cursor string
				Node   struct {
					Hash      string
					Submitter map[string]json.RawMessage
					Command   map[string]json.RawMessage
				}
			}
		}
	}
	if err := json.Unmarshal(initial.Data, &first); err != nil || len(first.Transactions.Edges) != 2 {
		t.Fatalf("initial data %s", initial.Data)
	}
	for _, e := range first.Transactions.Edges {
		n := e.Node
		// A deferred field is absent from the initial part (not null).
		_, delegations := n.Submitter["delegations"]
		_, asset := n.Command["asset"]
		if e.Cursor == "" || n.Hash == "" || n.Submitter["id"] == nil || delegations ||
			n.Command["amount"] == nil || asset {
			t.Fatalf("initial edge %+v: %s", e, initial.Data)
		}
	}
	<-g.Gate.held
	g.Gate.release()

	labels := map[string]int{}
	for hasNext := true; hasNext; {
		p, ok := next()
		if !ok {
			t.Fatal("the response ended with hasNext")
		}
		hasNext = p.HasNext
		for _, inc := range p.Incremental {
			if len(inc.Errors) > 0 {
				t.Fatalf("incremental errors %+v", inc.Errors)
			}
			labels[inc.Label]++
			switch inc.Label {
			case "party":
				var d struct {
					Delegations struct{ Edges []json.RawMessage }
				}
				if err := json.Unmarshal(inc.Data, &d); err != nil || d.Delegations.Edges == nil || len(inc.Path) != 5 || inc.Path[0] != "transactions" || inc.Path[4] != "submitter" {
					t.Fatalf("party part at %v: %s", inc.Path, inc.Data)
				}
			case "asset":
				var d struct {
					Asset struct {
						ID      string
						Details struct{ Symbol string }
					}
				}
				if err := json.Unmarshal(inc.Data, &d); err != nil || len(inc.Path) != 5 || inc.Path[4] != "command" {
					t.Fatalf("asset part at %v: %s", inc.Path, inc.Data)
				}
				want, _, err := g.Client.GetAsset(context.Background(), d.Asset.ID)
				if err != nil || d.Asset.Details.Symbol != want.Details.Symbol || want.Details.Symbol == "" {
					t.Fatalf("asset part %s; the asset is %+v (%v)", inc.Data, want, err)
				}
			default:
				t.Fatalf("part labelled %q", inc.Label)
			}
		}
	}
	if labels["party"] != 2 || labels["asset"] != 2 {
		t.Fatalf("deferred parts %v", labels)
	}
	if _, ok := next(); ok {
		t.Fatal("a part after hasNext false")
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(executors, ",") != "direct" {
		t.Fatalf("executors %v, want the direct executor's", executors)
	}
}
