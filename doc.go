// Command gateway serves the trading network's data service as one GraphQL
// schema. See README.md.
//
// Where each concern lives:
//
//   - config.go: every setting, in one table (flag, environment
//     variable, default), its parsing, the one validate, and the values
//     derived from several settings (MAX_UPSTREAM_CALLS from
//     UPSTREAM_RATE × REQUEST_TIMEOUT). Everything else is built from
//     the parsed config.
//   - server.go: main and run; newGateway, which builds the parts below
//     in order; the HTTP server: routes, middleware (CORS, compression,
//     metrics kept out of CORS), readiness, serving and graceful
//     shutdown.
//   - upstreamclient.go: the upstream services (the embedded sample data
//     service when none is configured) and the one place the upstream
//     client is configured: deadline, retries, circuit breakers,
//     concurrency, the rate budget and its fair share, their metrics and
//     tracing. Whom a request counts for in the fair share
//     (TRUSTED_PROXIES) is upstream/client_key.go's.
//   - handler.go: the one place the GraphQL endpoint is configured: its
//     executor (graph.NewExecutor: paging, query limits, the request
//     deadline, cursor keys, loaders, the telemetry extension, the
//     caches), then its HTTP side (transport.NewHandler: the subscription
//     transports, the HTTP caching of GET responses and the compression of
//     /graphql under it).
//   - instrumentation.go: metrics and tracing, set up once and handed to
//     the builders above. sharedstate.go: Redis, and where persisted
//     queries, the asset cache and the rate budget live (Redis when
//     configured, else this process).
//   - logging.go: the logger and the access log. schema.go: the SDL
//     served at /schema.graphql.
package main
