package redact

import (
	"github.com/tsinspect/tsinspect/decode"
	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/timeline"
)

// ValuesFor returns the redactor of policy p for values taken from
// sessions (what differs between two of them, a page of one): the private
// values it looks for are those of exs, the exchanges the sessions were
// read from, each as its turn decoded it (any other decoded here), and
// the strict policy numbers the MCP servers of the tools the sessions
// offered, in the order they first appear.
func ValuesFor(p Policy, exs []*exchange.Exchange, sessions ...*timeline.Session) *Values {
	known, tools := knownOf(exs, sessions...)
	return NewValues(p, known, tools)
}

// knownOf collects the private values of exs, taking each exchange's
// decoding from the sessions' turns and decoding the rest, and lists the
// tool names the sessions' decoded turns offered (a turn's catalog, then
// its request's tools), each once.
func knownOf(exs []*exchange.Exchange, sessions ...*timeline.Session) (*Known, []string) {
	var tools []string
	seen := map[string]bool{}
	decoded := map[*exchange.Exchange]*decode.Turn{}
	for _, s := range sessions {
		for _, t := range s.Turns {
			if t.Decoded == nil {
				continue
			}
			decoded[t.Exchange] = t.Decoded
			for _, n := range t.Decoded.Catalog {
				if !seen[n] {
					seen[n] = true
					tools = append(tools, n)
				}
			}
			for _, tl := range t.Decoded.Request.Tools {
				if !seen[tl.Name] {
					seen[tl.Name] = true
					tools = append(tools, tl.Name)
				}
			}
		}
	}
	known := CollectDecoded(exs, func(ex *exchange.Exchange) *decode.Turn {
		if d, ok := decoded[ex]; ok {
			return d
		}
		return decode.Decode(ex) // not a turn: its body was kept
	})
	return known, tools
}
