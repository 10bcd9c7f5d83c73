// Package pcaptest makes packet captures of real connections for tests: it
// wraps the server side of a net.Conn so that every byte read and written
// is also emitted as an Ethernet/IPv4/TCP packet with correct sequence and
// acknowledgement numbers (handshake and FIN included), and writes them as a
// pcap or pcapng file. It uses the standard library only, so that the
// importer is tested against an independent writer.
package pcaptest

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sort"
	"sync"
	"time"
)

// Options tune a Capture.
type Options struct {
	// MSS splits each write into segments of at most this many bytes
	// (default 1460).
	MSS int
	// Reorder sends the second segment of every multi-segment write before
	// the first, as the network sometimes does.
	Reorder bool
}

// Capture collects the packets of the connections it wraps. It is safe for
// concurrent use.
type Capture struct {
	opts    Options
	mu      sync.Mutex
	packets []packet
	// open counts the wrapped connections that may still add packets;
	// idle is closed when it drops to 0.
	open int
	idle chan struct{}
}

type packet struct {
	at   time.Time
	data []byte // an Ethernet frame
}

// New returns an empty capture.
func New(opts Options) *Capture {
	if opts.MSS <= 0 {
		opts.MSS = 1460
	}
	return &Capture{opts: opts}
}

// Packets returns the number of packets captured so far.
func (c *Capture) Packets() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.packets)
}

// Wait returns once every connection wrapped so far has been closed and
// has no Read in progress, so that the capture holds all of its packets,
// FINs included: http.Server.Close can return while a connection's own
// goroutine is still closing it, and a reader records the peer's FIN only
// when it next reads. It fails when ctx ends first.
func (c *Capture) Wait(ctx context.Context) error {
	c.mu.Lock()
	if c.open == 0 {
		c.mu.Unlock()
		return nil
	}
	idle := c.idle
	c.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("pcaptest: wait for connections to close: %w", ctx.Err())
	}
}

// Listener wraps ln so that every connection it accepts is recorded, as
// by WrapServer.
func (c *Capture) Listener(ln net.Listener) net.Listener { return listener{ln, c} }

type listener struct {
	net.Listener
	c *Capture
}

func (l listener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return l.c.WrapServer(conn), nil
}

// WrapServer returns a conn that behaves as conn, the server's end of a
// TCP connection, and records its traffic: what the server reads is sent by
// the client (the remote address), what it writes by the server.
func (c *Capture) WrapServer(conn net.Conn) net.Conn {
	client := addrOf(conn.RemoteAddr())
	server := addrOf(conn.LocalAddr())
	w := &wrapped{Conn: conn, c: c, client: client, server: server, cseq: 1000, sseq: 5000}
	c.mu.Lock()
	if c.open == 0 {
		c.idle = make(chan struct{})
	}
	c.open++
	c.mu.Unlock()
	now := time.Now()
	// Three-way handshake.
	c.emit(now, client, server, w.cseq, 0, flagSYN, nil)
	c.emit(now, server, client, w.sseq, w.cseq+1, flagSYN|flagACK, nil)
	w.cseq++
	w.sseq++
	c.emit(now, client, server, w.cseq, w.sseq, flagACK, nil)
	return w
}

type endpoint struct {
	ip   [4]byte
	port uint16
}

func addrOf(a net.Addr) endpoint {
	var e endpoint
	if ta, ok := a.(*net.TCPAddr); ok {
		if ip4 := ta.IP.To4(); ip4 != nil {
			copy(e.ip[:], ip4)
		} else {
			e.ip = [4]byte{127, 0, 0, 1}
		}
		e.port = uint16(ta.Port)
	}
	return e
}

type wrapped struct {
	net.Conn
	c              *Capture
	client, server endpoint
	mu             sync.Mutex
	cseq, sseq     uint32 // next sequence number of each side
	closed         bool
	reading        int  // Reads in progress
	done           bool // closed, no Read in progress: counted out of open
}

