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
		f, _, err := openRegular(p)
		if err != nil {
			if i == 0 {
				return nil, err
			}
			continue
		}
		br := bufio.NewReaderSize(f, 256<<10)
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
					Attachment struct {
						Type    string            `json:"type"`
						Entries []json.RawMessage `json:"entries"`
					} `json:"attachment"`
				}
				if json.Unmarshal(line, &r) == nil && r.Attachment.Type == "deferred_tools_record" {
					for _, raw := range r.Attachment.Entries {
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
			}
			if err != nil {
				break
			}
		}
		f.Close()
	}
	return out, nil
}
