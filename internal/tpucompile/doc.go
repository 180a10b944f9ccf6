// Package tpucompile holds only a test: every golden module and every example, parsed,
// run through the default pass pipeline and lowered to StableHLO, must compile for TPU
// v5e and v6e with libtpu's compile-only client (tools/xlacheck, .venv-tpu). XLA:CPU
// accepting a module does not mean XLA:TPU does (layouts, dtypes and custom calls differ),
// and the lowering is for TPUs.
//
// The test needs `make venv-tpu`; without it the test fails, it never skips. All modules
// go to one compiler process, which creates each topology once.
package tpucompile
