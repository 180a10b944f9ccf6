package ir

// ScratchClass says how much memory an op's kernel in the reference
// executor (backend/cpu) holds while it runs beyond its operands and
// results. The memory check (backend/cpu.CheckMemory) has the formula of
// each class; a test there walks Ops() and measures each op's allocations
// against it.
type ScratchClass uint8

const (
	ScratchUnset    ScratchClass = iota
	ScratchNone                  // a few fixed-size buffers at most
	ScratchReduce                // a float64/int64 accumulator per result element and one operand row
	ScratchLine                  // float64 copies of one line along the op's axis (or the last axis)
	ScratchSort                  // a key and a position per element of one line along the sorted axis
	ScratchDot                   // the operands in canonical layout, and float64/int64 blocks of them
	ScratchGrouped               // float64/int64 rows of a grouped product: two of the output's, one of the lhs's
	ScratchConv                  // float64/int64 copies of the first two operands and of the result
	ScratchSpectrum              // complex128 copies of the operand, the result and two lines
)

// The scratch column of the op table, kept here so that it merges apart
// from the table's other columns; init copies it into opTable.
var opScratch = map[Op]ScratchClass{
	OpReduceSum: ScratchReduce, OpReduceMax: ScratchReduce, OpReduceMin: ScratchReduce, OpReduceProd: ScratchReduce,
	OpSoftmax: ScratchLine, OpLogSoftmax: ScratchLine, OpLayerNorm: ScratchLine, OpRMSNorm: ScratchLine,
	OpTopK: ScratchSort, OpArgsort: ScratchSort, OpSort: ScratchSort,
	OpDotGeneral:     ScratchDot,
	OpRaggedDot:      ScratchGrouped,
	OpRaggedContract: ScratchGrouped,
	OpConvolution:    ScratchConv, OpReduceWindow: ScratchConv, OpSelectAndScatter: ScratchConv,
	// one column (row) of b in float64, solved in place
	OpTriangularSolve: ScratchLine,
	// the transform runs in place on a complex128 copy of the whole operand
	OpFFT: ScratchSpectrum,
	// the generator's words are made one counter at a time
	OpRngBitGenerator: ScratchNone,
}

func init() {
	for o := OpInvalid + 1; o < numOps; o++ {
		s, ok := opScratch[o]
		if !ok {
			s = ScratchNone
		}
		opTable[o].Scratch = s
	}
}
