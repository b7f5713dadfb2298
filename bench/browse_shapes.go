package main

import (
	"maps"
	"net/http"
	"path"
	"strings"
	"sync"
)

// The browse report's breakdown of upstream requests by what they ask:
// which page views still reach the data node or the explorer, and why.

// requestShapes are the shapes in the report's order.
var requestShapes = []string{
	shapeByHash, shapeBlock, shapePartyTxs, shapeNewest, shapeOlder, shapeNewer,
	shapePartyDelegations, shapePartyFunding, shapeNodeDelegations, shapeAsset, shapeAssets, shapeOther,
}

const (
	shapeByHash           = "explorer: one transaction by hash"
	shapeBlock            = "explorer: a block's transactions"
	shapePartyTxs         = "explorer: a party's transactions"
	shapeNewest           = "explorer: the newest transactions (pages, the live feed's poll)"
	shapeOlder            = "explorer: older transactions (history)"
	shapeNewer            = "explorer: newer transactions"
	shapePartyDelegations = "data node: a party's delegations"
	shapePartyFunding     = "data node: a party's funding payments"
	shapeNodeDelegations  = "data node: a validator's delegations"
	shapeAsset            = "data node: one asset"
	shapeAssets           = "data node: the asset list"
	shapeOther            = "other"
)

// requestShape names what r asks of the sample service.
func requestShape(r *http.Request) string {
	q := r.URL.Query()
	has := func(k string) bool { return q.Has(k) }
	p := strings.TrimSuffix(r.URL.Path, "/")
	switch base := path.Base(p); {
	case path.Base(path.Dir(p)) == "transactions":
		return shapeByHash
	case base == "transactions":
		switch {
		case has("filters[block.height]"):
			return shapeBlock
		case has("parties") || has("filters[tx.submitter]"):
			return shapePartyTxs
		case has("before"):
			return shapeOlder
		case has("after"):
			return shapeNewer
		default:
			return shapeNewest
		}
	case base == "delegations" && has("partyId"):
		return shapePartyDelegations
	case base == "delegations" && has("nodeId"):
		return shapeNodeDelegations
	case base == "funding-payments":
		return shapePartyFunding
	case base == "assets" && has("assetId"):
		return shapeAsset
	case base == "assets":
		return shapeAssets
	}
	return shapeOther
}

// shapeCounter counts the sample service's requests by shape
// (sampleservice.Config.OnRequest).
type shapeCounter struct {
	mu     sync.Mutex
	counts map[string]int64
}

func (c *shapeCounter) count(r *http.Request) {
	shape := requestShape(r)
	c.mu.Lock()
	if c.counts == nil {
		c.counts = map[string]int64{}
	}
	c.counts[shape]++
	c.mu.Unlock()
}

func (c *shapeCounter) snapshot() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

// shapesBetween is the requests by shape from snapshot a to snapshot b.
func shapesBetween(a, b map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, n := range b {
		if d := n - a[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}
