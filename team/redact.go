package team

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/redact"
	"github.com/tsinspect/tsinspect/sessionfiles"
)

// pseudonym is a stable stand-in for a private value: the same value gives
// the same pseudonym on every machine, so a team's rows still group.
func pseudonym(prefix, value string) string {
	sum := sha256.Sum256([]byte(value))
	return prefix + hex.EncodeToString(sum[:5])
}

// projectName is the project as the store holds it under policy p: a
// stable pseudonym of the last element of the directory the session ran
// in (the repository's name: the same on every machine, so a team's rows
// group by project) unless the policy is off, which sends the whole
// directory.
func projectName(s *sessionfiles.Summary, p redact.Policy) string {
	dir := s.Cwd
	if p == redact.Off {
		if dir != "" {
			return dir
		}
		return s.Project
	}
	base := path.Base(strings.ReplaceAll(dir, `\`, "/"))
	if dir == "" {
		// Claude Code's name of the directory: / as -; its last part.
		parts := strings.Split(strings.Trim(s.Project, "-"), "-")
		base = parts[len(parts)-1]
	}
	return pseudonym("project-", base)
}

// sessionID is the session's ID in the store: Claude Code's (a random
// UUID, what 'tsinspect open' takes on its person's machine), or a
// pseudonym of it under strict.
func sessionID(id string, p redact.Policy) string {
	if p == redact.Strict {
		return pseudonym("s-", id)
	}
	return id
}

// redactSummary is what of s the store keeps under p: the figures, the
// models, the tools a search left out; no path (the session file's, the
// working directory), no line of a file.
func redactSummary(s *sessionfiles.Summary, p redact.Policy) *sessionfiles.Summary {
	c := *s
	c.ID = sessionID(s.ID, p)
	c.Project = projectName(s, p)
	if p == redact.Off {
		return &c
	}
	c.Path, c.Cwd = "", ""
	if c.FirstBadLine != "" {
		c.FirstBadLine = "(a line of the session's files: not pushed)"
	}
	if c.FirstUsageProblem != "" {
		c.FirstUsageProblem = "(an answer's usage: not pushed)"
	}
	return &c
}

// redactFacts is what of f the store keeps under p: the figures and tool
// names; a search's query scrubbed (paths, e-mail addresses, secrets) by
// default, left out under strict.
func redactFacts(f *advice.Facts, s *sessionfiles.Summary, p redact.Policy) *advice.Facts {
	c := *f
	c.Ref = advice.Ref{ID: sessionID(s.ID, p), Project: projectName(s, p)}
	if p == redact.Off {
		return &c
	}
	v := redact.NewValues(redact.Default, nil, nil)
	c.Searches = make([]advice.Search, len(f.Searches))
	for i, q := range f.Searches {
		if p == redact.Strict {
			q.Query, q.Terms = "", nil
		} else {
			q.Query = v.Text(q.Query)
			terms := make([]advice.Term, len(q.Terms))
			for j, t := range q.Terms {
				terms[j] = advice.Term{Term: v.Text(t.Term), Scores: t.Scores}
			}
			q.Terms = terms
		}
		c.Searches[i] = q
	}
	return &c
}
