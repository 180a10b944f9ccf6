package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/internal/npy"
)

// buildCPUExecutable compiles src for XLA:CPU (the pinned plugin) into dir.
func buildCPUExecutable(t *testing.T, dir, src string) (tir, exe string) {
	t.Helper()
	tir = writeFile(t, dir, "m.tir", []byte(src))
	exe = filepath.Join(dir, "m.pjrt")
	tpucc(t, "", "build", tir, "--target", "cpu", "--emit=executable", "-o", exe).want(t, 0, "", "")
	return tir, exe
}

// TestRunExecutable runs a serialized XLA:CPU executable: the same inputs
// give exactly what the pjrt backend gives compiling the .tir itself.
func TestRunExecutable(t *testing.T) {
	dir := t.TempDir()
	in, exe := buildCPUExecutable(t, dir, twoResultSrc)
	want := tpucc(t, "", "run", in, "--backend", "pjrt", "--seed", "3")
	want.want(t, 0, want.stdout, "")
	tpucc(t, "", "run", exe, "--seed", "3").want(t, 0, want.stdout, "")
	tpucc(t, "", "run", exe, "--seed", "3", "--device", "pjrt").want(t, 0, want.stdout, "")
	tpucc(t, "", "run", in, "--seed", "3", "--device", "pjrt").want(t, 0, want.stdout, "")

	w := writeNPY(t, dir, "w.npy", npy.Of([]int64{3}, []float32{1, 2, 3}))
	want = tpucc(t, "", "run", in, "--backend", "pjrt", "--input", "w="+w)
	tpucc(t, "", "run", exe, "--input", "w="+w).want(t, 0, want.stdout, "")

	out := filepath.Join(dir, "out")
	tpucc(t, "", "run", exe, "--input", "w="+w, "--output-dir", out, "--save-inputs").want(t, 0, "", "")
	noFiles(t, out, "arg0.npy", "arg1.npy", "result0.npy", "result1.npy", manifestName)
}

// rewriteManifest writes a copy of the artifact at path with its manifest
// changed by edit.
func rewriteManifest(t *testing.T, path, name string, edit func(*pjrt.Manifest)) string {
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
	edit(&a.Manifest)
	out, err := os.Create(filepath.Join(filepath.Dir(path), name))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := a.WriteTo(out); err != nil {
		t.Fatal(err)
	}
	return out.Name()
}

// TestRunExecutableDraws: a matmul's weight is drawn as the .tir run draws
// it (the manifest's draw_limits), so both runs on one --seed agree exactly.
func TestRunExecutableDraws(t *testing.T) {
	dir := t.TempDir()
	in, exe := buildCPUExecutable(t, dir, sugarSrc)
	want := tpucc(t, "", "run", in, "--device", "pjrt", "--seed", "5")
	want.want(t, 0, want.stdout, "")
	tpucc(t, "", "run", exe, "--seed", "5").want(t, 0, want.stdout, "")
}

