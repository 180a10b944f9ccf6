package models

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models/hf"
	"github.com/tpucc/tpucc/tensor"
)

// weights mirrors hf.Weights with tensors: concrete ones when the model runs
// eagerly, the traced parameters of a step while it is recorded. Fields are
// matched to hf.Weights by name, so a weight the loader fills that the model
// does not read is caught at load (see collect) instead of being ignored.
type weights struct {
	Embed, Norm, LMHead                           *tensor.Tensor
	PerLayerEmbed, PerLayerProj, PerLayerProjNorm *tensor.Tensor
	Layers                                        []layerWeights // unrolled layers' (a looped layer's are in Stacks)
	// Stacks are each group's weights, slot by slot, stacked over its
	// trips [count, …], in the checkpoint's dtype (nil for unrolled groups).
	Stacks [][]layerWeights
}

// layerWeights mirrors hf.LayerWeights.
type layerWeights struct {
	AttnNorm, PostAttnNorm, MLPNorm, PostMLPNorm *tensor.Tensor
	Q, K, V, O, QNorm, KNorm                     *tensor.Tensor
	QBias, KBias, VBias, OBias                   *tensor.Tensor
	Gate, Up, Down                               *tensor.Tensor
	GateBias, UpBias, DownBias                   *tensor.Tensor
	Router, RouterScale, ExpertScale             *tensor.Tensor
	PostMLPNorm1, PreMoENorm, PostMoENorm        *tensor.Tensor
	GateExperts, UpExperts, DownExperts          *tensor.Tensor
	SharedGate, SharedUp, SharedDown             *tensor.Tensor
	SharedExpertGate                             *tensor.Tensor
	LayerScalar                                  *tensor.Tensor
	PerLayerGate, PerLayerProj, PerLayerNorm     *tensor.Tensor
}

// Param is one weight as a parameter of the compiled steps.
type Param struct {
	Name   string // the field path: "Embed", "layers.3.Q", a stack "layers.0:28.Q"
	Type   ir.Type
	Buffer *backend.Buffer // nil in an abstract model (Abstract)
}

var bufferType = reflect.TypeFor[*backend.Buffer]()

// collect lists w's weights in a fixed order (top-level fields, then each
// group's: an unrolled layer's, or a looped group's stacks slot by slot),
// one Param per distinct buffer, and maps every field path to its Param:
// tied embeddings are one parameter that two paths name. It fails on a
// weight that the model would not read. A looped slot's weights are stacked
// here, once: each layer's field is copied into the stack and then becomes
// a view of its row, so w keeps one copy.
func collect(w *hf.Weights, groups []group) ([]Param, map[string]int, error) {
	var out []Param
	index := map[string]int{}
	seen := map[*backend.Buffer]int{}
	add := func(src reflect.Value, dst reflect.Type, prefix string, rows func(field string) (*backend.Buffer, error)) error {
		for i := range src.NumField() {
			f := src.Type().Field(i)
			if f.Type != bufferType || !f.IsExported() {
				continue
			}
			b := src.Field(i).Interface().(*backend.Buffer)
			if b == nil {
				continue
			}
			if _, ok := dst.FieldByName(f.Name); !ok {
				return fmt.Errorf("models: weight %s%s is loaded but tpucc's model does not use it", prefix, f.Name)
			}
			if rows != nil {
				var err error
				if b, err = rows(f.Name); err != nil {
					return err
				}
			}
			j, ok := seen[b]
			if !ok {
				j = len(out)
				seen[b] = j
				out = append(out, Param{Name: prefix + f.Name, Type: b.Type(), Buffer: b})
			}
			index[prefix+f.Name] = j
		}
		return nil
	}
	if err := add(reflect.ValueOf(w).Elem(), reflect.TypeFor[weights](), "", nil); err != nil {
		return nil, nil, err
	}
	lt := reflect.TypeFor[layerWeights]()
	for _, g := range groups {
		for s := range g.period {
			first := reflect.ValueOf(&w.Layers[g.layer(s, 0)]).Elem()
			if !g.looped() {
				if err := add(first, lt, fmt.Sprintf("layers.%d.", g.start), nil); err != nil {
					return nil, nil, err
				}
				continue
			}
			rows := func(field string) (*backend.Buffer, error) { return stackField(w, g, s, field) }
			if err := add(first, lt, g.spec(s)+".", rows); err != nil {
				return nil, nil, err
			}
		}
	}
	return out, index, nil
}

// stackField is field of slot s's layers stacked into one tensor [count,
// …]. The stack is not made at load (backend.Stack): a split upload reads
// each device's piece straight from the layers' own buffers (views of the
// memory-mapped checkpoint), so that loading a model split N ways never
// holds the whole stack in host memory. Reading the buffer on the host
// (Bytes) makes the stack then, once, and points each layer's field at its
// row: the layers' own buffers (a MoE layer's experts) can be collected.
func stackField(w *hf.Weights, g group, s int, field string) (*backend.Buffer, error) {
	var rows []*backend.Buffer
	var fields []reflect.Value
	for it := range g.count {
		f := reflect.ValueOf(&w.Layers[g.layer(s, it)]).Elem().FieldByName(field)
		b, _ := f.Interface().(*backend.Buffer)
		if b == nil || len(rows) > 0 && !b.Type().Equal(rows[0].Type()) {
			// Layers of one kind have the same layout (layerKinds).
			panic(fmt.Sprintf("models: layer %d's %s does not match layer %d's", g.layer(s, it), field, g.layer(s, 0)))
		}
		rows, fields = append(rows, b), append(fields, f)
	}
	return backend.Stack(rows, func(views []*backend.Buffer) {
		for i, v := range views {
			fields[i].Set(reflect.ValueOf(v))
		}
	}), nil
}

