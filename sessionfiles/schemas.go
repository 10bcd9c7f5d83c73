package sessionfiles

import (
	"bufio"
	"bytes"
	"encoding/json"

	"github.com/tsinspect/tsinspect/timeline"
)

// DeferredSchemas reads the definitions of deferred tools that the files
// of session e keep apart from its requests (the deferred_tools_record
// attachments of Claude Code 2.1.299 and later: the schemas a search
// loaded), and returns each tool's size in bytes as compact JSON with
// sorted keys, by name. Files without such records give an empty map.
func DeferredSchemas(e Entry) (map[string]int, error) {
	out := map[string]int{}
	marker := []byte(`"deferred_tools_record"`)
	for i, p := range append([]string{e.Path}, e.Agents...) {
		f, info, err := openRegular(p)
		if err != nil {
			if i == 0 {
				return nil, err
			}
			continue
		}
		br := bufio.NewReaderSize(f, bufferFor(info.Size()))
		for {
			line, err := readLine(br, maxLine)
			if len(line) > maxLine {
				// Too long to hold: skipped to its end.
				if _, _, err := skipLine(br); err != nil {
					break
				}
				continue
			}
			if len(line) > 0 && bytes.Contains(line, marker) {
				var r struct {
					Attachment json.RawMessage `json:"attachment"`
				}
				if json.Unmarshal(line, &r) == nil {
					schemasOf(r.Attachment, out)
				}
			}
			if err != nil {
				break
			}
		}
		f.Close()
	}
	return out, nil
}

// schemasOf adds to out the size of each tool definition a
// deferred_tools_record attachment holds, as DeferredSchemas measures it
// (the first of each name wins).
func schemasOf(attachment []byte, out map[string]int) {
	var a struct {
		Type    string            `json:"type"`
		Entries []json.RawMessage `json:"entries"`
	}
	if json.Unmarshal(attachment, &a) != nil || a.Type != "deferred_tools_record" {
		return
	}
	for _, raw := range a.Entries {
		var def struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &def) != nil || def.Name == "" {
			continue
		}
		if _, ok := out[def.Name]; !ok {
			out[def.Name] = len(timeline.CanonicalJSON(raw))
		}
	}
}

// DeferredSchemas is what the package's DeferredSchemas reads of the
// session's files, from the records read: no second reading.
func (s *Session) DeferredSchemas() map[string]int {
	out := make(map[string]int, len(s.schemas))
	for k, v := range s.schemas {
		out[k] = v
	}
	return out
}
