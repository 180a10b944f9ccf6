package llvm

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// streamPair compiles src twice on one backend: with streaming stores for
// every loop kernel that may have them (target.stream of one byte) and with
// none. The streamed plan must say so and its IR carry non-temporal stores
// and the fence.
func streamPair(t *testing.T, src string) (m *ir.Module, streamed, plain *Executable) {
	t.Helper()
	b := testBackend(t)
	b.stream = 1
	m, _, streamed = compileSrc(t, b, src)
	b.stream = 0
	_, _, plain = compileSrc(t, b, src)
	text := streamed.plan.gen.text()
	if !strings.Contains(streamed.plan.String(), "(streamed)") || !strings.Contains(text, "!nontemporal") || !strings.Contains(text, "call void @llvm.x86.sse.sfence()") {
		t.Fatalf("not streamed:\n%s", streamed.plan)
	}
	if strings.Contains(plain.plan.String(), "(streamed)") || strings.Contains(plain.plan.gen.text(), "nontemporal") {
		t.Fatalf("streamed with target.stream 0:\n%s", plain.plan)
	}
	return m, streamed, plain
}

// streamedSameBits runs both executables on in and requires their results bit for
// bit equal (the arithmetic is the same; only the stores differ), and the
// streamed one's within the oracle's tolerance of the reference executor.
func streamedSameBits(t *testing.T, m *ir.Module, streamed, plain *Executable, in []*backend.Buffer) {
	t.Helper()
	got, err := streamed.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	want, err := plain.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		g, w := got[i].Bytes(), want[i].Bytes()
		if !bytes.Equal(g, w) {
			at := 0
			for at < len(g) && at < len(w) && g[at] == w[at] {
				at++
			}
			t.Fatalf("result %d streamed differs from the ordinary stores' from byte %d of %d", i, at, len(w))
		}
	}
	agree(t, streamed, m, m.Entry(), in)
}

// TestStreamedLoopKernels: loop kernels with streaming stores compute what
// the same kernels with ordinary stores do, bit for bit, and agree with the
// reference executor: rows of 1000 f32 (4000 bytes, so every row after the
// first starts inside a line: the head before the first line boundary, the
// whole lines, the tail, and a last chunk shorter than streamChunk), one
// dimension split in any range by the pool, several outputs of one
// kernel, and outputs of 1, 2 and 8 bytes an element.
func TestStreamedLoopKernels(t *testing.T) {
	cases := []struct{ name, src string }{
		{"chain rows", `func @f(%x: f32[7,1000], %bias: f32[1000], %res: f32[7,1000]) -> f32[7,1000] {
  %s = sigmoid %x
  %m = mul %x, %s
  %b = add %m, %bias
  %y = add %b, %res
  return %y
}
`},
		{"one dimension, three outputs", `func @f(%x: f32[5003], %y: f32[5003]) -> (f32[5003], f32[5003], f32[5003]) {
  %e = exp %x
  %s = mul %x, %y
  %l = silu %y
  return %e, %s, %l
}
`},
		{"three dimensions", `func @f(%x: f32[16,3,300], %y: f32[300]) -> f32[16,3,300] {
  %z = mul %x, %y
  %w = tanh %z
  return %w
}
`},
		{"bf16 and bool outputs", `func @f(%x: f32[6,700], %y: f32[6,700]) -> (bf16[6,700], i1[6,700]) {
  %m = mul %x, %y
  %b = convert %m : bf16[6,700]
  %c = compare %x, %y {dir=gt}
  return %b, %c
}
`},
		{"i64 output", `func @f(%x: i64[4,900], %y: i64[4,900]) -> i64[4,900] {
  %z = add %x, %y
  return %z
}
`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, streamed, plain := streamPair(t, c.src)
			for seed := range int64(3) {
				streamedSameBits(t, m, streamed, plain, cpu.RandomInputs(m.Entry(), seed))
			}
		})
	}
}

// TestStreamedSigmoidEdges: exp, sigmoid and silu stored with streaming
// stores at the edges of exp's range, infinities, NaN and subnormal inputs
// are the ordinary kernel's bits and agree with the reference executor.
func TestStreamedSigmoidEdges(t *testing.T) {
	xs := append(expfInputs(), 1e-40, -1e-40, 1e-45, -1e-45, 20, -20, 1e10, -1e10, 16.6, -88.5)
	n := len(xs)
	src := fmt.Sprintf("func @f(%%x: f32[%d]) -> (f32[%d], f32[%d], f32[%d]) {\n  %%e = exp %%x\n  %%s = sigmoid %%x\n  %%l = silu %%x\n  return %%e, %%s, %%l\n}\n", n, n, n, n)
	m, streamed, plain := streamPair(t, src)
	vals := make([]float64, n)
	for i, v := range xs {
		vals[i] = float64(v)
	}
	streamedSameBits(t, m, streamed, plain, []*backend.Buffer{backend.FromFloats(ir.Tensor(ir.F32, int64(n)), vals...)})
}

// TestStreamChoice: a loop kernel streams from target.stream bytes of
// output on, not one byte below, and never over an innermost dimension
// shorter than streamMinRun; streamMinBytes is the last-level cache the
// threads share, a default where sysfs has none, and never off x86.
func TestStreamChoice(t *testing.T) {
	// The bias's broadcast keeps the kernel's two dimensions (a kernel
	// reading everything at its own index is flattened into one).
	const src = `func @f(%%x: f32[%d,%d], %%b: f32[%d]) -> f32[%d,%d] {
  %%y = add %%x, %%b
  return %%y
}
`
	for _, c := range []struct {
		rows, cols, stream int64
		want               bool
	}{
		{64, 1024, 64 * 1024 * 4, true},
		{64, 1024, 64*1024*4 + 1, false},
		{4096, streamMinRun, 1, true},
		{4096, streamMinRun - 1, 1, false},
		{64, 1024, 0, false},
	} {
		b := testBackend(t)
		b.stream = c.stream
		_, _, x := compileSrc(t, b, fmt.Sprintf(src, c.rows, c.cols, c.cols, c.rows, c.cols))
		if got := strings.Contains(x.plan.String(), "(streamed)"); got != c.want {
			t.Errorf("f32[%d,%d] with target.stream %d: streamed %v, want %v\n%s", c.rows, c.cols, c.stream, got, c.want, x.plan)
		}
	}
	for _, c := range []struct {
		features string
		l3       int64
		threads  int
		want     int64
	}{
		{"fpu sse sse2 avx512f", 16 << 20, 2, 32 << 20},
		{"fpu sse sse2", 0, 8, streamDefaultBytes},
		{"fp asimd", 16 << 20, 2, 0},
		{"unknown", 0, 1, 0},
	} {
		if got := streamMinBytes(c.features, c.l3, c.threads); got != c.want {
			t.Errorf("streamMinBytes(%q, %d, %d) = %d, want %d", c.features, c.l3, c.threads, got, c.want)
		}
	}
}
