// Package engine is tpucc's compile path and compilation cache: Compile
// runs every program through passes, target checks, lowering and a backend;
// the cache maps each call of a
// function to a compiled program by the call's signature, so that changing
// inputs do not cause recompilation storms.
//
// # Keys
//
// In memory, a Function keys calls by signature: the dtype and shape of
// every tensor argument and the value (with its Go type) of every static
// argument. A program's full key adds the function's identity, the target,
// the pass pipeline, the compiler Version and the SHA-256 of the traced,
// unoptimised program; the persistent cache names entries by the key's
// hash. Hashing the trace makes the persistent cache content-addressed (as
// JAX's and Inductor's are): a closure over other weights, or an edited
// function with the same name, traces differently and can never load a
// stale program. The price is one trace per signature in a new process,
// which is cheap next to passes and lowering.
//
// # Persistent cache
//
// Entries live in a private directory (internal/privdir) and are checked
// on load as strictly as a fresh compile's result; docs/CACHE.md gives the
// rules, and says when Version must change.
//
// # Dynamic dimensions
//
// When a dimension of an argument takes a second distinct size, it becomes
// dynamic (Options.Dynamic marks dimensions dynamic from the start): calls
// are padded with zeros up to the dimension's bucket (the next power of two,
// or the next of Options.Buckets), the program traced at the bucket size
// runs, and outputs whose dimensions derive from the padded one are sliced
// back. Each new size traces the function at that size once more and
// checkPadding proves, from the two traces, that the padded run gives
// exactly the unpadded results (see package passes/padding for the rules); where it
// cannot, the dimension is compiled per exact size and the reason is
// logged. Compiling a new bucket does not count against the recompile
// limit, which caps specialisations (programs that differ in anything
// else); Options.MaxPrograms caps all programs.
//
// # Logs
//
// TPUCC_LOGS=recompiles (or Options.Log) prints one line per recompile:
//
//	recompiling mlp (main.go:12): arg 0 dim 0 changed 32 -> 48; now dynamic, bucket 64
//
// TPUCC_LOGS=cache prints every line of Function.Explain to stderr as well:
// compiles, and programs found in the cache's memory or loaded from disk,
// which are not recompiles.
//
// TPUCC_LOGS=fallback prints, when a program is compiled for a backend that
// reports them (backend.FallbackLister: llvm), each instruction it leaves to
// the reference executor, with its position and the reason. TPUCC_LOGS=all
// turns on every topic; a word that is not a topic (recompiles, cache,
// fallback, all) is ignored with one warning per process naming the valid
// ones.
//
// # Execution
//
// An Executable is the program after passes.Default() for its target, its
// StableHLO text (kept for AOT use), and what a backend (package backend;
// Options.Backend, or the default device's: on the cpu device the llvm
// backend, falling back to the reference executor where it cannot open,
// backend.OpenCPU) compiled from them. Compile is
// the one compile path every caller uses. The target and the backend's name
// and fingerprint are part of the key.
package engine
