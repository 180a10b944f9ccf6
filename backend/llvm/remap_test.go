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

// TestConcatParts: a concat along the last axis, read by the kernel at its
// own index, runs one loop per operand (an empty operand included); the
// same concat read through a transpose, and a concat along another axis,
// still select per element. All agree with the reference executor.
func TestConcatParts(t *testing.T) {
	b := testBackend(t)
	src := `func @f(%a: f32[4,6,3], %b: f32[4,6,0], %c: f32[4,6,5], %d: f32[4,6,8]) -> (f32[4,6,8], f32[4,6,8], f32[8,6,3]) {
  %x = concat %a, %b, %c {axis=2} : f32[4,6,8]
  %y = mul %x, %d : f32[4,6,8]
  %z = add %y, %x : f32[4,6,8]
  %t = transpose %x {perm=[1,0,2]} : f32[6,4,8]
  %u = transpose %t {perm=[1,0,2]} : f32[4,6,8]
  %w = add %u, %z : f32[4,6,8]
  %v = concat %a, %a {axis=0} : f32[8,6,3]
  return %z, %w, %v
}
`
	m, err := tir.Parse("concat.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	x := differential(t, b, m, m.Entry(), 1)
	if want := 3; strings.Count(x.plan.String(), "loop") != want {
		t.Fatalf("want %d loop kernels:\n%s", want, x.plan)
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
	src := "func @f(%a: f32[1,16,64,64], %b: f32[1,16,64,64]) -> (f32[1,16,64,64], f32[1,16,64]) {\n" +
		"  %s = add %a, %b : f32[1,16,64,64]\n  %t = exp %s : f32[1,16,64,64]\n" +
		"  %r = reduce_sum %a {axes=[3]} : f32[1,16,64]\n  return %t, %r\n}\n"
	m, err := tir.Parse("nest.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	x := differential(t, testBackend(t), m, m.Entry(), 5)
	var rows []int64
	for _, st := range x.plan.steps {
		rows = append(rows, st.rows)
	}
	if want := []int64{16, 16}; !slices.Equal(rows, want) {
		t.Errorf("kernel rows %v, want %v\n%s", rows, want, x.plan)
	}
}
