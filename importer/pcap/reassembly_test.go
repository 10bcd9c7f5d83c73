package pcap

import (
	"bytes"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/gopacket/gopacket/reassembly"
)

type seg struct {
	fromClient bool
	port       uint16 // the client's port; 0 for 40000
	seq        uint32
	syn, fin   bool
	payload    []byte
}

// craft writes the segments as an Ethernet pcap.
func craft(t testing.TB, segs []seg) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1700000000, 0)
	for _, s := range segs {
		src, dst := net.IP{10, 0, 0, 1}, net.IP{10, 0, 0, 2}
		sp, dp := layers.TCPPort(40000), layers.TCPPort(80)
		if s.port != 0 {
			sp = layers.TCPPort(s.port)
		}
		if !s.fromClient {
			src, dst, sp, dp = dst, src, dp, sp
		}
		eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{0, 1, 2, 3, 4, 5}, DstMAC: net.HardwareAddr{0, 1, 2, 3, 4, 6}, EthernetType: layers.EthernetTypeIPv4}
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: src, DstIP: dst}
		tcp := &layers.TCP{SrcPort: sp, DstPort: dp, Seq: s.seq, SYN: s.syn, FIN: s.fin, ACK: !s.syn, Window: 65535}
		tcp.SetNetworkLayerForChecksum(ip)
		sb := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(sb, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, tcp, gopacket.Payload(s.payload)); err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Millisecond)
		b := sb.Bytes()
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: at, CaptureLength: len(b), Length: len(b)}, b); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// TestCraftedReassembly holds the reassembly crash fuzzing found (a
// segment spanning several pages after a hole, flushed at the end: the old
// library handed over pages with no capture context) and checks that the
// other connection of the same file is imported all the same.
func TestCraftedReassembly(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 5000)
	req := "POST /v1/messages HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}"
	resp := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	segs := []seg{
		{fromClient: true, port: 40001, seq: 1000, syn: true},
		{fromClient: false, port: 40001, seq: 5000, syn: true},
		{fromClient: true, port: 40001, seq: 1001, payload: []byte(req)},
		{fromClient: false, port: 40001, seq: 5001, payload: []byte(resp)},
		{fromClient: true, port: 40001, seq: 1001 + uint32(len(req)), fin: true},
		{fromClient: false, port: 40001, seq: 5001 + uint32(len(resp)), fin: true},
		// The crafted one: a hole, then a segment of several pages.
		{fromClient: true, seq: 1000, syn: true},
		{fromClient: true, seq: 1001 + 100, payload: big},
	}
	b := craft(t, segs)
	res, err := Read(bytes.NewReader(b), int64(len(b)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Exchanges) != 1 || string(res.Exchanges[0].RespBody) != "ok" {
		t.Fatalf("got %d exchanges, want the one of the intact connection", len(res.Exchanges))
	}
}

// panicSG is a ScatterGather whose every method panics, as a library bug
// would.
type panicSG struct{ reassembly.ScatterGather }

func (panicSG) Info() (reassembly.TCPFlowDirection, bool, bool, int) { panic("library bug") }

// TestPanicInOneStreamBreaksThatStream checks that a panic while a stream
// is handed its data marks that connection broken, counted as an error,
// instead of ending the import.
func TestPanicInOneStreamBreaksThatStream(t *testing.T) {
	c := &conn{first: -1, synFrom: -1}
	c.ReassembledSG(panicSG{}, nil)
	if c.broken == "" {
		t.Fatal("a panic in ReassembledSG did not mark the connection broken")
	}
	a := newAssembly()
	a.conns = append(a.conns, c)
	a.finish()
	if !strings.Contains(c.broken, "library bug") {
		t.Errorf("broken = %q", c.broken)
	}
}
