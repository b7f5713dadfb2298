package telemetry

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// TracingOptions configures tracing.
type TracingOptions struct {
	// Endpoint is the OTLP/HTTP collector's base URL, e.g.
	// http://otel-collector:4318; spans go to {Endpoint}/v1/traces.
	// Empty turns tracing off.
	Endpoint string
	// ServiceName names this service in traces.
	ServiceName string
	// SampleRatio is the share of requests recorded, from 0 to 1, whether
	// they start a trace or continue a client's: a client's sampled
	// traceparent does not force recording (one whose parent is not
	// sampled is not recorded).
	SampleRatio float64
}

// Tracing is the gateway's tracer provider and its shutdown.
type Tracing struct {
	// Provider makes the tracers; nil when tracing is off.
	Provider trace.TracerProvider
	sdk      *sdktrace.TracerProvider
}

// NewTracing exports spans over OTLP/HTTP to opts.Endpoint, in batches;
// with no endpoint it returns a Tracing that traces nothing.
func NewTracing(ctx context.Context, opts TracingOptions) (*Tracing, error) {
	if opts.Endpoint == "" {
		return &Tracing{}, nil
	}
	endpoint, err := tracesURL(opts.Endpoint)
	if err != nil {
		return nil, err
	}
	exporter, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, fmt.Errorf("OTLP exporter: %w", err)
	}
	return newTracingWith(opts, sdktrace.WithBatcher(exporter)), nil
}

// newTracingWith traces into the given span processors or exporters:
// NewTracing's batching OTLP exporter, or a test's span recorder
// (export_test.go).
func newTracingWith(opts TracingOptions, with ...sdktrace.TracerProviderOption) *Tracing {
	name := opts.ServiceName
	if name == "" {
		name = "tradenet-gateway"
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", name)))
	if err != nil {
		res = resource.NewSchemaless(attribute.String("service.name", name))
	}
	ratio := min(max(opts.SampleRatio, 0), 1)
	sdk := sdktrace.NewTracerProvider(append([]sdktrace.TracerProviderOption{
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sampler(ratio)),
	}, with...)...)
	return &Tracing{Provider: sdk, sdk: sdk}
}

// sampler records ratio of the new traces and of the requests that
// continue a client's sampled trace; spans started inside the gateway
// follow their parent. A client's sampled flag is a request, not an
// order: trusting it would let any client record (and export) every
// request past TRACE_SAMPLE_RATIO. Nor is the decision taken from the
// trace id for remote parents, as TraceIDRatioBased would: the client
// chooses that id, and an id with low bits of zero is sampled at any
// ratio above 0.
func sampler(ratio float64) sdktrace.Sampler {
	return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio),
		sdktrace.WithRemoteParentSampled(randomSampler{ratio: ratio}))
}

// randomSampler records a share of the spans, chosen at random.
type randomSampler struct{ ratio float64 }

func (s randomSampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	decision := sdktrace.Drop
	if s.ratio >= 1 || s.ratio > 0 && rand.Float64() < s.ratio {
		decision = sdktrace.RecordAndSample
	}
	return sdktrace.SamplingResult{Decision: decision, Tracestate: trace.SpanContextFromContext(p.ParentContext).TraceState()}
}

func (s randomSampler) Description() string {
	return fmt.Sprintf("RandomRatio{%g}", s.ratio)
}

// Shutdown exports the spans still buffered, bounded by ctx.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil || t.sdk == nil {
		return nil
	}
	return t.sdk.Shutdown(ctx)
}

// Middleware continues a trace the client started: the W3C trace context
// of the request's traceparent header becomes the parent of the
// operation's span. Without tracing it does nothing.
func (t *Tracing) Middleware(next http.Handler) http.Handler {
	if t == nil || t.Provider == nil {
		return next
	}
	prop := propagation.TraceContext{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// tracesURL is the OTLP/HTTP traces URL of a collector's base URL, as
// OTEL_EXPORTER_OTLP_ENDPOINT defines it.
func tracesURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT=%q: want the collector's http(s) base URL, e.g. http://otel-collector:4318", base)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	return u.String(), nil
}
