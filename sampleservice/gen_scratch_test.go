package sampleservice

import (
	"fmt"
	"testing"
	"time"
)

func TestScratch(t *testing.T) {
	t0 := time.Now()
	d, err := Generate(DatasetOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("gen", time.Since(t0), d.Transactions.Len(), len(d.Assets), len(d.FundingPayments), len(d.Delegations), d.BlockHeight, d.BlockTime)
	for _, k := range []string{"batch.allLists", "change.newMarket", "command.announceNode", "enum.unknown", "command.transfer"} {
		i := d.Notable[k]
		fmt.Println(k, i, d.Transactions.Meta(i))
		fmt.Println(string(d.Transactions.AppendJSON(nil, i)))
	}
	t0 = time.Now()
	n := 0
	for i := 0; i < d.Transactions.Len(); i++ {
		n += len(d.Transactions.AppendJSON(nil, i))
	}
	fmt.Println("json all", time.Since(t0), n)
}
