package graph

import (
	"testing"
	"time"

	"github.com/tradenet/gateway/upstream"
)

func TestAnswerLog(t *testing.T) {
	now := time.Now()
	l := newAnswerLog()
	if s := l.summary(); s.Seen {
		t.Fatalf("empty log: %+v", s)
	}
	l.record(upstream.Answer{Kind: upstream.CacheImmutable, FetchedAt: now.Add(-time.Hour)})
	l.record(upstream.Answer{Kind: upstream.CacheUntilNextBlock, FetchedAt: now.Add(-time.Second)})
	l.record(upstream.Answer{Kind: upstream.CacheRecent, FetchedAt: now.Add(-2 * time.Second)})
	l.record(upstream.Answer{Kind: upstream.CacheUntilNextBlock, FetchedAt: now})
	s := l.summary()
	if !s.Seen || s.Kind != upstream.CacheRecent || !s.Oldest.Equal(now.Add(-2*time.Second)) || s.Undated {
		t.Errorf("summary %+v: want recent, oldest 2 s ago (the immutable answer's age does not count)", s)
	}
	l.record(upstream.Answer{Kind: upstream.CacheRecent})
	if !l.summary().Undated {
		t.Error("an answer without a time: not undated")
	}
}
