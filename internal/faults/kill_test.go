package faults

import (
	"path/filepath"
	"testing"
	"time"
)

// start runs the child for d in the background; the channel closes when
// it has exited (and been waited for).
func (d dirs) start(t *testing.T) (kill func(), exited <-chan struct{}) {
	t.Helper()
	cmd := d.command(0)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	return func() { cmd.Process.Kill(); <-done }, done
}

// TestKillDuringBuild: a process SIGKILLed while clang builds the thread
// pool, then one killed while clang builds the program, leave no clang
// running; the next process collects their build directories, computes
// right and leaves nothing behind.
func TestKillDuringBuild(t *testing.T) {
	d := newDirs(t, true)
	for _, stage := range []string{"pool.c", "kernels.ll"} {
		kill, exited := d.start(t)
		if !waitFor(exited, func() bool { return exists(filepath.Join(d.llvm, "build-*", stage)) }) {
			kill()
			t.Fatalf("the child never built %s", stage)
		}
		kill()
		noProcessUsing(t, d.llvm)
	}
	d.run(t, 0).wantOK(t)
	d.wantClean(t)
}

// TestKillAtAnyTime: processes killed at several moments of a cold run
// (finding clang, building, loading, writing the program cache) leave
// caches from which the next process computes right, and nothing behind
// once it has run. Where each kill lands varies from run to run; what is
// asserted does not depend on it.
func TestKillAtAnyTime(t *testing.T) {
	d := newDirs(t, true)
	for _, after := range []time.Duration{10 * time.Millisecond, 60 * time.Millisecond, 150 * time.Millisecond, 300 * time.Millisecond, 500 * time.Millisecond} {
		kill, exited := d.start(t)
		select {
		case <-exited:
		case <-time.After(after):
		}
		kill()
		noProcessUsing(t, d.llvm)
	}
	d.run(t, 0).wantOK(t)
	d.wantClean(t)
	d.run(t, 0).wantOK(t) // from the caches the killed processes and the first run wrote
	d.wantClean(t)
}
