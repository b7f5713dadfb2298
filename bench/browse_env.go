package main

// The browse section's processes: the gateway as its main builds it (the
// repository's binary, run as a child process with its settings in the
// environment, measured from outside), and, for replicas, a redis-server
// of the run's own. Everything listens on loopback and is stopped by the
// process id this harness started.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tradenet/gateway/redisstate/redistest"
)

// buildGateway builds the repository's gateway (the module's root
// package, as `go run .` runs it) into dir and returns the binary's path.
func buildGateway(ctx context.Context, dir string) (string, error) {
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "gateway")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build the gateway in %s: %w: %s", root, err, clip(out))
	}
	return bin, nil
}

// moduleRoot is the directory of the module the harness belongs to.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// childProc is a server the harness runs as a process of its own (a
// gateway, Tailcall).
type childProc struct {
	name   string // for messages: "the gateway", "Tailcall"
	url    string // http://127.0.0.1:PORT/graphql
	cmd    *exec.Cmd
	log    string // its stdout and stderr
	exited chan struct{}
	grace  time.Duration // how long stop waits after SIGTERM
}

// startChild starts cmd, its output to logPath, and waits until ready
// (called again every 20 ms, at most 30 s) says it serves.
func startChild(ctx context.Context, name, url string, grace time.Duration, cmd *exec.Cmd, logPath string, ready func(*http.Client) error) (*childProc, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child holds its own descriptor
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &childProc{name: name, url: url, cmd: cmd, log: logPath, exited: make(chan struct{}), grace: grace}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	deadline := time.Now().Add(30 * time.Second)
	client := &http.Client{Timeout: time.Second}
	for {
		err := ready(client)
		if err == nil {
			return p, nil
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("%s at %s did not serve within 30s: %v; its log: %s", name, url, err, p.logTail())
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("%s at %s exited: %s", name, url, p.logTail())
		case <-ctx.Done():
			p.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// onFreePort runs start on a free loopback port: a free port can be
// taken between the probe and the child's bind, so it tries a few.
func onFreePort(start func(port int) (*childProc, error)) (*childProc, error) {
	var lastErr error
	for range 5 {
		port, err := freeLoopbackPort()
		if err != nil {
			return nil, err
		}
		p, err := start(port)
		if err == nil {
			return p, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// startGatewayProc runs bin with env (KEY=VALUE settings, later ones
// winning) on a free loopback port and waits until it serves /healthz.
func startGatewayProc(ctx context.Context, bin, logPath string, env []string) (*childProc, error) {
	return onFreePort(func(port int) (*childProc, error) {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		cmd := exec.Command(bin)
		cmd.Env = append(childEnv(), append([]string{"LISTEN_ADDR=" + addr}, env...)...)
		// SIGTERM makes it drain: it may take a while.
		return startChild(ctx, "the gateway", "http://"+addr+"/graphql", 15*time.Second, cmd, logPath, func(client *http.Client) error {
			resp, err := client.Get("http://" + addr + "/healthz")
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("status %d", resp.StatusCode)
			}
			return nil
		})
	})
}

// stop ends the process: SIGTERM, then SIGKILL after its grace.
func (p *childProc) stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(p.grace):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// alive reports an error if the process has exited.
func (p *childProc) alive() error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s at %s exited: %s", p.name, p.url, p.logTail())
	default:
		return nil
	}
}

// logTail is the end of the process's log.
func (p *childProc) logTail() string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return err.Error()
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// procStat is a process's CPU time and resident memory, from /proc.
type procStat struct {
	cpu time.Duration
	rss int64 // bytes
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// readProcStat reads pid's CPU time (user and system) and resident set.
func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(b)
}

// parseProcStat reads utime, stime (fields 14 and 15) and rss (24, in
// pages) of a /proc/PID/stat line; the command name (field 2) may hold
// spaces and parentheses, so fields are counted after its last ')'.
func parseProcStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, errors.New("/proc stat: no command name")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state).
	if len(f) < 22 {
		return procStat{}, fmt.Errorf("/proc stat: %d fields", len(f)+2)
	}
	num := func(k int) int64 { n, _ := strconv.ParseInt(f[k-3], 10, 64); return n }
	ticks := num(14) + num(15)
	return procStat{
		cpu: time.Duration(ticks) * time.Second / clockTicks,
		rss: num(24) * int64(os.Getpagesize()),
	}, nil
}

// childEnv is what a child process inherits: where to find programs and
// write temporary files, nothing that configures the gateway.
func childEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func freeLoopbackPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// redisProc is a redis-server of the run's own: loopback, no persistence.
type redisProc struct {
	url    string
	cmd    *exec.Cmd
	exited chan struct{}
}

// startRedis starts redis-server as the repository's tests do
// (redisstate/redistest): scripts/install-redis.sh installs it.
func startRedis(dir string) (*redisProc, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("replicas share a Redis, and redis-server is not installed (run scripts/install-redis.sh): %w", err)
	}
	var lastErr error
	for range 5 {
		port, err := freeLoopbackPort()
		if err != nil {
			return nil, err
		}
		r, err := startRedisOn(bin, dir, port)
		if err == nil {
			return r, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func startRedisOn(bin, dir string, port int) (*redisProc, error) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--daemonize", "no", "--loglevel", "warning")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("run %s: %w", bin, err)
	}
	r := &redisProc{url: "redis://" + addr + "/0", cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(r.exited)
	}()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if err := redistest.Ping(addr); err == nil {
			return r, nil
		} else if time.Now().After(deadline) {
			r.stop()
			return nil, fmt.Errorf("redis-server on %s did not answer PING: %v", addr, err)
		}
		select {
		case <-r.exited:
			return nil, fmt.Errorf("redis-server on %s exited", addr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (r *redisProc) stop() {
	_ = r.cmd.Process.Kill()
	<-r.exited
}
