// Package pjrt is a PJRT client written in Go without cgo: it loads a PJRT
// plugin (libtpu, the CUDA plugin, an XLA:CPU plugin) with purego, reads its
// function table and drives it through the C API's argument structs.
//
// The argument structs are laid out here by hand (layout.go). A plugin checks
// each struct's struct_size against the header it was built with and refuses
// a smaller one, so every struct is laid out at least as large as the newest
// plugin we test against expects, trailing fields zeroed; a test probes each
// plugin at hand for the sizes it wants.
//
// Every object a plugin hands out (error, event, topology, client, executable,
// buffer) is owned by exactly one Go value with a Close method; a runtime
// cleanup closes it if the program forgets, and a per-plugin counter of live
// handles lets tests prove nothing leaks.
package pjrt