func TestRunExecutableRefuses(t *testing.T) {
	dir := t.TempDir()
	_, exe := buildCPUExecutable(t, dir, twoResultSrc)
	b, err := pjrt.Open(pjrt.BackendName)
	if err != nil {
		t.Fatal(err)
	}
	plugin := b.Client().Plugin()
	ver := rewriteManifest(t, exe, "ver.pjrt", func(m *pjrt.Manifest) { m.PlatformVersion = "cpu 9" })
	kind := rewriteManifest(t, exe, "kind.pjrt", func(m *pjrt.Manifest) { m.DeviceKind = "gpu" })
	api := rewriteManifest(t, exe, "api.pjrt", func(m *pjrt.Manifest) { m.PJRTAPI = "0.1" })
	tpu := rewriteManifest(t, exe, "tpu.pjrt", func(m *pjrt.Manifest) { m.Platform = "tpu" })
	typ := rewriteManifest(t, exe, "type.pjrt", func(m *pjrt.Manifest) { m.Entry.Params[0] = "f32[2,x]" })
	lim := rewriteManifest(t, exe, "lim.pjrt", func(m *pjrt.Manifest) { m.Entry.DrawLimits[1] = 1e9 })
	tgt := rewriteManifest(t, exe, "tgt.pjrt", func(m *pjrt.Manifest) { m.Target, m.Topology = "tpu-v6e", "v6e:2x2" })
	wrong := writeNPY(t, dir, "w.npy", npy.Of([]int64{4}, []float32{1, 2, 3, 4}))
	out := filepath.Join(dir, "out")
	cases := []struct {
		args []string
		code int
		line string
	}{
		{[]string{ver}, 1, ver + `: error: manifest platform_version "cpu 9" does not match the plugin's "cpu" (` + plugin.Path + ")"},
		{[]string{kind}, 1, kind + `: error: manifest device_kind "gpu" does not match the plugin's "cpu" (` + plugin.Path + ")"},
		{[]string{api}, 1, api + `: error: manifest pjrt_api "0.1" does not match the plugin's "` + plugin.Version() + `" (` + plugin.Path + ")"},
		{[]string{tpu}, 1, tpu + ": error: pjrt-tpu: " + pjrt.ErrNoTPU.Error()},
		{[]string{typ}, 1, typ + `: error: manifest entry params[0]: type "f32[2,x]": dimension "x" is not a static size`},
		{[]string{lim}, 1, lim + ": error: manifest entry draw_limits[1]: 1e+09 is not in (0, 2]"},
		{[]string{tgt}, 1, tgt + `: error: manifest target "tpu-v6e", topology "v6e:2x2": platform cpu has target cpu and no topology`},
		{[]string{exe, "--input", "w=" + wrong, "--output-dir", out}, 1, wrong + ": error: input %w wants f32[3], file has f32[4]"},
		{[]string{exe, "--dim", "B=2"}, 2, "tpucc run: --dim applies to .tir programs; " + exe + " is a compiled executable"},
		{[]string{exe, "--precision", "highest"}, 2, "tpucc run: --precision applies to .tir programs; " + exe + " is a compiled executable"},
		{[]string{exe, "--device", "tpu"}, 1, exe + ": error: manifest platform cpu runs on the pjrt backend, --device tpu on pjrt-tpu"},
		{[]string{exe, "--device", "abacus"}, 2, `tpucc run: --device: unknown device "abacus" (want one of cpu, pjrt, tpu, gpu)`},
		{[]string{exe, "--entry", "g"}, 2, "tpucc run: --entry g: " + exe + " holds @f only"},
		{[]string{exe, "--input", "v=" + wrong}, 2, "tpucc run: --input v: @f has no parameter %v (it has %x, %w)"},
	}
	for _, c := range cases {
		r := tpucc(t, "", append([]string{"run"}, c.args...)...)
		if r.code != c.code || r.stdout != "" || !hasLine(r.stderr, c.line) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d and the line %q", c.args, r.code, r.stdout, r.stderr, c.code, c.line)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused run created %s", out)
	}
}

// TestPrecisionFlag: build --precision writes it on every product; run
// --precision on XLA:CPU (f32 whatever it says) gives the default's
// numbers; an unknown precision is a usage error of both.
func TestPrecisionFlag(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "m.tir", []byte(`func @f(%x: f32[2,3], %w: f32[3,4]) -> f32[2,4] {
  %y = dot_general %x, %w {lhs_batch=[], lhs_contract=[1], rhs_batch=[], rhs_contract=[0]} : f32[2,4]
  return %y
}
`))
	r := tpucc(t, "", "build", in, "--precision", "highest")
	if n := strings.Count(r.stdout, "precision = [HIGHEST, HIGHEST]"); r.code != 0 || n != 1 || strings.Contains(r.stdout, "DEFAULT") {
		t.Errorf("build --precision highest: exit %d, %d products at HIGHEST:\n%s%s", r.code, n, r.stdout, r.stderr)
	}
	want := tpucc(t, "", "run", in, "--device", "pjrt").stdout
	tpucc(t, "", "run", in, "--device", "pjrt", "--precision", "highest").want(t, 0, want, "")
	for _, cmd := range []string{"build", "run"} {
		tpucc(t, "", cmd, in, "--precision", "fast").want(t, 2, "", "tpucc "+cmd+": --precision fast: want one of default, high, highest")
	}
}

func TestRunDevice(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "m.tir", []byte(twoResultSrc))
	tpucc(t, "", "run", in, "--device", "cpu").want(t, 0, tpucc(t, "", "run", in).stdout, "")
	tpucc(t, "", "run", in, "--device", "gpu", "--backend", "reference").want(t, 2, "", "tpucc run: --backend and --device are exclusive")
	tpucc(t, "", "run", in, "--device", "x").want(t, 2, "", `tpucc run: --device: unknown device "x" (want one of cpu, pjrt, tpu, gpu)`)
	if !backend.HasTPU() {
		tpucc(t, "", "run", in, "--device", "tpu").want(t, 1, "", "tpucc run: --device tpu: "+pjrt.ErrNoTPU.Error())
	}
	if !backend.HasGPU() {
		tpucc(t, "", "run", in, "--device", "gpu").want(t, 1, "", "tpucc run: --device gpu: "+pjrt.ErrNoGPU.Error())
	}
}

