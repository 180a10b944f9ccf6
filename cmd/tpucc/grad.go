package main

import (
	"io"

	"github.com/tpucc/tpucc/autodiff"
	"github.com/tpucc/tpucc/ir"
)

var gradCommand = &command{
	name:    "grad",
	file:    true,
	summary: "write the vector-Jacobian product (reverse-mode gradient) of MODEL.tir as .tir",
	about: `Differentiates the entry function @F of MODEL.tir and writes a module whose only function is
@F_vjp(<F's parameters>, <one cotangent per float result, in order>) ->
(<F's results>, <one gradient per float parameter, in parameter order>). Integer and i1
parameters get no gradient and integer results take no cotangent. The gradient of
parameter x is Σ ct·∂result/∂x summed over the results: with a scalar loss and cotangent
1.0 it is the loss's gradient. Calls are differentiated through their callees, which the
output inlines. The output is .tir that tpucc run, build and grad read back.

The rules per op, the conventions at ties (max, reduce_max, clamp) and what is refused
are in docs/TRAINING.md. Symbolic dimensions must be given sizes with --dim.
`,
	flags: []flagSpec{
		{name: "o", kind: valueFlag, arg: "FILE", doc: "write the .tir to FILE; without -o, or with -o -, it goes to standard output"},
		dimFlag,
		entryFlag,
	},
	run: cmdGrad,
}

func cmdGrad(e *env, p *parsed) error {
	dims, err := parseDims(p.list("dim"))
	if err != nil {
		return err
	}
	out := p.value("o", "-")
	name, m, err := load(e, p.positional[0])
	if err != nil {
		return err
	}
	if len(dims) > 0 {
		if err := bindDims(m, name, dims); err != nil {
			return err
		}
	}
	f, err := entry(m, name, p.value("entry", ""))
	if err != nil {
		return err
	}
	vjp, err := autodiff.ModuleOf(f)
	if err != nil {
		return diag(name, err)
	}
	text := ir.Print(vjp)
	if out == "-" {
		if _, err := io.WriteString(e.stdout, text); err != nil {
			return osError("<stdout>", err)
		}
		return nil
	}
	w, err := newPending(out, func(w io.Writer) error {
		_, err := io.WriteString(w, text)
		return err
	})
	if err != nil {
		return err
	}
	return commit([]*pending{w})
}
