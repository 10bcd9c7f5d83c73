// Package team is a team's store of sessions on a shared PostgreSQL (the
// only user of pgx): 'tsinspect push' sends each session's facts there
// (its listing row as a summary, its turns, and the advice facts as rows
// keyed by kind), redacted by default; 'sessions', 'advise' and 'serve'
// read them back with --from, as the same summaries and facts the
// commands read from disk, so every view is the same over everyone's
// sessions. The schema is created and migrated here (schema.go), and is
// documented for a team's own SQL in docs/team.md.
package team
