// Package stablehlo reads StableHLO MLIR text, as jax.jit(f).lower(...).as_text()
// prints it and as tpucc's own lowering (lower/stablehlo) emits it, into a
// verified ir.Module.
//
// The text is parsed in two steps: syntax.go and ops.go read the MLIR (pretty
// and generic op forms, regions, attributes, locations) into a small syntax
// tree of ops, and build.go maps each op to its ir equivalent. Ops with a
// region (reduce, scatter, reduce_window) are recognised by the shape of the
// region: a reduce whose body is one add, maximum, minimum or multiply
// becomes reduce_sum, reduce_max, reduce_min or reduce_prod. while, case and
// if become ir's while and case (control.go); the values their regions
// capture from outside become operands, since ir's regions are closed.
//
// Anything without an exact ir equivalent (an op, an attribute form, an
// element type) is refused at its FILE:LINE:COL with its name; nothing is
// approximated. Positions are those of the .mlir text itself: loc(...)
// annotations are read and skipped.
package stablehlo
