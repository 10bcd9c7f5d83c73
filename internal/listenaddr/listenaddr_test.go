package listenaddr

import (
	"errors"
	"net"
	"testing"
)

func TestHost(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:0": "127.0.0.1", "localhost:8080": "localhost", "[::1]:65535": "::1", "0.0.0.0:9": "0.0.0.0", ":80": "",
	} {
		if host, ok := Host(addr); !ok || host != want {
			t.Errorf("Host(%q) = %q, %v; want %q", addr, host, ok, want)
		}
	}
	for _, addr := range []string{"8080", "nope", "127.0.0.1:99999", "127.0.0.1:-1", "127.0.0.1:x", ""} {
		if host, ok := Host(addr); ok {
			t.Errorf("Host(%q) = %q, true", addr, host)
		}
	}
}

func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "127.0.0.1": true, "127.1.2.3": true, "::1": true,
		"0.0.0.0": false, "10.0.0.1": false, "example.com": false, "": false,
	} {
		if got := Loopback(host); got != want {
			t.Errorf("Loopback(%q) = %v", host, got)
		}
	}
}

func TestInUseHint(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback: %v", err)
	}
	defer ln.Close()
	_, err = net.Listen("tcp", ln.Addr().String())
	if err == nil {
		t.Fatal("the same address bound twice")
	}
	if InUseHint("serve", err) == "" {
		t.Errorf("no hint for %v", err)
	}
	if InUseHint("serve", errors.New("other")) != "" {
		t.Error("a hint for another error")
	}
}
