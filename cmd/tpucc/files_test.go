package main

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestBuildToPipe: -o naming something that is not a regular file (a named pipe here;
// /dev/null in the README) is written in place. Renaming a temporary over it, as for a
// regular file, would replace the pipe, or /dev/null, with a regular file.
func TestBuildToPipe(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "m.tir", []byte(expSrc))
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Opened for reading first, without blocking, so that build's open for writing
	// does not block; what build writes waits in the pipe until it is read below.
	rd, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	want := tpucc(t, "", "build", model).stdout
	tpucc(t, "", "build", model, "-o", fifo).want(t, 0, "", "")
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("%s is no longer a named pipe (%v, %v)", fifo, st.Mode(), err)
	}
	if b, err := io.ReadAll(rd); err != nil || string(b) != want {
		t.Errorf("the pipe carried (%v):\n%s\nwant:\n%s", err, b, want)
	}
	noFiles(t, dir, "m.tir", "pipe")
}
