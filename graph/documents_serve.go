package graph

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/tradenet/gateway/internal/clip"
)

// Serving persisted documents (the manifest: documents.go) and refusing
// what is not trusted, at execution, for every transport alike. Each
// transport (package transport) reads a request's parameters its own way
// and notes the document id it names with SetDocumentID; from there the
// executor's parameter mutators do the rest, in the order NewExecutor adds
// them:
//
//  1. documentLookup: a documentId (or doc_id) becomes its document's
//     text, or is refused (unknown id); a persistedQuery hash that names a
//     manifest document becomes its text too, which automatic persisted
//     queries then leave alone (no lookup, nothing stored);
//  2. persistedQueries (apq.go): a hash alone is looked up in the APQ
//     cache; a query sent with its hash is checked against it;
//  3. documentPolicy: with TRUSTED_DOCUMENTS_ONLY, any text that is not a
//     manifest document (sent in full, or from the APQ cache, or sent to
//     register a hash) is refused; served persisted documents and
//     refusals are counted (Hooks).

// requestedDocument is the id SetDocumentID leaves in the request's
// extensions under documentIDKey (graphql.RawParams has no member for it).
// Its type is the mark: a client's extensions, decoded from JSON, cannot
// hold one.
type requestedDocument string

// documentIDKey is where the id waits in RawParams.Extensions until
// documentLookup takes it out.
const documentIDKey = "documentId"

// SetDocumentID notes in params that the request names the persisted
// document id (documentId or doc_id, however its transport reads them), for
// documentLookup to serve.
func SetDocumentID(params *graphql.RawParams, id string) {
	if params.Extensions == nil {
		params.Extensions = map[string]any{}
	}
	params.Extensions[documentIDKey] = requestedDocument(id)
}

// NamesDocument reports whether a request names something to run: a
// query, a persisted query's hash, or a document id (SetDocumentID). A
// request that names nothing is not a GraphQL request (the transports
// answer it 400 whatever it accepts).
func NamesDocument(params *graphql.RawParams) bool {
	if params.Query != "" || params.Extensions["persistedQuery"] != nil {
		return true
	}
	_, ok := params.Extensions[documentIDKey].(requestedDocument)
	return ok
}

// Sources of a served persisted document, as Hooks.DocumentServed names
// them.
const (
	DocumentSourceManifest = "manifest"
	DocumentSourceAPQ      = "apq"
)

// Reasons a document is refused, as Hooks.DocumentRefused names them.
const (
	// RefusedUnknownID: a documentId (or doc_id) the manifest does not
	// list, or sent to a gateway without a manifest.
	RefusedUnknownID = "unknown_id"
	// RefusedUntrusted: with TRUSTED_DOCUMENTS_ONLY, a text that is not a
	// manifest document, sent in full or found in the APQ cache.
	RefusedUntrusted = "untrusted"
	// RefusedAPQRegistration: with TRUSTED_DOCUMENTS_ONLY, a text sent with
	// its hash to register it as an automatic persisted query, that is
	// not a manifest document.
	RefusedAPQRegistration = "apq_registration"
)

// DocumentStats is what the operation context's statistics hold about a
// document the manifest served (graphql.Stats.GetExtension with
// DocumentStatsKey).
type DocumentStats struct {
	ID string // the manifest's id of the document
}

// DocumentStatsKey is DocumentStats' key in graphql.Stats.
const DocumentStatsKey = "PersistedDocument"

// servedFromManifest is the manifest document the operation runs, if
// any.
func servedFromManifest(ctx context.Context) *DocumentStats {
	s, _ := graphql.GetOperationContext(ctx).Stats.GetExtension(DocumentStatsKey).(*DocumentStats)
	return s
}

// documentLookup serves documents by id from the manifest (docs: nil when
// none is loaded).
type documentLookup struct {
	docs    *PersistedDocuments
	refused func(reason string)
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = documentLookup{}

func (documentLookup) ExtensionName() string                   { return "PersistedDocuments" }
func (documentLookup) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters puts the text of the document a request names
// in its query.
func (d documentLookup) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	if id, ok := params.Extensions[documentIDKey].(requestedDocument); ok {
		delete(params.Extensions, documentIDKey)
		return d.byID(ctx, params, string(id))
	}
	if d.docs == nil || params.Query != "" {
		// A text sent with its hash: APQ checks the hash, documentPolicy
		// the text.
		return nil
	}
	raw := params.Extensions["persistedQuery"]
	if raw == nil {
		return nil
	}
	hash, err := persistedQueryHash(raw)
	if err != nil {
		return nil // APQ says what is wrong with it
	}
	if doc := d.docs.byHash(hash); doc != nil {
		d.serve(ctx, params, doc)
	}
	return nil
}