func (w *wrapped) Read(p []byte) (int, error) {
	w.mu.Lock()
	w.reading++
	w.mu.Unlock()
	n, err := w.Conn.Read(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	if n > 0 {
		w.cseq = w.c.data(time.Now(), w.client, w.server, w.cseq, w.sseq, p[:n])
	}
	if err == io.EOF {
		w.c.emit(time.Now(), w.client, w.server, w.cseq, w.sseq, flagFIN|flagACK, nil)
		w.cseq++
	}
	w.reading--
	w.settle()
	return n, err
}

// settle counts the connection out of the capture's open ones once it is
// closed and no Read is in progress. w.mu is held.
func (w *wrapped) settle() {
	if w.done || !w.closed || w.reading > 0 {
		return
	}
	w.done = true
	w.c.mu.Lock()
	w.c.open--
	if w.c.open == 0 {
		close(w.c.idle)
	}
	w.c.mu.Unlock()
}

// Write records p as sent before writing it, so that a Close racing with
// the end of a Write cannot put the FIN before the data.
func (w *wrapped) Write(p []byte) (int, error) {
	w.mu.Lock()
	if !w.closed && len(p) > 0 {
		w.sseq = w.c.data(time.Now(), w.server, w.client, w.sseq, w.cseq, p)
	}
	w.mu.Unlock()
	return w.Conn.Write(p)
}

func (w *wrapped) Close() error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		w.c.emit(time.Now(), w.server, w.client, w.sseq, w.cseq, flagFIN|flagACK, nil)
		w.sseq++
	}
	w.mu.Unlock()
	err := w.Conn.Close()
	// A Read blocked on the connection returns now, and settles itself.
	w.mu.Lock()
	w.settle()
	w.mu.Unlock()
	return err
}

const (
	flagFIN = 0x01
	flagSYN = 0x02
	flagPSH = 0x08
	flagACK = 0x10
)

// data emits b as segments and returns the next sequence number.
func (c *Capture) data(at time.Time, from, to endpoint, seq, ack uint32, b []byte) uint32 {
	type seg struct {
		seq  uint32
		data []byte
	}
	var segs []seg
	for len(b) > 0 {
		n := min(len(b), c.opts.MSS)
		segs = append(segs, seg{seq, b[:n]})
		seq += uint32(n)
		b = b[n:]
	}
	if c.opts.Reorder && len(segs) > 1 {
		segs[0], segs[1] = segs[1], segs[0]
	}
	for _, s := range segs {
		c.emit(at, from, to, s.seq, ack, flagACK|flagPSH, s.data)
	}
	return seq
}

func (c *Capture) emit(at time.Time, from, to endpoint, seq, ack uint32, flags byte, payload []byte) {
	frame := make([]byte, 14+20+20+len(payload))
	// Ethernet: locally administered addresses, IPv4.
	copy(frame[0:6], []byte{0x02, 0, 0, 0, 0, to.ip[3]})
	copy(frame[6:12], []byte{0x02, 0, 0, 0, 0, from.ip[3]})
	binary.BigEndian.PutUint16(frame[12:14], 0x0800)
	ip := frame[14:34]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:4], uint16(20+20+len(payload)))
	ip[6] = 0x40 // don't fragment
	ip[8] = 64
	ip[9] = 6
	copy(ip[12:16], from.ip[:])
	copy(ip[16:20], to.ip[:])
	binary.BigEndian.PutUint16(ip[10:12], checksum(ip, 0))
	tcp := frame[34:]
	binary.BigEndian.PutUint16(tcp[0:2], from.port)
	binary.BigEndian.PutUint16(tcp[2:4], to.port)
	binary.BigEndian.PutUint32(tcp[4:8], seq)
	if flags&flagACK != 0 {
		binary.BigEndian.PutUint32(tcp[8:12], ack)
	}
	tcp[12] = 5 << 4
	tcp[13] = flags
	binary.BigEndian.PutUint16(tcp[14:16], 65535)
	copy(tcp[20:], payload)
	var pseudo uint32
	pseudo += uint32(binary.BigEndian.Uint16(from.ip[0:2])) + uint32(binary.BigEndian.Uint16(from.ip[2:4]))
	pseudo += uint32(binary.BigEndian.Uint16(to.ip[0:2])) + uint32(binary.BigEndian.Uint16(to.ip[2:4]))
	pseudo += 6 + uint32(len(tcp))
	binary.BigEndian.PutUint16(tcp[16:18], checksum(tcp, pseudo))
	c.mu.Lock()
	c.packets = append(c.packets, packet{at: at, data: frame})
	c.mu.Unlock()
}

