// Package tensor is tpucc's eager tensor API: tensors with a dtype, a shape and
// data, and a method for every core op, with numpy broadcasting for the
// elementwise ones.
//
//	x := tensor.Random(1, ir.F32, 64, 1024)
//	w := tensor.Random(2, ir.F32, 1024, 4096)
//	y := x.MatMul(w).Add(b).Relu()   // runs op by op on the CPU
//
// # Two modes, one path
//
// A Tensor is either concrete (it holds a *backend.Buffer, elements in their own dtype) or traced (it holds an
// *ir.Value of a *trace.Tracer: compile.Func runs the user's function on
// traced tensors to record it). Every operation takes the same path: build the
// op's attribute, check the operand types with ir.Infer (so eager and traced
// code obey exactly the type rules of .tir), then either emit the op into the
// tracer, if any operand is traced, or run it at once on the eager backend
// (SetEagerBackend, EagerEnv; by default the llvm backend's eager kernels, or
// the reference executor, with one warning, where clang is missing; the
// reference executor's numbers are the oracle's, and the llvm kernels agree
// with them within the oracle's f32 tolerance).
//
// A concrete tensor used together with traced ones becomes a constant of the
// trace (as jax treats closed-over arrays): a splat is written as one value, a
// tensor made by Iota or Arange as an iota op, anything else element by
// element. Traced tensors of two different traces, or one used after its
// trace finished (it leaked out of the traced function), are errors. Reading
// the data of a traced tensor (Float32s, ...) is an error too: its value is
// known only when the compiled program runs.
//
// # Loops
//
// A Go for loop over tensors runs eagerly step by step and, traced,
// unrolls: the program holds one copy of the body per step, as in JAX. For a
// loop that stays a loop in the compiled program (a trip count that depends
// on the data, or many steps), use While, Switch and Scan:
//
//	out := tensor.While(cond, body, init...)       // for cond(c) { c = body(c) }
//	res := tensor.Switch(k, operands, branches...) // branches[k](operands); out of range: the last
//	carry, ys := tensor.Scan(f, carry, xs...)      // f over xs' rows, ys stacked, as jax.lax.scan
//
// Eagerly these are Go loops. Traced, each records one while or case op
// whose regions are traced once from the Go closures. A region is closed,
// but the closures need not be: a traced tensor from outside that a closure
// uses is carried into the loop unchanged (an extra operand of the while or
// case, through every enclosing one), so loop-invariant weights can simply
// be captured. A tensor computed inside a closure does not outlive it: use
// it after While returns and the trace reports it at that use; return it as
// a carried value instead. A loop whose carried values are concrete is
// traced as soon as cond or body produces a traced tensor. Scan calls f once
// more than there are steps, to learn the types of its per-step outputs.
//
// # Data in and out
//
// A concrete tensor's data is a *backend.Buffer holding the elements in their
// own dtype (f32 in 4 bytes, bf16 in 2, i1 in 1): the buffer the executor
// computes on, so nothing is converted on the way. FromSlice(data, shape...)
// makes a tensor from any Go slice without copying (the dtype follows from the
// element type: []float32 is f32, []bool is i1, ...). Every constructor takes
// its arguments in one order: the values first (FromSlice's data, Full's and
// Scalar's value, Random's seed), then the dtype, then an axis, and the shape
// last, variadic: FromSlice(data, 2, 3), Full(0.5, ir.F32, 2, 3), Iota(ir.I32,
// 1, 2, 3). Float32s, Float64s, Int32s, Int64s and Bools return copies
// (tensors are immutable); Buffer returns the storage itself, for reading
// without a copy. ReadNPY and WriteNPY load and save .npy files.
//
// # Conventions
//
// Shapes and sizes are int64, as in package ir; axes are int and may be
// negative (-1 is the last axis), normalised before the op is built.
// Elementwise binary ops, the comparisons (Eq, Ne, Lt, Le, Gt, Ge), Where
// and Clamp broadcast numpy-style (shapes right-aligned, size-1 dimensions
// stretch) by inserting broadcast ops. Names follow numpy: the reductions
// over axes are Sum, Prod, Max and Min (SumKeep, ... keep the reduced axes),
// and the elementwise maximum and minimum of two tensors are Maximum and
// Minimum. Dtypes are never promoted: operands must have the same dtype; write a
// scalar operand as tensor.Scalar(0.5, x.DType()) and change dtypes with
// Convert.
//
// # Errors are panics
//
// As in gonum, a shape or dtype error is a programming error, like an index
// out of range: the method panics with a *Error that names the user's call
// site (the first frame outside the tpucc library packages), the operation
// and the operand types, e.g.
//
//	main.go:12: add: shapes f32[2,3] and f32[4] do not broadcast
//
// Every function of the package reports misuse this way and none returns an
// error. compile.Func's explicit form recovers these panics into returned
// errors, and Recover does the same for a caller's own function. Other panics
// (nil pointer dereferences in user code) pass through untouched.
//
// Tensors are immutable: no method modifies its receiver or operands, so a
// Tensor may be shared between goroutines.
package tensor
