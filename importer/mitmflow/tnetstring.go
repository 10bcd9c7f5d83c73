package mitmflow

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// maxValue bounds the length of one tnetstring, so that a corrupt length
// does not make Read allocate gigabytes.
const maxValue = 1 << 30

// value is a decoded tnetstring: []byte (a byte or unicode string), int64,
// float64, bool, nil, map[string]value or []value.
type value = any

// errCut is returned when the input ends inside a value.
var errCut = errors.New("cut off")

// readValue reads one tnetstring from r. It returns io.EOF when r ends
// before the value starts.
func readValue(r *bufio.Reader) (value, int64, error) {
	var n int64
	var digits int
	for {
		c, err := r.ReadByte()
		if err == io.EOF && digits == 0 {
			return nil, 0, io.EOF
		}
		if err != nil {
			return nil, 0, errCut
		}
		if c == ':' {
			break
		}
		if c < '0' || c > '9' || digits > 10 {
			return nil, 0, fmt.Errorf("not a tnetstring: length byte %q", c)
		}
		n = n*10 + int64(c-'0')
		digits++
	}
	if digits == 0 || n > maxValue {
		return nil, 0, fmt.Errorf("not a tnetstring: bad length %d", n)
	}
	buf := make([]byte, n+1)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, 0, errCut
	}
	v, err := parse(buf[:n], buf[n])
	return v, int64(digits) + 1 + n + 1, err
}

// parse decodes the payload of a tnetstring of type t.
func parse(b []byte, t byte) (value, error) {
	switch t {
	case ',', ';':
		return b, nil
	case '#':
		return strconv.ParseInt(string(b), 10, 64)
	case '^':
		return strconv.ParseFloat(string(b), 64)
	case '!':
		switch string(b) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("bad boolean %q", b)
	case '~':
		if len(b) != 0 {
			return nil, errors.New("null with a payload")
		}
		return nil, nil
	case ']':
		var out []value
		for len(b) > 0 {
			v, rest, err := split(b)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			b = rest
		}
		return out, nil
	case '}':
		out := map[string]value{}
		for len(b) > 0 {
			k, rest, err := split(b)
			if err != nil {
				return nil, err
			}
			ks, ok := k.([]byte)
			if !ok {
				return nil, errors.New("dictionary key is not a string")
			}
			if len(rest) == 0 {
				return nil, errors.New("dictionary key without a value")
			}
			v, rest, err := split(rest)
			if err != nil {
				return nil, err
			}
			out[string(ks)] = v
			b = rest
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown tnetstring type %q", t)
}

// split decodes the first tnetstring of b and returns the rest.
func split(b []byte) (value, []byte, error) {
	var n, i int
	for ; i < len(b) && b[i] != ':'; i++ {
		if b[i] < '0' || b[i] > '9' || i > 10 {
			return nil, nil, fmt.Errorf("bad length byte %q", b[i])
		}
		n = n*10 + int(b[i]-'0')
	}
	if i == 0 || i >= len(b) || n > len(b)-i-2 {
		return nil, nil, errors.New("value runs past its container")
	}
	payload := b[i+1 : i+1+n]
	v, err := parse(payload, b[i+1+n])
	return v, b[i+2+n:], err
}
