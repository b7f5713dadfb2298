// Package redistest starts a redis-server of a test's own: on a free
// loopback port, without persistence, stopped when the test ends. Tests
// that need Redis fail (never skip) when redis-server is missing:
// scripts/install-redis.sh installs it.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tradenet/gateway/internal/testutil"
)

// Start starts a redis-server for t and returns its URL
// (redis://127.0.0.1:PORT/0). The server is killed when t ends.
func Start(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is not installed (run scripts/install-redis.sh, or apt-get install redis-server): %v", err)
	}
	var lastErr error
	// A free port can be taken by someone else between our probe and the
	// server's bind: try a few.
	for range 5 {
		addr, err := start(t, bin)
		if err == nil {
			return "redis://" + addr + "/0"
		}
		lastErr = err
	}
	t.Fatalf("start redis-server: %v", lastErr)
	return ""
}

func start(t testing.TB, bin string) (string, error) {
	port, err := freePort()
	if err != nil {
		return "", err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	stop, err := launch(bin, addr, t.TempDir())
	if err != nil {
		return "", err
	}
	t.Cleanup(stop)
	return addr, nil
}

// launch runs redis-server (bin) on addr (a loopback address), without
// persistence, its files in dir, and waits until it answers PING; stop
// kills it and returns once it has exited.
func launch(bin, addr, dir string) (stop func(), err error) {
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin,
		"--port", port,
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", dir,
		"--daemonize", "no",
		"--loglevel", "warning",
	)
	var out testutil.LockedBuffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("run %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	stop = func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		if err := Ping(addr); err == nil {
			return stop, nil
		} else if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("redis-server on %s did not answer PING: %v; its output: %s", addr, err, out.String())
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("redis-server on %s exited: %s", addr, out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Ping sends PING in the Redis protocol to addr and expects +PONG (the
// benchmark harness waits for its own servers with it too).
func Ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Server is a redis-server a test can stop mid-run and start again on the
// same port (empty: it keeps nothing), to test what happens when Redis is
// lost.
type Server struct {
	t    testing.TB
	bin  string
	addr string
	dir  string
	stop func() // nil while stopped
}

// StartServer starts a redis-server for t, stopped when t ends.
func StartServer(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is not installed (run scripts/install-redis.sh, or apt-get install redis-server): %v", err)
	}
	s := &Server{t: t, bin: bin, dir: t.TempDir()}
	var lastErr error
	for range 5 {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		s.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if lastErr = s.run(); lastErr == nil {
			t.Cleanup(s.Stop)
			return s
		}
	}
	t.Fatalf("start redis-server: %v", lastErr)
	return nil
}

// URL is the server's URL (redis://127.0.0.1:PORT/0), the same across
// restarts.
func (s *Server) URL() string { return "redis://" + s.addr + "/0" }

// Stop kills the server (as a crash would); it is a no-op when stopped.
func (s *Server) Stop() {
	if s.stop != nil {
		s.stop()
		s.stop = nil
	}
}

// Restart starts the server again, empty, on the same port.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	if err := s.run(); err != nil {
		s.t.Fatalf("restart redis-server: %v", err)
	}
}

// run starts redis-server on s.addr and waits until it answers.
func (s *Server) run() error {
	stop, err := launch(s.bin, s.addr, s.dir)
	if err != nil {
		return err
	}
	s.stop = stop
	return nil
}

// Client is a client of the Redis at url (redis://…), closed when t ends:
// for tests that read or write Redis's keys themselves.
func Client(t testing.TB, url string) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return c
}
