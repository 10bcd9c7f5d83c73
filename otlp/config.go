// Package otlp sends sessions to an OpenTelemetry collector as traces, over
// OTLP/HTTP with protobuf bodies, or OTLP/gRPC (one unary call over HTTP/2,
// made with net/http).
//
// A session is one trace. Its root span ("claude_code.session") has a child
// span per thread (the main agent, each subagent, side queries), and each
// thread span a child span per Messages API turn, named and attributed after
// the OpenTelemetry GenAI semantic conventions (gen_ai.operation.name,
// gen_ai.provider.name, gen_ai.request.model, gen_ai.usage.*, ...) with
// tsinspect's own attributes beside them (tsinspect.catalog.size,
// tsinspect.working_set.*, tsinspect.search.*, ...). Every flag the
// timeline raised on a turn is an event of the turn's span.
//
// Spans are built from a [report.Report], so whatever redaction policy was
// applied to the report applies to the spans: by default they hold no
// message text.
//
// An [Exporter] queues batches of spans and sends them from its own
// goroutine, retrying with backoff; when its bounded queue is full, new
// batches are dropped and counted, so that a collector that is down or slow
// never holds up the caller. [Live] follows a capture being recorded and
// exports each turn as it completes.
//
// This package is the only one that uses the OTLP protocol types
// (go.opentelemetry.io/proto/otlp).
package otlp

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Config says where and how to send spans.
type Config struct {
	// URL is the full traces URL, e.g. http://127.0.0.1:4318/v1/traces,
	// or for gRPC the collector's address, e.g. http://127.0.0.1:4317.
	URL string
	// GRPC sends over gRPC (OTEL_EXPORTER_OTLP_PROTOCOL=grpc) instead of
	// HTTP with protobuf bodies.
	GRPC bool
	// Headers are sent with every request (an API key, a tenant id). They
	// are never logged.
	Headers map[string]string
	// Timeout bounds each request.
	Timeout time.Duration
	// Resource holds extra resource attributes (OTEL_RESOURCE_ATTRIBUTES);
	// ServiceName overrides service.name (OTEL_SERVICE_NAME).
	Resource    map[string]string
	ServiceName string
	// Gzip compresses request bodies (OTEL_EXPORTER_OTLP_COMPRESSION=gzip).
	Gzip bool
}

// DefaultTimeout is the OTLP exporters' default request timeout.
const DefaultTimeout = 10 * time.Second

// DefaultEndpoint is the OTLP/HTTP default endpoint.
const DefaultEndpoint = "http://localhost:4318"

// DefaultGRPCEndpoint is the OTLP/gRPC default endpoint.
const DefaultGRPCEndpoint = "http://localhost:4317"

// EnvEndpoint is the endpoint (record --otlp env) that takes the
// collector's address from the OTEL_EXPORTER_OTLP_* variables.
const EnvEndpoint = "env"

// ConfigFromEnv builds a Config from the standard OTEL_EXPORTER_OTLP_*
// variables, read through getenv (os.Getenv, or a map in tests), with
// endpoint, when not empty, taking the place of OTEL_EXPORTER_OTLP_ENDPOINT
// and OTEL_EXPORTER_OTLP_TRACES_ENDPOINT.
//
// As the OTLP exporter specification says: a base endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT, or endpoint) gets /v1/traces appended
// unless it already ends so, a traces endpoint
// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is used as it is; headers are
// comma-separated key=value pairs, URL-encoded; timeouts are in
// milliseconds; the _TRACES_ variant of each variable wins over the general
// one; compression may be gzip or none. An endpoint without a scheme gets http:// when
// OTEL_EXPORTER_OTLP_INSECURE (or _TRACES_INSECURE) is true, https://
// otherwise. OTEL_EXPORTER_OTLP_PROTOCOL may be http/protobuf (the
// default) or grpc; for grpc the endpoint is the collector's address, no
// path is appended, and http:// means gRPC over cleartext HTTP/2.
// http/json is refused.
//
// An endpoint of EnvEndpoint is "": the variables' own.
func ConfigFromEnv(getenv func(string) string, endpoint string) (Config, error) {
	if endpoint == EnvEndpoint {
		endpoint = ""
	}
	get := func(name string) string {
		if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_" + name)); v != "" {
			return v
		}
		return strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_" + name))
	}
	var c Config
	switch p := get("PROTOCOL"); p {
	case "", "http/protobuf":
	case "grpc":
		c.GRPC = true
	default:
		return c, fmt.Errorf("otlp: OTEL_EXPORTER_OTLP_PROTOCOL %q: want http/protobuf or grpc", p)
	}
	insecure := false
	if v := get("INSECURE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, fmt.Errorf("otlp: OTEL_EXPORTER_OTLP_INSECURE %q: want true or false", v)
		}
		insecure = b
	}
	base, full := endpoint, ""
	if base == "" {
		full = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
		base = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
		if full == "" && base == "" {
			base = DefaultEndpoint
			if c.GRPC {
				base = DefaultGRPCEndpoint
			}
		}
	}
	raw := full
	if raw == "" {
		raw = base
	}
	if !strings.Contains(raw, "://") {
		scheme := "https://"
		if insecure {
			scheme = "http://"
		}
		raw = scheme + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return c, fmt.Errorf("otlp: endpoint %q: want http://HOST:PORT or https://HOST:PORT", raw)
	}
	if u.User != nil {
		return c, fmt.Errorf("otlp: endpoint %q: put credentials in OTEL_EXPORTER_OTLP_HEADERS, not in the URL", u.Redacted())
	}
	if c.GRPC {
		u.Path = strings.TrimSuffix(u.Path, "/")
	} else if full == "" && !strings.HasSuffix(u.Path, "/v1/traces") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	}
	c.URL = u.String()

	c.Headers = map[string]string{}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		h, err := parseKV(getenv(name))
		if err != nil {
			// The value may hold a secret: name the variable only.
			return c, fmt.Errorf("otlp: %s: %w", name, err)
		}
		for k, v := range h {
			c.Headers[k] = v
		}
	}

	switch v := get("COMPRESSION"); v {
	case "", "none":
	case "gzip":
		c.Gzip = true
	default:
		return c, fmt.Errorf("otlp: OTEL_EXPORTER_OTLP_COMPRESSION %q: want gzip or none", v)
	}

	c.Timeout = DefaultTimeout
	if v := get("TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return c, fmt.Errorf("otlp: OTEL_EXPORTER_OTLP_TIMEOUT %q: want milliseconds", v)
		}
		c.Timeout = time.Duration(ms) * time.Millisecond
	}

	res, err := parseKV(getenv("OTEL_RESOURCE_ATTRIBUTES"))
	if err != nil {
		return c, fmt.Errorf("otlp: OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	c.Resource = res
	c.ServiceName = strings.TrimSpace(getenv("OTEL_SERVICE_NAME"))
	return c, nil
}

// parseKV reads the W3C-baggage-like list the OTel variables use:
// key1=value1,key2=value2, each part URL-encoded.
func parseKV(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("entry %d: want key=value", len(out)+1)
		}
		key, err1 := url.PathUnescape(strings.TrimSpace(k))
		val, err2 := url.PathUnescape(strings.TrimSpace(v))
		if err1 != nil || err2 != nil || key == "" {
			return nil, fmt.Errorf("entry %d: bad encoding", len(out)+1)
		}
		out[key] = val
	}
	return out, nil
}
