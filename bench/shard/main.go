// Command shard measures models split over devices (docs/SHARDING.md):
// the memory each chip of a TPU v6e slice of 8 needs for the full-size
// Qwen3-30B-A3B and Gemma 4 26B-A4B configurations split 8 ways (from the
// executables libtpu compiles, through `tpucc export --mesh tp=8
// --emit=executable --report`, config only, bf16), the time that compile
// takes, the host memory a model split 4 ways takes while it loads, and
// the decode rate split 4 ways over XLA:CPU's devices against one device.
//
//	go run ./bench/shard
//
// prints, last:
//
//	bench-shard: qwen3_30b_v6e8_gib_per_chip=G gemma4_26b_v6e8_gib_per_chip=G qwen3_30b_v6e8_compile_s=S load_peak_over_shard=R tp4_decode_vs_1=X
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var (
	loadChild = flag.String("load-child", "", "internal: load the model in this directory split 4 ways and print the memory it took")
	steps     = flag.Int("steps", 32, "decode steps timed per generation")
	skipTPU   = flag.Bool("skip-tpu", false, "skip the libtpu compiles (minutes each): their keys print nan")
)

func main() {
	flag.Parse()
	if *loadChild != "" {
		check(measureLoad(*loadChild))
		return
	}
	root := repoRoot()
	tmp, err := os.MkdirTemp("", "bench-shard-")
	check(err)
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "tpucc")
	build := exec.Command("go", "build", "-o", bin, "./cmd/tpucc")
	build.Dir, build.Stderr = root, os.Stderr
	check(build.Run())

	qGiB, qSecs, gGiB := math.NaN(), math.NaN(), math.NaN()
	if !*skipTPU {
		qGiB, qSecs = compileSlice(root, bin, tmp, "qwen3-30b-a3b", qwen330B)
		gGiB, _ = compileSlice(root, bin, tmp, "gemma4-26b-a4b", gemma426B)
	}
	peak := loadPeak(tmp)
	speed := decodeSpeedup()
	fmt.Printf("bench-shard: qwen3_30b_v6e8_gib_per_chip=%.2f gemma4_26b_v6e8_gib_per_chip=%.2f qwen3_30b_v6e8_compile_s=%.1f load_peak_over_shard=%.2f tp4_decode_vs_1=%.2f\n",
		qGiB, gGiB, qSecs, peak, speed)
}

// reportBytes matches a step's line of export's --report.
var reportBytes = regexp.MustCompile(`^(prefill|decode): compiled memory per chip, .* = (\d+) bytes`)

// compileSlice exports the configuration config for tpu-v6e split over the 8
// chips of v6e:2x4 and returns the larger step's compiled memory per chip
// in GiB and the export's wall time (tracing, passes and libtpu's compile
// of both steps).
func compileSlice(root, bin, tmp, name, config string) (gib, secs float64) {
	dir := filepath.Join(tmp, name)
	check(os.MkdirAll(dir, 0o755))
	check(os.WriteFile(filepath.Join(dir, "config.json"), []byte(config), 0o644))
	cmd := exec.Command(bin, "export", "--model", dir, "--seq", "2048", "--target", "tpu-v6e", "--topology", "v6e:2x4",
		"--mesh", "tp=8", "--emit=executable", "--report", "-o", filepath.Join(dir, "out"))
	var out, errs bytes.Buffer
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, &out, &errs
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		os.Stderr.Write(errs.Bytes())
		check(fmt.Errorf("%s: tpucc export: %v", name, err))
	}
	secs = time.Since(t0).Seconds()
	var most int64
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if m := reportBytes.FindStringSubmatch(sc.Text()); m != nil {
			n, _ := strconv.ParseInt(m[2], 10, 64)
			most = max(most, n)
			fmt.Fprintf(os.Stderr, "bench/shard: %s: %s\n", name, sc.Text())
		}
	}
	if most == 0 {
		check(fmt.Errorf("%s: no compiled memory in export's report:\n%s", name, out.String()))
	}
	fmt.Fprintf(os.Stderr, "bench/shard: %s compiled for v6e:2x4 in %.1f s\n", name, secs)
	return float64(most) / (1 << 30), secs
}

// loadPeak writes a random checkpoint and loads it, split 4 ways, in a
// child process (a fresh heap), returning what the load took of the
// host's memory over one device's share of the weights.
func loadPeak(tmp string) float64 {
	dir := filepath.Join(tmp, "load")
	total := writeCheckpoint(dir)
	self, err := os.Executable()
	check(err)
	var out bytes.Buffer
	cmd := exec.Command(self, "-load-child", dir)
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	check(cmd.Run())
	var r loadResult
	check(json.Unmarshal(out.Bytes(), &r))
	share := float64(total) / 4
	fmt.Fprintf(os.Stderr, "bench/shard: loading %d bytes of weights split 4 ways: host memory grew by at most %d bytes (anonymous %d, of which the devices' pieces %d); one device's share %.0f\n",
		total, r.PeakRSS, r.PeakAnon, r.Devices, share)
	return float64(r.PeakAnon-r.Devices) / share
}

// loadResult is what the child reports (bytes).
type loadResult struct {
	PeakRSS  int64 // growth of the peak resident set (VmHWM) over the load
	PeakAnon int64 // growth of the largest anonymous resident set seen
	Devices  int64 // what XLA:CPU's devices hold: every weight's pieces
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/shard:", err)
		os.Exit(1)
	}
}

// repoRoot is the module root (where go.mod is), from the working directory.
func repoRoot() string {
	d, err := os.Getwd()
	check(err)
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			check(fmt.Errorf("no go.mod above the working directory"))
		}
		d = up
	}
}

// statusBytes reads a "Name: N kB" line of /proc/self/status.
func statusBytes(name string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	check(err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			f := strings.Fields(v)
			n, _ := strconv.ParseInt(f[0], 10, 64)
			return n * 1024
		}
	}
	return 0
}

// ratio is a/b, or NaN when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}
