package llvm

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// gemmTuner holds a backend's gemmParams. They start as chooseGemm of the
// host and its record, if any (read once, at Open); when tuning is on and
// no valid record was found, the first compile of a product large enough
// for the blocking to matter (gemmCalibrateWork) calibrates: it times each
// candidate once on a 1024³ product, keeps the fastest, and writes the
// record, which later processes read instead of timing again.
//
// TPUCC_GEMM_TUNE=off keeps staticGemm and reads and writes no record;
// "on" (or unset) tunes. The record lives in the persistent cache
// directory (TPUCC_CACHE_DIR, else ~/.cache/tpucc): with
// TPUCC_CACHE_DIR=off there is nowhere to keep it, and the analytic
// parameters are used without timing.
type gemmTuner struct {
	mu      sync.Mutex
	host    gemmHost
	tune    bool
	dir     string // where the record is kept; "" nowhere
	params  gemmParams
	settled bool // nothing left to calibrate
	// Calibrated is the record this process's calibration wrote, nil
	// when none ran.
	calibrated *gemmRecord
}

// newGemmTuner reads the host, TPUCC_GEMM_TUNE and the record in dir.
func newGemmTuner(dir string) (*gemmTuner, error) {
	t := &gemmTuner{host: readGemmHost(), dir: dir}
	switch mode := os.Getenv("TPUCC_GEMM_TUNE"); mode {
	case "", "on":
		t.tune = true
	case "off":
	default:
		return nil, fmt.Errorf("llvm: TPUCC_GEMM_TUNE=%q: want on or off", mode)
	}
	var rec *gemmRecord
	if t.tune && dir != "" {
		rec = readGemmRecord(dir)
	}
	t.params = chooseGemm(t.host, rec, t.tune)
	t.settled = !t.tune || dir == "" || rec.valid(t.host)
	return t, nil
}

// fixedGemm is a tuner that never calibrates: p throughout.
func fixedGemm(p gemmParams) *gemmTuner { return &gemmTuner{params: p, settled: true} }

// current is the parameters now, without calibrating.
func (t *gemmTuner) current() gemmParams {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.params
}

// gemmCalibrateWork is the least multiply-adds of one product whose
// compile calibrates: smaller ones fit in a few blocks, and are compiled
// with the parameters as they stand.
const gemmCalibrateWork = 1 << 27 // 512³

// forFunc is the parameters to compile f with: when f has a large product
// and calibration is still to run, it runs first (once per process).
func (t *gemmTuner) forFunc(b *Backend, f *ir.Func) gemmParams {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.settled || !hasLargeDot(f.Body) {
		return t.params
	}
	t.settled = true
	rec := b.calibrateGemm(t.host)
	if rec == nil {
		return t.params
	}
	t.params, t.calibrated = rec.Chosen, rec
	if err := writeGemmRecord(t.dir, rec); err != nil {
		fmt.Fprintf(os.Stderr, "tpucc: warning: GEMM calibration not kept: %v\n", err)
	}
	return t.params
}

// hasLargeDot reports whether blk (or a region in it) has a dot_general of
// at least gemmCalibrateWork multiply-adds.
func hasLargeDot(blk *ir.Block) bool {
	for _, in := range blk.Instrs {
		if _, ok := in.Attr.(*ir.DotAttr); ok && in.Op == ir.OpDotGeneral && len(in.Args) == 2 &&
			in.Args[0].Type.IsStatic() && in.Args[1].Type.IsStatic() {
			d := analyseDot(in)
			if d.B*d.M*d.N*d.K >= gemmCalibrateWork {
				return true
			}
		}
		for _, r := range in.Regions {
			if hasLargeDot(r) {
				return true
			}
		}
	}
	return false
}

