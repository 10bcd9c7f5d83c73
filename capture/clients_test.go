package capture

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRealClientsEnforceNameConstraints serves a leaf signed by the CA for
// a permitted host and one for a host outside its name constraints, and
// asks curl, Python, Node and openssl (each when installed) to connect
// with only the CA trusted: every one accepts the first and rejects the
// second. Go's own verifier is checked in TestCANameConstraintsAndKeyMode.
func TestRealClientsEnforceNameConstraints(t *testing.T) {
	if testing.Short() {
		t.Skip("runs outside clients")
	}
	dir := t.TempDir()
	ca, err := LoadOrCreateCA(dir, InterceptHosts(nil))
	if err != nil {
		t.Fatal(err)
	}
	const good, bad = "api.anthropic.com", "evil.example.org"
	serve := func(host string) string {
		leaf, err := ca.Leaf(host)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{*leaf}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func(c net.Conn) {
					defer c.Close()
					c.SetDeadline(time.Now().Add(patience))
					buf := make([]byte, 4096)
					c.Read(buf)
					fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
				}(c)
			}
		}()
		return ln.Addr().String()
	}
	addrs := map[string]string{good: serve(good), bad: serve(bad)}
	clients := map[string]func(host, addr string) *exec.Cmd{
		"curl": func(host, addr string) *exec.Cmd {
			_, port, _ := net.SplitHostPort(addr)
			return exec.Command("curl", "-sS", "--max-time", "10", "--noproxy", "*", "--cacert", ca.CertPath,
				"--resolve", host+":"+port+":127.0.0.1", "https://"+host+":"+port+"/")
		},
		"python3": func(host, addr string) *exec.Cmd {
			h, port, _ := net.SplitHostPort(addr)
			return exec.Command("python3", "-c", `
import socket, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[1])
with socket.create_connection((sys.argv[2], int(sys.argv[3])), timeout=10) as s:
    with ctx.wrap_socket(s, server_hostname=sys.argv[4]) as t:
        t.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        print(t.recv(100))
`, ca.CertPath, h, port, host)
		},
		"node": func(host, addr string) *exec.Cmd {
			h, port, _ := net.SplitHostPort(addr)
			cmd := exec.Command("node", "-e", `
const tls = require("tls");
const s = tls.connect({host: process.argv[1], port: +process.argv[2], servername: process.argv[3]}, () => { s.end(); process.exit(0); });
s.on("error", e => { console.error(e.code || e.message); process.exit(1); });
setTimeout(() => process.exit(2), 10000);
`, h, port, host)
			cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+ca.CertPath)
			return cmd
		},
		"openssl": func(host, addr string) *exec.Cmd {
			cmd := exec.Command("openssl", "s_client", "-connect", addr, "-servername", host, "-verify_hostname", host,
				"-CAfile", ca.CertPath, "-verify_return_error", "-brief")
			cmd.Stdin = strings.NewReader("")
			return cmd
		},
	}
	ran := 0
	for name, mk := range clients {
		if _, err := exec.LookPath(name); err != nil {
			t.Logf("%s not installed: skipped", name)
			continue
		}
		ran++
		for host, wantOK := range map[string]bool{good: true, bad: false} {
			cmd := mk(host, addrs[host])
			cmd.Dir = filepath.Dir(ca.CertPath)
			out, err := cmd.CombinedOutput()
			if (err == nil) != wantOK {
				t.Errorf("%s connecting to a leaf for %s: err=%v, want accepted=%v\n%s", name, host, err, wantOK, out)
			}
		}
	}
	if ran == 0 {
		t.Skip("none of curl, python3, node, openssl is installed")
	}
}
