package team

import (
	"context"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/catalog"
	"github.com/tsinspect/tsinspect/pricing"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/sessionfiles"
	"github.com/tsinspect/tsinspect/source"
)

// sessionRead is what a push reads of one session beyond its summary:
// the advice facts, and per request its catalog and working set and the
// searches it carried the result of.
type sessionRead struct {
	facts    *advice.Facts
	requests [][]any // values after the key: requestColumns
	searches [][]any // values after the key: searchColumns
	warning  string
}

// requestColumns and searchColumns are the columns of the requests and
// searches tables after the session's key.
var (
	requestColumns = []string{"turn", "thread", "model", "catalog_size", "working_set_size", "catalog_added", "catalog_removed", "working_added", "working_removed", "flags"}
	searchColumns  = []string{"turn", "seq", "mode", "server", "query", "loaded", "no_match"}
)

// readSession reads the session of e whole, once: its timeline gives the
// advice facts as 'advise' reads them (catalog.SessionFacts) and the
// requests' and
// searches' rows, redacted under p (a search's query scrubbed by default,
// left out under strict).
func readSession(ctx context.Context, e sessionfiles.Entry, tab *pricing.Table, p redact.Policy) (*sessionRead, error) {
	b, problems, schemas, err := source.ReadFileSchemas(ctx, e.Path)
	if err != nil {
		return nil, err
	}
	out := &sessionRead{}
	if len(problems) > 0 {
		out.warning = source.Summary(problems)
	}
	s := b.Session()
	out.facts = catalog.SessionFacts(s, source.Found{Kind: source.KindSession, Path: e.Path, ID: e.ID, Project: e.Project, Size: e.Size, ModTime: e.ModTime, Entry: &e}, tab, schemas)
	v := redact.NewValues(redact.Default, nil, nil)
	for _, t := range s.Turns {
		d := t.Decoded
		if d == nil {
			continue
		}
		flags := []string{}
		for _, fl := range t.Flags {
			flags = append(flags, fl.Kind)
		}
		out.requests = append(out.requests, []any{t.Index, t.Thread, d.Request.Model, len(d.Catalog), len(d.WorkingSet),
			len(t.CatalogAdded), len(t.CatalogRemoved), len(t.WorkingAdded), len(t.WorkingRemoved), flags})
		for i, q := range t.NewSearches {
			query := v.Text(q.Query)
			if p == redact.Strict {
				query = ""
			} else if p == redact.Off {
				query = q.Query
			}
			out.searches = append(out.searches, []any{t.Index, i, q.Mode, q.Server, query, texts(q.Results), q.NoMatch})
		}
	}
	return out, nil
}
