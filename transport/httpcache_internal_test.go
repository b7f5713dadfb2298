package transport

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/tradenet/gateway/graph"
	"github.com/tradenet/gateway/upstream"
)

func TestNoneMatchFails(t *testing.T) {
	const etag = `"abc"`
	for _, tc := range []struct {
		values []string
		want   bool
	}{
		{[]string{`"abc"`}, true},
		{[]string{`W/"abc"`}, true},
		{[]string{`*`}, true},
		{[]string{`"x", "abc"`}, true},
		{[]string{`"x"`, `"abc"`}, true}, // two field lines
		{[]string{` "x" ,W/"abc" `}, true},
		{[]string{`"x,abc", "abc"`}, true}, // a comma inside a tag
		{[]string{`"x,abc"`}, false},
		{[]string{`abc`}, false},
		{[]string{`"abc`}, false},
		{[]string{`W/`}, false},
		{[]string{`junk, "abc"`}, true}, // a malformed member is skipped
		{[]string{`"ab"`, `"abcd"`, ``}, false},
		{nil, false},
	} {
		if got := noneMatchFails(tc.values, etag); got != tc.want {
			t.Errorf("If-None-Match %q against %s: %v, want %v", tc.values, etag, got, tc.want)
		}
	}
	if !noneMatchFails([]string{`"abc"`}, `W/"abc"`) {
		t.Error("a weak ETag does not compare weakly")
	}
}

func TestCacheControlRounding(t *testing.T) {
	now := time.Now()
	recent := func(age time.Duration) graph.Answers {
		return graph.Answers{Seen: true, Kind: upstream.CacheRecent, Oldest: now.Add(-age)}
	}
	for _, tc := range []struct {
		maxAge time.Duration
		a      graph.Answers
		want   string
	}{
		{time.Second, recent(0), "public, max-age=1"},
		{time.Second, recent(400 * time.Millisecond), "public, max-age=1"},
		{time.Second, recent(600 * time.Millisecond), "public, no-cache"},
		{time.Second, recent(-time.Hour), "public, max-age=1"}, // a clock ahead: never more than maxAge
		{5 * time.Second, recent(1200 * time.Millisecond), "public, max-age=4"},
		{5 * time.Second, recent(time.Minute), "public, no-cache"},
		{-1, recent(0), "public, no-cache"},
		{time.Second, graph.Answers{}, cacheControlImmutable},                                             // no answer
		{time.Second, graph.Answers{Seen: true, Kind: upstream.CacheUntilNextBlock}, "public, max-age=1"}, // no dated answer
		{time.Second, graph.Answers{Seen: true, Kind: upstream.CacheNone}, cacheControlNoStore},
	} {
		c := httpCaching{maxAge: tc.maxAge}
		if got := c.cacheControl(tc.a, nil, false, now); got != tc.want {
			t.Errorf("max age %s, %+v: %q, want %q", tc.maxAge, tc.a, got, tc.want)
		}
	}
	if got := (&httpCaching{maxAge: time.Second}).cacheControl(graph.Answers{}, nil, true, now); got != cacheControlNoStore {
		t.Errorf("with errors: %q, want no-store", got)
	}
}

// TestSetContentTypeMergesVary: Accept is added to Vary once, whatever
// form the values already there take (one line listing several, another
// letter case, *).
func TestSetContentTypeMergesVary(t *testing.T) {
	for _, tc := range []struct{ before, after []string }{
		{[]string{"Origin, Accept"}, []string{"Origin, Accept"}},
		{[]string{"Origin", "accept"}, []string{"Origin", "accept"}},
		{[]string{"*"}, []string{"*"}},
		{[]string{"Origin, Accept-Encoding"}, []string{"Origin, Accept-Encoding", "Accept"}},
	} {
		h := http.Header{"Vary": slices.Clone(tc.before)}
		setContentType(h, mediaJSON)
		if !slices.Equal(h["Vary"], tc.after) {
			t.Errorf("Vary %q: became %q, want %q", tc.before, h["Vary"], tc.after)
		}
	}
}
