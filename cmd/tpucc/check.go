package main

var checkCommand = &command{
	name:    "check",
	file:    true,
	summary: "parse and verify MODEL.tir; prints nothing when it is valid",
	about: `Parses and verifies MODEL.tir and reports every problem found, as FILE:LINE:COL: error:
MESSAGE lines on standard error. A valid program prints nothing and exits with status 0.
A file must define at least one function to be valid, since build and run need an entry.
A file named *.mlir is read as StableHLO MLIR text (JAX's jax.jit(f).lower(...).as_text());
docs/IMPORT.md lists what is read and what is refused.
`,
	run: cmdCheck,
}

func cmdCheck(e *env, p *parsed) error {
	name, m, err := load(e, p.positional[0])
	if err != nil {
		return err
	}
	_, err = entry(m, name, "")
	return err
}
