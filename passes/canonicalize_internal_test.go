package passes

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// TestRulesHavePatterns checks that every rule of the canonicalize table is a
// function whose doc comment states its pattern, and that rule names are
// unique (they are the statistics' keys). It also prints the table, as
// `go test -v -run TestRulesHavePatterns` is how to read what canonicalize does.
func TestRulesHavePatterns(t *testing.T) {
	docs := map[string]string{}
	files, _ := filepath.Glob("canonicalize*.go")
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Doc != nil {
				docs[fd.Name.Name] = fd.Doc.Text()
			}
		}
	}
	seen := map[string]bool{}
	for _, ru := range canonicalRules {
		if seen[ru.name] {
			t.Errorf("rule name %s is used twice", ru.name)
		}
		seen[ru.name] = true
		var fnv reflect.Value
		switch {
		case ru.fn != nil && ru.multi == nil:
			fnv = reflect.ValueOf(ru.fn)
		case ru.multi != nil && ru.fn == nil:
			fnv = reflect.ValueOf(ru.multi)
		default:
			t.Errorf("rule %s must set exactly one of fn and multi", ru.name)
			continue
		}
		full := runtime.FuncForPC(fnv.Pointer()).Name()
		fn := full[strings.LastIndex(full, ".")+1:]
		var patterns []string
		for _, line := range strings.Split(docs[fn], "\n") {
			if strings.HasPrefix(line, "Pattern: ") {
				patterns = append(patterns, strings.TrimPrefix(line, "Pattern: "))
			}
		}
		if len(patterns) == 0 {
			t.Errorf("rule %s (func %s) has no // Pattern: comment", ru.name, fn)
		}
		for _, p := range patterns {
			t.Logf("%-24s %s", ru.name, p)
		}
	}
}

// TestCanonicalizeCap installs two rules that undo each other and checks
// that the driver stops at the cap with an error instead of looping.
func TestCanonicalizeCap(t *testing.T) {
	saved := canonicalIndex
	defer func() { canonicalIndex = saved }()
	flip := func(to ir.Op) func(r *rewriter, in *ir.Instr) *ir.Value {
		return func(r *rewriter, in *ir.Instr) *ir.Value {
			return r.builder().Op1(to, nil, in.Args[0])
		}
	}
	canonicalIndex = indexRules([]rule{
		{"exp-to-log", []ir.Op{ir.OpExp}, flip(ir.OpLog), nil},
		{"log-to-exp", []ir.Op{ir.OpLog}, flip(ir.OpExp), nil},
	})
	m := ir.NewModule("")
	f := m.NewFunc("f", []string{"x"}, []ir.Type{ir.Scalar(ir.F32)}, []ir.Type{ir.Scalar(ir.F32)}, ir.Pos{})
	b := ir.NewBuilder(f)
	b.Return(b.Op1(ir.OpExp, nil, f.Params[0]))
	c := NewContext("canonicalize", nil)
	changed, err := canonicalize(f, c)
	if want := "canonicalize did not reach a fixed point in 16 rounds"; err == nil || err.Error() != want || !changed {
		t.Fatalf("changed %v, err %v; want true, %s", changed, err, want)
	}
	if got := c.Stats.String(); got != "canonicalize/exp-to-log: 8\ncanonicalize/log-to-exp: 8\n" {
		t.Errorf("stats:\n%s", got)
	}
}

// TestSingleResultRuleSkipsMultiResult: a one-value rule indexed at top_k is
// not tried there (in.Result() used to panic on a two-result instruction).
func TestSingleResultRuleSkipsMultiResult(t *testing.T) {
	saved := canonicalIndex
	defer func() { canonicalIndex = saved }()
	tried := 0
	canonicalIndex = indexRules([]rule{{"forward", []ir.Op{ir.OpTopK}, func(r *rewriter, in *ir.Instr) *ir.Value {
		tried++
		return in.Args[0]
	}, nil}})
	m, err := tir.Parse("t.tir", []byte(`func @f(%x: f32[3,1]) -> (f32[3,1], i32[3,1]) {
  %v, %i = top_k %x {k=1}
  return %v, %i
}
`))
	if err != nil {
		t.Fatal(err)
	}
	c := NewContext("canonicalize", nil)
	changed, err := canonicalize(m.Funcs[0], c)
	if changed || err != nil || tried != 0 {
		t.Fatalf("changed %v, err %v, tried %d; want false, nil, 0", changed, err, tried)
	}
}
