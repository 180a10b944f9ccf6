package llvm

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// The reference executor runs the ops that are not generated yet. It holds
// tensors as cpu.Tensor (float64 or int64 per element); these conversions
// move a buffer's bytes in and out of that form.

// refEval runs in on the reference executor, reading its operands from
// args and writing its results into outs.
func refEval(in *ir.Instr, args, outs []*backend.Buffer) error {
	ts := make([]*cpu.Tensor, len(args))
	for i, b := range args {
		ts[i] = toTensor(b)
	}
	res, err := cpu.Eval(in, ts)
	if err != nil {
		return err
	}
	if len(res) != len(outs) {
		return ir.Errorf(in.Pos, "internal error: %s gave %d results, want %d", in.Op, len(res), len(outs))
	}
	for i, t := range res {
		fromTensor(t, outs[i])
	}
	return nil
}

// refConstant evaluates a constant instruction into its bytes.
func refConstant(in *ir.Instr) ([]byte, error) {
	t := in.Results[0].Type
	if !t.IsStatic() {
		return nil, ir.Errorf(in.Pos, "the llvm backend needs static shapes: %s", t)
	}
	out := backend.New(t)
	if err := refEval(in, nil, []*backend.Buffer{out}); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func toTensor(b *backend.Buffer) *cpu.Tensor {
	t := cpu.NewTensor(b.Type())
	data := b.Bytes()
	dt := b.Type().DType
	for i := 0; i < b.Len(); i++ {
		if dt.IsFloat() {
			t.F[i] = loadFloat(data, i, dt)
		} else {
			t.I[i] = loadInt(data, i, dt)
		}
	}
	return t
}

func fromTensor(t *cpu.Tensor, b *backend.Buffer) {
	data := b.Bytes()
	dt := b.Type().DType
	for i := 0; i < b.Len(); i++ {
		if dt.IsFloat() {
			storeFloat(data, i, dt, t.F[i])
		} else {
			storeInt(data, i, dt, t.I[i])
		}
	}
}

var le = binary.LittleEndian

func loadFloat(d []byte, i int, dt ir.DType) float64 {
	switch dt {
	case ir.F32:
		return float64(math.Float32frombits(le.Uint32(d[4*i:])))
	case ir.F64:
		return math.Float64frombits(le.Uint64(d[8*i:]))
	case ir.F16:
		return float64(ir.F16ToFloat32(le.Uint16(d[2*i:])))
	case ir.BF16:
		return float64(ir.BF16ToFloat32(le.Uint16(d[2*i:])))
	}
	panic(fmt.Sprintf("llvm: %s is not a float dtype", dt))
}

func storeFloat(d []byte, i int, dt ir.DType, v float64) {
	switch dt {
	case ir.F32:
		le.PutUint32(d[4*i:], math.Float32bits(float32(v)))
	case ir.F64:
		le.PutUint64(d[8*i:], math.Float64bits(v))
	case ir.F16:
		le.PutUint16(d[2*i:], ir.Float32ToF16(float32(v)))
	case ir.BF16:
		le.PutUint16(d[2*i:], ir.Float32ToBF16(float32(v)))
	default:
		panic(fmt.Sprintf("llvm: %s is not a float dtype", dt))
	}
}

func loadInt(d []byte, i int, dt ir.DType) int64 {
	switch dt {
	case ir.I1, ir.U8:
		return int64(d[i])
	case ir.I8:
		return int64(int8(d[i]))
	case ir.I16:
		return int64(int16(le.Uint16(d[2*i:])))
	case ir.I32:
		return int64(int32(le.Uint32(d[4*i:])))
	case ir.U32:
		return int64(le.Uint32(d[4*i:]))
	case ir.I64:
		return int64(le.Uint64(d[8*i:]))
	}
	panic(fmt.Sprintf("llvm: %s is not an integer dtype", dt))
}

func storeInt(d []byte, i int, dt ir.DType, v int64) {
	switch dt.Size() {
	case 1:
		d[i] = byte(v)
	case 2:
		le.PutUint16(d[2*i:], uint16(v))
	case 4:
		le.PutUint32(d[4*i:], uint32(v))
	case 8:
		le.PutUint64(d[8*i:], uint64(v))
	}
}