// byID serves the document id names.
func (d documentLookup) byID(ctx context.Context, params *graphql.RawParams, id string) *gqlerror.Error {
	switch {
	case params.Query != "":
		return apqInput("send either a document's id (documentId or doc_id) or a query's text (query), not both")
	case params.Extensions["persistedQuery"] != nil:
		return apqInput("send either a document's id (documentId or doc_id) or the persistedQuery extension, not both")
	case d.docs == nil:
		d.refuse(RefusedUnknownID)
		return apqInput(fmt.Sprintf("unknown document id %q: this gateway has no persisted documents (PERSISTED_DOCUMENTS is unset); send the query's text", clip.ID(id)))
	}
	doc := d.docs.byDocumentID(id)
	if doc == nil {
		d.refuse(RefusedUnknownID)
		return apqInput(fmt.Sprintf("unknown document id %q: the gateway's persisted-document manifest does not list it; a client built with a newer manifest than the gateway's needs the gateway deployed with that manifest", clip.ID(id)))
	}
	d.serve(ctx, params, doc)
	return nil
}

// serve runs doc for the request.
func (d documentLookup) serve(ctx context.Context, params *graphql.RawParams, doc *persistedDocument) {
	params.Query = doc.Body
	graphql.GetOperationContext(ctx).Stats.SetExtension(DocumentStatsKey, &DocumentStats{ID: doc.ID})
}

func (d documentLookup) refuse(reason string) {
	if d.refused != nil {
		d.refused(reason)
	}
}

// documentPolicy runs after automatic persisted queries, on the text the
// operation will run: with trustedOnly it refuses any that is not a
// manifest document; it counts served persisted documents by source.
type documentPolicy struct {
	docs *PersistedDocuments // nil: none loaded (trustedOnly is then false)
	// parsed keeps each document's verdict once found (nil: found on each
	// request).
	parsed      *documentCache
	trustedOnly bool
	served      func(source string)
	refused     func(reason string)
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = documentPolicy{}

func (documentPolicy) ExtensionName() string                   { return "TrustedDocuments" }
func (documentPolicy) Validate(graphql.ExecutableSchema) error { return nil }

func (p documentPolicy) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	if params.Query == "" {
		return nil // nothing to run: the executor says so
	}
	if servedFromManifest(ctx) != nil {
		p.count(p.served, DocumentSourceManifest)
		return nil
	}
	apq, _ := graphql.GetOperationContext(ctx).Stats.GetExtension(apqStatsKey).(*extension.ApqStats)
	if p.trustedOnly && p.trusted(params.Query) == nil {
		if apq != nil && apq.SentQuery {
			p.count(p.refused, RefusedAPQRegistration)
			return apqInput(trustedOnlyMessage + "; automatic persisted queries cannot register other operations")
		}
		p.count(p.refused, RefusedUntrusted)
		return apqInput(trustedOnlyMessage)
	}
	if apq != nil && !apq.SentQuery {
		p.count(p.served, DocumentSourceAPQ)
	}
	return nil
}

// trusted returns the manifest's document whose text is text (as sent,
// or with other ignored tokens), nil for none: found once per document
// kept.
func (p documentPolicy) trusted(text string) *persistedDocument {
	d, _ := p.parsed.textMemo(text, "trusted", func() any { return p.docs.byFullText(text) }).(*persistedDocument)
	return d
}

func (documentPolicy) count(hook func(string), label string) {
	if hook != nil {
		hook(label)
	}
}

// trustedOnlyMessage refuses a document the manifest does not list.
const trustedOnlyMessage = "only trusted documents are accepted: this gateway runs the operations of its persisted-document manifest, sent by id (documentId, doc_id, or extensions.persistedQuery.sha256Hash) or as their exact text; to add one, add the operation to the client, generate the manifest again (relay-compiler with persistConfig, or generate-persisted-query-manifest) and deploy the gateway with it"
