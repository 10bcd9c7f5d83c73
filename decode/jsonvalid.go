package decode

import "github.com/tsinspect/tsinspect/internal/jsonvalid"

// maxDepth is the deepest nesting isJSON accepts.
const maxDepth = jsonvalid.MaxDepth

// isJSON reports whether b is one valid JSON value with optional
// surrounding whitespace, as encoding/json.Valid does (FuzzIsJSON holds
// that), several times faster.
func isJSON(b []byte) bool { return jsonvalid.Valid(b) }

// validFrom is isJSON resumed at b[i] (see jsonvalid.From).
func validFrom(b []byte, i int, stack []byte, afterValue bool, mark func(i int, stack []byte)) bool {
	return jsonvalid.From(b, i, stack, afterValue, mark)
}