// gemmCalibrateSize is the calibration's product (n x n x n, f32): the
// size of bench/cpu's matmul, large enough to use every block. At 100
// GFLOP/s a run is 21 ms: the rounds of four candidates take about half
// a second, the budget bounds them on a slow or busy host.
const (
	gemmCalibrateSize   = 1024
	gemmCalibrateRounds = 5
	gemmCalibrateBudget = 1500 * time.Millisecond
)

// calibrateGemm compiles the 1024³ product once per candidate and times
// the candidates in turn, gemmCalibrateRounds rounds (fewer, but at least
// two, past gemmCalibrateBudget), taking each one's best run (on a shared
// machine the best moves least). A candidate must beat the first
// (hand-tuned) one by 2% to replace it: a tie is noise. nil when a
// candidate fails to compile or run (the parameters then stay as they
// are, and the next process tries again).
func (b *Backend) calibrateGemm(h gemmHost) *gemmRecord {
	cands := gemmCandidates(h)
	f := calibrationFunc(gemmCalibrateSize)
	args := []*backend.Buffer{backend.New(f.Params[0].Type), backend.New(f.Params[1].Type)}
	for _, a := range args {
		a.WriteFloat64s(0, calibrationValues(a.Len()))
	}
	var exes []*Executable
	for _, p := range cands {
		x, err := b.compileWith(f.Module, f, nil, nil, p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "tpucc: warning: GEMM calibration: %v\n", err)
			return nil
		}
		exes = append(exes, x)
	}
	best := make([]time.Duration, len(cands))
	for i := range best {
		best[i] = time.Duration(math.MaxInt64)
	}
	t0 := time.Now()
	for round := 0; round < gemmCalibrateRounds && (round < 2 || time.Since(t0) < gemmCalibrateBudget); round++ {
		for i, x := range exes {
			if round == 0 {
				if _, err := x.Run(args); err != nil { // warm up: first touch of its scratch
					return nil
				}
			}
			t0 := time.Now()
			if _, err := x.Run(args); err != nil {
				return nil
			}
			best[i] = min(best[i], time.Since(t0))
		}
	}
	rec := &gemmRecord{Version: gemmTuneVersion, Host: h.key(), Chosen: cands[0]}
	flops := 2 * math.Pow(gemmCalibrateSize, 3)
	win := best[0]
	for i, p := range cands {
		rec.Timed = append(rec.Timed, gemmTiming{Params: p, GFLOPS: math.Round(flops/best[i].Seconds()/1e6) / 1e3})
		if float64(best[i]) < 0.98*float64(win) {
			rec.Chosen, win = p, best[i]
		}
	}
	return rec
}

// calibrationFunc is @gemm(a: f32[n, n], b: f32[n, n]) = a · b.
func calibrationFunc(n int64) *ir.Func {
	m := ir.NewModule("gemm-calibration")
	t := ir.Tensor(ir.F32, n, n)
	f := m.NewFunc("gemm", []string{"a", "b"}, []ir.Type{t, t}, []ir.Type{t}, ir.Pos{})
	bl := ir.NewBuilder(f)
	c := bl.Op1(ir.OpDotGeneral, &ir.DotAttr{LhsContract: []int64{1}, RhsContract: []int64{0}}, f.Params[0], f.Params[1])
	bl.Return(c)
	return f
}

// calibrationValues are n values in [-1, 1), no two neighbours equal: a
// product of them has no zeros or denormals to make it faster.
func calibrationValues(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64((i*7919)%2003)/1001.5 - 1
	}
	return v
}

// gemmRecordDir is where the record is kept: the persistent cache's
// directory (engine.DefaultDir's rule: TPUCC_CACHE_DIR, "off" for none,
// else $XDG_CACHE_HOME/tpucc, else ~/.cache/tpucc).
func gemmRecordDir() string {
	if d, ok := os.LookupEnv("TPUCC_CACHE_DIR"); ok {
		if d == "off" {
			return ""
		}
		return d
	}
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "tpucc")
	}
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		return filepath.Join(h, ".cache", "tpucc")
	}
	return ""
}
