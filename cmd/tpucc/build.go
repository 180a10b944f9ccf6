package main

import (
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/lower/stablehlo"
	"github.com/tpucc/tpucc/passes"
)

// targets are the values --target accepts. Only the name is recorded for now: the target
// descriptions (backend/tpu) come later, and until they do no pass reads a target, so the
// StableHLO is the same for every one of them.
var targets = []string{"tpu-v5e", "tpu-v5p", "tpu-v6e", "tpu-v7x", "tpu-v4", "cpu"}

// defaultTarget is cpu: it needs no target-specific rewriting, which is exactly what build
// does today, so the default's output will not change when TPU targets start to matter.
const defaultTarget = "cpu"

var buildCommand = &command{
	name:    "build",
	file:    true,
	summary: "compile MODEL.tir to StableHLO text",
	about: `Parses MODEL.tir, runs the default pass pipeline (tpucc passes) over it and lowers the entry
function to a StableHLO module whose func.func public @main takes the entry's parameters in
order; functions it calls become private functions of the module. The output file appears
only when the whole build succeeds.

--target is accepted and recorded, but there are no target models yet: the StableHLO is the
same for every target.
`,
	flags: []flagSpec{
		{name: "o", kind: valueFlag, arg: "FILE", doc: "write the StableHLO to FILE; without -o, or with -o -, it goes to standard output"},
		{name: "target", kind: valueFlag, arg: "T", doc: strings.Join(targets, ", ") + " (default " + defaultTarget + ");\nrecorded only, the output does not depend on it yet"},
		{name: "dump-after", kind: valueFlag, arg: "RE|all", doc: "after each pass whose name matches the regular expression RE (all: every pass),\nwrite each function to --dump-dir as FUNC_NN_PASS.tir (NN: the pass's place in\nthe pipeline; FUNC_00_input.tir is the program before the first pass)"},
		{name: "dump-dir", kind: valueFlag, arg: "DIR", doc: "directory for --dump-after's files, created if missing (default: the current directory)"},
		{name: "disable", kind: listFlag, arg: "P,...", doc: "skip these passes (names as tpucc passes lists them); may be repeated"},
		{name: "verify-each", kind: boolFlag, doc: "verify the program after every pass, not only at the end"},
		entryFlag,
	},
	run: cmdBuild,
}

// buildConfig is build's command line, checked before any file is read.
type buildConfig struct {
	file   string
	out    string // "" for standard output
	target string // recorded for the target models to come; nothing reads it yet
	entry  string
	opts   passes.Options
}

func parseBuild(p *parsed) (*buildConfig, error) {
	c := &buildConfig{file: p.positional[0], out: p.value("o", "-"), target: p.value("target", defaultTarget), entry: p.value("entry", "")}
	if c.out == "-" {
		c.out = ""
	}
	if !slices.Contains(targets, c.target) {
		return nil, usagef("unknown target %q (want one of %s)", c.target, strings.Join(targets, ", "))
	}
	if p.has("dump-after") {
		re := p.value("dump-after", "")
		if re == "all" {
			re = ""
		}
		rx, err := regexp.Compile(re)
		if err != nil {
			return nil, usagef("--dump-after: bad regular expression: %v", err)
		}
		c.opts.DumpAfter = rx
		c.opts.DumpDir = p.value("dump-dir", "") // passes: "" is the current directory
	} else if p.has("dump-dir") {
		return nil, usagef("--dump-dir without --dump-after dumps nothing; add --dump-after=all or a pass name")
	}
	known := passes.Names()
	for _, list := range p.list("disable") {
		for name := range strings.SplitSeq(list, ",") {
			if name = strings.TrimSpace(name); name == "" {
				continue
			}
			if !slices.Contains(known, name) {
				return nil, usagef("--disable: unknown pass %q (tpucc passes lists them)", name)
			}
			c.opts.Disable = append(c.opts.Disable, name)
		}
	}
	c.opts.VerifyEach = p.flag("verify-each")
	c.opts.Eval = cpu.Folder{}
	return c, nil
}

func cmdBuild(e *env, p *parsed) error {
	c, err := parseBuild(p)
	if err != nil {
		return err
	}
	name, m, err := load(e, c.file)
	if err != nil {
		return err
	}
	f, err := entry(m, name, c.entry)
	if err != nil {
		return err
	}
	if err := passes.Run(m, passes.Default(), c.opts); err != nil {
		return diag(name, err)
	}
	text, err := stablehlo.Lower(m, stablehlo.Options{Entry: f.Name})
	if err != nil {
		return diag(name, err)
	}
	if c.out == "" {
		if _, err := io.WriteString(e.stdout, text); err != nil {
			return osError("<stdout>", err)
		}
		return nil
	}
	out, err := newPending(c.out, func(w io.Writer) error {
		_, err := io.WriteString(w, text)
		return err
	})
	if err != nil {
		return err
	}
	return commit([]*pending{out})
}
