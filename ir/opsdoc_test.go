package ir

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/internal/golden"
)

// TestOpsDoc keeps docs/ops.md's op tables equal to the op table; after changing
// an op, run go test ./ir -run TestOpsDoc -update.
func TestOpsDoc(t *testing.T) {
	const path = "../docs/ops.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- generated from ir/op.go by TestOpsDoc: do not edit below -->\n"
	head, _, ok := strings.Cut(string(data), marker)
	if !ok {
		t.Fatalf("%s lacks the marker line %q", path, marker)
	}
	want := head + marker + opsTable()
	if golden.Updating() {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(data) != want {
		t.Errorf("%s is out of date: run go test ./ir -run TestOpsDoc -update", path)
	}
}

func opsTable() string {
	groups := []struct {
		g    Group
		name string
	}{
		{GroupUnary, "Unary elementwise"}, {GroupBinary, "Binary elementwise"},
		{GroupCompare, "Compare and select"}, {GroupShape, "Shape"},
		{GroupContraction, "Contraction"}, {GroupReduction, "Reduction"},
		{GroupIndexing, "Indexing"}, {GroupComposite, "Composite (decomposed when lowered)"},
		{GroupOther, "Other"},
	}
	var b strings.Builder
	for _, g := range groups {
		fmt.Fprintf(&b, "\n### %s\n\n| op | operands | result type written | meaning |\n| --- | --- | --- | --- |\n", g.name)
		for _, o := range Ops() {
			info := o.Info()
			if info.Group != g.g {
				continue
			}
			args := fmt.Sprint(info.Args)
			if info.Args < 0 {
				args = fmt.Sprintf("%d or more", info.MinArgs)
			}
			written := "optional"
			if info.NeedsType {
				written = "required"
			}
			if o == OpReturn {
				written = "none"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", info.Name, args, written, strings.ReplaceAll(info.Doc, "|", "\\|"))
		}
	}
	return b.String()
}
