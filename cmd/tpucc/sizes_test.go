package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildSizeOverflow: a type whose element count or size in bytes overflows int64 is
// an error at the value, with or without --report, and no module is written. A huge
// type that fits still builds: XLA types can be large.
func TestBuildSizeOverflow(t *testing.T) {
	dir := t.TempDir()
	prog := func(file, typ string) string {
		return writeFile(t, dir, file, []byte("func @f(%x: "+typ+") -> "+typ+" {\n  %y = exp %x\n  return %y\n}\n"))
	}
	count := prog("count.tir", "f32[4611686018427387904,4]")
	bytes := prog("bytes.tir", "f32[2305843009213693952,2]")
	padded := prog("padded.tir", "f32[1152921504606846976,1]")
	fits := prog("fits.tir", "f32[1099511627776,1024]")
	out := filepath.Join(dir, "out.hlo")
	countErr := count + ":1:9: error: %x: the element count of f32[4611686018427387904,4] overflows int64\n" +
		count + ":2:3: error: %y: the element count of f32[4611686018427387904,4] overflows int64\n"
	bytesErr := bytes + ":1:9: error: %x: the size in bytes of f32[2305843009213693952,2] (4611686018427387904 elements of 4 bytes) overflows int64\n" +
		bytes + ":2:3: error: %y: the size in bytes of f32[2305843009213693952,2] (4611686018427387904 elements of 4 bytes) overflows int64\n"
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{count}, countErr},
		{[]string{count, "--report"}, countErr},
		{[]string{bytes, "--target", "tpu-v6e"}, bytesErr},
		{[]string{bytes, "--report"}, bytesErr},
		{[]string{padded, "--target", "tpu-v6e", "--report"},
			padded + ":1:9: error: %x: the size in bytes of f32[1152921504606846976,1]{1,0:T(8,128)} on tpu-v6e, padded to its tiles, overflows int64\n"},
	} {
		r := tpucc(t, "", append([]string{"build", "-o", out}, c.args...)...)
		if r.code != exitProgram || r.stdout != "" || r.stderr != c.stderr {
			t.Errorf("build %s: exit %d, stdout %q, stderr:\n%s\nwant exit %d, stderr:\n%s",
				strings.Join(c.args, " "), r.code, r.stdout, r.stderr, exitProgram, c.stderr)
		}
	}
	noFiles(t, dir, "bytes.tir", "count.tir", "fits.tir", "padded.tir")

	// Without --report the padded size is nobody's business: the StableHLO has no layouts.
	tpucc(t, "", "build", padded, "--target", "tpu-v6e", "-o", out).want(t, 0, "", "")
	r := tpucc(t, "", "build", fits, "--report")
	if r.code != 0 || !strings.Contains(r.stdout, "tensor<1099511627776x1024xf32>") ||
		!strings.Contains(r.stderr, "memory: parameters 4503599627370496 + constants 0 + peak activations 4503599627370496") {
		t.Errorf("build of a huge type that fits: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
