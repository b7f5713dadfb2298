package graph

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// MaxPersistedQueryBytes is the longest query kept as an automatic
// persisted query. Without a bound a client could fill the cache (memory,
// or Redis) with valid queries of MAX_BODY_BYTES each. A longer query
// still runs; it is just not kept, and its client sends it in full every
// time.
const MaxPersistedQueryBytes = 64 << 10

// persistedQueries is the Apollo automatic persisted queries protocol
// (https://github.com/apollographql/apollo-link-persisted-queries) in
// place of gqlgen's extension.AutomaticPersistedQuery, which stores every
// query sent with its hash before parsing it: any text up to the body
// limit would be kept for a day (in Redis, renewed by each use).
//
// A request with the hash alone gets the query from the cache before
// parsing (PERSISTED_QUERY_NOT_FOUND when unknown, as Apollo clients
// expect, and they then send the hash with the query). A query sent with
// its hash is stored only once the operation has parsed, validated and
// passed the query limits: its MutateOperationContext runs after the
// limits extension's (NewExecutor adds it later), and gqlgen runs no
// context mutator once one has refused the operation.
type persistedQueries struct {
	cache graphql.Cache[string]
	max   int
	// docs keeps the SHA-256 of each document's text once computed (nil:
	// computed on each request that sends a text with its hash).
	docs *documentCache
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
	graphql.OperationContextMutator
} = persistedQueries{}

// apqStatsKey is where gqlgen's own extension notes its statistics, so
// that extension.GetApqStats still reports them.
const apqStatsKey = "APQ"

func (persistedQueries) ExtensionName() string { return "AutomaticPersistedQuery" }

func (p persistedQueries) Validate(graphql.ExecutableSchema) error {
	if p.cache == nil {
		return errors.New("persisted queries: nil cache")
	}
	return nil
}

// MutateOperationParameters checks the persistedQuery extension, and
// fills in the query of a request that sent only its hash.
func (p persistedQueries) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	raw, ok := params.Extensions["persistedQuery"]
	if !ok || raw == nil || servedFromManifest(ctx) != nil {
		// (A hash the manifest of trusted documents served: nothing to
		// look up or store; documents_serve.go.)
		return nil
	}
	hash, err := persistedQueryHash(raw)
	if err != nil {
		return err
	}
	sent := params.Query != ""
	if sent {
		if p.queryHash(params.Query) != hash {
			return apqInput("the persistedQuery extension's sha256Hash is not the SHA-256 of the query (lowercase hex of the query's UTF-8 bytes, as sent)")
		}
	} else {
		query, ok := p.cache.Get(ctx, hash)
		if !ok {
			err := gqlerror.Errorf("PersistedQueryNotFound")
			err.Extensions = map[string]any{"code": CodePersistedQueryNotFound}
			return err
		}
		params.Query = query
	}
	graphql.GetOperationContext(ctx).Stats.SetExtension(apqStatsKey, &extension.ApqStats{Hash: hash, SentQuery: sent})
	return nil
}

// queryHash is the SHA-256 of a query's text in lowercase hex, computed
// once per document kept.
func (p persistedQueries) queryHash(text string) string {
	return p.docs.textMemo(text, "sha256", func() any {
		sum := sha256.Sum256([]byte(text))
		return hex.EncodeToString(sum[:])
	}).(string)
}

// MutateOperationContext stores a query sent with its hash, now that it
// is known to be a valid operation within the limits.
func (p persistedQueries) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	stats, _ := opCtx.Stats.GetExtension(apqStatsKey).(*extension.ApqStats)
	if stats == nil || !stats.SentQuery || len(opCtx.RawQuery) > p.max {
		return nil
	}
	p.cache.Add(ctx, stats.Hash, opCtx.RawQuery)
	return nil
}

// persistedQueryHash reads {"version": 1, "sha256Hash": "…"}.
func persistedQueryHash(raw any) (string, *gqlerror.Error) {
	ext, ok := raw.(map[string]any)
	if !ok {
		return "", apqInput(`the persistedQuery extension must be an object: {"version": 1, "sha256Hash": "<the query's SHA-256 in hex>"}`)
	}
	if !isVersionOne(ext["version"]) {
		return "", apqInput("persistedQuery.version must be 1, the only version of automatic persisted queries this gateway supports")
	}
	hash, ok := ext["sha256Hash"].(string)
	if !ok || !isHexID(hash) { // a SHA-256 is 64 hex digits, as ids are
		return "", apqInput("persistedQuery.sha256Hash must be a string: the query's SHA-256 as 64 hex digits")
	}
	return hash, nil
}

// isVersionOne reports whether v is the number 1 as decoded from JSON
// (json.Number with UseNumber, float64 without).
func isVersionOne(v any) bool {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		return err == nil && i == 1
	case float64:
		return n == 1
	case int:
		return n == 1
	case int64:
		return n == 1
	}
	return false
}

// apqInput is a BAD_USER_INPUT error about the persistedQuery extension.
func apqInput(message string) *gqlerror.Error {
	return &gqlerror.Error{Message: message, Extensions: map[string]any{"code": CodeBadUserInput}}
}
