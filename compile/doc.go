// Package compile is the library wrapper users call: compile.Func(f) returns
// a function of f's own type that traces f once per input signature,
// compiles the trace (passes, StableHLO lowering) and reuses the program on
// later calls, through the cache of package engine.
//
//	mlp := func(x, w1, b1, w2 *tensor.Tensor) *tensor.Tensor {
//		return x.MatMul(w1).Add(b1).Relu().MatMul(w2)
//	}
//	fast := compile.Func(mlp)        // same signature
//	y := fast(x, w1, b1, w2)         // traces and compiles for these shapes
//	y = fast(x2, w1, b1, w2)         // another batch size: padded to a bucket
//
// Parameters are *tensor.Tensor or static values (bool, integers, floats,
// strings): a static value is part of the signature, so each value compiles
// its own program, as jax.jit's static_argnums. Results are *tensor.Tensor,
// optionally followed by an error. New is the explicit form: it returns
// errors instead of panicking and exposes Call, Lower (the StableHLO text
// for given shapes, like jax.jit(f).lower(x)), Stats and Explain.
//
// Tensors that f closes over become constants of the traced program, as in
// jax.jit: changing them later does not change the compiled program (build a
// new one, or pass them as arguments). The persistent cache key holds the
// traced program's hash, so a program compiled for other captured values is
// never loaded by mistake.
//
// A compiled function called on traced tensors (inside another function
// being compiled) runs f inline, so its ops join the outer trace.
//
// Grad(f, argnums...) and ValueAndGrad(f, argnums...) compile the gradient of a
// function returning a float scalar with respect to the tensor parameters argnums, as
// jax.grad and jax.value_and_grad do: the trace is differentiated by package autodiff
// before the passes, and the programs are cached per signature as Func's are.
//
// Errors: shape errors while tracing are the *tensor.Error the eager call
// would panic with, at the same call site; Func panics with it (or returns
// it through f's error result), New's Call returns it. A panic of another
// kind in f propagates unchanged.
package compile
