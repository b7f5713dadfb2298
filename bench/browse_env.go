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

// gatewayProc is one gateway process.
type gatewayProc struct {
	url    string // http://127.0.0.1:PORT/graphql
	cmd    *exec.Cmd
	log    string // its stdout and stderr
	exited chan struct{}
}

// startGatewayProc runs bin with env (KEY=VALUE settings, later ones
// winning) on a free loopback port and waits until it serves /healthz.
func startGatewayProc(ctx context.Context, bin, logPath string, env []string) (*gatewayProc, error) {
	var lastErr error
	// A free port can be taken between the probe and the gateway's bind:
	// try a few.
	for range 5 {
		port, err := freeLoopbackPort()
		if err != nil {
			return nil, err
		}
		g, err := startGatewayOn(ctx, bin, logPath, port, env)
		if err == nil {
			return g, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func startGatewayOn(ctx context.Context, bin, logPath string, port int, env []string) (*gatewayProc, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child holds its own descriptor
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(bin)
	cmd.Env = append(childEnv(), append([]string{"LISTEN_ADDR=" + addr}, env...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the gateway: %w", err)
	}
	g := &gatewayProc{url: "http://" + addr + "/graphql", cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(g.exited)
	}()
	deadline := time.Now().Add(30 * time.Second)
	client := &http.Client{Timeout: time.Second}
	for {
		resp, err := client.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return g, nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if time.Now().After(deadline) {
			g.stop()
			return nil, fmt.Errorf("the gateway on %s did not serve /healthz within 30s: %v; its log: %s", addr, err, g.logTail())
		}
		select {
		case <-g.exited:
			return nil, fmt.Errorf("the gateway on %s exited: %s", addr, g.logTail())
		case <-ctx.Done():
			g.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop ends the gateway: SIGTERM (it drains), then SIGKILL after 15 s.
func (g *gatewayProc) stop() {
	select {
	case <-g.exited:
		return
	default:
	}
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.exited:
	case <-time.After(15 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.exited
	}
}

// alive reports an error if the process has exited.
func (g *gatewayProc) alive() error {
	select {
	case <-g.exited:
		return fmt.Errorf("the gateway %s exited: %s", g.url, g.logTail())
	default:
		return nil
	}
}

// logTail is the end of the gateway's log.
func (g *gatewayProc) logTail() string {
	b, err := os.ReadFile(g.log)
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
