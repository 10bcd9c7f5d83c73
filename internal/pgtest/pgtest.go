// Package pgtest starts throwaway PostgreSQL clusters for tests: from
// Debian's server binaries (apt-get install postgresql; the newest
// /usr/lib/postgresql/*/bin, or TSINSPECT_PG_BIN), in a temporary
// directory, listening on 127.0.0.1 and on a unix socket in that
// directory, on a free port; as root, run as the postgres user
// (PostgreSQL refuses root). It drives the server's own binaries (initdb,
// postgres, pg_isready, psql) and imports no driver.
package pgtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// SuperPassword is a cluster's superuser password (postgres): logins over
// TCP ask for it, the unix socket trusts.
const SuperPassword = "s3cret-Pw"

// Install says how to get what a cluster needs, for a skip's message.
const Install = "apt-get install postgresql (or TSINSPECT_PG_BIN=the directory of initdb and postgres)"

// Cluster is a throwaway PostgreSQL cluster.
type Cluster struct {
	tb       testing.TB
	bin, dir string
	// Port is the port it listens on, on 127.0.0.1 and its socket.
	Port   int
	asUser string // the user the server runs as when the tests are root
	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// Bin is the directory of initdb and postgres: TSINSPECT_PG_BIN, else the
// newest /usr/lib/postgresql/*/bin ("" when there is none).
func Bin() string {
	if d := os.Getenv("TSINSPECT_PG_BIN"); d != "" {
		return d
	}
	ms, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	version := func(p string) int {
		v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(p))))
		return v
	}
	sort.Slice(ms, func(i, j int) bool { return version(ms[i]) < version(ms[j]) })
	if len(ms) == 0 {
		return ""
	}
	return filepath.Dir(ms[len(ms)-1])
}

// Required reports whether the tests must have PostgreSQL
// (TSINSPECT_REQUIRE_POSTGRES, as CI sets it): fail, not skip.
func Required() bool { return os.Getenv("TSINSPECT_REQUIRE_POSTGRES") != "" }

// Start makes and starts a cluster, stopped and removed when tb ends.
// When none can be had (no binaries; root with no postgres user or no
// setpriv) it calls skip with why (tb fails instead when Required).
func Start(tb testing.TB, skip func(why string)) *Cluster {
	tb.Helper()
	cannot := func(why string) {
		tb.Helper()
		msg := "PostgreSQL: " + why + ": " + Install
		if Required() {
			tb.Fatal(msg)
		}
		skip(msg)
	}
	bin := Bin()
	if bin == "" {
		cannot("no /usr/lib/postgresql/*/bin/initdb")
		return nil
	}
	c := &Cluster{tb: tb, bin: bin}
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root: as postgres (Debian's
		// package makes that user), the directory theirs.
		if _, err := user.Lookup("postgres"); err != nil {
			cannot("the tests run as root and there is no postgres user to run the server as")
			return nil
		}
		if _, err := exec.LookPath("setpriv"); err != nil {
			cannot("the tests run as root and there is no setpriv (util-linux) to run the server as postgres")
			return nil
		}
		c.asUser = "postgres"
	}
	dir, err := os.MkdirTemp("", "tsinspect-pg-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	c.dir = dir
	if err := os.WriteFile(filepath.Join(dir, "pw"), []byte(SuperPassword+"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	if c.asUser != "" {
		if err := os.Chmod(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		if out, err := exec.Command("chown", "-R", c.asUser, dir).CombinedOutput(); err != nil {
			tb.Fatalf("chown %s: %v: %s", dir, err, out)
		}
	}
	out, err := c.command("initdb", "-D", filepath.Join(dir, "data"), "-U", "postgres", "--auth-local=trust", "--auth-host=scram-sha-256",
		"--pwfile="+filepath.Join(dir, "pw"), "-E", "UTF8", "--locale=C", "--no-sync").CombinedOutput()
	if err != nil {
		tb.Fatalf("initdb: %v\n%s", err, out)
	}
	c.Port = FreePort(tb)
	c.Start()
	tb.Cleanup(c.Stop)
	return c
}

// command is a server binary's command, run as the server's user.
func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	path := filepath.Join(c.bin, name)
	if c.asUser != "" {
		// setpriv executes the server in its place: signals reach it.
		return exec.Command("setpriv", append([]string{"--reuid=" + c.asUser, "--regid=" + c.asUser, "--init-groups", "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

// FreePort is a port of 127.0.0.1 free a moment ago.
func FreePort(tb testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Start starts the server (again, on the same port) and waits until it
// takes logins.
func (c *Cluster) Start() {
	c.tb.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	logPath := filepath.Join(c.dir, "server.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		c.tb.Fatal(err)
	}
	cmd := c.command("postgres", "-D", filepath.Join(c.dir, "data"), "-p", strconv.Itoa(c.Port), "-k", c.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=100", "-c", "shared_buffers=32MB")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		c.tb.Fatalf("postgres: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(exited) }()
	c.cmd, c.exited = cmd, exited
	for {
		select {
		case <-exited:
			b, _ := os.ReadFile(logPath)
			c.tb.Fatalf("postgres exited at its start:\n%s", b)
		default:
		}
		ready := exec.Command(filepath.Join(c.bin, "pg_isready"), "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(c.Port), "-U", "postgres", "-d", "postgres")
		if ready.Run() == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops the server (a fast shutdown: its clients are cut off) and
// waits for it to exit.
func (c *Cluster) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return
	}
	_ = c.cmd.Process.Signal(os.Interrupt)
	<-c.exited
	c.cmd = nil
}

// URL is the address of db over TCP as user ("" password: none in it).
func (c *Cluster) URL(user, password, db string) string {
	if password == "" {
		return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", user, c.Port, db)
	}
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", user, password, c.Port, db)
}

// Exec runs SQL statements as the superuser on db (psql, stopping at the
// first error, which fails tb).
func (c *Cluster) Exec(db string, stmts ...string) {
	c.tb.Helper()
	for _, s := range stmts {
		cmd := exec.Command(filepath.Join(c.bin, "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", strconv.Itoa(c.Port), "-U", "postgres", "-d", db, "-c", s)
		cmd.Env = append(os.Environ(), "PGPASSWORD="+SuperPassword)
		if out, err := cmd.CombinedOutput(); err != nil {
			c.tb.Fatalf("%s: %v: %s", s, err, out)
		}
	}
}

// NewDB makes a database and returns its superuser URL.
func (c *Cluster) NewDB(name string) string {
	c.tb.Helper()
	name = strings.ToLower(name)
	c.Exec("postgres", `CREATE DATABASE "`+strings.ReplaceAll(name, `"`, `""`)+`"`)
	return c.URL("postgres", SuperPassword, name)
}
