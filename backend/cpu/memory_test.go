package cpu

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// TestCheckMemoryCountsWhatIsHeld: CheckMemory's count of a program is
// exactly the bytes of the buffers the executor makes for its values, dtype
// by dtype (i1 and u8 one byte, bf16 and f16 two, f32 four, f64 and i64
// eight). It once counted an i8 at 1 byte while the executor held 8.
func TestCheckMemoryCountsWhatIsHeld(t *testing.T) {
	src := `func @f(%x: bf16[3,5], %y: i8[7]) -> (f32[3,5], i1[3,5], u8[7], f64[3,5], i64[7], f16[3,5]) {
  %a = convert %x : f32[3,5]
  %c = compare %a, %a {dir=lt} : i1[3,5]
  %d = convert %y : u8[7]
  %e = convert %a : f64[3,5]
  %g = convert %y : i64[7]
  %h = convert %x : f16[3,5]
  return %a, %c, %d, %e, %g, %h
}`
	m, err := tir.Parse("m.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	f := m.Funcs[0]
	args := RandomInputs(f, 1)
	res, err := Run(m, f, args)
	if err != nil {
		t.Fatal(err)
	}
	held := int64(0)
	for _, b := range append(append([]*backend.Buffer{}, args...), res...) {
		held += int64(len(b.Bytes()))
	}
	// 30 + 7 (parameters) + 60 + 15 + 7 + 120 + 56 + 30 (results).
	if held != 325 {
		t.Fatalf("the executor holds %d bytes, want 325", held)
	}
	if err := CheckMemory(m, f, held); err != nil {
		t.Errorf("limit %d: %v", held, err)
	}
	err = CheckMemory(m, f, held-1)
	if want := fmt.Sprintf("@f needs %d bytes for its tensors in all; the limit is %d bytes", held, held-1); err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestCheckMemoryI8Broadcast is the program that passed the check and died
// with "fatal error: out of memory": an i8[] broadcast to i8[60000,60000]
// is 3.6e9 bytes, counted and held alike. Nothing here allocates it.
func TestCheckMemoryI8Broadcast(t *testing.T) {
	src := `func @f(%x: i8[]) -> i8[60000,60000] {
  %b = broadcast %x {dims=[]} : i8[60000,60000]
  return %b
}`
	m, err := tir.Parse("big.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	f := m.Funcs[0]
	if err := CheckMemory(m, f, 3600000001); err != nil {
		t.Errorf("3600000001 bytes: %v", err)
	}
	// The total adds the 1-byte parameter.
	err = CheckMemory(m, f, 3600000000)
	want := "@f needs 3600000001 bytes for its tensors in all; the limit is 3600000000 bytes"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	err = CheckMemory(m, f, 3599999999)
	want = "big.tir:2:3: error: %b needs 3600000000 bytes (i8[60000,60000]); the limit is 3599999999 bytes"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	// Run refuses a version over the default limit cleanly (16 GiB at most).
	huge := `func @f(%x: i8[]) -> i8[200000,200000] {
  %b = broadcast %x {dims=[]} : i8[200000,200000]
  return %b
}`
	m, err = tir.Parse("huge.tir", []byte(huge))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(m, m.Funcs[0], []*backend.Buffer{backend.FromInts(ir.Scalar(ir.I8), 1)})
	want = "huge.tir:2:3: error: %b needs 40000000000 bytes (i8[200000,200000]); the limit is " + strconv.FormatInt(DefaultMemoryLimit(), 10) + " bytes"
	if err == nil || err.Error() != want {
		t.Errorf("Run: got %v, want %s", err, want)
	}
}

// TestCheckMemoryCountsScratch is issue 29's i8 [1,K]x[K,1] product, which
// passed the check and died mapping 64 GiB (64 rows of K int64 scratch) at
// K=2^27; here at K=2^18. The check counts its tensors and its kernel's
// scratch, the total is exactly the limit it needs, and Run allocates
// within it (it allocated 128 MiB for 512 KiB of tensors).
func TestCheckMemoryCountsScratch(t *testing.T) {
	const k = 1 << 18
	src := fmt.Sprintf("func @f(%%a: i8[1,%d], %%b: i8[%d,1]) -> i8[1,1] {\n  %%y = matmul %%a, %%b : i8[1,1]\n  return %%y\n}\n", k, k)
	m, err := tir.Parse("k.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	f := m.Entry()
	scratch := scratchBytes(f.Body.Instrs[0])
	// The rhs [K,1] is already [n=1, k] in memory: no copy. One chunk of
	// lhs and rhs and the block's sums, in int64 words.
	if want := int64(8 * (2*dotChunk + 5*dotBlock)); scratch != want {
		t.Errorf("scratch %d bytes, want %d", scratch, want)
	}
	need := 2*k + 1 + scratch
	if err := CheckMemory(m, f, need); err != nil {
		t.Errorf("limit %d: %v", need, err)
	}
	err = CheckMemory(m, f, need-1)
	want := fmt.Sprintf("@f needs %d bytes for its tensors and %d bytes of scratch for dot_general; the limit is %d bytes", 2*k+1, scratch, need-1)
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	args := RandomInputs(f, 1)
	var res []*backend.Buffer
	used := allocated(func() { res, err = Run(m, f, args) })
	if err != nil {
		t.Fatal(err)
	}
	if limit := need + need/8 + 64<<10; used > limit {
		t.Errorf("Run allocated %d bytes, the check counted %d", used, need)
	}
	// Σ a·b over i8 inputs in [-8, 8], wrapped once into i8.
	s := int64(0)
	a, b := backend.Elems[int8](args[0]), backend.Elems[int8](args[1])
	for i := range a {
		s += int64(a[i]) * int64(b[i])
	}
	if got := backend.Elems[int8](res[0])[0]; got != int8(s) {
		t.Errorf("product %d, want %d", got, int8(s))
	}
}

// TestCheckMemoryScratchAlone: an instruction whose kernel's scratch alone
// exceeds the limit is refused at its position: argsort of an i8[2^26]
// keeps a key and a position (12 bytes) per element of the line, 768 MiB,
// three times its result. Nothing here allocates it.
func TestCheckMemoryScratchAlone(t *testing.T) {
	src := `func @f(%x: i8[67108864]) -> i32[67108864] {
  %o = argsort %x {axis=0} : i32[67108864]
  return %o
}`
	m, err := tir.Parse("sort.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	err = CheckMemory(m, m.Entry(), 1<<29)
	want := "sort.tir:2:3: error: argsort needs 805306368 bytes of scratch in the executor; the limit is 536870912 bytes"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
