package graph

import "github.com/99designs/gqlgen/graphql"

// documentRef is the persisted document a request names by id:
// documentId (GraphQL over HTTP) or doc_id (Relay's network layers), as
// sent.
type documentRef struct {
	DocumentID string `json:"documentId"`
	DocID      string `json:"doc_id"`
}

// apply notes the id in params for documentLookup; msg says what is wrong
// when documentId and doc_id disagree.
func (r documentRef) apply(params *graphql.RawParams) (msg string) {
	id := r.DocumentID
	switch {
	case id == "":
		id = r.DocID
	case r.DocID != "" && r.DocID != id:
		return "documentId and doc_id name different documents: send one of them"
	}
	if id == "" {
		return ""
	}
	SetDocumentID(params, id)
	return ""
}
