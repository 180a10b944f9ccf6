package ir

// The per-op facts that the passes, the backends and the lowering consult
// are columns of the op table, given as classes: each consumer keeps the
// logic of a class (a TPU cost formula, a padding rule, a StableHLO
// spelling) and the table says which class an op belongs to. The zero value
// of each class type means "not given"; a test in each consuming package
// walks Ops() and names any op left at it, so a new op cannot be forgotten
// by one of them.

// ReduceKind is the combining function of a reduction over axes.
type ReduceKind uint8

const (
	ReduceNone ReduceKind = iota // not a reduction over axes
	ReduceSum
	ReduceMax
	ReduceMin
	ReduceProd
)

// FuseClass says how fuse-elementwise may group an op.
type FuseClass uint8

const (
	FuseUnset  FuseClass = iota
	FuseNever            // kept alone: indexing, sorts, scans, calls, control
	FuseLoop             // elementwise or indexes its operand per output element: fuses freely
	FuseLayout           // transpose, reshape: a loop op, unless it is a layout change next to a dot_general
	FuseReduce           // a reduction: roots an input fusion, feeds nothing inside it
	FuseNorm             // one heavy op (softmax, a norm) with elementwise output
	FuseDot              // dot_general: roots an output fusion
	FuseConst            // cloned into the fusions that read it
)

// CostClass says which rule a cost model counts an op's work by.
type CostClass uint8

const (
	CostUnset          CostClass = iota
	CostNone                     // moves or indexes data only: its bytes are the whole cost
	CostElementwise              // one vector op per result element
	CostTranscendental           // one transcendental per result element
	CostReduce                   // one combine per reduced element
	CostArgReduce                // a compare and a select per reduced element
	CostScan                     // one combine per result element
	CostScatter                  // one combine per update element
	CostSort                     // a comparison sort of each row
	CostDot                      // a contraction
	CostRaggedDot                // a grouped contraction whose group sizes are known only when it runs
	CostConv                     // a convolution: a contraction over the window and the input features
	CostWindow                   // one combine (or compare) per window element of each window
	CostComposite                // a composite op: the cost model has a formula for each
	CostRegion                   // call, fusion: the work of the body, summed by the caller
	CostCustom                   // custom_call: the flops its cost attribute says (0 when absent)
)

// PadRule says how the padding analysis (passes/padding) checks that an op
// keeps rows apart along a padded dimension and what padding it propagates.
type PadRule uint8

const (
	PadUnset              PadRule = iota
	PadElementwise                // the op evaluated on the operands' padding values
	PadNone                       // keeps rows apart; nothing to propagate (constant, iota, one_hot)
	PadBroadcast                  // padding follows the mapped operand dimension
	PadTranspose                  // padding follows the permutation
	PadReshape                    // a padded dimension must survive whole, at the same row-major place
	PadSlice                      // must not cut a padded dimension
	PadConcat                     // must not join along a padded dimension
	PadPad                        // must not pad a padded dimension
	PadDot                        // contracts a padded dimension only where the padding product is exactly 0
	PadReduce                     // reduces a padded axis only when its padding is the identity
	PadArgReduce                  // searches a padded axis only when its padding is the identity
	PadScan                       // a prefix scan never reads trailing padding
	PadSoftmax                    // normalises a padded axis only when its padding is -inf
	PadNorm                       // refuses a padded last axis
	PadTake                       // refuses gathering along a padded axis
	PadScatter                    // refuses scattering along, or rows indexed by, a padded dimension
	PadDynamicSlice               // a padded dimension must be taken whole
	PadDynamicUpdateSlice         // a padded dimension must be written whole, by an update padded alike
	PadSort                       // refuses sorting along a padded axis
	PadRefuse                     // not analysed: refused whenever it touches a padded dimension
)
