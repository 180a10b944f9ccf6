// Package tir parses .tir text, the input language and dump format of tpucc,
// into a verified ir.Module. Printing a module (ir.Print) and parsing the text
// gives back a module that prints identically.
//
// # Grammar
//
//	file     = [replicas] mesh* func* .
//	replicas = "replicas" "=" int .
//	mesh     = "mesh" @name "=" "<" "[" ["string" "=" int {"," "string" "=" int}] "]" ">" .
//	func     = "func" @name "(" [param {"," param}] ")" "->" results "{" {stmt} "}" .
//	param    = %name ":" type [annot] .
//	results  = result | "(" [result {"," result}] ")" .
//	result   = type [annot] .
//	annot    = "{" "sharding" "=" sharding "}" .
//	sharding = "<" @mesh "," "[" [axes {"," axes}] "]" ">" .   // <@mesh, [{"dp"}, {}]>
//	axes     = "{" ["string" {"," "string"}] "}" .
//	stmt     = [%name {"," %name} "="] op [operands] [attrs] [":" type {"," type}] .
//	operands = %name {"," %name}          // most ops, return
//	         | @name "(" [%name {"," %name}] ")"   // call
//	         | literal .                  // constant
//	attrs    = "{" [ident "=" value {"," ident "=" value}] "}" .
//	value    = integer | float | true | false | "string" | ident | "[" [value {"," value}] "]" | sharding .
//	literal  = number | inf | -inf | nan | true | false | "[" [literal {"," literal}] "]" .
//	type     = dtype "[" [dim {"," dim}] "]" [layout] .
//	dim      = integer | ident .              // a symbol: one size within a function
//	layout   = "{" [int {"," int}] [":" "T" tile {["T"] tile}] "}" .   // {1,0:T(8,128)(2,1)}
//	tile     = "(" int {"," int} ")" .
//
// Meshes and shardings (docs/SHARDING.md): a mesh names device axes and their
// sizes; a sharding lists, per dimension of a tensor, the mesh axes that
// split it. The verifier checks them against the meshes and the types.
// replicas = R runs the program as R replicas (StableHLO's
// mhlo.num_replicas, JAX's pmap); it is printed when R > 1.
//
// Comments run from // to the end of the line. Value names are %name with
// name [A-Za-z_][A-Za-z0-9_.]* or all digits; digit-only names are not kept
// (the printer numbers values itself). Function names are @name with the same
// letters. Floats are written 0.5, 1e-5, -2.0, inf, -inf or nan. Columns in
// diagnostics count characters (runes) from 1.
//
// The result types may be left out where ir.Infer derives them; ops whose
// type is not derivable from the operands (Info().NeedsType: reshape, convert,
// broadcast, iota, one_hot, constant) need them written. A call takes its
// result types from the callee, which may be defined later in the file; types
// written after a call must agree with the callee's. A constant's literal is a
// scalar (a splat when the type has more elements) or a nested list shaped
// like the type, [] standing for a zero-sized dimension; elements are rounded
// into the dtype (bf16 0.1 becomes 0.10009765625), integers must be in the
// dtype's range and i1 is written true or false.
//
// # Sugar
//
// Two conveniences are accepted and never printed; they become core ops.
//
// Broadcasting: operands of an elementwise op with several operands (binary
// ops, compare, select, clamp) may have different shapes that broadcast as in
// numpy: shapes are right-aligned and a missing or size-1 dimension stretches
// to the other's size; symbolic dimensions must be the same symbol. The parser
// inserts broadcast {dims=[...]} for each operand whose shape differs from the
// common one. select's i1[] predicate and clamp's scalar bounds are legal as
// they are and are not broadcast. Dtypes are never converted: add of f32[4]
// and i32[] is an error.
//
// matmul %a, %b follows numpy.matmul and becomes dot_general: a's last
// dimension is contracted with b's second to last (b's only one when b is
// 1-D). A 1-D operand contributes no free dimension (numpy's promotion and
// removal of a unit dimension). When both operands have rank at least 2 and b
// has batch dimensions, the batch dimensions (all but the last two) are
// broadcast to a common shape, inserting broadcast where an operand's differ,
// and become dot_general's batch dimensions; when b is 2-D, a's leading
// dimensions are simply free dimensions of the dot_general. A written result
// type may ask for a wider accumulation dtype, as dot_general allows.
//
// # Diagnostics
//
// Every problem is an *ir.Error printed FILE:LINE:COL: error: MESSAGE, or an
// *ir.ErrorList of them in source order. A syntax error (including bytes that
// are not UTF-8) stops parsing and is the only one reported; after a clean
// parse every independent problem is reported, and names defined by a broken
// instruction are silently skipped where used, so one mistake gives one
// message. Type errors are positioned at the op's name.
package tir
