package main

import (
	"os"

	"github.com/tsinspect/tsinspect/internal/cli"
	"github.com/tsinspect/tsinspect/otlp"
)

// otlpConfig reads the OTLP settings: endpoint (a flag value, "" or
// otlp.EnvEndpoint for the variables' own) and the OTEL_EXPORTER_OTLP_* variables.
func otlpConfig(op, endpoint string) (otlp.Config, error) {
	cfg, err := otlp.ConfigFromEnv(os.Getenv, endpoint)
	if err != nil {
		return cfg, cli.Usage("%s: %v", op, err)
	}
	return cfg, nil
}

// exportOTLP sends a capture to a collector as one trace.
func exportOTLP(env *cli.Env, path, endpoint, policyName string) error {
	policy, err := parsePolicy("export", "--redact", policyName)
	if err != nil {
		return err
	}
	cfg, err := otlpConfig("export", endpoint)
	if err != nil {
		return err
	}
	return otlp.SendFile(cfg, path, policy, version, env.Stderr, func(err error) error { return readError("export", path, err) })
}
