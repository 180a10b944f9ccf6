package main

// The backends tpucc run --backend can name, registered by their packages.
import (
	_ "github.com/tpucc/tpucc/backend/llvm" // "llvm": LLVM code generation for this CPU
	_ "github.com/tpucc/tpucc/backend/pjrt" // "pjrt": PJRT plugins (XLA:CPU, TPU, GPU)
)