func checksum(b []byte, sum uint32) uint16 {
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	return ^uint16(sum)
}

func (c *Capture) sorted() []packet {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := append([]packet(nil), c.packets...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].at.Before(out[j].at) })
	return out
}

// WritePcap writes the packets as a classic pcap file (microsecond
// timestamps, Ethernet).
func (c *Capture) WritePcap(w io.Writer) error {
	var hdr [24]byte
	binary.LittleEndian.PutUint32(hdr[0:], 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(hdr[4:], 2)
	binary.LittleEndian.PutUint16(hdr[6:], 4)
	binary.LittleEndian.PutUint32(hdr[16:], 262144)
	binary.LittleEndian.PutUint32(hdr[20:], 1)
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	for _, p := range c.sorted() {
		var rh [16]byte
		binary.LittleEndian.PutUint32(rh[0:], uint32(p.at.Unix()))
		binary.LittleEndian.PutUint32(rh[4:], uint32(p.at.Nanosecond()/1000))
		binary.LittleEndian.PutUint32(rh[8:], uint32(len(p.data)))
		binary.LittleEndian.PutUint32(rh[12:], uint32(len(p.data)))
		if _, err := w.Write(rh[:]); err != nil {
			return err
		}
		if _, err := w.Write(p.data); err != nil {
			return err
		}
	}
	return nil
}

// WritePcapNG writes the packets as a pcapng file with nanosecond
// timestamps. A non-empty keyLog is embedded in a Decryption Secrets Block
// (TLS key log) before the packets, as `editcap --inject-secrets` does.
func (c *Capture) WritePcapNG(w io.Writer, keyLog []byte) error {
	var out []byte
	// Section Header Block.
	shb := []byte{}
	shb = le32(shb, 0x1A2B3C4D)
	shb = le16(shb, 1)
	shb = le16(shb, 0)
	shb = append(shb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	out = block(out, 0x0A0D0D0A, shb)
	// Interface Description Block: Ethernet, if_tsresol = 9 (ns).
	idb := []byte{}
	idb = le16(idb, 1)
	idb = le16(idb, 0)
	idb = le32(idb, 262144)
	idb = le16(idb, 9)
	idb = le16(idb, 1)
	idb = append(idb, 9, 0, 0, 0)
	idb = le32(idb, 0) // opt_endofopt
	out = block(out, 1, idb)
	if len(keyLog) > 0 {
		dsb := []byte{}
		dsb = le32(dsb, 0x544c534b) // TLS key log
		dsb = le32(dsb, uint32(len(keyLog)))
		dsb = append(dsb, keyLog...)
		out = block(out, 0x0000000A, dsb)
	}
	if _, err := w.Write(out); err != nil {
		return err
	}
	for _, p := range c.sorted() {
		ts := uint64(p.at.UnixNano())
		epb := []byte{}
		epb = le32(epb, 0)
		epb = le32(epb, uint32(ts>>32))
		epb = le32(epb, uint32(ts))
		epb = le32(epb, uint32(len(p.data)))
		epb = le32(epb, uint32(len(p.data)))
		epb = append(epb, p.data...)
		if _, err := w.Write(block(nil, 6, epb)); err != nil {
			return err
		}
	}
	return nil
}

// block appends a pcapng block of the given type and body (padded to 32
// bits) to out.
func block(out []byte, typ uint32, body []byte) []byte {
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	total := uint32(12 + len(body))
	out = le32(out, typ)
	out = le32(out, total)
	out = append(out, body...)
	return le32(out, total)
}

func le32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
func le16(b []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(b, v) }

// InsideRecord returns pos, or pos moved into the next record's header
// when it falls on a boundary between two records of the pcap file b
// written by WritePcap, so that b[:InsideRecord(b, pos)] is always cut
// inside a record.
func InsideRecord(b []byte, pos int) int {
	for off := 24; off+16 <= len(b) && off <= pos; {
		if off == pos {
			return pos + 8
		}
		off += 16 + int(binary.LittleEndian.Uint32(b[off+8:]))
	}
	return pos
}
