package team

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/user"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// urlForm is what a store's address looks like, for the errors that say so.
const urlForm = "postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=...]"

// Target is a store's address as given, and what may be said of it.
type Target struct {
	raw string
	// Shown is the address with its password replaced by xxxxx: the only
	// form errors and output carry.
	Shown string
	// password is the password the address holds ("" for none): never
	// written anywhere, scrubbed from errors.
	password string
	user     string
}

// ParseURL checks that raw is a PostgreSQL address tsinspect can use
// (postgres:// or postgresql://, a host or a socket directory, a
// database); the error names what is wrong and the form wanted, never the
// password.
func ParseURL(raw string) (Target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url's error quotes the address whole: said without it.
		return Target{}, fmt.Errorf("the store's URL does not parse: want %s", urlForm)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return Target{}, fmt.Errorf("the store's URL %q: want %s", redactedURL(u), urlForm)
	}
	t := Target{raw: raw, Shown: redactedURL(u)}
	if u.User != nil {
		t.user = u.User.Username()
		t.password, _ = u.User.Password()
	}
	if u.Host == "" && u.Query().Get("host") == "" {
		return Target{}, fmt.Errorf("the store's URL %q names no host: want %s", t.Shown, urlForm)
	}
	if strings.Trim(u.Path, "/") == "" {
		return Target{}, fmt.Errorf("the store's URL %q names no database: want %s", t.Shown, urlForm)
	}
	if _, err := pgxpool.ParseConfig(raw); err != nil {
		return Target{}, fmt.Errorf("the store's URL %q: %s (want %s)", t.Shown, t.scrub(firstLine(err)), urlForm)
	}
	return t, nil
}

// redactedURL is u with its password as xxxxx.
func redactedURL(u *url.URL) string {
	c := *u
	if c.User != nil {
		if _, ok := c.User.Password(); ok {
			c.User = url.UserPassword(c.User.Username(), "xxxxx")
		}
	}
	q := c.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		c.RawQuery = q.Encode()
	}
	return c.String()
}

// scrub removes the password from a message.
func (t Target) scrub(s string) string {
	if t.password != "" {
		s = strings.ReplaceAll(s, t.password, "xxxxx")
		s = strings.ReplaceAll(s, url.QueryEscape(t.password), "xxxxx")
	}
	return s
}

// firstLine is err's message up to its first newline.
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// hints are what a user can do about a refusal, by SQLSTATE.
var hints = []struct{ code, hint string }{
	{"28P01", "the login was refused: check the user and password in the URL (or in ~/.pgpass)"},
	{"28000", "the login was refused: the server's pg_hba.conf admits no such user from here"},
	{"3D000", "no such database: create it (createdb) or name another in the URL"},
	{"42501", "this role may not do that: push with a role that may write the store (a reader may only read)"},
	{"57P01", "the server was shut down: it is retried"},
	{"53300", "the server has no connection slot left: raise max_connections or use a pooler"},
}

// Explain turns err into one line that says where it happened and what to
// do, with the address shown without its password.
func (t Target) Explain(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("%s: %w", op, err)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		for _, h := range hints {
			if pe.Code == h.code {
				return fmt.Errorf("%s: %s: %s (%s)", op, t.Shown, t.scrub(pe.Message), h.hint)
			}
		}
		return fmt.Errorf("%s: %s: %s (SQLSTATE %s)", op, t.Shown, t.scrub(pe.Message), pe.Code)
	}
	var ne *net.OpError
	if errors.As(err, &ne) || strings.Contains(err.Error(), "connect") {
		return fmt.Errorf("%s: cannot reach the store %s: %s (is PostgreSQL running there and listening for this address?)", op, t.Shown, t.scrub(lastPart(err)))
	}
	return fmt.Errorf("%s: %s: %s", op, t.Shown, t.scrub(firstLine(err)))
}

// lastPart is the innermost part of a chain of "a: b: c" messages, the
// cause without pgx's restatement of the address.
func lastPart(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		return s[i+2:]
	}
	return s
}

// DefaultNames are who pushes when the user does not say: the login name
// ($USER, else the account's) and the host name.
func DefaultNames() (person, machine string) {
	person = os.Getenv("USER")
	if u, err := user.Current(); person == "" && err == nil {
		person = u.Username
	}
	machine, _ = os.Hostname()
	return person, machine
}

// connect opens a pool of connections to t, checked with one ping.
func connect(ctx context.Context, t Target, op string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(t.raw)
	if err != nil {
		return nil, fmt.Errorf("%s: the store's URL %q: %s (want %s)", op, t.Shown, t.scrub(firstLine(err)), urlForm)
	}
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "tsinspect"
	cfg.MaxConns = 4
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, t.Explain(op, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, t.Explain(op, err)
	}
	return pool, nil
}

// transient reports whether err is one a retry may cure: the connection
// lost or refused, the server shutting down or starting.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || pe.Code == "40001" || pe.Code == "40P01" || pe.Code == "53300"
	}
	return pgconn.SafeToRetry(err) || pgconn.Timeout(err) || isNetErr(err)
}

// isNetErr reports whether err comes from the network (a refused or
// broken connection), however pgx wrapped it.
func isNetErr(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "connection refused") || strings.Contains(s, "unexpected EOF") || strings.Contains(s, "broken pipe") ||
		strings.Contains(s, "connection reset") || strings.Contains(s, "closed") || strings.Contains(s, "conn busy")
}
