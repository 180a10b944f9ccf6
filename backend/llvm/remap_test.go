package llvm

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/frontend/tir"
)

// TestReshapeRuns: reshapes that split, merge, regroup and pad with
// size-1 dimensions, alone and behind a transpose, agree with the
// reference executor (reshapeIndex maps each run of dimensions alone).
func TestReshapeRuns(t *testing.T) {
	b := testBackend(t)
	for _, c := range []struct{ from, to, perm string }{
		{"6,8", "2,3,8", ""},
		{"2,3,8", "6,8", ""},
		{"6,4", "4,6", ""},
		{"3,1,5", "15", ""},
		{"15", "3,1,5", ""},
		{"4,5", "4,5,1", ""},
		{"4,5,1", "1,20", ""},
		{"1,4,1,5,1", "2,10", ""},
		{"2,0,3", "0,6", ""},
		{"2,12,20", "2,3,4,4,5", ""},
		{"2,3,4,5", "2,4,15", "0,2,1,3"}, // heads merged back after attention
	} {
		t.Run(c.from+"->"+c.to, func(t *testing.T) {
			body := fmt.Sprintf("  %%y = reshape %%x : f32[%s]\n  %%z = mul %%y, %%y : f32[%s]\n  return %%z\n", c.to, c.to)
			from := c.from
			if c.perm != "" {
				d := strings.Split(c.from, ",")
				p := strings.Split(c.perm, ",")
				var td []string
				for _, i := range p {
					td = append(td, d[i[0]-'0'])
				}
				from = strings.Join(td, ",")
				body = fmt.Sprintf("  %%t = transpose %%x {perm=[%s]} : f32[%s]\n", c.perm, from) + strings.Replace(body, "reshape %x", "reshape %t", 1)
			}
			src := fmt.Sprintf("func @f(%%x: f32[%s]) -> f32[%s] {\n%s}\n", c.from, c.to, body)
			m, err := tir.Parse("reshape.tir", []byte(src))
			if err != nil {
				t.Fatalf("%v\n%s", err, src)
			}
			differential(t, b, m, m.Entry(), 1)
		})
	}
}

// TestConcatParts: a concat read by its kernel at the kernel's own index
// has each operand's part computed alone, without a select per element:
// along the last axis (an empty operand included) and along an axis with
// a loop of its own, one loop per part; along a dimension of the kernel's
// rows (a prefill's attention blocks put back in token order), one branch
// per part in each row. So does a concat along the last axis read through
// a transpose that keeps that axis last, a broadcast and a reshape
// (rotary embedding's rotate_half under the heads' transpose: lastConcat).
// A concat read through a transpose that moves its axis still selects.
// All agree with the reference executor.
func TestConcatParts(t *testing.T) {
	b := testBackend(t)
	src := `func @f(%a: f32[4,6,3], %b: f32[4,6,0], %c: f32[4,6,5], %d: f32[4,6,8], %e: f32[32,2,3], %g: f32[1,5,24], %h: f32[1,11,24], %q: f32[6,8]) -> (f32[4,6,8], f32[8,4,6], f32[8,6,3], f32[32,5,3], f32[1,21,24], f32[2,3,4,8]) {
  %x = concat %a, %b, %c {axis=2} : f32[4,6,8]
  %y = mul %x, %d : f32[4,6,8]
  %z = add %y, %x : f32[4,6,8]
  %t = transpose %x {perm=[2,0,1]} : f32[8,4,6]
  %w = neg %t : f32[8,4,6]
  %v = concat %a, %a {axis=0} : f32[8,6,3]
  %m = slice %e {limit=[32,1,3], start=[0,0,0]} : f32[32,1,3]
  %n = concat %e, %m, %e {axis=1} : f32[32,5,3]
  %o = neg %n : f32[32,5,3]
  %p = concat %g, %h, %g {axis=1} : f32[1,21,24]
  %qb = broadcast %q {dims=[1,2]} : f32[4,6,8]
  %r = mul %x, %qb : f32[4,6,8]
  %rt = transpose %r {perm=[1,0,2]} : f32[6,4,8]
  %rr = reshape %rt : f32[2,3,4,8]
  return %z, %w, %v, %o, %p, %rr
}
`
	m, err := tir.Parse("concat.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	x := differential(t, b, m, m.Entry(), 1)
	text := x.plan.gen.text()
	var selects []int
	for _, st := range x.plan.steps {
		if !strings.HasPrefix(st.what, "loop") {
			continue
		}
		body := text[strings.Index(text, "@"+st.name+"("):]
		body = body[:strings.Index(body, "\n}")]
		selects = append(selects, strings.Count(body, " select "))
	}
	// the kernels of %z, %w, %v, %o, %p and %rr, in plan order: only %w selects
	if len(selects) != 6 || selects[1] == 0 || selects[0]+selects[2]+selects[3]+selects[4]+selects[5] != 0 {
		t.Fatalf("selects per loop kernel %v, want only the second's non-zero:\n%s", selects, x.plan)
	}
}

// TestNestRows: a nest's kernel range is its leading dimensions taken as
// one index, as few as give 16 rows, never the innermost of two or more;
// a batch of one is split across the cores like any other, and agrees
// with the reference.
func TestNestRows(t *testing.T) {
	for _, c := range []struct {
		dims       []int64
		rows, lead int64
	}{
		{nil, 1, 0},
		{[]int64{5}, 5, 1},
		{[]int64{1, 4096}, 1, 1},
		{[]int64{1, 16, 512, 512}, 16, 2},
		{[]int64{8, 128, 256}, 1024, 2},
		{[]int64{32, 128, 128}, 32, 1},
		{[]int64{1, 2, 3, 4}, 6, 3},
		{[]int64{1, 0, 7}, 0, 2},
	} {
		rows, lead := nestRows(c.dims)
		if rows != c.rows || int64(lead) != c.lead {
			t.Errorf("nestRows(%v) = %d, %d; want %d, %d", c.dims, rows, lead, c.rows, c.lead)
		}
	}
	// The broadcast keeps the elementwise kernel a nest: one that reads
	// everything at its own index is a flat loop, its range its elements
	// (the third step, TestDedupeFlatAcrossShapes).
	src := "func @f(%a: f32[1,16,64,64], %c: f32[64], %d: f32[1,8,64,64]) -> (f32[1,16,64,64], f32[1,16,64], f32[1,8,64,64]) {\n" +
		"  %b = broadcast %c {dims=[3]} : f32[1,16,64,64]\n" +
		"  %s = add %a, %b : f32[1,16,64,64]\n  %t = exp %s : f32[1,16,64,64]\n" +
		"  %r = reduce_sum %a {axes=[3]} : f32[1,16,64]\n  %u = exp %d : f32[1,8,64,64]\n  return %t, %r, %u\n}\n"
	m, err := tir.Parse("nest.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	x := differential(t, testBackend(t), m, m.Entry(), 5)
	var rows []int64
	for _, st := range x.plan.steps {
		rows = append(rows, st.rows)
	}
	if want := []int64{16, 16, 32768}; !slices.Equal(rows, want) {
		t.Errorf("kernel rows %v, want %v\n%s", rows, want, x.plan)
	}
}
