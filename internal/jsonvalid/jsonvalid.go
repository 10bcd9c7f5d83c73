// Package jsonvalid tells valid JSON, exactly as encoding/json.Valid
// does, in a single pass without allocating for typical depths: several
// times faster. Validation was most of the cost of decoding a request and
// of reading a session file's records.
package jsonvalid

import "encoding/binary"

// MaxDepth is the deepest nesting Valid accepts, as encoding/json does.
const MaxDepth = 10000

// Valid reports whether b is one valid JSON value with optional
// surrounding whitespace. It accepts exactly what encoding/json.Valid
// accepts (decode's FuzzIsJSON holds that).
func Valid(b []byte) bool {
	return From(b, 0, nil, false, nil)
}

// From is Valid resumed at b[i]: with afterValue, just after a value
// inside the open containers in stack ('{' or '[' each), as mark saw it;
// otherwise at the start. mark, when not nil, is called after each
// container closes with the position after it and the containers still
// open (valid during the call only): resuming there gives the same verdict
// on any b that begins with the same b[:i].
func From(b []byte, i int, stack []byte, afterValue bool, mark func(i int, stack []byte)) bool {
	if !afterValue {
		i = skipWS(b, 0)
	}
	var stackBuf [64]byte
	end, ok, _ := walk(b, i, append(stackBuf[:0], stack...), afterValue, mark, 0)
	return ok && skipWS(b, end) == len(b)
}

// ValueEndValid is ValueEnd for a value that must be valid as Valid tells
// it, depth containers deep: the index after the value that starts at
// b[i], or -1 when it is not a valid value (or nests deeper than
// MaxDepth in all).
func ValueEndValid(b []byte, i, depth int) int {
	var c Checker
	return c.ValueEnd(b, i, depth)
}

// A Checker is ValueEndValid for a reader that checks many values: it
// keeps the stack of open containers from one value to the next. The
// zero Checker is ready to use; it is not safe for concurrent use.
type Checker struct {
	stack []byte
}

// ValueEnd is ValueEndValid.
func (c *Checker) ValueEnd(b []byte, i, depth int) int {
	end, ok, stack := walk(b, i, c.stack[:0], false, nil, depth)
	c.stack = stack[:0]
	if !ok {
		return -1
	}
	return end
}

// StringEndValid is StringEnd for a string literal that must be valid as
// Valid tells it: -1 when it is not.
func StringEndValid(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	end, ok := skipString(b, i)
	if !ok {
		return -1
	}
	return end
}

// walk is From's walk, depth containers deep, from b[i] inside the open
// containers of stack ('{' or '[' each; its array is walk's to use): the
// index after the value that closes the last of them (or, with none open,
// the value at b[i]), whether all it read was valid, and the stack's
// array for another walk.
func walk(b []byte, i int, stack []byte, afterValue bool, mark func(i int, stack []byte), depth int) (int, bool, []byte) {
	for {
		if afterValue {
			afterValue = false
			goto ended
		}
		// Parse one value at b[i].
		if i >= len(b) {
			return i, false, stack
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			if len(stack)+depth >= MaxDepth {
				return i, false, stack
			}
			i = skipWS(b, i+1)
			if i < len(b) && b[i] == closing(c) {
				i++
				break
			}
			stack = append(stack, c)
			if c == '{' {
				var ok bool
				if i, ok = objectKey(b, i); !ok {
					return i, false, stack
				}
			}
			continue
		case c == '"':
			var ok bool
			if i, ok = skipString(b, i); !ok {
				return i, false, stack
			}
		case c == '-' || (c >= '0' && c <= '9'):
			var ok bool
			if i, ok = skipNumber(b, i); !ok {
				return i, false, stack
			}
		case c == 't':
			if !hasLit(b, i, "true") {
				return i, false, stack
			}
			i += 4
		case c == 'f':
			if !hasLit(b, i, "false") {
				return i, false, stack
			}
			i += 5
		case c == 'n':
			if !hasLit(b, i, "null") {
				return i, false, stack
			}
			i += 4
		default:
			return i, false, stack
		}
	ended:
		// A value ended: close containers or move to the next element.
		for {
			if len(stack) == 0 {
				return i, true, stack
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return i, false, stack
			}
			top := stack[len(stack)-1]
			if b[i] == ',' {
				i = skipWS(b, i+1)
				if top == '{' {
					var ok bool
					if i, ok = objectKey(b, i); !ok {
						return i, false, stack
					}
				}
				break // a value follows
			}
			if b[i] == closing(top) {
				stack = stack[:len(stack)-1]
				i++
				if mark != nil {
					mark(i, stack)
				}
				continue
			}
			return i, false, stack
		}
	}
}

// closing is the byte that closes the container opened by open ('{' or
// '[').
func closing(open byte) byte {
	if open == '{' {
		return '}'
	}
	return ']'
}

// objectKey parses `"key" :` at b[i] and returns the index after the colon
// and any whitespace.
func objectKey(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return i, false
	}
	i, ok := skipString(b, i)
	if !ok {
		return i, false
	}
	i = skipWS(b, i)
	if i >= len(b) || b[i] != ':' {
		return i, false
	}
	return skipWS(b, i+1), true
}

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func hasLit(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

// skipString returns the index after the string starting at b[i] (a quote).
func skipString(b []byte, i int) (int, bool) {
	i++
	for i < len(b) {
		i = plainRun(b, i)
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1, true
		case c == '\\':
			if i+1 >= len(b) {
				return i, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(b)-i < 6 {
					return i, false
				}
				for _, h := range b[i+2 : i+6] {
					if !isHex(h) {
						return i, false
					}
				}
				i += 6
			default:
				return i, false
			}
		case c < 0x20:
			return i, false
		default:
			i++
		}
	}
	return i, false
}

// Bytes of a word, for plainRun.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainRun returns the index of the first byte from i on that may end a
// run of plain string bytes (a quote, a backslash or a control
// character), eight bytes at a time: where a word holds none, none of
// its bytes needs looking at (the tests on a word are exact: no byte is
// passed that is one of those).
func plainRun(b []byte, i int) int {
	for i+8 <= len(b) {
		v := binary.LittleEndian.Uint64(b[i:])
		q, bs := v^(ones*'"'), v^(ones*'\\')
		if ((q-ones)&^q|(bs-ones)&^bs|(v-ones*0x20)&^v)&highs != 0 {
			break
		}
		i += 8
	}
	return i
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// skipNumber returns the index after the number starting at b[i].
func skipNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return i, false
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		var ok bool
		if i, ok = digits(b, i+1); !ok {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		var ok bool
		if i, ok = digits(b, i); !ok {
			return i, false
		}
	}
	return i, true
}

// digits returns the index after the digits from b[i] on; ok is false
// when there is none.
func digits(b []byte, i int) (int, bool) {
	start := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i, i > start
}
