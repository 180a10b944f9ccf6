package llvm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
)

// The two hosts of the golden tests: this project's 2-core AMD EPYC (Zen
// 4: 32 KiB L1d, 1 MiB L2, 32 MiB L3 shared by both CPUs) and an
// Intel Xeon with 48 KiB L1d, 2 MiB L2 and 105 MiB of L3 over 2 CPUs,
// as their /proc/cpuinfo and sysfs show them.
var (
	zenInfo = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\n" +
		"flags\t\t: fpu sse fma avx2 avx512f avx512dq avx512bw avx512vl avx512_bf16\n\n" +
		"processor\t: 1\nmodel name\t: AMD EPYC\nflags\t\t: fpu\n"
	zenCaches = cacheFS(
		[4]string{"1", "Data", "32K", "0"}, [4]string{"1", "Instruction", "32K", "0"},
		[4]string{"2", "Unified", "1024K", "0"}, [4]string{"3", "Unified", "32768K", "0-1"})
	xeonInfo = "model name\t: Intel(R) Xeon(R) Platinum 8581C CPU @ 2.10GHz\n" +
		"flags\t\t: avx2 fma avx512f avx512bw avx512vl amx_tile avx512_bf16 avx512_fp16\n"
	xeonCaches = cacheFS(
		[4]string{"1", "Data", "48K", "0"}, [4]string{"1", "Instruction", "32K", "0"},
		[4]string{"2", "Unified", "2048K", "0"}, [4]string{"3", "Unified", "105M", "0-1"})
	avx2Info = "model name\t: Some CPU\nflags\t\t: sse avx2 fma\n"
)

// cacheFS is a sysfs cache directory of caches (level, type, size,
// shared_cpu_list), index0 first.
func cacheFS(caches ...[4]string) fstest.MapFS {
	fs := fstest.MapFS{}
	for i, c := range caches {
		for j, f := range []string{"level", "type", "size", "shared_cpu_list"} {
			fs[fmt.Sprintf("index%d/%s", i, f)] = &fstest.MapFile{Data: []byte(c[j] + "\n")}
		}
	}
	return fs
}

func hostOf(info string, caches fstest.MapFS) gemmHost {
	h := parseCPUInfo(info)
	h.L1D, h.L2, h.L3 = cacheSizes(caches)
	return h
}

// TestGemmHost: the facts read from /proc/cpuinfo and sysfs: the first
// processor's model and the flags that matter, one core's L1d and L2 and
// its share of L3; a cache whose size cannot be read is 0.
func TestGemmHost(t *testing.T) {
	for _, c := range []struct {
		name string
		h    gemmHost
		want string
	}{
		{"zen", hostOf(zenInfo, zenCaches), "AMD EPYC|avx2 avx512f avx512bw avx512vl avx512_bf16 fma|l1d=32768 l2=1048576 l3=16777216 wide=true"},
		{"xeon", hostOf(xeonInfo, xeonCaches), "Intel(R) Xeon(R) Platinum 8581C CPU @ 2.10GHz|avx2 avx512f avx512bw avx512vl avx512_bf16 amx_tile fma|l1d=49152 l2=2097152 l3=55050240 wide=true"},
		{"no sysfs", hostOf(avx2Info, fstest.MapFS{}), "Some CPU|avx2 fma|l1d=0 l2=0 l3=0 wide=false"},
		{"bad size", hostOf(avx2Info, cacheFS([4]string{"1", "Data", "lots", "0"}, [4]string{"2", "Unified", "512K", "0-x"})), "Some CPU|avx2 fma|l1d=0 l2=524288 l3=0 wide=false"},
	} {
		if got := fmt.Sprintf("%s wide=%v", c.h.key(), c.h.Wide); got != c.want {
			t.Errorf("%s: %s\nwant %s", c.name, got, c.want)
		}
	}
}

