package transport

import (
	"github.com/99designs/gqlgen/graphql"

	"github.com/tradenet/gateway/graph"
)

// documentRef is the persisted document a request names by id:
// documentId (GraphQL over HTTP) or doc_id (Relay's network layers), as
// sent.
type documentRef struct {
	DocumentID string `json:"documentId"`
	DocID      string `json:"doc_id"`
}

// apply notes the id in params (graph.SetDocumentID); msg says what is wrong
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
	graph.SetDocumentID(params, id)
	return ""
}
