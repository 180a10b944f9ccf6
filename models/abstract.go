package models

import (
	"fmt"
	"reflect"

	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models/hf"
)

// Abstract returns a model of configuration c whose weights of dtype dt
// have types but no data: enough to trace, compile and export its steps
// (a full-size layer for a TPU compile, say) without a checkpoint or the
// memory to hold one. Its steps cannot run. The weights are the ones
// hf.Load would fill, in the same order.
func Abstract(c *hf.Config, dt ir.DType) (*Model, error) {
	if err := computable(c); err != nil {
		return nil, err
	}
	m := &Model{Config: c, index: map[string]int{}}
	add := func(prefix string, fields reflect.Type, shapes map[string][]int64) {
		for i := range fields.NumField() {
			name := fields.Field(i).Name
			if s, ok := shapes[name]; ok {
				m.index[prefix+name] = len(m.Params)
				m.Params = append(m.Params, Param{Name: prefix + name, Type: ir.Tensor(dt, s...)})
			}
		}
	}
	V, H := int64(c.Vocab), int64(c.Hidden)
	top := map[string][]int64{"Embed": {V, H}, "Norm": {H}}
	if !c.TieEmbed {
		top["LMHead"] = []int64{V, H}
	}
	if p := c.PerLayer; p != nil {
		LP := int64(len(c.Layers) * p.Hidden)
		top["PerLayerEmbed"], top["PerLayerProj"], top["PerLayerProjNorm"] = []int64{int64(p.Vocab), LP}, []int64{LP, H}, []int64{int64(p.Hidden)}
	}
	add("", reflect.TypeFor[hf.Weights](), top)
	if c.TieEmbed {
		m.index["LMHead"] = m.index["Embed"]
	}
	for i := range c.Layers {
		add(fmt.Sprintf("layers.%d.", i), reflect.TypeFor[hf.LayerWeights](), layerShapes(c, i))
	}
	return m, nil
}

// layerShapes are the shapes of layer i's weights, by hf.LayerWeights field.
func layerShapes(c *hf.Config, i int) map[string][]int64 {
	l := c.Layers[i]
	H, D := int64(c.Hidden), int64(l.HeadDim)
	q, kv := int64(c.Heads)*D, int64(l.KVHeads)*D
	s := map[string][]int64{"Q": {q, H}, "O": {H, q}}
	opt := func(on bool, name string, shape ...int64) {
		if on {
			s[name] = shape
		}
	}
	olmo := c.Arch == "olmo2" // norms after attention and MLP only
	opt(!olmo, "AttnNorm", H)
	opt(!olmo, "MLPNorm", H)
	opt(olmo, "PostAttnNorm", H)
	opt(olmo, "PostMLPNorm", H)
	qn, kn := D, D
	if c.QKNormFull {
		qn, kn = q, kv
	}
	opt(c.QKNorm, "QNorm", qn)
	opt(c.QKVBias, "QBias", q)
	opt(c.OBias, "OBias", H)
	if l.KVFrom < 0 {
		s["K"] = []int64{kv, H}
		opt(c.QKNorm, "KNorm", kn)
		opt(c.QKVBias, "KBias", kv)
		if !l.KEqV {
			s["V"] = []int64{kv, H}
			opt(c.QKVBias, "VBias", kv)
		}
	}
	if l.MLP {
		I := int64(l.Intermediate)
		s["Gate"], s["Up"], s["Down"] = []int64{I, H}, []int64{I, H}, []int64{H, I}
		opt(c.MLPBias, "GateBias", I)
		opt(c.MLPBias, "UpBias", I)
		opt(c.MLPBias, "DownBias", H)
	}
	if l.MoE {
		E, I := int64(c.MoE.Experts), int64(c.MoE.Intermediate)
		s["Router"] = []int64{E, H}
		s["GateExperts"], s["UpExperts"], s["DownExperts"] = []int64{E, I, H}, []int64{E, I, H}, []int64{E, H, I}
		if S := int64(c.MoE.Shared); S > 0 {
			s["SharedGate"], s["SharedUp"], s["SharedDown"], s["SharedExpertGate"] = []int64{S, H}, []int64{S, H}, []int64{H, S}, []int64{1, H}
		}
	}
	if !c.Gemma() {
		return s
	}
	for _, n := range []string{"PostAttnNorm", "PostMLPNorm"} {
		s[n] = []int64{H}
	}
	if c.Arch == "gemma4_text" {
		s["LayerScalar"] = []int64{1}
	}
	if l.MoE {
		s["RouterScale"], s["ExpertScale"] = []int64{H}, []int64{int64(c.MoE.Experts)}
		for _, n := range []string{"PostMLPNorm1", "PreMoENorm", "PostMoENorm"} {
			s[n] = []int64{H}
		}
	}
	if p := c.PerLayer; p != nil {
		P := int64(p.Hidden)
		s["PerLayerGate"], s["PerLayerProj"], s["PerLayerNorm"] = []int64{P, H}, []int64{H, P}, []int64{H}
	}
	return s
}
