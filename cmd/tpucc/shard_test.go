package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend/pjrt"
)

// shardSrc splits its inputs over two devices; its elementwise work is
// exact, so any split gives the reference executor's digits.
const shardSrc = `mesh @mesh = <["tp"=2]>

func @f(%x: f32[4,6] {sharding=<@mesh, [{}, {"tp"}]>}, %y: f32[4,6] {sharding=<@mesh, [{"tp"}, {}]>}) -> f32[4,6] {sharding=<@mesh, [{"tp"}, {}]>} {
  %a = mul %x, %y : f32[4,6]
  %b = max %a, %x : f32[4,6]
  return %b
}
`

// tpucc run --device pjrt runs a sharded .tir end to end (split inputs from
// --seed, gathered results) and prints what the reference executor prints.
// The numbers alone cannot show that two devices ran it (one device gives
// them too); backend/pjrt's TestShardBackendKeepsResultsOnDevices checks the
// pieces. The plugin's default device count (4) is enough;
// TPUCC_PJRT_OPTIONS=cpu_device_count=N sets it when this test opens the
// process's client first.
func TestRunSharded(t *testing.T) {
	t.Setenv(pjrt.EnvOptions, "cpu_device_count=2")
	in := writeFile(t, t.TempDir(), "s.tir", []byte(shardSrc))
	want := tpucc(t, "", "run", in, "--backend", "reference", "--seed", "7")
	if want.code != 0 || want.stdout == "" {
		t.Fatalf("reference run: exit %d, stderr %q", want.code, want.stderr)
	}
	got := tpucc(t, "", "run", in, "--device", "pjrt", "--seed", "7")
	if got.code != 0 || got.stdout != want.stdout {
		t.Errorf("--device pjrt: exit %d, stdout\n%s\nwant\n%s\nstderr %q", got.code, got.stdout, want.stdout, got.stderr)
	}
}

// shardMatmulSrc contracts over the dimension both operands split over tp:
// each of four chips holds a quarter of each operand and of the
// reduce-scattered result.
const shardMatmulSrc = `mesh @mesh = <["tp"=4]>

func @f(%x: f32[512,256] {sharding=<@mesh, [{}, {"tp"}]>}, %w: f32[256,512] {sharding=<@mesh, [{"tp"}, {}]>}) -> f32[512,512] {sharding=<@mesh, [{"tp"}, {}]>} {
  %y = matmul %x, %w : f32[512,512]
  return %y
}
`

// compiledLine is the --report line of the compiled memory, its code size
// (which depends on libtpu's build) replaced by N.
var compiledLine = regexp.MustCompile(`code \d+ = \d+ bytes \([^)]*\)`)

func reportLine(t *testing.T, stderr, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, prefix) {
			return compiledLine.ReplaceAllString(l, "code N")
		}
	}
	t.Fatalf("no %q line in stderr:\n%s", prefix, stderr)
	return ""
}

// A program split over the four chips of v6e:2x2 compiles through libtpu
// as four partitions; the manifest records the mesh and the device
// assignment, and --report gives each chip's memory from the compiled
// executable beside the estimate for the whole program: a quarter of the
// arguments (2 x 512 KiB / 4) and of the result (1 MiB / 4), exactly.
func TestBuildExecutableShardedTPU(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "s.tir", []byte(shardMatmulSrc))
	out := filepath.Join(dir, "s.pjrt")
	r := tpucc(t, "", "build", in, "--target", "tpu-v6e", "--topology", "v6e:2x2", "--emit=executable", "-o", out, "--report")
	r.want(t, 0, "", "cost report: @f on tpu-v6e")
	if got, want := reportLine(t, r.stderr, "memory: "), "memory: parameters 1048576 + constants 0 + peak activations 1048576 = 2097152 bytes (2 MiB) of 32 GiB HBM"; got != want {
		t.Errorf("estimate:\n%s\nwant\n%s", got, want)
	}
	want := "compiled memory per chip, @mesh split over the 4 chips of v6e:2x2: arguments 262144 + outputs 262144 - aliased 0 + temporaries 0 + code N of 32 GiB HBM"
	if got := reportLine(t, r.stderr, "compiled memory"); got != want {
		t.Errorf("compiled memory:\n%s\nwant\n%s", got, want)
	}
	m := readManifest(t, out)
	wantMesh := &pjrt.ManifestMesh{Name: "mesh", Axes: []pjrt.MeshAxis{{Name: "tp", Size: 4}}, Devices: []int{0, 1, 2, 3},
		Params: [][][]string{{{}, {"tp"}}, {{"tp"}, {}}}, Results: [][][]string{{{"tp"}, {}}}}
	if !reflect.DeepEqual(m.Mesh, wantMesh) {
		t.Errorf("manifest mesh %+v, want %+v", m.Mesh, wantMesh)
	}
	tpucc(t, "", "run", out).want(t, 1, "",
		out+": error: pjrt-tpu: no TPU device on this machine (no TPU chip among the PCI devices in /sys/bus/pci/devices)")
}

