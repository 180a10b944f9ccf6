// Package limits measures the machine's limits that the benchmarks report
// fractions of: the f32 FMA peak of all cores, the bf16 dot peak (vdpbf16ps,
// where the host has AVX512-BF16) and the streaming memory bandwidth. A
// small C kernel (csrc/limits.c) is built with the system C compiler at -O3
// -march=native once per process, and run when asked.
package limits

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// Limits are the measured figures.
type Limits struct {
	FMAPeak float64 // f32 FLOP/s, every core running FMA chains of its widest vectors (AVX-512 where it has it)
	// BF16Peak is FLOP/s of bf16 products into f32 sums, every core running
	// vdpbf16ps chains (two multiply-adds a lane an instruction); 0 where
	// the host (or the compiler's -march=native) has no AVX512-BF16.
	BF16Peak  float64
	Bandwidth float64 // bytes/s of a STREAM triad (reads and writes counted)
}

var (
	once     sync.Once
	measured Limits
	err      error
	bin      string // the built kernel, kept for Again
	built    sync.Once
	buildErr error
)

// Measure builds and runs the kernel the first time it is called and returns
// the figures. CC names the compiler (default cc).
func Measure() (Limits, error) {
	once.Do(func() { measured, err = Again() })
	return measured, err
}

// Again runs the kernel once more (building it the first time) and returns
// what it measured now. This machine's bandwidth moves by tens of percent
// from one minute to the next, so a workload's fraction of a limit is best
// taken against the limit measured beside it.
func Again() (Limits, error) {
	built.Do(func() { bin, buildErr = build() })
	if buildErr != nil {
		return Limits{}, buildErr
	}
	return run(bin)
}

// build compiles csrc/limits.c into a directory of its own that lives as
// long as the process.
func build() (string, error) {
	_, here, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(here), "csrc", "limits.c")
	dir, err := os.MkdirTemp("", "tpucc-limits-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "limits")
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if out, err := exec.Command(cc, "-O3", "-march=native", "-pthread", "-o", bin, src).CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("building %s with %s: %v\n%s", src, cc, err, out)
	}
	return bin, nil
}

// Done removes the built kernel; Again builds it anew after.
func Done() {
	if bin != "" {
		os.RemoveAll(filepath.Dir(bin))
	}
	bin, buildErr, built = "", nil, sync.Once{}
}

func run(bin string) (Limits, error) {
	out, err := exec.Command(bin).Output()
	if err != nil {
		return Limits{}, fmt.Errorf("running the limits kernel: %v", err)
	}
	return parse(out)
}

// parse reads the kernel's lines; the bf16 dot peak is optional (a host
// without AVX512-BF16 prints none).
func parse(out []byte) (Limits, error) {
	var l Limits
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return Limits{}, fmt.Errorf("limits kernel printed %q", sc.Text())
		}
		switch k {
		case "fma_peak_flops":
			l.FMAPeak = x
		case "bf16_dot_peak_flops":
			l.BF16Peak = x
		case "stream_bytes_per_s":
			l.Bandwidth = x
		}
	}
	if l.FMAPeak <= 0 || l.Bandwidth <= 0 {
		return Limits{}, fmt.Errorf("limits kernel printed %q", out)
	}
	return l, nil
}
