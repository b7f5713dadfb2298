package graph

import (
	"context"
	"sync"
	"time"

	"github.com/tradenet/gateway/upstream"
)

// What a response is made of. Every request records the answers its
// upstream calls return (answerLog, installed with the request's state by
// withRequestState, on every executor's path), and the shared asset
// cache's hits as recent data-node answers (loaders.go). How long a
// response stays true follows from them: the transports derive the HTTP
// caching of GET responses from ResponseAnswers.

// answerLog accumulates what one request's response is made of: the
// answers its upstream calls returned (upstream.RecordAnswer), from any
// goroutine of the request.
type answerLog struct {
	mu sync.Mutex
	// seen: at least one answer was recorded.
	seen bool
	// kind is the least cacheable kind recorded, once one was.
	kind upstream.CacheKind
	// oldest is the earliest FetchedAt of the answers that hold for a
	// while only (recent, until the next block); zero while there are none.
	oldest time.Time
	// undated: one of those answers had no FetchedAt, so its age is
	// unknown (upstream.Answer: its age is time.Since(FetchedAt)).
	undated bool
}

func newAnswerLog() *answerLog { return &answerLog{} }

// record is the request's recorder (upstream.WithAnswers).
func (l *answerLog) record(a upstream.Answer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen {
		l.kind = min(l.kind, a.Kind)
	} else {
		l.seen, l.kind = true, a.Kind
	}
	if a.Kind == upstream.CacheNone || a.Kind == upstream.CacheImmutable {
		return // no age bound: never served again, or true for ever
	}
	switch {
	case a.FetchedAt.IsZero():
		l.undated = true
	case l.oldest.IsZero() || a.FetchedAt.Before(l.oldest):
		l.oldest = a.FetchedAt
	}
}

// Answers sums up the upstream answers a response is made of: what its
// HTTP caching is derived from (package transport).
type Answers struct {
	// Seen: at least one answer was recorded.
	Seen bool
	// Kind is the least cacheable kind recorded, once one was.
	Kind upstream.CacheKind
	// Oldest is the earliest FetchedAt of the answers that hold for a
	// while only (recent, until the next block); zero while there are none.
	Oldest time.Time
	// Undated: one of those answers had no FetchedAt, so its age is
	// unknown.
	Undated bool
}

func (l *answerLog) summary() Answers {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Answers{Seen: l.seen, Kind: l.kind, Oldest: l.oldest, Undated: l.undated}
}

// ResponseAnswers sums up the answers recorded so far under ctx, a
// request's (Executor.Request); ok is false outside a request.
func ResponseAnswers(ctx context.Context) (a Answers, ok bool) {
	s := stateFor(ctx)
	if s == nil || s.answers == nil {
		return Answers{}, false
	}
	return s.answers.summary(), true
}