// A program split over two XLA:CPU devices builds to an executable file
// whose manifest records the mesh, the device assignment and the
// shardings; tpucc run runs it on two devices (splitting the inputs drawn
// from --seed, gathering the result) and prints what the .tir prints on
// the reference executor. The plugin's log is not shown.
func TestRunShardedExecutable(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "s.tir", []byte(shardSrc))
	out := filepath.Join(dir, "s.pjrt")
	tpucc(t, "", "build", in, "--emit=executable", "-o", out).want(t, 0, "", "")
	m := readManifest(t, out)
	wantMesh := &pjrt.ManifestMesh{Name: "mesh", Axes: []pjrt.MeshAxis{{Name: "tp", Size: 2}}, Devices: []int{0, 1},
		Params: [][][]string{{{}, {"tp"}}, {{"tp"}, {}}}, Results: [][][]string{{{"tp"}, {}}}}
	if !reflect.DeepEqual(m.Mesh, wantMesh) || m.Target != "cpu" || m.Platform != "cpu" {
		t.Errorf("manifest target %s platform %s mesh %+v, want cpu, cpu, %+v", m.Target, m.Platform, m.Mesh, wantMesh)
	}
	want := tpucc(t, "", "run", in, "--backend", "reference", "--seed", "7")
	if want.code != 0 || want.stdout == "" {
		t.Fatalf("reference run: exit %d, stderr %q", want.code, want.stderr)
	}
	tpucc(t, "", "run", out, "--seed", "7").want(t, 0, want.stdout, "")
}

// An unsharded TPU build reports one chip's compiled memory: f32[2,3]
// occupies one (8,128) f32 tile row pair, 1024 bytes, as the estimate says.
func TestBuildExecutableReportTPU(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "m.tir", []byte(expSrc))
	out := filepath.Join(dir, "m.pjrt")
	r := tpucc(t, "", "build", in, "--target", "tpu-v6e", "--topology", "v6e:2x2", "--emit=executable", "-o", out, "--report")
	r.want(t, 0, "", "cost report: @f on tpu-v6e")
	want := "compiled memory on one chip of v6e:2x2: arguments 1024 + outputs 1024 - aliased 0 + temporaries 0 + code N of 32 GiB HBM"
	if got := reportLine(t, r.stderr, "compiled memory"); got != want {
		t.Errorf("compiled memory:\n%s\nwant\n%s", got, want)
	}
	if a := readManifest(t, out); a.Mesh != nil {
		t.Errorf("an unsharded build records mesh %+v", a.Mesh)
	}
}

// A mesh whose device count is not the topology's chip count is refused,
// naming both, without libtpu's start-up log and without writing a file.
func TestBuildExecutableShardedMeshMismatch(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "s.tir", []byte(strings.Replace(shardMatmulSrc, `"tp"=4`, `"tp"=2`, 1)))
	out := filepath.Join(dir, "s.pjrt")
	r := tpucc(t, "", "build", in, "--target", "tpu-v6e", "--topology", "v6e:2x2", "--emit=executable", "-o", out)
	r.want(t, 1, "", in+": mesh @mesh has 2 devices and topology v6e:2x2 has 4 chips: they must be equal")
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused build left %s behind", out)
	}
}

