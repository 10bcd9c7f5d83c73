package pcap

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// File formats.
const (
	FormatPcap   = "pcap"
	FormatPcapNG = "pcapng"
)

// ErrNotPcap is returned for a file that is neither pcap nor pcapng.
var ErrNotPcap = errors.New("not a pcap or pcapng file")

// Detect returns FormatPcap or FormatPcapNG when head (the first bytes of a
// file, at least 4) starts like one, else "".
func Detect(head []byte) string {
	if len(head) < 4 {
		return ""
	}
	switch binary.LittleEndian.Uint32(head) {
	case 0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d, 0x4d3cb2a1:
		return FormatPcap
	case 0x0A0D0D0A:
		return FormatPcapNG
	}
	return ""
}

// Limits on what a record may claim, so that a damaged length field is
// caught here instead of making the packet reader allocate it.
const (
	maxPacket = 16 << 20
	maxBlock  = maxPacket + 4096
)

// scanResult is what the first pass over a file found.
type scanResult struct {
	format  string
	packets int
	// end is where the readable part of the file ends; the packet reader
	// is given only that much.
	end int64
	// damage describes what is wrong past end ("" when the whole file is
	// readable).
	damage string
	// keyLog is the text of every TLS key log in pcapng Decryption
	// Secrets Blocks.
	keyLog []byte
}

// scan walks the file's framing without decoding packets: it finds where
// the file stops being well-formed and collects embedded TLS secrets.
func scan(r io.Reader, size int64) (*scanResult, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	head, err := br.Peek(4)
	if err != nil {
		return nil, ErrNotPcap
	}
	switch Detect(head) {
	case FormatPcap:
		return scanPcap(br, size)
	case FormatPcapNG:
		return scanPcapNG(br, size)
	}
	return nil, ErrNotPcap
}

func scanPcap(br *bufio.Reader, size int64) (*scanResult, error) {
	res := &scanResult{format: FormatPcap}
	var hdr [24]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return nil, fmt.Errorf("%w: the file header is cut off", ErrNotPcap)
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if m := binary.LittleEndian.Uint32(hdr[:]); m == 0xd4c3b2a1 || m == 0x4d3cb2a1 {
		bo = binary.BigEndian
	}
	snap := int64(bo.Uint32(hdr[16:]))
	limit := max(snap, 262144)
	limit = min(limit, maxPacket)
	off := int64(24)
	res.end = off
	for {
		var rh [16]byte
		n, err := io.ReadFull(br, rh[:])
		if err == io.EOF {
			return res, nil
		}
		if err != nil {
			res.damage = fmt.Sprintf("the file is cut off after packet %d (%d bytes of a record header at byte %d)", res.packets, n, off)
			return res, nil
		}
		incl, orig := int64(bo.Uint32(rh[8:])), int64(bo.Uint32(rh[12:]))
		if incl > limit || incl > orig {
			res.damage = fmt.Sprintf("the record of packet %d at byte %d is damaged (it claims %d bytes)", res.packets+1, off, incl)
			return res, nil
		}
		got, err := br.Discard(int(incl))
		if err != nil {
			res.damage = fmt.Sprintf("the file is cut off inside packet %d (%d of its %d bytes, at byte %d of %d)", res.packets+1, got, incl, off, size)
			return res, nil
		}
		off += 16 + incl
		res.packets++
		res.end = off
	}
}

func scanPcapNG(br *bufio.Reader, size int64) (*scanResult, error) {
	res := &scanResult{format: FormatPcapNG}
	var bo binary.ByteOrder = binary.LittleEndian
	off := int64(0)
	first := true
	for {
		var bh [12]byte
		n, err := io.ReadFull(br, bh[:8])
		if err == io.EOF {
			return res, nil
		}
		if err != nil {
			res.damage = fmt.Sprintf("the file is cut off after packet %d (%d bytes of a block header at byte %d)", res.packets, n, off)
			return res, nil
		}
		typ := binary.LittleEndian.Uint32(bh[0:4])
		if typ == 0x0A0D0D0A {
			if _, err := io.ReadFull(br, bh[8:12]); err != nil {
				res.damage = fmt.Sprintf("the file is cut off inside a section header at byte %d", off)
				return res, nil
			}
			switch binary.LittleEndian.Uint32(bh[8:12]) {
			case 0x1A2B3C4D:
				bo = binary.LittleEndian
			case 0x4D3C2B1A:
				bo = binary.BigEndian
			default:
				if first {
					return nil, fmt.Errorf("%w: bad byte-order mark", ErrNotPcap)
				}
				res.damage = fmt.Sprintf("the section header at byte %d is damaged", off)
				return res, nil
			}
		} else if first {
			return nil, ErrNotPcap
		} else {
			typ = bo.Uint32(bh[0:4])
		}
		first = false
		length := int64(bo.Uint32(bh[4:8]))
		read := int64(8)
		if typ == 0x0A0D0D0A {
			read = 12
		}
		if length < 12 || length%4 != 0 || length > maxBlock {
			res.damage = fmt.Sprintf("the block after packet %d, at byte %d, is damaged (it claims %d bytes)", res.packets, off, length)
			return res, nil
		}
		body := make([]byte, length-read)
		if got, err := io.ReadFull(br, body); err != nil {
			res.damage = fmt.Sprintf("the file is cut off inside the block after packet %d (%d of its %d bytes, at byte %d of %d)", res.packets, int64(got)+read, length, off, size)
			return res, nil
		}
		if int64(bo.Uint32(body[len(body)-4:])) != length {
			res.damage = fmt.Sprintf("the block after packet %d, at byte %d, is damaged (its two lengths differ)", res.packets, off)
			return res, nil
		}
		inner := body[:len(body)-4]
		switch typ {
		case 6: // enhanced packet
			if len(inner) < 20 || int64(bo.Uint32(inner[12:16])) > int64(len(inner))-20 {
				res.damage = fmt.Sprintf("packet %d, at byte %d, is damaged", res.packets+1, off)
				return res, nil
			}
			res.packets++
		case 2, 3: // obsolete and simple packets
			res.packets++
		case 0x0A: // decryption secrets
			if len(inner) >= 8 && bo.Uint32(inner[0:4]) == 0x544c534b {
				n := int(bo.Uint32(inner[4:8]))
				if n <= len(inner)-8 {
					res.keyLog = append(res.keyLog, inner[8:8+n]...)
					res.keyLog = append(res.keyLog, '\n')
				}
			}
		}
		off += length
		res.end = off
	}
}
