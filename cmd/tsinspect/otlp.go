package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/tsinspect/tsinspect/otlp"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/source"
)

// otlpEnvEndpoint is the --otlp value that takes the endpoint from the
// OTEL_EXPORTER_OTLP_* variables.
const otlpEnvEndpoint = "env"

// otlpConfig reads the OTLP settings: endpoint (a flag value, "" or
// "env" for the variables' own) and the OTEL_EXPORTER_OTLP_* variables.
func otlpConfig(op, endpoint string) (otlp.Config, error) {
	if endpoint == otlpEnvEndpoint {
		endpoint = ""
	}
	cfg, err := otlp.ConfigFromEnv(os.Getenv, endpoint)
	if err != nil {
		return cfg, usageError("%s: %v", op, err)
	}
	return cfg, nil
}

// exportOTLP sends a capture to a collector as one trace.
func exportOTLP(env *cliEnv, path, endpoint, policyName string) error {
	policy, err := parsePolicy("export", "--redact", policyName)
	if err != nil {
		return err
	}
	cfg, err := otlpConfig("export", endpoint)
	if err != nil {
		return err
	}
	resolved, err := source.Resolve(path, env.stderr)
	if err != nil {
		return readError("export", path, fmt.Errorf("export: %w", err))
	}
	exs, started, err := source.Exchanges(resolved)
	var oe *source.OpenError
	if errors.As(err, &oe) {
		return readError("export", path, fmt.Errorf("export: %w", oe.Err))
	}
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if policy == redact.Off {
		fmt.Fprintln(env.stderr, "tsinspect: warning: --redact off: the spans are not redacted and may hold paths, e-mail addresses, identifiers and secrets")
	}
	s, st := otlp.Send(cfg, exs, otlp.ExchangesSeed(started, exs), policy, version)
	fmt.Fprintln(env.stderr, "tsinspect: "+s.Sent(st, cfg.URL))
	if st.Undelivered() > 0 {
		return fmt.Errorf("export: %d spans not delivered: %s (is the collector at %s up? the same command sends them again)", st.Undelivered(), st.LastError, cfg.URL)
	}
	return nil
}
