package graph

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/lexer"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
	"github.com/vektah/gqlparser/v2/validator/rules"

	"github.com/tradenet/gateway/internal/clip"
)

// Trusted documents: a manifest of the operations the gateway's clients
// were built with, loaded at start (PERSISTED_DOCUMENTS), each validated
// against the schema then. Clients name a document by its id instead of
// sending its text (documents_serve.go); with TRUSTED_DOCUMENTS_ONLY the
// gateway runs nothing else. Two manifest formats are read, the ones the
// client tooling writes:
//
//   - Relay's (relay-compiler's persistConfig with a file): one JSON
//     object mapping each id to the operation's text;
//   - Apollo's persisted query manifest (generate-persisted-query-manifest):
//     {"format": "apollo-persisted-query-manifest", "version": 1,
//     "operations": [{"id", "name", "type", "body"}, …]}.
//
// Ids are taken as given, with one check: an id of 64 hex digits (what
// both tools write by default, and what Apollo clients send as
// extensions.persistedQuery.sha256Hash) must be the SHA-256 of its text,
// else the manifest was edited after it was generated, and the gateway
// does not start.

// PersistedDocuments is a loaded manifest. Its lookups are safe for
// concurrent use: nothing changes once it is loaded.
type PersistedDocuments struct {
	path   string
	format string // ManifestRelay or ManifestApollo
	docs   []*persistedDocument
	byID   map[string]*persistedDocument
	// bySHA256 is by the SHA-256 of the text (lowercase hex): what Apollo
	// clients send as the persistedQuery extension's hash, and the payload
	// of GraphQL over HTTP's "sha256:<hex>" document ids.
	bySHA256 map[string]*persistedDocument
	byText   map[string]*persistedDocument
	// byNormal is by normalizedDocument's form, for a document's text sent
	// in full with other whitespace, commas or comments.
	byNormal  map[string]*persistedDocument
	maxNormal int // the longest normalised text
}

// persistedDocument is one document of a manifest.
type persistedDocument struct {
	ID   string
	Name string // Apollo's operation name; "" in Relay's format
	Body string
}

// The manifest formats, as PersistedDocuments.Format names them.
const (
	ManifestRelay  = "relay"
	ManifestApollo = "apollo"
)

// apolloManifestFormat is the format member of Apollo's manifests.
const apolloManifestFormat = "apollo-persisted-query-manifest"

// LoadPersistedDocuments reads the manifest at path (either format) and
// validates every document against the schema, with the rules requests
// are validated with (arguments.go's numeric literals; paging's largest
// page for their messages). The query limits are not checked: a
// document's cost depends on its variables, so they apply to each
// request. The error names the file and, for a document that does not
// parse or validate, its id.
func LoadPersistedDocuments(path string, paging PagingConfig) (*PersistedDocuments, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err // names the file
	}
	docs, err := ParsePersistedDocuments(data, paging)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	docs.path = path
	return docs, nil
}

// ParsePersistedDocuments is LoadPersistedDocuments over a manifest's
// bytes.
func ParsePersistedDocuments(data []byte, paging PagingConfig) (*PersistedDocuments, error) {
	if paging.MaxSize == 0 {
		paging.MaxSize = DefaultPaging.MaxSize
	}
	docs, format, err := decodeManifest(data)
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, errors.New("the manifest lists no documents")
	}
	m := &PersistedDocuments{
		format:   format,
		byID:     make(map[string]*persistedDocument, len(docs)),
		bySHA256: make(map[string]*persistedDocument, len(docs)),
		byText:   make(map[string]*persistedDocument, len(docs)),
		byNormal: make(map[string]*persistedDocument, len(docs)),
	}
	schema := NewExecutableSchema(Config{}).Schema()
	check := numericArgs{maxPage: paging.MaxSize}.validationRules()
	for _, d := range docs {
		if prev := m.byID[d.ID]; prev != nil {
			if prev.Body != d.Body {
				return nil, fmt.Errorf("document %q is listed twice, with different texts", d.ID)
			}
			continue
		}
		sum := sha256.Sum256([]byte(d.Body))
		hash := hex.EncodeToString(sum[:])
		if isLowerHex64(strings.ToLower(d.ID)) && strings.ToLower(d.ID) != hash {
			return nil, fmt.Errorf("document %q: its id is a SHA-256 but not its text's (%s): the manifest was edited after it was generated; generate it again", d.ID, hash)
		}
		if err := validateDocument(schema, check, d.Body); err != nil {
			return nil, fmt.Errorf("document %q: %w", d.ID, err)
		}
		normal, _ := normalizedDocument(d.Body, -1)
		m.docs = append(m.docs, d)
		m.byID[d.ID] = d
		// Several ids may name one text (Relay and Apollo manifests of
		// the same operations merged): any of them serves it.
		m.bySHA256[hash] = d
		m.byText[d.Body] = d
		m.byNormal[normal] = d
		m.maxNormal = max(m.maxNormal, len(normal))
	}
	return m, nil
}

