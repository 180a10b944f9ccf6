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
	Layers                                        []layerWeights
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
	Name   string // the field path: "Embed", "layers.3.Q"
	Type   ir.Type
	Buffer *backend.Buffer // nil in an abstract model (Abstract)
}

var bufferType = reflect.TypeFor[*backend.Buffer]()

// collect lists w's weights in a fixed order (top-level fields, then each
// layer's), one Param per distinct buffer, and maps every field path to its
// Param: tied embeddings are one parameter that two paths name. It fails on
// a weight that the model would not read.
func collect(w *hf.Weights) ([]Param, map[string]int, error) {
	var out []Param
	index := map[string]int{}
	seen := map[*backend.Buffer]int{}
	add := func(src reflect.Value, dst reflect.Type, prefix string) error {
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
	if err := add(reflect.ValueOf(w).Elem(), reflect.TypeFor[weights](), ""); err != nil {
		return nil, nil, err
	}
	for i := range w.Layers {
		if err := add(reflect.ValueOf(&w.Layers[i]).Elem(), reflect.TypeFor[layerWeights](), fmt.Sprintf("layers.%d.", i)); err != nil {
			return nil, nil, err
		}
	}
	return out, index, nil
}

// bind builds the weights of a step of a model with layers layers from ts,
// one tensor per Param, converted to the compute dtype f32 (a bf16
// checkpoint stays bf16 in memory; each step converts as it reads). With
// normOffset the RMSNorm weights (the fields named …Norm) are offsets from
// 1, and the step adds 1 after converting, as Gemma 3's norms compute
// 1.0 + weight.float().
func bind(layers int, index map[string]int, ts []*tensor.Tensor, normOffset bool) *weights {
	norm := make([]bool, len(ts))
	for path, j := range index {
		norm[j] = normOffset && strings.HasSuffix(path, "Norm")
	}
	// In parameter order, so that a traced step is the same program every
	// time (index is a map).
	conv := make([]*tensor.Tensor, len(ts))
	for i, t := range ts {
		if t.DType() != ir.F32 {
			t = t.Convert(ir.F32)
		}
		if norm[i] {
			t = t.Add(tensor.Scalar(1, ir.F32))
		}
		conv[i] = t
	}
	out := &weights{Layers: make([]layerWeights, layers)}
	for path, j := range index {
		dst := reflect.ValueOf(out).Elem()
		if rest, ok := strings.CutPrefix(path, "layers."); ok {
			n, field, _ := strings.Cut(rest, ".")
			l, _ := strconv.Atoi(n)
			dst, path = reflect.ValueOf(&out.Layers[l]).Elem(), field
		}
		dst.FieldByName(path).Set(reflect.ValueOf(conv[j]))
	}
	return out
}
