package stablehlo

import (
	"github.com/tpucc/tpucc/ir"
)

// elementwise maps the StableHLO (and CHLO) names of ir's unary and binary
// elementwise ops to them; the op table's StableHLO field is the one list.
var elementwise = func() map[string]ir.Op {
	m := map[string]ir.Op{}
	for _, o := range ir.Ops() {
		if h := o.Info().StableHLO; h != "" {
			m[h] = o
		}
	}
	return m
}()

// structured are the other ops read, each mapped by build.go.
var structured = map[string]bool{
	"stablehlo.constant": true, "stablehlo.compare": true, "stablehlo.select": true,
	"stablehlo.clamp": true, "stablehlo.convert": true, "stablehlo.reshape": true,
	"stablehlo.broadcast_in_dim": true, "stablehlo.transpose": true, "stablehlo.slice": true,
	"stablehlo.concatenate": true, "stablehlo.pad": true, "stablehlo.iota": true,
	"stablehlo.dot_general": true, "stablehlo.dot": true, "stablehlo.reduce": true,
	"stablehlo.reduce_window": true, "stablehlo.dynamic_slice": true,
	"stablehlo.dynamic_update_slice": true, "stablehlo.gather": true, "stablehlo.dynamic_gather": true, "stablehlo.scatter": true,
	"stablehlo.return": true, "func.return": true, "return": true, "func.call": true, "call": true,
	"stablehlo.is_finite": true, "chlo.top_k": true, "chlo.erf_inv": true, "chlo.lgamma": true, "chlo.digamma": true, "chlo.next_after": true, "sdy.sharding_constraint": true, "stablehlo.sort": true,
	"stablehlo.reverse": true, "stablehlo.get_dimension_size": true, "stablehlo.composite": true,
	"stablehlo.dynamic_pad": true, "stablehlo.optimization_barrier": true,
	"stablehlo.dynamic_iota": true, "stablehlo.dynamic_reshape": true, "stablehlo.dynamic_broadcast_in_dim": true,
	"stablehlo.while": true, "stablehlo.case": true, "stablehlo.if": true,
	"stablehlo.convolution": true, "stablehlo.dynamic_conv": true, "stablehlo.select_and_scatter": true,
	"stablehlo.triangular_solve": true, "stablehlo.reduce_precision": true,
	"stablehlo.bitcast_convert": true, "stablehlo.map": true, "stablehlo.custom_call": true,
	"stablehlo.fft": true, "stablehlo.rng_bit_generator": true, "stablehlo.tuple": true, "stablehlo.get_tuple_element": true,
	"stablehlo.uniform_quantize": true, "stablehlo.uniform_dequantize": true,
}

func (s *scanner) checkSupported(o *op) {
	_, coll := collectiveOps[o.name]
	if _, ok := elementwise[o.name]; ok || coll || structured[o.name] || s.tests && (checkOps[o.name] || o.name == runParallel || o.name == probeOp) {
		return
	}
	s.failf(o.pos, "unsupported op %s", o.name)
}

// pretty reads the custom assembly form of o.name, after the name.
func (s *scanner) pretty(o *op) {
	s.checkSupported(o)
	switch o.name {
	case "return", "func.return", "stablehlo.return":
		s.prettyReturn(o)
		return
	case "call", "func.call":
		o.attrs["callee"] = &attr{pos: s.pos(), kind: attrStr, text: s.sigil('@', "a callee")}
		s.expect("(")
		for !s.accept(")") {
			if len(o.args) > 0 {
				s.expect(",")
			}
			o.args = append(o.args, s.use())
		}
	case "stablehlo.custom_call":
		// stablehlo.custom_call @target(%a, ...) {attrs} : (T, ...) -> R
		o.attrs["call_target_name"] = &attr{pos: s.pos(), kind: attrStr, text: s.sigil('@', "a call target")}
		s.expect("(")
		for !s.accept(")") {
			if len(o.args) > 0 {
				s.expect(",")
			}
			o.args = append(o.args, s.use())
		}
		if s.peek("{") {
			for k, v := range s.attrDict() {
				o.attrs[k] = v
			}
		}
	case "stablehlo.constant":
		s.skip()
		if !s.peek("dense<") {
			s.failf(s.pos(), "unsupported constant form %s", s.found())
		}
		a := s.attrValue(false)
		o.attrs["value"], o.outs = a, []ir.Type{a.dense.typ}
		return
	case "stablehlo.compare":
		o.attrs["comparison_direction"] = s.attrValue(false)
		s.expect(",")
		s.prettyArgs(o)
	case "stablehlo.reduce":
		s.prettyReduce(o)
		return
	case "stablehlo.convolution":
		s.prettyConv(o)
		return
	case "stablehlo.while":
		s.prettyWhile(o)
		return
	case "check.expect_eq_const", "check.expect_almost_eq_const", "check.expect_eq", "check.expect_almost_eq":
		s.prettyCheck(o)
		return
	case "stablehlo.composite":
		s.prettyComposite(o)
		return
	case "stablehlo.optimization_barrier":
		// %a, %b = stablehlo.optimization_barrier %x, %y : T, U
		for len(o.args) == 0 || s.accept(",") {
			o.args = append(o.args, s.use())
		}
		s.expect(":")
		o.ins, o.outs = s.opType()
		return
	case "stablehlo.replica_id", "stablehlo.partition_id":
		// %r = stablehlo.replica_id : tensor<ui32>: no operands, no attributes
	case "stablehlo.tuple", "stablehlo.get_tuple_element":
		s.prettyTuple(o)
		return
	case probeOp, "check.expect_serialized_eq":
		// interpreter.probe %x, probe_id = "id" : T
		// check.expect_serialized_eq %x, probe_id = "id"[, iter = N] : T
		o.args = append(o.args, s.use())
		for s.accept(",") {
			name := s.needWord("an attribute")
			s.expect("=")
			o.attrs[name] = s.attrValue(false)
		}
		s.expect(":")
		if _, o.outs = s.opType(); o.name != probeOp {
			o.outs = nil
		}
		return
	case "sdy.sharding_constraint":
		s.prettyShardingConstraint(o)
		return
	case "chlo.top_k":
		// chlo.top_k(%x, k = N) : T -> (T, T)
		s.expect("(")
		o.args = append(o.args, s.use())
		s.expect(",")
		s.expect("k")
		s.expect("=")
		o.attrs["k"] = s.attrValue(false)
		s.expect(")")
	default:
		s.prettyArgs(o)
	}
	s.expect(":")
	o.ins, o.outs = s.opType()
	if o.name == "stablehlo.select" && o.ins == nil && len(o.outs) == 2 {
		// select %p, %a, %b : PRED_TYPE, RESULT_TYPE
		o.ins, o.outs = o.outs[:1], o.outs[1:]
	}
}

