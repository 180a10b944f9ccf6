package pjrt

import (
	"io"
	"os"
	"sync"
	"syscall"
)

var captureMu sync.Mutex

// CaptureStderr runs f with the process's standard error (descriptor 2)
// sent to a temporary file, and returns what was written there. libtpu
// logs to descriptor 2 as it starts (warnings about worker hostnames and
// host bounds that do not concern compiling for a topology); a caller shows
// the text when f fails and drops it otherwise. Anything else the process
// writes to standard error meanwhile is captured too, so f should be short.
func CaptureStderr(f func() error) ([]byte, error) {
	captureMu.Lock()
	defer captureMu.Unlock()
	tmp, err := os.CreateTemp("", "tpucc-stderr-*")
	if err != nil {
		return nil, f()
	}
	os.Remove(tmp.Name())
	defer tmp.Close()
	saved, err := syscall.Dup(2)
	if err != nil {
		return nil, f()
	}
	defer syscall.Close(saved)
	if err := syscall.Dup3(int(tmp.Fd()), 2, 0); err != nil {
		return nil, f()
	}
	ferr := f()
	syscall.Dup3(saved, 2, 0)
	out, _ := io.ReadAll(io.NewSectionReader(tmp, 0, 1<<20))
	return out, ferr
}
