package team

import (
	"context"
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

	"github.com/jackc/pgx/v5"
)

// superPassword is the throwaway cluster's superuser password (TCP logins
// ask for it; the unix socket trusts).
const superPassword = "s3cret-Pw"

// cluster is a throwaway PostgreSQL cluster in a temporary directory, run
// from Debian's server binaries, listening on 127.0.0.1 and on a unix
// socket in its directory, on a free port.
type cluster struct {
	t        testing.TB
	bin, dir string
	port     int
	asUser   string // the user the server runs as when the tests are root
	mu       sync.Mutex
	cmd      *exec.Cmd
	exited   chan struct{}
}

// pgBin finds the directory of initdb and postgres: TSINSPECT_PG_BIN, else
// the newest /usr/lib/postgresql/*/bin.
func pgBin() string {
	if d := os.Getenv("TSINSPECT_PG_BIN"); d != "" {
		return d
	}
	ms, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(ms, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(ms[i]))))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(ms[j]))))
		return vi < vj
	})
	if len(ms) == 0 {
		return ""
	}
	return filepath.Dir(ms[len(ms)-1])
}

// skipNoPostgres skips t (fails it when TSINSPECT_REQUIRE_POSTGRES is
// set) saying what to install.
func skipNoPostgres(t testing.TB, why string) {
	t.Helper()
	msg := "PostgreSQL's server binaries: " + why + " (apt-get install postgresql, or TSINSPECT_PG_BIN=the directory of initdb and postgres)"
	if os.Getenv("TSINSPECT_REQUIRE_POSTGRES") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// startCluster makes and starts a cluster, stopped and removed when t ends.
func startCluster(t testing.TB) *cluster {
	t.Helper()
	bin := pgBin()
	if bin == "" {
		skipNoPostgres(t, "no /usr/lib/postgresql/*/bin/initdb")
	}
	c := &cluster{t: t, bin: bin}
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root: run it as postgres (Debian's
		// package makes that user), the directory theirs.
		if _, err := user.Lookup("postgres"); err != nil {
			skipNoPostgres(t, "the tests run as root and there is no postgres user to run the server as")
		}
		if _, err := exec.LookPath("setpriv"); err != nil {
			skipNoPostgres(t, "the tests run as root and there is no setpriv (util-linux) to run the server as postgres")
		}
		c.asUser = "postgres"
	}
	dir, err := os.MkdirTemp("", "tsinspect-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c.dir = dir
	if err := os.WriteFile(filepath.Join(dir, "pw"), []byte(superPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c.asUser != "" {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("chown", "-R", c.asUser, dir).CombinedOutput(); err != nil {
			t.Fatalf("chown %s: %v: %s", dir, err, out)
		}
	}
	out, err := c.command("initdb", "-D", filepath.Join(dir, "data"), "-U", "postgres", "--auth-local=trust", "--auth-host=scram-sha-256",
		"--pwfile="+filepath.Join(dir, "pw"), "-E", "UTF8", "--locale=C", "--no-sync").CombinedOutput()
	if err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	c.port = freePort(t)
	c.Start()
	t.Cleanup(c.Stop)
	return c
}

// command is a server binary's command, run as the server's user.
func (c *cluster) command(name string, args ...string) *exec.Cmd {
	path := filepath.Join(c.bin, name)
	if c.asUser != "" {
		// setpriv executes the server in its place: signals reach it.
		return exec.Command("setpriv", append([]string{"--reuid=" + c.asUser, "--regid=" + c.asUser, "--init-groups", "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

// freePort is a port of 127.0.0.1 free a moment ago.
func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Start starts the server and waits until it takes logins.
func (c *cluster) Start() {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	logf, err := os.OpenFile(filepath.Join(c.dir, "server.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	cmd := c.command("postgres", "-D", filepath.Join(c.dir, "data"), "-p", strconv.Itoa(c.port), "-k", c.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=100", "-c", "shared_buffers=32MB")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("postgres: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(exited) }()
	c.cmd, c.exited = cmd, exited
	for {
		select {
		case <-exited:
			b, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
			c.t.Fatalf("postgres exited at its start:\n%s", b)
		default:
		}
		conn, err := pgx.Connect(context.Background(), c.URL("postgres", superPassword, "postgres"))
		if err == nil {
			conn.Close(context.Background())
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops the server (a fast shutdown: its clients are cut off) and
// waits for it to exit.
func (c *cluster) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return
	}
	_ = c.cmd.Process.Signal(os.Interrupt)
	<-c.exited
	c.cmd = nil
}

// URL is the address of db on the cluster over TCP as user.
func (c *cluster) URL(user, password, db string) string {
	if password == "" {
		return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", user, c.port, db)
	}
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", user, password, c.port, db)
}

// SocketURL is the address of db over the unix socket as user.
func (c *cluster) SocketURL(user, db string) string {
	return fmt.Sprintf("postgres://%s@/%s?host=%s&port=%d", user, db, c.dir, c.port)
}

// Exec runs SQL statements as the superuser on db.
func (c *cluster) Exec(db string, stmts ...string) {
	c.t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.URL("postgres", superPassword, db))
	if err != nil {
		c.t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			c.t.Fatalf("%s: %v", s, err)
		}
	}
}

// NewDB makes a fresh database and returns its superuser URL.
func (c *cluster) NewDB(name string) string {
	c.t.Helper()
	name = strings.ToLower(name)
	c.Exec("postgres", "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	return c.URL("postgres", superPassword, name)
}
