package main

import (
	"io"

	"github.com/tpucc/tpucc/ir"
)

var fmtCommand = &command{
	name:    "fmt",
	file:    true,
	summary: "print MODEL.tir in canonical form to standard output",
	about: `Parses MODEL.tir and prints it as the canonical printer writes it: sugar (numpy broadcasting,
matmul) expanded into core ops, every result type written, attributes sorted. Comments are
not kept. Printing the output again gives the same text. Nothing is printed if the program
has an error.
`,
	run: cmdFmt,
}

func cmdFmt(e *env, p *parsed) error {
	_, m, err := load(e, p.positional[0])
	if err != nil {
		return err
	}
	if _, err := io.WriteString(e.stdout, ir.Print(m)); err != nil {
		return osError("<stdout>", err)
	}
	return nil
}
