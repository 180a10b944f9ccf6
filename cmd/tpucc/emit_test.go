package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/pjrt"
)

// TestBuildExecutable compiles through libtpu (.venv-tpu, no TPU needed) and
// reads the artifact back.
func TestBuildExecutable(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "m.tir", []byte(expSrc))
	out := filepath.Join(dir, "m.pjrt")
	tpucc(t, "", "build", in, "--target", "tpu-v6e", "--topology", "v6e:2x2", "--emit=executable", "-o", out).
		want(t, 0, "", "")
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a, err := pjrt.ReadArtifact(f)
	if err != nil {
		t.Fatal(err)
	}
	m := a.Manifest
	if m.Entry.Name != "f" || len(m.Entry.Params) != 1 || m.Entry.Params[0] != "f32[2,3]" ||
		len(m.Entry.Results) != 1 || m.Entry.Results[0] != "f32[2,3]" {
		t.Errorf("entry signature %+v", m.Entry)
	}
	if m.Target != "tpu-v6e" || m.Topology != "v6e:2x2" || m.Platform != "tpu" || m.PJRTAPI == "" || m.DeviceKind != "TPU v6 lite" {
		t.Errorf("manifest %+v", m)
	}
	hlo := tpucc(t, "", "build", in, "--target", "tpu-v6e")
	if m.StableHLOSHA256 != pjrt.SHA256([]byte(hlo.stdout)) {
		t.Errorf("manifest's StableHLO hash is not that of tpucc build's output")
	}
	if !backend.HasTPU() {
		tpucc(t, "", "run", out).want(t, 1, "", out+": error: pjrt-tpu: "+pjrt.ErrNoTPU.Error())
	}
}

func TestBuildExecutableErrors(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "m.tir", []byte(expSrc))
	out := filepath.Join(dir, "m.pjrt")
	cases := []struct {
		args []string
		code int
		line string
	}{
		{[]string{"--target", "tpu-v6e", "--emit=executable", "-o", out}, 2,
			"tpucc build: --emit=executable needs --topology, such as v6e:2x2"},
		{[]string{"--target", "tpu-v6e", "--topology", "v5e:2x2", "--emit=executable", "-o", out}, 2,
			"tpucc build: --topology v5e:2x2 is not a tpu-v6e topology (want v6e:...)"},
		{[]string{"--target", "cpu", "--topology", "v6e:2x2", "--emit=executable", "-o", out}, 2,
			"tpucc build: --topology applies to TPU targets only"},
		{[]string{"--target", "tpu-v6e", "--topology", "v6e:2x2", "--emit=executable"}, 2,
			"tpucc build: --emit=executable writes a binary file: give it with -o"},
		{[]string{"--emit=obj"}, 2, "tpucc build: unknown --emit \"obj\" (want one of hlo, executable)"},
		{[]string{"--target", "tpu-v6e", "--topology", "v6e:9x9", "--emit=executable", "-o", out}, 2,
			"tpucc build: --topology v6e:9x9 is not a tpu-v6e topology; want one of v6e:2x2, v6e:2x4, v6e:4x4, v6e:4x8, v6e:8x8, v6e:8x16, v6e:16x16"},
		{[]string{"--target", "tpu-v7x", "--topology", "v7x:2x2x1", "--emit=executable", "-o", out}, 2,
			"tpucc build: --topology v7x:2x2x1 is not a tpu-v7x topology (want tpu7x:...)"},
		{[]string{"--target", "tpu-v7x", "--emit=executable", "-o", out}, 2,
			"tpucc build: --emit=executable needs --topology, such as tpu7x:2x2x1"},
	}
	for _, c := range cases {
		r := tpucc(t, "", append([]string{"build", in}, c.args...)...)
		if r.code != c.code || !hasLine(r.stderr, c.line) {
			t.Errorf("%v: exit %d, stderr %q; want %d and the line %q", c.args, r.code, r.stderr, c.code, c.line)
		}
	}
	t.Setenv(pjrt.EnvPlugin, filepath.Join(dir, "none.so"))
	r := tpucc(t, "", "build", in, "--target", "tpu-v6e", "--topology", "v6e:2x2", "--emit=executable", "-o", out)
	r.want(t, 1, "", in+": pjrt: plugin "+filepath.Join(dir, "none.so")+": no such file or directory")
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed build left %s behind", out)
	}
}

// TestBuildExecutableQuiet: a successful build for a TPU prints nothing,
// though libtpu logs warnings to standard error as it starts off a TPU VM.
// libtpu logs once per process, so the build runs in a child process.
func TestBuildExecutableQuiet(t *testing.T) {
	if args := os.Getenv("TPUCC_TEST_CHILD_ARGS"); args != "" {
		os.Exit(run(strings.Split(args, "\t"), strings.NewReader(""), os.Stdout, os.Stderr))
	}
	dir := t.TempDir()
	in := writeFile(t, dir, "m.tir", []byte(expSrc))
	for _, c := range []struct{ target, topology, out string }{{"tpu-v6e", "v6e:2x2", "v6e.pjrt"}, {"tpu-v7x", "tpu7x:2x2x1", "v7x.pjrt"}} {
		args := []string{"build", in, "--target", c.target, "--topology", c.topology, "--emit=executable", "-o", filepath.Join(dir, c.out)}
		cmd := exec.Command(os.Args[0], "-test.run=^TestBuildExecutableQuiet$")
		cmd.Env = append(os.Environ(), "TPUCC_TEST_CHILD_ARGS="+strings.Join(args, "\t"))
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || stdout.String() != "" || stderr.String() != "" {
			t.Errorf("tpucc %s: %v, stdout %q, stderr %q; want success and no output", strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		if _, err := os.Stat(filepath.Join(dir, c.out)); err != nil {
			t.Errorf("tpucc %s wrote no file: %v", strings.Join(args, " "), err)
		}
	}
}

// hasLine reports whether s has line as one of its lines: libtpu writes its
// own warnings to standard error around ours.
func hasLine(s, line string) bool {
	for l := range strings.SplitSeq(s, "\n") {
		if l == line {
			return true
		}
	}
	return false
}
