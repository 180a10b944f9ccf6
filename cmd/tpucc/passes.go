package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/tpucc/tpucc/passes"
)

var passesCommand = &command{
	name:    "passes",
	summary: "list the default pass pipeline, in order, with what each pass does",
	about: `Prints the passes tpucc build runs, in order, one a line: the name (as --disable and
--dump-after take it) and what the pass does.
`,
	run: cmdPasses,
}

func cmdPasses(e *env, p *parsed) error {
	pipeline := passes.Default()
	width := 0
	for _, ps := range pipeline {
		width = max(width, len(ps.Name))
	}
	var b strings.Builder
	for _, ps := range pipeline {
		fmt.Fprintf(&b, "%-*s  %s\n", width, ps.Name, ps.Doc)
	}
	if _, err := io.WriteString(e.stdout, b.String()); err != nil {
		return osError("<stdout>", err)
	}
	return nil
}
