package llvm

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// clangLinkOutput is what clang 14 on Debian prints for linkLine's question.
const clangLinkOutput = `Debian clang version 14.0.6
Target: x86_64-pc-linux-gnu
Thread model: posix
InstalledDir: /usr/bin
 "/usr/bin/ld" "--hash-style=both" "-shared" "-o" "tpucc.link.out" "/lib/x86_64-linux-gnu/crti.o" "-L/lib/x86_64-linux-gnu" "tpucc.link.in" "-lm" "-lc" "/lib/x86_64-linux-gnu/crtn.o"
`

// TestParseLinkLine: the linker's command is read from clang's -### output
// with its quoting undone, and anything but one command holding each
// marker once (after -o for the output) falls back to the driver (nil).
func TestParseLinkLine(t *testing.T) {
	want := []string{"/usr/bin/ld", "--hash-style=both", "-shared", "-o", "tpucc.link.out", "/lib/x86_64-linux-gnu/crti.o",
		"-L/lib/x86_64-linux-gnu", "tpucc.link.in", "-lm", "-lc", "/lib/x86_64-linux-gnu/crtn.o"}
	if got := parseLinkLine(clangLinkOutput); !slices.Equal(got, want) {
		t.Fatalf("parseLinkLine:\n got %q\nwant %q", got, want)
	}
	escaped := ` "/opt/my \"ld\"" "-o" "tpucc.link.out" "-L/a\\b" "tpucc.link.in"` + "\n"
	if got, want := parseLinkLine(escaped), []string{`/opt/my "ld"`, "-o", "tpucc.link.out", `-L/a\b`, "tpucc.link.in"}; !slices.Equal(got, want) {
		t.Fatalf("escapes:\n got %q\nwant %q", got, want)
	}
	for name, out := range map[string]string{
		"two jobs":      ` "/usr/bin/clang-14" "-cc1" "x.c"` + "\n" + ` "/usr/bin/ld" "-o" "tpucc.link.out" "tpucc.link.in"`,
		"no command":    "clang: error: unknown argument\n",
		"relative":      ` "ld" "-o" "tpucc.link.out" "tpucc.link.in"`,
		"no input":      ` "/usr/bin/ld" "-o" "tpucc.link.out" "-lm"`,
		"input twice":   ` "/usr/bin/ld" "-o" "tpucc.link.out" "tpucc.link.in" "tpucc.link.in"`,
		"output not -o": ` "/usr/bin/ld" "tpucc.link.out" "tpucc.link.in"`,
		"unquoted":      ` "/usr/bin/ld" -o "tpucc.link.out" "tpucc.link.in"`,
		"unterminated":  ` "/usr/bin/ld" "-o" "tpucc.link.out" "tpucc.link.in`,
	} {
		if got := parseLinkLine(out); got != nil {
			t.Errorf("%s: got %q, want nil", name, got)
		}
	}
}

// TestDirectLinkSameBytes: on this host clang names its linker, and the
// object linked by running it directly has the bytes the driver's link
// gives (aliases included), so objects cached before are what it builds.
func TestDirectLinkSameBytes(t *testing.T) {
	b := testBackend(t)
	tc := b.tc
	if tc.ld.get() == nil {
		t.Fatalf("clang's link line was not understood: links run through the driver")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "k.ll")
	obj := filepath.Join(dir, "k.o")
	ir := "define weak void @kxpart(float* %p) {\n  store float 1.0, float* %p\n  ret void\n}\n"
	if err := os.WriteFile(src, []byte(ir), 0o600); err != nil {
		t.Fatal(err)
	}
	var cpu toolCPU
	if err := runClang(tc, compileArgs(obj, src), &cpu); err != nil {
		t.Fatal(err)
	}
	direct, driver := filepath.Join(dir, "direct.so"), filepath.Join(dir, "driver.so")
	if err := linkObjects(tc, direct, []string{obj}, []string{"k1=kxpart"}, &cpu); err != nil {
		t.Fatal(err)
	}
	viaDriver := *tc
	viaDriver.ld = nil
	if prog, _ := viaDriver.linkCommand(driver, nil, nil); prog != tc.clang {
		t.Fatalf("without a link line the link runs %s, want clang", prog)
	}
	if err := linkObjects(&viaDriver, driver, []string{obj}, []string{"k1=kxpart"}, &cpu); err != nil {
		t.Fatal(err)
	}
	a, err := os.ReadFile(direct)
	if err != nil {
		t.Fatal(err)
	}
	d, err := os.ReadFile(driver)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, d) {
		t.Fatalf("direct link: %d bytes, the driver's: %d bytes, and they differ", len(a), len(d))
	}
	if !bytes.Contains(a, []byte("k1\x00")) {
		t.Fatalf("the alias k1 is not in the linked object")
	}
}

// TestDirectLinkError: a failed link names the linker and says why.
func TestDirectLinkError(t *testing.T) {
	b := testBackend(t)
	dir := t.TempDir()
	var cpu toolCPU
	err := linkObjects(b.tc, filepath.Join(dir, "x.so"), nil, []string{"k1=kxmissing"}, &cpu)
	prog, _ := b.tc.linkCommand("", nil, nil)
	want := "llvm: " + filepath.Base(prog) + " failed: exit status 1\n"
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "kxmissing") {
		t.Fatalf("got %v, want %q and ld's words on kxmissing", err, want)
	}
}

// TestToolPastFileSizeLimit: a build tool killed by SIGXFSZ (what the
// linker gets writing past RLIMIT_FSIZE) fails with an error that says a
// file was too large; another signal's error does not.
func TestToolPastFileSizeLimit(t *testing.T) {
	var cpu toolCPU
	err := runBuild("/bin/sh", []string{"-c", "kill -XFSZ $$"}, &cpu)
	want := "llvm: sh failed: signal: file size limit exceeded: a file it wrote grew past the file size limit: file too large\n"
	if err == nil || err.Error() != want {
		t.Errorf("SIGXFSZ: %v; want %q", err, want)
	}
	err = runBuild("/bin/sh", []string{"-c", "kill -TERM $$"}, &cpu)
	if want := "llvm: sh failed: signal: terminated\n"; err == nil || err.Error() != want {
		t.Errorf("SIGTERM: %v; want %q", err, want)
	}
}
