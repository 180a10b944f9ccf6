// Package ir is tpucc's program model: types, values, the op table, a builder,
// the one canonical printer (its output is .tir) and the verifier.
//
//	.tir text ──► frontend/tir ──┐
//	Go func  ──► frontend/trace ─┴─► ir.Module ──► passes ──► lower/stablehlo ──► StableHLO text
//	                                                  └──────► backend/cpu (reference executor)
//
// A Value is an SSA value: a function parameter or one result of an Instr. An
// Instr applies an Op to argument values and may have several results (top_k,
// call). A Block is a straight-line list of instructions ending in return; a
// Func owns one body Block and the dense ID spaces of its values and
// instructions, so passes can index slices by Value.ID. A Module is a file's
// functions in order.
//
// Invariants the verifier checks: every operand is defined earlier in the same
// function; every instruction's result types are what Infer derives from its
// operand types and attribute; the body ends in exactly one return whose types
// match the signature; calls match their callee's signature and do not recurse.
//
// A fusion instruction (OpFusion, written by the fuse pass) holds one region,
// Regions[0]: a Block whose Params correspond 1:1, type for type, to the
// fusion's operands and whose return values are the fusion's results. The
// region is closed: its body uses only its own parameters and the values it
// defines, never an outer value, holds no call and no nested fusion, and its
// values belong to the enclosing Func's ID space. No other op has a region.
//
// Op semantics follow StableHLO where a counterpart exists; each op's line in the
// table (op.go) states the edge cases the CPU executor and the lowering agree on.
// The table's other columns are the per-op facts its consumers need, as classes
// (reduction kind, side effects, fusion, cost and padding class: opfacts.go);
// each consumer holds the logic of a class and a test that walks Ops(). ir holds
// no StableHLO spelling, no target numbers and no passes.
package ir
