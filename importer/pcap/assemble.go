package pcap

import (
	"fmt"
	"net"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/reassembly"

	"github.com/tsinspect/tsinspect/importer/httpflow"
	"github.com/tsinspect/tsinspect/importer/tlsrec"
)

// linkTypeLinuxSLL2 is the Linux "cooked" v2 header (link type 276), which
// gopacket does not decode; its LinkType is a byte, so pcapgo hands 276
// over as 276 & 0xff.
const linkTypeLinuxSLL2 layers.LinkType = 276 & 0xff

// assembly feeds packets to gopacket's TCP reassembly and keeps every
// connection it makes, in the order they began.
type assembly struct {
	asm   *reassembly.Assembler
	conns []*conn
}

func newAssembly() *assembly {
	a := &assembly{}
	pool := reassembly.NewStreamPool(factory{a})
	a.asm = reassembly.NewAssembler(pool)
	return a
}

type factory struct{ a *assembly }

func (f factory) New(netFlow, tcpFlow gopacket.Flow, tcp *layers.TCP, _ reassembly.AssemblerContext) reassembly.Stream {
	c := &conn{net: netFlow, tcp: tcpFlow, first: -1, synFrom: -1}
	if tcp.SYN && !tcp.ACK {
		c.synFrom = 0 // the first packet's sender opened the connection
	}
	f.a.conns = append(f.a.conns, c)
	return c
}

// packetContext carries a packet's capture info through the assembler.
type packetContext struct{ ci gopacket.CaptureInfo }

func (c *packetContext) GetCaptureInfo() gopacket.CaptureInfo { return c.ci }

// packet decodes one captured frame and hands its TCP segment to the
// assembler. It reports false when the frame holds no TCP over IP.
func (a *assembly) packet(data []byte, ci gopacket.CaptureInfo, lt layers.LinkType) bool {
	var first gopacket.Decoder = lt
	if lt == linkTypeLinuxSLL2 {
		if len(data) < 20 {
			return false
		}
		switch uint16(data[0])<<8 | uint16(data[1]) {
		case 0x0800:
			first = layers.LayerTypeIPv4
		case 0x86DD:
			first = layers.LayerTypeIPv6
		default:
			return false
		}
		data = data[20:]
	}
	pkt := gopacket.NewPacket(data, first, gopacket.DecodeOptions{Lazy: true, NoCopy: true})
	nl := pkt.NetworkLayer()
	tcp, _ := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
	if nl == nil || tcp == nil {
		return false
	}
	a.assemble(nl.NetworkFlow(), tcp, ci)
	return true
}

// brokenWhat names the connections a panic in reassembly cost.
const brokenWhat = "TCP connections that could not be reassembled (internal error)"

// assemble hands one segment to the assembler. A panic in the reassembly
// library (a bug met on crafted or damaged input) costs the connection the
// segment belongs to, not the import: that connection is marked broken and
// its later segments are dropped.
func (a *assembly) assemble(netFlow gopacket.Flow, tcp *layers.TCP, ci gopacket.CaptureInfo) {
	tcpFlow := gopacket.NewFlow(layers.EndpointTCPPort, tcp.TransportFlow().Src().Raw(), tcp.TransportFlow().Dst().Raw())
	for _, c := range a.conns {
		if c.broken != "" && c.is(netFlow, tcpFlow) {
			return
		}
	}
	defer func() {
		if r := recover(); r != nil {
			for i := len(a.conns) - 1; i >= 0; i-- {
				if c := a.conns[i]; c.is(netFlow, tcpFlow) {
					c.markBroken(r)
					return
				}
			}
			// The panic came before the connection was made: keep a
			// placeholder so that the loss is counted and later segments
			// of the flow are dropped.
			c := &conn{net: netFlow, tcp: tcpFlow, first: -1, synFrom: -1}
			c.markBroken(r)
			a.conns = append(a.conns, c)
		}
	}()
	a.asm.AssembleWithContext(netFlow, tcp, &packetContext{ci: ci})
}

// finish flushes what the assembler still holds (data after a hole, and
// connections that never closed). A panic in the library while flushing
// costs the connections it had not finished with yet.
func (a *assembly) finish() {
	defer func() {
		if r := recover(); r != nil {
			for _, c := range a.conns {
				if !c.complete && c.broken == "" {
					c.markBroken(r)
				}
			}
		}
	}()
	a.asm.FlushAll()
}

