// Package pcap imports HTTP/1.1 exchanges from packet captures: pcap and
// pcapng files read with gopacket's pure-Go pcapgo, TCP streams put back
// together with its reassembly package, TLS 1.2 and 1.3 decrypted with an
// NSS key log (given, or embedded in pcapng Decryption Secrets Blocks), and
// HTTP parsed by the flow package. It is the only package that imports
// gopacket.
//
// Damaged input is read as far as it goes: a file cut off or corrupted
// part way keeps the packets before the damage, and a connection that cannot
// be decrypted or parsed is counted as skipped, with the reason.
package pcap

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/importer/httpflow"
	"github.com/tsinspect/tsinspect/importer/tlsrec"
)

// Source is the Source of every exchange this package imports.
const Source = "import:pcap"

// Options tune Read.
type Options struct {
	// KeyLog holds the TLS secrets to decrypt with, besides those embedded
	// in the file. May be nil.
	KeyLog *tlsrec.KeyLog
	// Progress, when not nil, is called now and then with the number of
	// bytes of the file read so far.
	Progress func(done int64)
}

// Skip counts things that could not be imported, for one reason.
type Skip struct {
	What  string // e.g. "TLS connections with no secrets in the key log"
	Count int
	// Error is set when the skip means data was lost that should have
	// been there (damage, missing or wrong keys), as opposed to traffic
	// that is simply not HTTP.
	Error bool
}

// Result is what Read found.
type Result struct {
	Format      string
	Packets     int
	Connections int // TCP connections that carried data
	Exchanges   []exchange.Exchange
	// Secrets counts the TLS sessions with secrets embedded in the file.
	Secrets int
	// Suites counts the decrypted TLS connections by cipher suite name.
	Suites map[string]int
	// Damage, when not empty, says where and how the file stopped being
	// readable; what came before it was imported.
	Damage  string
	Skipped []Skip
}

// Read imports the capture in r, of the given size. It fails only when r
// is not a pcap or pcapng file at all (ErrNotPcap) or cannot be read;
// anything else is reported in the Result.
func Read(r io.ReaderAt, size int64, opts Options) (*Result, error) {
	sc, err := scan(io.NewSectionReader(r, 0, size), size)
	if err != nil {
		return nil, fmt.Errorf("pcap: %w", err)
	}
	keys := &tlsrec.KeyLog{}
	keys.Merge(opts.KeyLog)
	res := &Result{Format: sc.format, Damage: sc.damage}
	if len(sc.keyLog) > 0 {
		embedded, _ := tlsrec.ParseKeyLogBytes(sc.keyLog)
		res.Secrets = embedded.Sessions()
		keys.Merge(embedded)
	}

	body := &countingReader{r: io.NewSectionReader(r, 0, sc.end), progress: opts.Progress}
	src, linkType, err := open(sc.format, body)
	if err != nil {
		if sc.damage != "" {
			return nil, fmt.Errorf("pcap: %s", sc.damage)
		}
		return nil, fmt.Errorf("pcap: %w", err)
	}
	a := newAssembly()
	counts := map[string]int{}
	for {
		data, ci, err := src.ReadPacketData()
		if err == io.EOF {
			break
		}
		if err != nil {
			if res.Damage == "" {
				res.Damage = fmt.Sprintf("packet %d could not be read: %v", res.Packets+1, err)
			}
			break
		}
		res.Packets++
		lt := linkType
		if len(ci.AncillaryData) > 0 {
			if t, ok := ci.AncillaryData[0].(layers.LinkType); ok {
				lt = t
			}
		}
		if ci.CaptureLength < ci.Length {
			counts["packets cut short by the capture's snap length"]++
		}
		if !a.packet(data, ci, lt) {
			counts["packets that are not TCP over IP"]++
		}
	}
	body.done()
	a.finish()

	skips := map[string]*Skip{}
	skip := func(what string, isErr bool) {
		s := skips[what]
		if s == nil {
			s = &Skip{What: what, Error: isErr}
			skips[what] = s
		}
		s.Count++
	}
	for _, c := range a.conns {
		if c.broken != "" {
			skip(brokenWhat, true)
			continue
		}
		if c.ignored != "" {
			skip(c.ignored, false)
			continue
		}
		if c.streams[0].Len()+c.streams[1].Len() == 0 {
			continue
		}
		res.Connections++
		exs, problem, isErr := safeConvert(c, keys, res)
		res.Exchanges = append(res.Exchanges, exs...)
		if problem != "" {
			skip(problem, isErr)
		}
	}
	sort.SliceStable(res.Exchanges, func(i, j int) bool { return res.Exchanges[i].Start.Before(res.Exchanges[j].Start) })
	for what, n := range counts {
		skips[what] = &Skip{What: what, Count: n, Error: false}
	}
	for _, s := range skips {
		res.Skipped = append(res.Skipped, *s)
	}
	sort.Slice(res.Skipped, func(i, j int) bool { return res.Skipped[i].What < res.Skipped[j].What })
	return res, nil
}

// packetSource is what pcapgo's two readers have in common.
type packetSource interface {
	ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
}

