package pcaptest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// TestWait: Wait holds while a wrapped connection is open or being read,
// and returns once it is closed and its reader has recorded the peer's
// FIN.
func TestWait(t *testing.T) {
	c := New(Options{})
	if err := c.Wait(context.Background()); err != nil {
		t.Fatalf("no connection: %v", err)
	}
	server, client := net.Pipe()
	conn := c.WrapServer(server)
	go func() {
		io.Copy(io.Discard, conn) // until the client's FIN
		conn.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := c.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("open connection: Wait returned %v", err)
	}
	client.Write([]byte("hello"))
	client.Close()
	if err := c.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Handshake (3), data, the client's FIN, the server's FIN.
	if n := c.Packets(); n != 6 {
		t.Errorf("%d packets, want 6", n)
	}
}

// TestInsideRecord writes a small capture and checks that no cut made
// with InsideRecord ends the file on a record boundary.
func TestInsideRecord(t *testing.T) {
	c := New(Options{})
	server, client := net.Pipe()
	conn := c.WrapServer(server)
	go func() {
		client.Write([]byte("hello"))
		io.Copy(io.Discard, client)
	}()
	buf := make([]byte, 5)
	io.ReadFull(conn, buf)
	conn.Write([]byte("a reply of some length"))
	conn.Close()
	client.Close()
	var b bytes.Buffer
	if err := c.WritePcap(&b); err != nil {
		t.Fatal(err)
	}
	file := b.Bytes()
	boundaries := map[int]bool{}
	for off := 24; off < len(file); off += 16 + int(file[off+8]) | int(file[off+9])<<8 {
		boundaries[off] = true
	}
	if len(boundaries) < 3 {
		t.Fatalf("%d records", len(boundaries))
	}
	for pos := 24; pos < len(file); pos++ {
		got := InsideRecord(file, pos)
		if boundaries[got] || got < pos || got > pos+8 {
			t.Fatalf("InsideRecord(%d) = %d, a boundary or out of range", pos, got)
		}
	}
}