func readManifest(t *testing.T, path string) pjrt.Manifest {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a, err := pjrt.ReadArtifact(f)
	if err != nil {
		t.Fatal(err)
	}
	return a.Manifest
}

// export --mesh writes both steps with Shardy's shardings: the mesh, the
// number of partitions, q (its two layers stacked) split by its rows
// (heads) and o by its columns over tp; with --emit=executable each step compiles through libtpu for
// the four chips of v6e:2x2, and --report gives each step's memory per
// chip from the compiled executables.
func TestExportMesh(t *testing.T) {
	dir := tinyQwen3(t)
	out := filepath.Join(t.TempDir(), "out")
	r := tpucc(t, "", "export", "--model", dir, "--seq", "8", "--mesh", "tp=4", "-o", out)
	if r.code != 0 {
		t.Fatalf("export --mesh tp=4: exit %d\n%s", r.code, r.stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "decode.hlo"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{
		`sdy.mesh @mesh = <["tp"=4]>`,
		`mhlo.num_partitions = 4 : i32`,
		`tensor<2x32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"tp"}, {}]>}`,
		`tensor<2x16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"tp"}]>}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("decode.hlo lacks %s", want)
		}
	}
	exe := filepath.Join(t.TempDir(), "exe")
	r = tpucc(t, "", "export", "--model", dir, "--seq", "8", "--mesh", "tp=4", "--target", "tpu-v6e",
		"--topology", "v6e:2x2", "--emit=executable", "--report", "-o", exe)
	if r.code != 0 {
		t.Fatalf("export --emit=executable: exit %d\n%s", r.code, r.stderr)
	}
	for _, step := range []string{"prefill", "decode"} {
		m := readManifest(t, filepath.Join(exe, step+".pjrt"))
		if m.Mesh == nil || m.Mesh.Axes[0] != (pjrt.MeshAxis{Name: "tp", Size: 4}) || len(m.Mesh.Devices) != 4 {
			t.Errorf("%s.pjrt: mesh %+v, want tp=4 over 4 devices", step, m.Mesh)
		}
		line := reportLine(t, r.stdout, step+": compiled memory")
		if !strings.HasPrefix(line, step+": compiled memory per chip, @mesh split over the 4 chips of v6e:2x2: arguments ") {
			t.Errorf("report:\n%s", line)
		}
	}
	r = tpucc(t, "", "export", "--model", dir, "--seq", "8", "--mesh", "tp=4,pp=2", "-o", out)
	r.want(t, 2, "", `tpucc export: --mesh: mesh "tp=4,pp=2": axis "pp": a model splits over dp (batch) and tp (weights) only`)
}

// A sharded executable whose manifest was edited (and its hash kept
// right) is refused before it runs, naming the manifest's field: an axis
// the mesh lacks, a sharding of the wrong rank, a device assignment of
// the wrong length.
func TestRunShardedExecutableBadManifest(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "s.tir", []byte(shardSrc))
	out := filepath.Join(dir, "s.pjrt")
	tpucc(t, "", "build", in, "--emit=executable", "-o", out).want(t, 0, "", "")
	for _, c := range []struct {
		edit func(m *pjrt.ManifestMesh)
		want string
	}{
		{func(m *pjrt.ManifestMesh) { m.Params[0][1] = []string{"zz"} }, `manifest mesh params[0]: axis "zz" is not the mesh's or is used twice`},
		{func(m *pjrt.ManifestMesh) { m.Results[0] = m.Results[0][:1] }, "manifest mesh results[0]: 1 dimensions for f32[4,6]"},
		{func(m *pjrt.ManifestMesh) { m.Devices = []int{0} }, "manifest mesh @mesh: 1 devices assigned to a mesh of 2"},
		{func(m *pjrt.ManifestMesh) { m.Devices = []int{1, 0} }, "manifest mesh devices [1 0]: the client runs mesh @mesh on devices [0 1]"},
	} {
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		a, err := pjrt.ReadArtifact(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		c.edit(a.Manifest.Mesh)
		var buf bytes.Buffer
		if _, err := a.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		bad := writeFile(t, dir, "bad.pjrt", buf.Bytes())
		tpucc(t, "", "run", bad, "--seed", "7").want(t, 1, "", bad+": error: "+c.want)
	}
}
