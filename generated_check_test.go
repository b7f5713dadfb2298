package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedCheck: scripts/check-generated.sh (test.sh's first step)
// passes on a current tree and fails on a stale generated file and on a
// missing one, naming each, in a throwaway clone of HEAD with this work
// tree's version of the script. Stale and missing are proved in one run:
// each 'go generate' takes 20 s or more here, and the script names each
// file on a line of its own.
func TestGeneratedCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 'go generate ./...' twice")
	}
	t.Parallel() // most of its time is spent in other processes
	top := strings.TrimSpace(string(mustRun(t, ".", "git", "rev-parse", "--show-toplevel")))
	repo := filepath.Join(t.TempDir(), "repo")
	mustRun(t, ".", "git", "clone", "--quiet", "--local", "--shared", top, repo)
	script, err := os.ReadFile(filepath.Join(top, "scripts", "check-generated.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "scripts", "check-generated.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	// The copied script shows in git status; commit it, so that the clone
	// is clean and only the generator's changes count below.
	mustRun(t, repo, "git", "add", "scripts/check-generated.sh")
	mustRun(t, repo, "git", "-c", "user.name=test", "-c", "user.email=test@example.com",
		"commit", "--quiet", "--allow-empty", "-m", "this work tree's check")

	check := func() (string, error) {
		cmd := exec.Command("bash", "scripts/check-generated.sh")
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	t.Run("CurrentTreePasses", func(t *testing.T) {
		out, err := check()
		if err != nil || !strings.Contains(out, "generated code is current") {
			t.Fatalf("the check failed on HEAD: %v\n%s", err, out)
		}
	})

	t.Run("StaleAndMissingFilesFailNamed", func(t *testing.T) {
		stale := filepath.Join(repo, "graph", "fastexec_gen.go")
		f, err := os.OpenFile(stale, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString("\n// edited by hand\n"); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(repo, "graph", "model", "models_gen.go")); err != nil {
			t.Fatal(err)
		}

		out, err := check()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("the check did not fail (exit 1) on a stale and a missing file: %v\n%s", err, out)
		}
		for _, want := range []string{"changed:  graph/fastexec_gen.go", "missing:  graph/model/models_gen.go"} {
			if !strings.Contains(out, want) {
				t.Errorf("the check's output lacks %q:\n%s", want, out)
			}
		}
		if strings.Count(out, "\n  ") != 2 {
			t.Errorf("the check names files the test did not touch:\n%s", out)
		}
		// The regenerated files are left in place: the tree is HEAD again.
		if status := mustRun(t, repo, "git", "status", "--porcelain"); len(status) != 0 {
			t.Errorf("after the check, the tree differs from HEAD:\n%s", status)
		}
	})
}

// mustRun runs a command in dir and returns its standard output.
func mustRun(t *testing.T, dir, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out
}