func (s *scanner) prettyReturn(o *op) {
	if !s.peek("%") {
		return
	}
	for {
		o.args = append(o.args, s.use())
		if !s.accept(",") {
			break
		}
	}
	s.expect(":")
	s.opType()
}

// prettyArgs reads operands and then pretty attributes: key = value,
// [a:b:c, ...] slice bounds, dims = [0] x [1] pairs, and a trailing
// compare type word.
func (s *scanner) prettyArgs(o *op) {
	for s.peek("%") {
		o.args = append(o.args, s.use())
		if !s.accept(",") {
			if s.peek("[") {
				s.sliceBounds(o)
			}
			return
		}
	}
	if s.peek("[") {
		s.sliceBounds(o)
		return
	}
	for {
		s.skip()
		pos := s.pos()
		key := s.needWord("an attribute")
		if !s.accept("=") {
			o.attrs["compare_type"] = &attr{pos: pos, kind: attrWord, text: key}
		} else {
			v := s.attrValue(false)
			if s.accept("x") {
				v = &attr{pos: v.pos, kind: attrList, list: []*attr{v, s.attrValue(false)}}
				key += "_pair"
			}
			o.attrs[key] = v
		}
		if !s.accept(",") {
			return
		}
	}
}

// sliceBounds reads [start:limit(:stride)?, ...].
func (s *scanner) sliceBounds(o *op) {
	pos := s.pos()
	s.expect("[")
	var start, limit, stride []*attr
	for !s.accept("]") {
		if len(start) > 0 {
			s.expect(",")
		}
		start = append(start, s.attrValue(false))
		s.expect(":")
		limit = append(limit, s.attrValue(false))
		st := &attr{pos: s.pos(), kind: attrNum, text: "1"}
		if s.accept(":") {
			st = s.attrValue(false)
		}
		stride = append(stride, st)
	}
	o.attrs["start_indices"] = &attr{pos: pos, kind: attrList, list: start}
	o.attrs["limit_indices"] = &attr{pos: pos, kind: attrList, list: limit}
	o.attrs["strides"] = &attr{pos: pos, kind: attrList, list: stride}
}

// prettyReduce reads (%x init: %c), ... applies OP across dimensions = [..] : T
// or ... across dimensions = [..] : T reducer(%a: T, %b: T) (...) { body }.
func (s *scanner) prettyReduce(o *op) {
	var inits []operand
	for {
		s.expect("(")
		o.args = append(o.args, s.use())
		s.expect("init")
		s.expect(":")
		inits = append(inits, s.use())
		s.expect(")")
		if !s.accept(",") {
			break
		}
	}
	o.args = append(o.args, inits...)
	applies := ""
	if s.accept("applies") {
		applies = s.needWord("a reducer op")
	}
	s.expect("across")
	s.expect("dimensions")
	s.expect("=")
	o.attrs["dimensions"] = s.attrValue(false)
	s.expect(":")
	o.ins, o.outs = s.opType()
	if applies != "" {
		o.attrs["applies"] = &attr{pos: o.pos, kind: attrWord, text: applies}
		return
	}
	s.expect("reducer")
	var params []param
	for s.peek("(") {
		ps := s.blockParams()
		params = append(params, ps...)
	}
	o.regions = append(o.regions, s.block(reorderReducer(params)))
}

// reorderReducer: the pretty reducer lists (%a0, %b0) (%a1, %b1) per input;
// the block's parameter order is a0, a1, ..., b0, b1, ....
func reorderReducer(ps []param) []param {
	n := len(ps) / 2
	out := make([]param, 0, len(ps))
	for i := 0; i < n; i++ {
		out = append(out, ps[2*i])
	}
	for i := 0; i < n; i++ {
		out = append(out, ps[2*i+1])
	}
	return out
}
