package models

import (
	"fmt"
	"reflect"

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
	Gate, Up, Down                               *tensor.Tensor
	Router, RouterScale, ExpertScale             *tensor.Tensor
	PostMLPNorm1, PreMoENorm, PostMoENorm        *tensor.Tensor
	GateExperts, UpExperts, DownExperts          *tensor.Tensor
	LayerScalar                                  *tensor.Tensor
	PerLayerGate, PerLayerProj, PerLayerNorm     *tensor.Tensor
}

// Param is one weight as a parameter of the compiled steps.
type Param struct {
	Name   string // the field path: "embed", "layers.3.q"
	Buffer *backend.Buffer
}

var bufferType = reflect.TypeFor[*backend.Buffer]()

// collect lists w's weights in a fixed order (top-level fields, then each
// layer's), one Param per distinct buffer: tied embeddings are one
// parameter. It fails on a weight that the model would not read.
func collect(w *hf.Weights) ([]Param, error) {
	var out []Param
	seen := map[*backend.Buffer]bool{}
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
			if !seen[b] {
				seen[b] = true
				out = append(out, Param{Name: prefix + f.Name, Buffer: b})
			}
		}
		return nil
	}
	if err := add(reflect.ValueOf(w).Elem(), reflect.TypeFor[weights](), ""); err != nil {
		return nil, err
	}
	for i := range w.Layers {
		if err := add(reflect.ValueOf(&w.Layers[i]).Elem(), reflect.TypeFor[layerWeights](), fmt.Sprintf("layers.%d.", i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// bind builds the weights of a step from ts, one tensor per Param in
// collect's order, converted to the compute dtype f32 (a bf16 checkpoint
// stays bf16 in memory; each step converts as it reads).
func bind(w *hf.Weights, params []Param, ts []*tensor.Tensor) *weights {
	byBuf := make(map[*backend.Buffer]*tensor.Tensor, len(params))
	for i, p := range params {
		t := ts[i]
		if t.DType() != ir.F32 {
			t = t.Convert(ir.F32)
		}
		byBuf[p.Buffer] = t
	}
	out := &weights{Layers: make([]layerWeights, len(w.Layers))}
	fill := func(src, dst reflect.Value) {
		for i := range src.NumField() {
			f := src.Type().Field(i)
			if f.Type != bufferType || !f.IsExported() {
				continue
			}
			if b := src.Field(i).Interface().(*backend.Buffer); b != nil {
				dst.FieldByName(f.Name).Set(reflect.ValueOf(byBuf[b]))
			}
		}
	}
	fill(reflect.ValueOf(w).Elem(), reflect.ValueOf(out).Elem())
	for i := range w.Layers {
		fill(reflect.ValueOf(&w.Layers[i]).Elem(), reflect.ValueOf(&out.Layers[i]).Elem())
	}
	return out
}
