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
// memory to hold one. Its steps cannot run. The weights are those of
// c.Layout(), which hf.Load fills, in the same order, stacked as New
// stacks them.
func Abstract(c *hf.Config, dt ir.DType) (*Model, error) {
	if err := computable(c); err != nil {
		return nil, err
	}
	m := newModel(c)
	m.index = map[string]int{}
	// lead is the stack's leading dimension, or none.
	add := func(prefix string, fields reflect.Type, shapes map[string][]int64, lead ...int64) {
		for i := range fields.NumField() {
			name := fields.Field(i).Name
			if s, ok := shapes[name]; ok {
				m.index[prefix+name] = len(m.Params)
				m.Params = append(m.Params, Param{Name: prefix + name, Type: ir.Tensor(dt, append(lead, s...)...)})
			}
		}
	}
	layout := c.Layout()
	add("", reflect.TypeFor[hf.Weights](), layout.Top)
	if c.TieEmbed {
		m.index["LMHead"] = m.index["Embed"]
	}
	for _, g := range m.groups {
		for s := range g.period {
			shapes := layout.Layers[g.layer(s, 0)]
			if g.looped() {
				add(g.spec(s)+".", reflect.TypeFor[hf.LayerWeights](), shapes, int64(g.count))
			} else {
				add(fmt.Sprintf("layers.%d.", g.start), reflect.TypeFor[hf.LayerWeights](), shapes)
			}
		}
	}
	return m, nil
}
