package llvm

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/llir/llvm/ir/types"
)

// partsProgram has two kernels: an elementwise op (op) feeding a matrix
// product; two programs that differ only in op share the product's kernel.
func partsProgram(op string) string {
	return fmt.Sprintf("func @f(%%x: f32[16,32], %%y: f32[16,32], %%w: f32[32,24]) -> f32[16,24] {\n"+
		"  %%s = %s %%x, %%y\n  %%d = dot_general %%s, %%w {lhs_contract=[1], rhs_contract=[0]} : f32[16,24]\n  return %%d\n}\n", op)
}

// TestKernelFoundInCachedPart: a second program that has one of the first
// one's kernels links that kernel's cached part and compiles only its new
// kernel, and both run as the reference executor does.
func TestKernelFoundInCachedPart(t *testing.T) {
	b := testBackend(t)
	a := compileText(t, "a.tir", []byte(partsProgram("add")))
	x := differential(t, b, a.Module, a.Entry, 1)
	if got := [3]int{x.Times.Kernels, x.Times.KernelsCached, x.Times.Parts}; got != [3]int{2, 0, min(2, gomaxprocs())} {
		t.Fatalf("first program: kernels, cached, parts = %v", got)
	}
	parts := PartRuns()
	s := compileText(t, "s.tir", []byte(partsProgram("sub")))
	x = differential(t, b, s.Module, s.Entry, 2)
	if got := [3]int{x.Times.Kernels, x.Times.KernelsCached, x.Times.Parts}; got != [3]int{2, 1, 1} {
		t.Fatalf("second program: kernels, cached, parts = %v, want [2 1 1]", got)
	}
	if n := PartRuns() - parts; n != 1 {
		t.Fatalf("second program compiled %d parts, want 1", n)
	}
	if x.Times.ClangCPU <= 0 {
		t.Fatalf("clang's CPU time not counted: %v", x.Times.ClangCPU)
	}
	if x = differential(t, b, s.Module, s.Entry, 2); !x.Times.Cached || x.Times.ClangCPU != 0 {
		t.Fatalf("the second program again: cached %v, clang's CPU %v; want the cached object", x.Times.Cached, x.Times.ClangCPU)
	}
}

