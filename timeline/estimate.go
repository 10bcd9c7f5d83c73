package timeline

import (
	"bytes"

	"github.com/tsinspect/tsinspect/decode"
)

// CharsPerToken is the densest rate an estimate assumes: a part of n bytes
// of a request (or response) is never counted as more than n / 2.5 tokens.
// Compact JSON such as tool schemas tokenizes at about that rate, prose
// less densely.
const CharsPerToken = 2.5

// Estimates share a turn's measured tokens out among its parts by their
// bytes. The rate is the turn's prompt tokens (input, cache reads and
// writes, as the API reported them) over its request body's bytes, with
// the base64 data of images and documents left out of both sides' bytes
// (the API counts images by their pixels), and never more than one token
// per [CharsPerToken] bytes. Parts of a request counted at that rate
// therefore sum to at most the prompt the API measured, whatever the
// tokenizer; on its own a part is as accurate as the assumption that
// every byte of the request costs the same.
type Estimates struct {
	// media remembers the media bytes of each message; turns share the
	// messages of their history, so each is looked at once.
	media map[*decode.Message]int
	// sums holds, per array of messages that requests' lists share (by
	// its first element), the media bytes of its first i messages at i:
	// a list that extends an earlier one adds its new messages alone.
	sums map[**decode.Message][]int
}

// NewEstimates returns an empty memo of per-message figures.
func NewEstimates() *Estimates {
	return &Estimates{media: map[*decode.Message]int{}, sums: map[**decode.Message][]int{}}
}

// listMedia is the media bytes of the messages of ms. Lists that begin at
// the same element of one array hold the same messages as far as the
// shorter goes (decode shares them so, and never changes a shared
// element), so the sums of one serve the others.
func (e *Estimates) listMedia(ms []*decode.Message) int {
	if len(ms) == 0 {
		return 0
	}
	if e == nil {
		n := 0
		for _, m := range ms {
			n += e.mediaBytes(m)
		}
		return n
	}
	sums := e.sums[&ms[0]]
	if sums == nil {
		sums = []int{0}
	}
	for i := len(sums) - 1; i < len(ms); i++ {
		sums = append(sums, sums[i]+e.mediaBytes(ms[i]))
	}
	e.sums[&ms[0]] = sums
	return sums[len(ms)]
}

// PromptRate is the tokens per byte of d's request: its prompt tokens
// over its body's bytes less media, at most 1 / CharsPerToken. ok is
// false when the response carried no usage (a failed request); the rate
// is then 1 / CharsPerToken.
func (e *Estimates) PromptRate(d *decode.Turn) (rate float64, ok bool) {
	const ceiling = 1 / CharsPerToken
	if d == nil {
		return ceiling, false
	}
	prompt := d.Response.Usage.TotalInput()
	if prompt <= 0 {
		return ceiling, false
	}
	n := d.Request.Size - e.listMedia(d.Request.Messages)
	if n <= 0 {
		return ceiling, true
	}
	return min(ceiling, float64(prompt)/float64(n)), true
}

// OutputRate is the tokens per byte of d's response: its output tokens
// over the bytes of its content blocks, at most 1 / CharsPerToken (the
// output may hold thinking the client was not shown). ok is false when
// there is no usage or no content.
func OutputRate(d *decode.Turn) (rate float64, ok bool) {
	const ceiling = 1 / CharsPerToken
	if d == nil || d.Response.Usage.OutputTokens <= 0 {
		return ceiling, false
	}
	n := 0
	for i := range d.Response.Content {
		n += blockBytes(&d.Response.Content[i])
	}
	if n <= 0 {
		return ceiling, false
	}
	return min(ceiling, float64(d.Response.Usage.OutputTokens)/float64(n)), true
}

// Tokens is n bytes at rate tokens per byte, rounded down, so that the
// parts of a measured whole never add up to more than it.
func Tokens(n int, rate float64) int64 {
	if n <= 0 || rate <= 0 {
		return 0
	}
	return int64(float64(n) * rate)
}

// blockBytes is a response block's size: as sent when the response was a
// JSON body, else (rebuilt from a stream) its text, thinking, or name and
// input.
func blockBytes(b *decode.Block) int {
	if len(b.Raw) > 0 {
		return len(b.Raw)
	}
	return len(b.Text) + len(b.Thinking) + len(b.Name) + len(b.Input) + len(b.PartialInput)
}

// mediaBytes is the base64 data of the images and documents in a
// message, also inside tool results.
func (e *Estimates) mediaBytes(m *decode.Message) int {
	if m == nil || m.StringContent {
		return 0
	}
	if e != nil {
		if n, ok := e.media[m]; ok {
			return n
		}
	}
	n := 0
	for i := range m.Blocks {
		b := &m.Blocks[i]
		switch b.Type {
		case "image", "document", "tool_result":
			n += base64Data(b.Raw)
		}
	}
	if e != nil {
		e.media[m] = n
	}
	return n
}

// base64Data sums the lengths of the "data" strings of base64 sources in
// raw JSON (with their key).
func base64Data(raw []byte) int {
	if !bytes.Contains(raw, []byte(`"base64"`)) {
		return 0
	}
	n := 0
	key := []byte(`"data"`)
	for rest := raw; ; {
		i := bytes.Index(rest, key)
		if i < 0 {
			return n
		}
		rest = rest[i+len(key):]
		v := bytes.TrimLeft(rest, " \t\r\n")
		if len(v) == 0 || v[0] != ':' {
			continue
		}
		v = bytes.TrimLeft(v[1:], " \t\r\n")
		if len(v) == 0 || v[0] != '"' {
			continue
		}
		j := bytes.IndexByte(v[1:], '"')
		if j < 0 {
			return n
		}
		n += len(key) + (len(rest) - len(v)) + j + 2
		rest = v[j+2:]
	}
}
