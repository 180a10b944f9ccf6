// Package passes holds tpucc's IR-to-IR passes and the pipeline runner.
//
// A pass is a plain value, Pass{Name, Doc, Run}, and a pipeline is a slice of
// them run in order by Run, over every function of a module. The runner
// verifies the IR after each pass (Options.VerifyEach) or once at the end,
// names the pass that broke it, turns a panic inside a pass into an error that
// names the pass and the function, and writes .tir dumps after the passes that
// Options.DumpAfter matches.
//
// Passes only rewrite: they build replacement instructions with ir.Builder,
// redirect uses with Func.ReplaceUses and leave the instructions they made
// dead for dce. Each pass counts what it did in the Context's Stats (which
// rewrite rule fired how often), so a driver can print why the output looks
// the way it does.
//
// The default pipeline (Default) is canonicalize, fold-constants, cse,
// canonicalize, contract, moe-route, licm, dce, fuse, assign-layout (assign-layout needs
// Options.Target and does nothing without one). The ordering constraints
// between passes are data (passOrder), each with its reason, and Run checks
// them before it starts.
package passes