// conn is one TCP connection: the data of each direction (0: the sender of
// the first packet seen, 1: the other side) with arrival times.
type conn struct {
	net, tcp gopacket.Flow
	streams  [2]httpflow.Stream
	// first is the direction that sent data first, -1 before any.
	first   int
	synFrom int // the direction that sent a bare SYN, -1 if none seen
	started bool
	// ignored, when not empty, is why the connection's data is dropped.
	ignored string
	// broken, when not empty, is the panic that reassembling it raised;
	// its data is dropped and counted as an error.
	broken string
	// complete is set once the assembler is done with the connection.
	complete bool
}

// is reports whether the segment flows are this connection's, in either
// direction.
func (c *conn) is(netFlow, tcpFlow gopacket.Flow) bool {
	return (c.net == netFlow && c.tcp == tcpFlow) || (c.net == netFlow.Reverse() && c.tcp == tcpFlow.Reverse())
}

func (c *conn) markBroken(r any) {
	c.broken = fmt.Sprint(r)
	c.streams = [2]httpflow.Stream{}
}

// Accept takes every segment, including those of connections whose
// start was not captured.
func (c *conn) Accept(tcp *layers.TCP, ci gopacket.CaptureInfo, dir reassembly.TCPFlowDirection, nextSeq reassembly.Sequence, start *bool, ac reassembly.AssemblerContext) bool {
	*start = true
	return true
}

// ReassembledSG appends in-order data to its direction. A panic while
// reading what the assembler hands over breaks this connection only.
func (c *conn) ReassembledSG(sg reassembly.ScatterGather, ac reassembly.AssemblerContext) {
	defer func() {
		if r := recover(); r != nil {
			c.markBroken(r)
		}
	}()
	if c.broken != "" {
		return
	}
	dir, _, end, skip := sg.Info()
	d := 0
	if dir == reassembly.TCPDirServerToClient {
		d = 1
	}
	s := &c.streams[d]
	avail, _ := sg.Lengths()
	if c.ignored != "" {
		return
	}
	if skip > 0 && (s.Len() > 0 || c.started) {
		s.Lost = true // a hole: the rest of this direction cannot be placed
	}
	if end {
		s.Closed = true
	}
	if avail == 0 || s.Lost {
		return
	}
	at := sg.CaptureInfo(avail - 1).Timestamp
	if at.IsZero() && ac != nil {
		at = ac.GetCaptureInfo().Timestamp
	}
	s.Append(sg.Fetch(avail), at)
	if !c.started {
		c.started = true
		c.first = d
	}
	c.classify()
}

// classify drops, as soon as it can tell, the data of connections that
// carry neither HTTP nor TLS.
func (c *conn) classify() {
	s := &c.streams[c.first]
	head := s.Prefix(16)
	if len(head) < 8 && !s.Closed && c.streams[1-c.first].Len() == 0 {
		return // not enough to tell yet
	}
	if tlsrec.LooksLikeTLS(head) || httpflow.LooksLikeHTTP(head) {
		return
	}
	c.ignored = "TCP connections that carry neither HTTP/1.1 nor TLS (or began before the capture)"
	c.streams = [2]httpflow.Stream{}
}

// ReassemblyComplete lets the assembler forget the connection, so that a
// later one on the same ports starts afresh.
func (c *conn) ReassemblyComplete(ac reassembly.AssemblerContext) bool {
	c.complete = true
	return true
}

// orient returns the client's and the server's streams: the client is the
// side that spoke first (it sends the request or the ClientHello).
func (c *conn) orient() (client, server *httpflow.Stream) {
	d := c.first
	if d < 0 {
		d = 0
		if c.synFrom == 1 {
			d = 1
		}
	}
	return &c.streams[d], &c.streams[1-d]
}

// serverAddr is the address of the side that did not speak first.
func (c *conn) serverAddr() string {
	src, dst := c.net.Endpoints()
	sp, dp := c.tcp.Endpoints()
	host, port := dst.String(), dp.String()
	if c.first == 1 {
		host, port = src.String(), sp.String()
	}
	if _, err := strconv.Atoi(port); err != nil {
		return host
	}
	return net.JoinHostPort(host, port)
}
