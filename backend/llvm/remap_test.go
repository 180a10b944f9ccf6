package llvm

import (
	"fmt"
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