// TestDevicePJRTKeepsSemantics: tpucc run --device pjrt, and an executable
// built for XLA:CPU, give reduce_max over rows with NaN as the reference
// executor does (docs/ops.md: max propagates NaN), with no XLA_FLAGS.
func TestDevicePJRTKeepsSemantics(t *testing.T) {
	dir := t.TempDir()
	in, exe := buildCPUExecutable(t, dir, `func @f(%x: f32[4,4]) -> f32[4] {
  %a = reduce_max %x {axes=[1]} : f32[4]
  return %a
}
`)
	nan := float32(math.NaN())
	x := writeNPY(t, dir, "x.npy", npy.Of([]int64{4, 4}, []float32{1, 7, 3, 2, 15, nan, 4, 0, nan, 22, 1, 1, 31, 3, 3, 3}))
	want := "result0: f32[4] = [7.0, nan, nan, 31.0]\n"
	tpucc(t, "", "run", in, "--input", "x="+x, "--backend", "reference").want(t, 0, want, "")
	tpucc(t, "", "run", in, "--input", "x="+x, "--device", "pjrt").want(t, 0, want, "")
	tpucc(t, "", "run", exe, "--input", "x="+x).want(t, 0, want, "")
}

// flipExecutable writes a copy of the artifact at path with one byte of its
// executable flipped and the manifest's hash recomputed, keeping its
// signature: what an attacker who cannot sign can make.
func flipExecutable(t *testing.T, path, name string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := pjrt.ReadArtifact(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	a.Executable[len(a.Executable)/2] ^= 0x10
	var out bytes.Buffer
	if _, err := a.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	return writeFile(t, filepath.Dir(path), name, out.Bytes())
}

// TestExecutableSignature: with a key, build signs the executable file and
// run refuses one that is unsigned, signed with another key or changed
// after signing (a byte of the executable flipped, the manifest's hash
// recomputed); with no key, any file runs, as trusted code; a key file
// others may read is refused, and nothing is written.
func TestExecutableSignature(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config")) // no default key
	t.Setenv(pjrt.EnvKeyFile, "")
	in, plain := buildCPUExecutable(t, dir, twoResultSrc)
	want := tpucc(t, "", "run", plain, "--seed", "3")
	want.want(t, 0, want.stdout, "")

	key := writeFile(t, dir, "pjrt.key", []byte("0123456789abcdef0123456789abcdef"))
	os.Chmod(key, 0o600)
	t.Setenv(pjrt.EnvKeyFile, key)
	signed := filepath.Join(dir, "signed.pjrt")
	tpucc(t, "", "build", in, "--target", "cpu", "--emit=executable", "-o", signed).want(t, 0, "", "")
	tpucc(t, "", "run", signed, "--seed", "3").want(t, 0, want.stdout, "")
	flipped := flipExecutable(t, signed, "flipped.pjrt")
	other := writeFile(t, dir, "other.key", []byte("another key of thirty-two bytes!"))
	os.Chmod(other, 0o600)
	for _, c := range []struct{ file, key, line string }{
		{plain, key, plain + ": error: not signed, and the key " + key + " is set: refusing to run it (rebuild it with tpucc build --emit=executable)"},
		{flipped, key, flipped + ": error: signature does not match the key in " + key + ": refusing to run it"},
		{signed, other, signed + ": error: signature does not match the key in " + other + ": refusing to run it"},
	} {
		t.Setenv(pjrt.EnvKeyFile, c.key)
		tpucc(t, "", "run", c.file, "--seed", "3").want(t, 1, "", c.line)
	}

	t.Setenv(pjrt.EnvKeyFile, "")
	tpucc(t, "", "run", signed, "--seed", "3").want(t, 0, want.stdout, "")
	tpucc(t, "", "run", plain, "--seed", "3").want(t, 0, want.stdout, "")

	os.Chmod(key, 0o644)
	t.Setenv(pjrt.EnvKeyFile, key)
	bad := key + ": error: signing key: mode 0644 lets others read or write it; want 0600 (chmod 600 it)"
	tpucc(t, "", "run", signed, "--seed", "3").want(t, 1, "", bad)
	out := filepath.Join(dir, "refused.pjrt")
	tpucc(t, "", "build", in, "--target", "cpu", "--emit=executable", "-o", out).want(t, 1, "", bad)
	if _, err := os.Stat(out); err == nil {
		t.Errorf("build with a refused key wrote %s", out)
	}
	t.Setenv(pjrt.EnvKeyFile, filepath.Join(dir, "missing.key"))
	tpucc(t, "", "run", signed).want(t, 1, "", filepath.Join(dir, "missing.key")+": error: signing key: no such file or directory")
}
