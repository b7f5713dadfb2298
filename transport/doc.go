// Package transport is the HTTP side of /graphql: everything between a
// request on the wire and the GraphQL executor of package graph, which
// never sees a URL, a status code or a header. This package reads
// requests, negotiates what to answer in, writes status codes, headers and
// bodies, and keeps the connections that outlive a request.
//
// Where each concern lives:
//
//   - handler.go: NewHandler over a graph.Executor: the transports in the
//     order they are tried, and the middleware around them;
//   - guard.go: what is refused before any transport (methods, Accept,
//     Content-Type, body size, batches, upgrades, the origins of streams);
//   - accept.go: Accept negotiation (application/json or
//     application/graphql-response+json) and Vary;
//   - http.go: GET and POST as GraphQL over HTTP has them (the status of a
//     request error follows Accept); body.go decodes POST bodies, direct.go
//     writes the direct executor's data without encoding it a second time
//     (graph.Splice);
//   - httpcache.go: Cache-Control and ETag of GET responses, from the
//     upstream answers they are made of (graph.ResponseAnswers), and 304
//     on If-None-Match;
//   - documents.go: how a request names a persisted document (documentId,
//     doc_id); graph serves it (graph/documents_serve.go);
//   - the streams (docs/transports.md): stream.go runs one operation for
//     every streaming transport; ws.go is graphql-transport-ws, sse.go
//     graphql-sse's single connection mode, streaming.go SSE and
//     multipart/mixed over GET and POST; subscriptions.go holds their
//     settings (SubscriptionConfig) and tells which requests are streams;
//     clientstreams.go bounds the streams one client holds open.
//
// What graph offers the transports is small and documented there: the
// Executor (gqlgen's graphql.GraphExecutor; Request, the context each
// request is served under; Connections, when long-lived connections close)
// and graph.LogPanic, graph.DetachPanicLog, graph.WithConnection,
// graph.SetDocumentID, graph.NamesDocument, graph.DefersFragments,
// graph.ResponseAnswers and graph.WithSplice. Error codes are graph's
// (graph.Error, graph.CodeBadUserInput, …).
//
// Tests: unit tests sit beside the code (accept, body, httpcache, and
// handler_test.go over an executor without upstream). The transports'
// behaviour against the sample data service and the live feed is tested
// end to end in package graph, through NewHandler: websocket_e2e_test.go,
// sse_e2e_test.go, accept_e2e_test.go, streams_*_e2e_test.go,
// httpcache_e2e_test.go, and the golden files and wire records.
package transport
