package sampleservice

import (
	"encoding/json"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// TestGenerateScale checks that a million transactions generate quickly and
// compactly, and that positions all over the range decode and agree with
// their metadata.
func TestGenerateScale(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	d, err := Generate(DatasetOptions{Seed: 9, Scale: 200})
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&after)
	src := d.Transactions
	n := src.Len()
	if n < 1_000_000 {
		t.Fatalf("Scale 200 gave %d transactions, want at least 1,000,000", n)
	}
	retained := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("Scale 200: %d transactions in %v, %d MB retained", n, elapsed, retained>>20)
	if retained > 200<<20 {
		t.Errorf("the dataset retains %d MB, want under 200", retained>>20)
	}

	// Meta of every position, in order.
	start = time.Now()
	var prev TxMeta
	for i := range n {
		m := src.Meta(i)
		if i > 0 && (m.Block < prev.Block || (m.Block == prev.Block && m.Index != prev.Index+1) || (m.Block > prev.Block && m.Index != 0)) {
			t.Fatalf("position %d: %d.%d after %d.%d", i, m.Block, m.Index, prev.Block, prev.Index)
		}
		prev = m
	}
	t.Logf("Meta over all positions: %v", time.Since(start))
	if d.BlockHeight < prev.Block {
		t.Errorf("BlockHeight %d below the last block %d", d.BlockHeight, prev.Block)
	}

	// A spread of positions, and every notable one, decode.
	positions := []int{0, 1, n / 2, n - 2, n - 1}
	for k := range 2000 {
		positions = append(positions, int(uint64(k)*0x9e3779b97f4a7c15%uint64(n)))
	}
	for _, pos := range d.Notable {
		positions = append(positions, pos)
	}
	start = time.Now()
	for _, i := range positions {
		var tx map[string]any
		if err := json.Unmarshal(src.AppendJSON(nil, i), &tx); err != nil {
			t.Fatalf("position %d: %v", i, err)
		}
		m := src.Meta(i)
		if tx["block"] != strconv.FormatUint(m.Block, 10) || tx["type"] != m.Type || tx["submitter"] != m.Parties[0] {
			t.Fatalf("position %d: JSON %v/%v/%v, Meta %+v", i, tx["block"], tx["type"], tx["submitter"], m)
		}
	}
	t.Logf("%d transactions generated and decoded in %v", len(positions), time.Since(start))
	if len(d.Notable) == 0 {
		t.Error("no notable transactions")
	}
}

// BenchmarkGenerate measures building the default dataset and then
// encoding every one of its transactions (the cost a cold explorer page
// pays per row).
func BenchmarkGenerate(b *testing.B) {
	b.Run("dataset", func(b *testing.B) {
		for b.Loop() {
			if _, err := Generate(DatasetOptions{Seed: 1}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("transactions", func(b *testing.B) {
		d, err := Generate(DatasetOptions{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		src := d.Transactions
		var buf []byte
		for b.Loop() {
			for i := range src.Len() {
				buf = src.AppendJSON(buf[:0], i)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*src.Len()), "ns/tx")
	})
}
