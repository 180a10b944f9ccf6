package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/tpucc/tpucc/frontend/tir"
)

// chain is one function of n adds of f32[4], each reading the one before and
// the parameter %y: the shape whose build time was cubic.
func chain(n int) string {
	var b strings.Builder
	b.WriteString("func @chain(%x: f32[4], %y: f32[4]) -> f32[4] {\n  %v0 = add %x, %y\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  %%v%d = add %%v%d, %%y\n", i, i-1)
	}
	fmt.Fprintf(&b, "  return %%v%d\n}\n", n-1)
	return b.String()
}

// wide is one function of n/4 independent lanes, each squaring its own
// f32[8,128] parameter, scaling it by a weight shared with 7 other lanes,
// taking tanh and summing rows, then a balanced tree of adds joining the
// lanes' f32[8] sums: about n instructions, most of them side by side.
func wide(n int) string {
	lanes := max(n/4, 2)
	var b strings.Builder
	b.WriteString("func @wide(")
	for i := 0; i < lanes; i++ {
		fmt.Fprintf(&b, "%%a%d: f32[8,128], ", i)
	}
	for w := 0; w < (lanes+7)/8; w++ {
		if w > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%%w%d: f32[8,128]", w)
	}
	b.WriteString(") -> f32[8] {\n")
	var level []string
	for i := 0; i < lanes; i++ {
		fmt.Fprintf(&b, "  %%m%d = mul %%a%d, %%a%d\n  %%s%d = mul %%m%d, %%w%d\n", i, i, i, i, i, i/8)
		fmt.Fprintf(&b, "  %%t%d = tanh %%s%d\n  %%r%d = reduce_sum %%t%d {axes=[1]}\n", i, i, i, i)
		level = append(level, fmt.Sprintf("%%r%d", i))
	}
	k := 0
	for len(level) > 1 {
		var next []string
		for i := 0; i+1 < len(level); i += 2 {
			fmt.Fprintf(&b, "  %%j%d = add %s, %s\n", k, level[i], level[i+1])
			next = append(next, fmt.Sprintf("%%j%d", k))
			k++
		}
		if len(level)%2 == 1 {
			next = append(next, level[len(level)-1])
		}
		level = next
	}
	fmt.Fprintf(&b, "  return %s\n}\n", level[0])
	return b.String()
}

// blockSource is examples/transformer_block.tir's function: its parameters
// (name and type, the input %x first) and its body's lines.
type blockSource struct {
	params []string // "%name: type", the input first
	body   []string
	result string // the returned value, without %
	typ    string // its type
}

var valueRef = regexp.MustCompile(`%([A-Za-z_][A-Za-z0-9_]*)`)

func loadBlock(file string) (*blockSource, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	m, err := tir.Parse(file, src)
	if err != nil {
		return nil, err
	}
	f := m.Entry()
	b := &blockSource{typ: f.Results[0].String()}
	for _, p := range f.Params {
		b.params = append(b.params, "%"+p.Name+": "+p.Type.String())
	}
	if f.Params[0].Name != "x" {
		return nil, fmt.Errorf("%s: the block's first parameter must be %%x", file)
	}
	inBody := false
	for _, line := range strings.Split(string(src), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "func "):
			inBody = true
		case !inBody || t == "" || strings.HasPrefix(t, "//"):
		case t == "}":
			inBody = false
		case strings.HasPrefix(t, "return "):
			b.result = strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(t, "return")), "%")
		default:
			b.body = append(b.body, t)
		}
	}
	if b.result == "" {
		return nil, fmt.Errorf("%s: no return in the block", file)
	}
	return b, nil
}

// stack is the block applied layers times in one function, each layer with
// its own weights (an unrolled model): layer L's values and weights are
// suffixed _L, and its %x is the previous layer's result.
func (b *blockSource) stack(layers int) string {
	var out strings.Builder
	out.WriteString("func @stack(" + b.params[0])
	for l := 0; l < layers; l++ {
		for _, p := range b.params[1:] {
			name, typ, _ := strings.Cut(p, ":")
			fmt.Fprintf(&out, ", %s_%d:%s", name, l, typ)
		}
	}
	fmt.Fprintf(&out, ") -> %s {\n", b.typ)
	for l := 0; l < layers; l++ {
		rename := func(ref string) string {
			name := ref[1:]
			switch {
			case name != "x":
				return fmt.Sprintf("%%%s_%d", name, l)
			case l == 0:
				return "%x"
			default:
				return fmt.Sprintf("%%%s_%d", b.result, l-1)
			}
		}
		for _, line := range b.body {
			out.WriteString("  " + valueRef.ReplaceAllStringFunc(line, rename) + "\n")
		}
	}
	fmt.Fprintf(&out, "  return %%%s_%d\n}\n", b.result, layers-1)
	return out.String()
}
