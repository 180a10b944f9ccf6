// Package faults holds tpucc's fault-injection suite and nothing else: its
// tests run the compile path (engine.Function on the llvm backend, with
// the persistent program cache and the llvm object cache) in child
// processes and, around them, kill the child during builds and cache
// writes, cap its file size to fill the disk, and plant hostile files in
// both caches (the corpus under testdata/hostile). Each case asserts a
// correct result or a clear error, no process left running and nothing
// left behind. docs/SECURITY.md says what the caches trust.
package faults