// bind builds the weights of a step of m from ts, one tensor per Param. An
// unrolled layer's and the top-level weights are converted to the compute
// dtype f32 (a bf16 checkpoint stays bf16 in memory; each step converts as
// it reads); a looped slot's stacks stay as they are, and the loop converts
// the row it reads (layerAt). With normOffset the RMSNorm weights (the
// fields named …Norm) are offsets from 1, and the step adds 1 after
// converting, as Gemma 3's norms compute 1.0 + weight.float(). A bf16
// weight that the step reads only as a product's weight (productField)
// stays bf16 unless m.F32Products: linear then multiplies in bf16.
func bind(m *Model, ts []*tensor.Tensor) *weights {
	normOffset := m.Config.NormOffset
	norm := make([]bool, len(ts))
	stacked := make([]bool, len(ts))
	keep := make([]bool, len(ts))
	for i, t := range ts {
		keep[i] = m.bf16Products(t)
	}
	for path, j := range m.index {
		norm[j] = normOffset && strings.HasSuffix(path, "Norm")
		stacked[j] = strings.Contains(path, ":")
		keep[j] = keep[j] && productField[fieldName(path)]
	}
	// In parameter order, so that a traced step is the same program every
	// time (index is a map).
	conv := make([]*tensor.Tensor, len(ts))
	for i, t := range ts {
		if !stacked[i] && !keep[i] {
			t = toCompute(t, norm[i])
		}
		conv[i] = t
	}
	out := &weights{Layers: make([]layerWeights, len(m.Config.Layers)), Stacks: make([][]layerWeights, len(m.groups))}
	for gi, g := range m.groups {
		out.Stacks[gi] = make([]layerWeights, g.period)
	}
	for path, j := range m.index {
		dst := reflect.ValueOf(out).Elem()
		if rest, ok := strings.CutPrefix(path, "layers."); ok {
			n, field, _ := strings.Cut(rest, ".")
			if at, ok := m.slots[n]; ok {
				dst = reflect.ValueOf(&out.Stacks[at[0]][at[1]]).Elem()
			} else {
				l, _ := strconv.Atoi(n)
				dst = reflect.ValueOf(&out.Layers[l]).Elem()
			}
			path = field
		}
		dst.FieldByName(path).Set(reflect.ValueOf(conv[j]))
	}
	return out
}

// toCompute converts a weight to f32, adding 1 to a norm stored as an
// offset.
func toCompute(t *tensor.Tensor, normOffset bool) *tensor.Tensor {
	t = toF32(t)
	if normOffset {
		t = t.Add(tensor.Scalar(1, ir.F32))
	}
	return t
}

// layerAt is row r of a slot's stacked weights, in f32 (a loop's layer
// weights), but for the bf16 product weights that bf16 keeps bf16 (bind).
func layerAt(stacks *layerWeights, r row, normOffset, bf16 bool) *layerWeights {
	out := &layerWeights{}
	src, dst := reflect.ValueOf(stacks).Elem(), reflect.ValueOf(out).Elem()
	for i := range src.NumField() {
		t, _ := src.Field(i).Interface().(*tensor.Tensor)
		if t == nil {
			continue
		}
		name := src.Type().Field(i).Name
		if bf16 && t.DType() == ir.BF16 && productField[name] {
			dst.Field(i).Set(reflect.ValueOf(r.of(t)))
			continue
		}
		dst.Field(i).Set(reflect.ValueOf(toCompute(r.of(t), normOffset && strings.HasSuffix(name, "Norm"))))
	}
	return out
}

// productField names the weights that a step reads only as the weight of
// a product (linear, or moe's experts) or gathers and widens (the
// embedding, so that a tied head is a bf16 product as transformers
// computes it in bf16): kept bf16 they make bf16 products. The router and
// Gemma 4's per-layer weights stay f32.
var productField = map[string]bool{"Q": true, "K": true, "V": true, "O": true,
	"Gate": true, "Up": true, "Down": true, "SharedGate": true, "SharedUp": true, "SharedDown": true, "LMHead": true,
	"GateExperts": true, "UpExperts": true, "DownExperts": true, "Embed": true}

// bf16Products reports whether a weight t of m multiplies in bf16: a bf16
// checkpoint's, unless m.F32Products.
func (m *Model) bf16Products(t *tensor.Tensor) bool {
	return !m.F32Products && t.DType() == ir.BF16
}

// rowStarts is the start of row i of a rank-r tensor: i, then zeros.
func rowStarts(i *tensor.Tensor, r int) []*tensor.Tensor {
	s := []*tensor.Tensor{i}
	for range r - 1 {
		s = append(s, tensor.Scalar(0, ir.I32))
	}
	return s
}

// BF16Product reports whether the steps multiply by parameter p in bf16
// (vdpbf16ps where the CPU has it): a bf16 product weight (productField)
// of a model without F32Products, which bind keeps bf16. Every other
// weight, f16 ones included, is widened to f32 and multiplies in f32.
func (m *Model) BF16Product(p Param) bool {
	return !m.F32Products && p.Type.DType == ir.BF16 && productField[fieldName(p.Name)]
}

// f16Product reports whether p is an f16 product weight (productField):
// an f16 checkpoint's, widened to f32 as it is read.
func f16Product(p Param) bool {
	return p.Type.DType == ir.F16 && productField[fieldName(p.Name)]
}