// TestCorruptPartRebuilt: a cached part whose bytes no longer match their
// record is never linked: its kernels are compiled again, and the part
// written in its place verifies and is found by the next program.
func TestCorruptPartRebuilt(t *testing.T) {
	b := testBackend(t)
	a := compileText(t, "a.tir", []byte(partsProgram("add")))
	differential(t, b, a.Module, a.Entry, 1)
	objs, _ := filepath.Glob(filepath.Join(b.cache.dir, "*.o"))
	if len(objs) != min(2, gomaxprocs()) {
		t.Fatalf("%d parts in the cache, want %d", len(objs), min(2, gomaxprocs()))
	}
	for _, o := range objs {
		if err := os.WriteFile(o, []byte("\x7fELF not the part that was built"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The whole program's object must miss too, or no part is looked at.
	for _, so := range kernelObjects(b) {
		os.Remove(so)
	}
	x := differential(t, b, a.Module, a.Entry, 1)
	if got := [2]int{x.Times.KernelsCached, x.Times.Parts}; got != [2]int{0, len(objs)} {
		t.Fatalf("after corruption: cached, parts = %v, want [0 %d]", got, len(objs))
	}
	for _, o := range objs {
		if _, err := verifyObject(o, o+".sha256"); err != nil {
			t.Fatalf("rebuilt part does not verify: %v", err)
		}
	}
	for _, so := range kernelObjects(b) {
		os.Remove(so)
	}
	x = differential(t, b, a.Module, a.Entry, 1)
	if got := [2]int{x.Times.KernelsCached, x.Times.Parts}; got != [2]int{2, 0} {
		t.Fatalf("third build: cached, parts = %v, want [2 0]", got)
	}
}

// TestKernelKeyFlags: a kernel's and a part's keys change with clang's
// flags and version; the same inputs give the same key.
func TestKernelKeyFlags(t *testing.T) {
	tc := &toolchain{version: "clang 14", features: "avx2"}
	text := "define void @kernel() {\n  ret void\n}\n"
	k, p := tc.kernelKey(text), tc.partKey(text)
	if tc.kernelKey(text) != k || tc.partKey(text) != p {
		t.Fatal("the same kernel gave two keys")
	}
	saved := clangFlags
	defer func() { clangFlags = saved }()
	clangFlags = append(slices.Clone(saved), "-ffast-math")
	if tc.kernelKey(text) == k || tc.partKey(text) == p {
		t.Fatal("another flag kept the key")
	}
	clangFlags = saved
	tc.version = "clang 15"
	if tc.kernelKey(text) == k || tc.partKey(text) == p {
		t.Fatal("another clang kept the key")
	}
}

// TestCanonicalKernel: a kernel's canonical text names its loop hints, not
// the numbers its module gave them, and holds the functions it calls and
// no others; a metadata reference that is not a hint (nor the streaming
// stores' mark) keeps the whole module around it.
func TestCanonicalKernel(t *testing.T) {
	g1, g2 := newGen(false), newGen(false)
	g1.loopID("llvm.loop.interleave.count", 4)
	g1.loopID("llvm.loop.unroll.count", 4)
	g2.loopID("llvm.loop.unroll.count", 4)
	g2.loopID("llvm.loop.interleave.count", 4)
	for _, g := range []*gen{g1, g2} {
		g.declare("llvm.sqrt.f32", types.Float, types.Float)
		g.declare("llvm.sin.f32", types.Float, types.Float)
	}
	g2.declare("llvm.cos.f32", types.Float, types.Float)
	body := func(unroll int) string {
		return fmt.Sprintf("  %%r = call float @llvm.sqrt.f32(float %%x)\n  br label %%1, !llvm.loop !%d\n", unroll)
	}
	canon := func(g *gen, body string) string {
		texts := map[string]string{}
		for _, f := range g.m.Funcs {
			texts[f.Name()] = f.LLString()
		}
		return g.canonical(body, calls(body), texts, g.text())
	}
	c1, c2 := canon(g1, body(2)), canon(g2, body(0))
	want := "declare float @llvm.sqrt.f32(float %0)\n  %r = call float @llvm.sqrt.f32(float %x)\n  br label %1, !llvm.loop !{llvm.loop.unroll.count 4}\n"
	if c1 != want || c2 != want {
		t.Fatalf("canonical texts:\n%s\n%s\nwant\n%s", c1, c2, want)
	}
	if c := canon(g1, body(7)); !strings.HasPrefix(c, g1.text()) {
		t.Fatalf("an unknown reference, canonical text:\n%s", c)
	}
	// The streaming stores' mark (stream.go), numbered apart in two modules.
	g3, g4 := newGen(false), newGen(false)
	g3.nontemporal()
	g4.loopID("llvm.loop.unroll.count", 4)
	g4.nontemporal()
	store := func(g *gen) string {
		return fmt.Sprintf("  store <16 x float> %%v, <16 x float>* %%p, align 64, !nontemporal !%d\n", g.ntNode.MetadataID)
	}
	want = "  store <16 x float> %v, <16 x float>* %p, align 64, !nontemporal !{nontemporal}\n"
	if c3, c4 := canon(g3, store(g3)), canon(g4, store(g4)); c3 != want || c4 != want {
		t.Fatalf("canonical texts of a streaming store:\n%s\n%s\nwant\n%s", c3, c4, want)
	}
}

// TestBalance: the costliest kernels go first, each to the lightest part.
func TestBalance(t *testing.T) {
	var us []unit
	for i, size := range []int{3, 10, 1, 8, 9} {
		us = append(us, unit{name: fmt.Sprintf("k%d", i), body: strings.Repeat("x", size), cost: size})
	}
	var got [][]string
	for _, g := range balance(us, 2) {
		var names []string
		for _, u := range g {
			names = append(names, u.name)
		}
		got = append(got, names)
	}
	if want := "[[k1 k0 k2] [k4 k3]]"; fmt.Sprint(got) != want {
		t.Fatalf("balance = %v, want %s", got, want)
	}
	if n := len(balance(us[:1], 4)); n != 1 {
		t.Fatalf("one kernel in %d parts", n)
	}
}

func gomaxprocs() int { return runtime.GOMAXPROCS(0) }

// TestKernelRecordWrongPart: kernel records that name a part without their
// kernels (a valid object, another program's) fail the link, and the build
// starts again without the cache: every kernel compiled, results right.
func TestKernelRecordWrongPart(t *testing.T) {
	b := testBackend(t)
	other := compileText(t, "e.tir", []byte("func @f(%x: f32[8,16]) -> f32[8,16] {\n  %r = exp %x\n  return %r\n}\n"))
	differential(t, b, other.Module, other.Entry, 1)
	parts, _ := filepath.Glob(filepath.Join(b.cache.dir, "*.o"))
	if len(parts) != 1 {
		t.Fatalf("%d parts after a one-kernel program, want 1", len(parts))
	}
	wrong := strings.TrimSuffix(filepath.Base(parts[0]), ".o")
	a := compileText(t, "a.tir", []byte(partsProgram("add")))
	differential(t, b, a.Module, a.Entry, 1)
	records, _ := filepath.Glob(filepath.Join(b.cache.dir, "*.kernel"))
	if len(records) != 3 {
		t.Fatalf("%d kernel records, want 3", len(records))
	}
	for _, r := range records {
		if err := os.WriteFile(r, []byte(wrong), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, so := range kernelObjects(b) {
		os.Remove(so)
	}
	x := differential(t, b, a.Module, a.Entry, 1)
	if got := [3]int{x.Times.Kernels, x.Times.KernelsCached, x.Times.Parts}; got != [3]int{2, 0, min(2, gomaxprocs())} {
		t.Fatalf("kernels, cached, parts = %v, want [2 0 %d]", got, min(2, gomaxprocs()))
	}
}
