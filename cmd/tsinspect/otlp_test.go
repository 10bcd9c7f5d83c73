package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsinspect/tsinspect/fixtures/democapture"
)

func TestOTLPFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	demo := filepath.Join(dir, "demo.db")
	if err := os.WriteFile(demo, democapture.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"record", "--db", filepath.Join(dir, "s.db"), "--otlp", "http://me:hunter2@127.0.0.1:1"}, "OTEL_EXPORTER_OTLP_HEADERS"},
		{[]string{"record", "--db", filepath.Join(dir, "s.db"), "--otlp", "http://127.0.0.1:1", "--otlp-redact", "some"}, "--otlp-redact"},
		{[]string{"export", demo, "--format", "otlp", "--out", filepath.Join(dir, "x")}, "--out is for --format har"},
		{[]string{"export", demo, "--format", "har", "--endpoint", "http://127.0.0.1:1"}, "--endpoint is for --format otlp"},
		{[]string{"export", demo, "--format", "otlp", "--redact", "some"}, "--redact"},
		{[]string{"export", demo, "--format", "otlp", "--endpoint", "ftp://127.0.0.1:1"}, "want http://HOST:PORT"},
	}
	for _, c := range cases {
		code, _, errs := runArgs(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Contains(errs, "hunter2") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q, no password", c.args, code, errs, c.want)
		}
	}
}

func TestExportOTLPToNobodyFails(t *testing.T) {
	dir := t.TempDir()
	demo := filepath.Join(dir, "demo.db")
	if err := os.WriteFile(demo, democapture.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	// A port nobody listens on: every try is refused at once.
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "500")
	code, _, errs := runArgs(t, "export", demo, "--format", "otlp", "--endpoint", "http://127.0.0.1:1")
	if code != 1 || !strings.Contains(errs, "sent 0 of 10 spans") || !strings.Contains(errs, "10 spans not delivered") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}