// decodeManifest reads either format: Apollo's is the object with a
// "format" member; any other object is Relay's map of id to text.
func decodeManifest(data []byte) ([]*persistedDocument, string, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, "", fmt.Errorf("not a manifest: want a JSON object (Relay's persisted_queries.json, or Apollo's persisted query manifest): %v", err)
	}
	if _, apollo := probe["format"]; apollo {
		docs, err := decodeApolloManifest(data)
		return docs, ManifestApollo, err
	}
	docs, err := decodeRelayManifest(data)
	return docs, ManifestRelay, err
}

// decodeApolloManifest reads Apollo's persisted query manifest.
func decodeApolloManifest(data []byte) ([]*persistedDocument, error) {
	var manifest struct {
		Format     string            `json:"format"`
		Version    json.Number       `json:"version"`
		Operations []json.RawMessage `json:"operations"`
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&manifest); err != nil {
		return nil, fmt.Errorf("an Apollo persisted query manifest that does not read: %v", err)
	}
	if manifest.Format != apolloManifestFormat {
		return nil, fmt.Errorf("format %q: want %q (or Relay's format: an object mapping each id to its text)", clip.Cut(manifest.Format, 64), apolloManifestFormat)
	}
	if manifest.Version != "1" {
		return nil, fmt.Errorf("version %s of Apollo's persisted query manifest: the gateway reads version 1", clip.Cut(manifest.Version.String(), 16))
	}
	docs := make([]*persistedDocument, 0, len(manifest.Operations))
	for i, raw := range manifest.Operations {
		var op struct {
			ID   *string `json:"id"`
			Name string  `json:"name"`
			Type string  `json:"type"`
			Body *string `json:"body"`
		}
		if err := json.Unmarshal(raw, &op); err != nil {
			return nil, fmt.Errorf("operations[%d] does not read: %v", i, err)
		}
		switch {
		case op.ID == nil || *op.ID == "":
			return nil, fmt.Errorf("operations[%d] has no id", i)
		case op.Body == nil || strings.TrimSpace(*op.Body) == "":
			return nil, fmt.Errorf("document %q (operations[%d]) has no body", *op.ID, i)
		}
		switch op.Type {
		case "query", "mutation", "subscription", "":
		default:
			return nil, fmt.Errorf("document %q: type %q: want query, mutation or subscription", *op.ID, clip.Cut(op.Type, 32))
		}
		docs = append(docs, &persistedDocument{ID: *op.ID, Name: op.Name, Body: *op.Body})
	}
	return docs, nil
}