// TestGemmChoice: the parameters are a function of the host and the
// record alone. Golden: the candidates of each host (the hand-tuned ones
// first), and the choice before calibration, with tuning off, with this
// host's record, and with records that do not apply (another host's,
// another version's, a choice that is not a candidate here), which are
// ignored.
func TestGemmChoice(t *testing.T) {
	zen, xeon, avx2 := hostOf(zenInfo, zenCaches), hostOf(xeonInfo, xeonCaches), hostOf(avx2Info, fstest.MapFS{})
	candidates := map[string][]string{
		"zen": {
			"tile=6x32 mc=120 kc=256 nc=512 ncfew=256 ahead=16",
			"tile=6x32 mc=480 kc=128 nc=512 ncfew=256 ahead=16",
			"tile=6x32 mc=240 kc=256 nc=512 ncfew=256 ahead=16",
			"tile=6x16 mc=480 kc=256 nc=512 ncfew=256 ahead=32",
			"tile=6x16 mc=120 kc=256 nc=512 ncfew=256 ahead=16",
		},
		"xeon": {
			"tile=6x32 mc=120 kc=256 nc=512 ncfew=256 ahead=16",
			"tile=6x32 mc=480 kc=192 nc=512 ncfew=256 ahead=24",
			"tile=6x32 mc=240 kc=384 nc=512 ncfew=256 ahead=24",
			"tile=6x16 mc=480 kc=384 nc=512 ncfew=256 ahead=32",
			"tile=6x16 mc=120 kc=256 nc=512 ncfew=256 ahead=16",
		},
		"avx2": {"tile=6x16 mc=120 kc=256 nc=512 ncfew=256 ahead=16"},
	}
	for name, h := range map[string]gemmHost{"zen": zen, "xeon": xeon, "avx2": avx2} {
		var got []string
		for _, p := range gemmCandidates(h) {
			got = append(got, p.String())
		}
		if strings.Join(got, "\n") != strings.Join(candidates[name], "\n") {
			t.Errorf("%s candidates:\n%s\nwant\n%s", name, strings.Join(got, "\n"), strings.Join(candidates[name], "\n"))
		}
	}
	mine := &gemmRecord{Version: gemmTuneVersion, Host: zen.key(), Chosen: gemmCandidates(zen)[3]}
	foreign := &gemmRecord{Version: gemmTuneVersion, Host: xeon.key(), Chosen: gemmCandidates(zen)[3]}
	old := &gemmRecord{Version: gemmTuneVersion - 1, Host: zen.key(), Chosen: gemmCandidates(zen)[3]}
	odd := &gemmRecord{Version: gemmTuneVersion, Host: zen.key(), Chosen: gemmParams{Tile: 32, MC: 7, KC: 1, NC: 3, NCFew: 3, Ahead: 1}}
	for _, c := range []struct {
		name string
		h    gemmHost
		rec  *gemmRecord
		tune bool
		want string
	}{
		{"zen, no record", zen, nil, true, "tile=6x32 mc=480 kc=128 nc=512 ncfew=256 ahead=16"},
		{"zen, tuning off", zen, mine, false, "tile=6x32 mc=120 kc=256 nc=512 ncfew=256 ahead=16"},
		{"zen, its record", zen, mine, true, "tile=6x16 mc=480 kc=256 nc=512 ncfew=256 ahead=32"},
		{"zen, a xeon's record", zen, foreign, true, "tile=6x32 mc=480 kc=128 nc=512 ncfew=256 ahead=16"},
		{"zen, an older record", zen, old, true, "tile=6x32 mc=480 kc=128 nc=512 ncfew=256 ahead=16"},
		{"zen, no candidate", zen, odd, true, "tile=6x32 mc=480 kc=128 nc=512 ncfew=256 ahead=16"},
		{"xeon, no record", xeon, nil, true, "tile=6x32 mc=480 kc=192 nc=512 ncfew=256 ahead=24"},
		{"avx2, caches unknown", avx2, nil, true, "tile=6x16 mc=120 kc=256 nc=512 ncfew=256 ahead=16"},
		{"avx2, tuning off", avx2, nil, false, "tile=6x16 mc=120 kc=256 nc=512 ncfew=256 ahead=16"},
	} {
		if got := chooseGemm(c.h, c.rec, c.tune).String(); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestGemmRecordFile: a record written is read back whole; a corrupt or
// missing file reads as no record, and a tuner over it calibrates again
// (is not settled); so does one in a directory others can write. TPUCC_GEMM_TUNE=off settles on the hand-tuned
// parameters whatever the record; any other value but on is refused.
func TestGemmRecordFile(t *testing.T) {
	dir := t.TempDir()
	h := readGemmHost()
	rec := &gemmRecord{Version: gemmTuneVersion, Host: h.key(), Chosen: gemmCandidates(h)[len(gemmCandidates(h))-1],
		Timed: []gemmTiming{{Params: staticGemm(h.Wide), GFLOPS: 1.5}}}
	if err := writeGemmRecord(dir, rec); err != nil {
		t.Fatal(err)
	}
	back := readGemmRecord(dir)
	if back == nil || fmt.Sprint(*back) != fmt.Sprint(*rec) {
		t.Fatalf("read back %+v, want %+v", back, rec)
	}
	tuner := func(mode string) (*gemmTuner, error) {
		t.Setenv("TPUCC_GEMM_TUNE", mode)
		return newGemmTuner(dir)
	}
	if g, err := tuner("on"); err != nil || !g.settled || g.params != rec.Chosen {
		t.Errorf("with the record: settled %v, %v, %v; want settled, %v", g.settled, g.params, err, rec.Chosen)
	}
	if g, err := tuner("off"); err != nil || !g.settled || g.params != staticGemm(h.Wide) {
		t.Errorf("off: settled %v, %v, %v; want settled, %v", g.settled, g.params, err, staticGemm(h.Wide))
	}
	if _, err := tuner("fast"); err == nil || err.Error() != `llvm: TPUCC_GEMM_TUNE="fast": want on or off` {
		t.Errorf("TPUCC_GEMM_TUNE=fast: %v", err)
	}
	for name, data := range map[string]string{"corrupt": `{"version": 1, "host": `, "not json": "\x00\x01"} {
		if err := os.WriteFile(filepath.Join(dir, gemmRecordName), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		if r := readGemmRecord(dir); r != nil {
			t.Errorf("%s: read %+v, want none", name, r)
		}
		if g, err := tuner(""); err != nil || g.settled || g.params != analyticGemm(h, staticGemm(h.Wide).Tile) {
			t.Errorf("%s: settled %v, %v, %v; want unsettled, the analytic parameters", name, g.settled, g.params, err)
		}
	}
	if r := readGemmRecord(t.TempDir()); r != nil {
		t.Errorf("no file: read %+v", r)
	}
	if err := writeGemmRecord(dir, rec); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if r := readGemmRecord(dir); r != nil {
		t.Errorf("in a directory others can write: read %+v, want none", r)
	}
}

// TestGemmParamsCompiled: products compiled with zen's analytic candidates
// agree with the reference, on shapes with edges in every block (rows past MC,
// depth past KC, columns past NC, none a multiple of the tile), and one of
// 64 rows, which packs its rhs as it reads it (gemmFuse, Ahead); the parameters are in the generated IR (its text,
// and so the object's key, differs between them) and in the backend's
// Fingerprint.
func TestGemmParamsCompiled(t *testing.T) {
	b := testBackend(t)
	src := `func @mm(%a: f32[517,300], %b: f32[300,1100], %x: f32[64,300]) -> (f32[517,1100], f32[64,1100]) {
  %c = matmul %a, %b : f32[517,1100]
  %d = matmul %x, %b : f32[64,1100]
  return %c, %d
}
`
	m, f, _ := compileSrc(t, b, src)
	in := cpu.RandomInputs(f, 3)
	texts := map[string]string{}
	// The hand-tuned sets are TestDotShapes's; of the zen candidates, the
	// analytic ones for each tile (the deeper slice runs the same paths).
	zen := gemmCandidates(hostOf(zenInfo, zenCaches))
	for _, p := range []gemmParams{staticGemm(b.wide), zen[1], zen[3]} {
		if !b.wide && p.Tile == 2*gemmNR {
			continue
		}
		t.Run(p.String(), func(t *testing.T) {
			x, err := b.compileWith(m, f, nil, nil, p)
			if err != nil {
				t.Fatal(err)
			}
			agree(t, x, m, f, in)
			text := x.plan.gen.text()
			if q, dup := texts[text]; dup {
				t.Errorf("the same IR as %s", q)
			}
			texts[text] = p.String()
		})
	}
	b.gemm = fixedGemm(gemmParams{Tile: 16, MC: 60, KC: 64, NC: 256, NCFew: 256, Ahead: 8})
	if fp := b.Fingerprint(); !strings.HasSuffix(fp, " gemm tile=6x16 mc=60 kc=64 nc=256 ncfew=256 ahead=8") {
		t.Errorf("Fingerprint %q does not end in the parameters", fp)
	}
}

// TestGemmCalibrateTrigger: only a product of at least 512³ multiply-adds
// (a batch's products together) calibrates: smaller ones fit a few blocks.
func TestGemmCalibrateTrigger(t *testing.T) {
	for _, c := range []struct {
		src  string
		want bool
	}{
		{"func @f(%a: f32[512,512], %b: f32[512,512]) -> f32[512,512] {\n  %c = matmul %a, %b : f32[512,512]\n  return %c\n}\n", true},
		{"func @f(%a: f32[512,511], %b: f32[511,512]) -> f32[512,512] {\n  %c = matmul %a, %b : f32[512,512]\n  return %c\n}\n", false},
		{"func @f(%a: f32[4,64,512], %b: f32[4,512,1024]) -> f32[4,64,1024] {\n  %c = dot_general %a, %b {lhs_batch=[0], rhs_batch=[0], lhs_contract=[2], rhs_contract=[1]} : f32[4,64,1024]\n  return %c\n}\n", true},
		{"func @f(%a: f32[8,8]) -> f32[8,8] {\n  %c = add %a, %a : f32[8,8]\n  return %c\n}\n", false},
	} {
		m, err := tir.Parse("trigger.tir", []byte(c.src))
		if err != nil {
			t.Fatal(err)
		}
		if got := hasLargeDot(m.Entry().Body); got != c.want {
			t.Errorf("hasLargeDot = %v, want %v:\n%s", got, c.want, c.src)
		}
	}
}

// TestGemmTunerShared: compiles on several goroutines read the tuner
// together (go test -race): a program with no large product neither
// calibrates nor settles it.
func TestGemmTunerShared(t *testing.T) {
	m, err := tir.Parse("small.tir", []byte("func @f(%a: f32[8,8], %b: f32[8,8]) -> f32[8,8] {\n  %c = matmul %a, %b : f32[8,8]\n  return %c\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	g := &gemmTuner{params: staticGemm(true)}
	done := make(chan gemmParams)
	for range 4 {
		go func() {
			p := g.forFunc(nil, m.Entry())
			if g.current() != p {
				p = gemmParams{}
			}
			done <- p
		}()
	}
	for range 4 {
		if p := <-done; p != staticGemm(true) {
			t.Errorf("got %v, want %v", p, staticGemm(true))
		}
	}
	if g.settled {
		t.Error("settled by a small product")
	}
}