func open(format string, r io.Reader) (packetSource, layers.LinkType, error) {
	if format == FormatPcapNG {
		ng, err := pcapgo.NewNgReader(r, pcapgo.NgReaderOptions{WantMixedLinkType: true, SkipUnknownVersion: true})
		if err != nil {
			return nil, 0, err
		}
		return ng, ng.LinkType(), nil
	}
	pr, err := pcapgo.NewReader(r)
	if err != nil {
		return nil, 0, err
	}
	return pr, pr.LinkType(), nil
}

// safeConvert is convert, with a panic in the parsers (a bug, or input
// they did not expect) costing one connection rather than the import.
func safeConvert(c *conn, keys *tlsrec.KeyLog, res *Result) (exs []exchange.Exchange, problem string, isErr bool) {
	defer func() {
		if r := recover(); r != nil {
			exs, problem, isErr = nil, fmt.Sprintf("connections that could not be read (internal error: %v)", r), true
		}
	}()
	return convert(c, keys, res)
}

// convert turns one reassembled connection into exchanges. problem, when
// not empty, names what was skipped or cut short.
func convert(c *conn, keys *tlsrec.KeyLog, res *Result) (exs []exchange.Exchange, problem string, isErr bool) {
	client, server := c.orient()
	fc := &httpflow.Conn{Client: *client, Server: *server, Scheme: "http", ServerAddr: c.serverAddr()}
	head := client.Prefix(16)
	if tlsrec.LooksLikeTLS(head) {
		fc, problem, isErr = decrypt(fc, keys, res)
		if fc == nil {
			return nil, problem, isErr
		}
	} else if !httpflow.LooksLikeHTTP(head) {
		return nil, "TCP connections that carry neither HTTP/1.1 nor TLS (or began before the capture)", false
	}
	for depth := 0; fc != nil && depth < 2; depth++ {
		if isHTTP2(fc.Client.Prefix(24)) {
			return exs, "HTTP/2 connections (only HTTP/1.1 is read)", true
		}
		pres := httpflow.Parse(fc, Source)
		exs = append(exs, pres.Exchanges...)
		if pres.Problem != "" && problem == "" {
			problem, isErr = "connections whose HTTP could not all be read", true
		}
		fc = nil
		if pres.Tunnel != nil {
			// A CONNECT tunnel through a proxy: TLS inside.
			var p string
			var e bool
			fc, p, e = decrypt(pres.Tunnel, keys, res)
			if p != "" && problem == "" {
				problem, isErr = p, e
			}
			// Requests through the tunnel are not CONNECTs: drop the
			// CONNECT itself, as the recorder does.
			exs = dropConnect(exs)
		}
	}
	if problem == "" && (client.Lost || server.Lost) {
		problem, isErr = "connections with data missing from the capture", true
	}
	return exs, problem, isErr
}

func dropConnect(exs []exchange.Exchange) []exchange.Exchange {
	out := exs[:0]
	for _, ex := range exs {
		if ex.Method != "CONNECT" {
			out = append(out, ex)
		}
	}
	return out
}

// decrypt returns the plaintext of a TLS connection, or nil and the reason
// it was skipped. A connection decrypted in part comes back with a problem.
func decrypt(fc *httpflow.Conn, keys *tlsrec.KeyLog, res *Result) (*httpflow.Conn, string, bool) {
	pc, ps, sess, err := tlsrec.Decrypt(&fc.Client, &fc.Server, keys)
	if err == nil || errors.Is(err, tlsrec.ErrCorrupt) {
		if res.Suites == nil {
			res.Suites = map[string]int{}
		}
		res.Suites[tlsrec.SuiteName(sess.CipherSuite)]++
	}
	out := &httpflow.Conn{Client: pc, Server: ps, Scheme: "https", ServerAddr: fc.ServerAddr}
	if sess.ServerName != "" {
		out.ServerAddr = sess.ServerName
	}
	switch {
	case err == nil:
		return out, "", false
	case errors.Is(err, tlsrec.ErrNoKey):
		return nil, "TLS connections with no secrets in the key log (give --keylog FILE, or a pcapng with embedded secrets)", true
	case errors.Is(err, tlsrec.ErrBadKey):
		return nil, "TLS connections the key log's secrets do not decrypt (wrong key log?)", true
	case errors.Is(err, tlsrec.ErrUnsupported):
		return nil, "TLS connections with an unsupported version or cipher suite", true
	case errors.Is(err, tlsrec.ErrNoHandshake):
		return nil, "TLS connections whose handshake is not in the capture", true
	case errors.Is(err, tlsrec.ErrCorrupt):
		return out, "TLS connections with damaged records (read up to the damage)", true
	}
	return nil, "TLS connections that could not be read: " + err.Error(), true
}

func isHTTP2(b []byte) bool {
	return string(b) == "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
}

// countingReader reports progress as the packet reader reads.
type countingReader struct {
	r        io.Reader
	n        int64
	last     time.Time
	progress func(int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.progress != nil {
		if now := time.Now(); now.Sub(c.last) >= 50*time.Millisecond {
			c.last = now
			c.progress(c.n)
		}
	}
	return n, err
}

func (c *countingReader) done() {
	if c.progress != nil {
		c.progress(c.n)
	}
}