// decodeRelayManifest reads Relay's map of id to text, in the file's
// order, refusing an id listed twice (encoding/json would keep the last).
func decodeRelayManifest(data []byte) ([]*persistedDocument, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	if _, err := d.Token(); err != nil { // {
		return nil, err
	}
	var docs []*persistedDocument
	seen := map[string]bool{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, fmt.Errorf("a Relay manifest that does not read: %v", err)
		}
		id, _ := tok.(string)
		var body any
		if err := d.Decode(&body); err != nil {
			return nil, fmt.Errorf("a Relay manifest that does not read: %v", err)
		}
		text, ok := body.(string)
		switch {
		case id == "":
			return nil, errors.New("a document with an empty id")
		case seen[id]:
			return nil, fmt.Errorf("document %q is listed twice", id)
		case !ok:
			return nil, fmt.Errorf("document %q: its text must be a string (Relay's format maps each id to the operation's text)", id)
		case strings.TrimSpace(text) == "":
			return nil, fmt.Errorf("document %q has no text", id)
		}
		seen[id] = true
		docs = append(docs, &persistedDocument{ID: id, Body: text})
	}
	return docs, nil
}

// validateDocument parses and validates a document as a request's is.
func validateDocument(schema *ast.Schema, rules *rules.Rules, text string) error {
	doc, err := parser.ParseQuery(&ast.Source{Name: "document", Input: text})
	if err != nil {
		return fmt.Errorf("does not parse: %v", err)
	}
	if len(doc.Operations) == 0 {
		return errors.New("has no operation (only fragments)")
	}
	if errs := validator.ValidateWithRules(schema, doc, rules); len(errs) > 0 {
		return fmt.Errorf("does not validate against the schema: %v", errs[0])
	}
	return nil
}

// normalizedDocument is text with its ignored tokens (whitespace, commas,
// comments, a byte order mark) reduced to one space between tokens and
// its strings written one way: two texts with the same normalised form
// are the same document to the parser. ok is false when text does not
// lex, or its form grows past limit bytes (negative: no limit), which
// then bounds the work spent on a text that cannot match.
func normalizedDocument(text string, limit int) (normal string, ok bool) {
	lex := lexer.New(&ast.Source{Input: text})
	var b strings.Builder
	for {
		tok, err := lex.ReadToken()
		if err != nil {
			return "", false
		}
		switch tok.Kind {
		case lexer.EOF:
			return b.String(), true
		case lexer.Comment:
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		switch tok.Kind {
		case lexer.String, lexer.BlockString:
			b.WriteString(strconv.Quote(tok.Value))
		case lexer.Name, lexer.Int, lexer.Float:
			b.WriteString(tok.Value)
		default:
			b.WriteString(tok.Kind.String())
		}
		if limit >= 0 && b.Len() > limit {
			return "", false
		}
	}
}

// Len is the number of documents.
func (m *PersistedDocuments) Len() int { return len(m.docs) }

// Format is the manifest's format: ManifestRelay or ManifestApollo.
func (m *PersistedDocuments) Format() string { return m.format }

// Path is the file the manifest was loaded from ("" when parsed from
// bytes).
func (m *PersistedDocuments) Path() string { return m.path }

// IDs lists the documents' ids, sorted.
func (m *PersistedDocuments) IDs() []string {
	ids := make([]string, 0, len(m.byID))
	for id := range m.byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// byDocumentID finds the document a request's documentId (or doc_id)
// names: an id of the manifest, or GraphQL over HTTP's SHA-256 document
// identifier, "sha256:" and the text's SHA-256 in hex.
func (m *PersistedDocuments) byDocumentID(id string) *persistedDocument {
	if d := m.byID[id]; d != nil {
		return d
	}
	if hash, ok := strings.CutPrefix(id, "sha256:"); ok {
		return m.bySHA256[hash]
	}
	return nil
}

// byHash finds the document an APQ hash (the persistedQuery extension's
// sha256Hash) names: the SHA-256 of its text, which is its id when the
// manifest's ids are SHA-256 (checked at load).
func (m *PersistedDocuments) byHash(hash string) *persistedDocument {
	return m.bySHA256[strings.ToLower(hash)]
}

// byFullText finds the document whose text is text, as sent or with other
// ignored tokens (normalizedDocument).
func (m *PersistedDocuments) byFullText(text string) *persistedDocument {
	if d := m.byText[text]; d != nil {
		return d
	}
	normal, ok := normalizedDocument(text, m.maxNormal)
	if !ok {
		return nil
	}
	return m.byNormal[normal]
}
