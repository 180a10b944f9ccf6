package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes"
	"github.com/tpucc/tpucc/target"
)

// build hands its --target to the passes (passes.Options.Target), which fuse and
// assign-layout read: every target description must be a passes.Target.
var _ passes.Target = (*target.Target)(nil)

// costReport is build --report's text: a header naming the target, one row per kernel
// of the optimised f (target.Singletons: each fusion, and each instruction the fuse pass
// left on its own), the totals, the memory line and, when the program does not fit, a
// warning. The text depends only on the program and the target.
func costReport(f *ir.Func, t *target.Target) (string, error) {
	if err := paddedSizes(f, t); err != nil {
		return "", err
	}
	an, err := target.Analyze(f, t, nil)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cost report: @%s on %s\n", f.Name, t.Name())
	fmt.Fprintf(&b, "target: %s\n", describe(t))

	names := ir.ValueNames(f)
	tab := &table{right: []bool{true, false, false, false, true, true, true, true, true, true, false}}
	tab.add("#", "group", "op", "result", "FLOPs", "transc", "bytes", "pad", "MXU", "time", "bound")
	compute := 0
	for i, g := range an.Groups {
		c := an.Costs[i]
		root := g[len(g)-1]
		op := groupOp(g)
		name, types := "-", make([]string, len(root.Results))
		for j, r := range root.Results {
			types[j] = r.Type.WithShape(r.Type.Shape).String() // without the layout: the bytes column says what it costs
		}
		if len(root.Results) > 0 {
			name = "%" + names[root.Results[0]]
		}
		if c.ComputeBound() {
			compute++
		}
		tab.add(strconv.Itoa(i+1), name, op, strings.Join(types, ", "),
			strconv.FormatInt(c.FLOPs, 10), strconv.FormatInt(c.Transcendentals, 10),
			strconv.FormatInt(c.Bytes(), 10), strconv.FormatInt(c.PadBytes(), 10),
			mxuUse(t, c), seconds(c.Seconds), bound(c))
	}
	tot := an.Total
	groups := fmt.Sprintf("%d groups", len(an.Groups))
	if len(an.Groups) == 1 {
		groups = "1 group"
	}
	tab.add("", "total", groups, "",
		strconv.FormatInt(tot.FLOPs, 10), strconv.FormatInt(tot.Transcendentals, 10),
		strconv.FormatInt(tot.Bytes(), 10), strconv.FormatInt(tot.PadBytes(), 10),
		mxuUse(t, tot), seconds(tot.Seconds),
		fmt.Sprintf("%d compute, %d memory", compute, len(an.Groups)-compute))
	b.WriteString(tab.String())

	fmt.Fprintf(&b, "traffic: %s of %s bytes are tile padding", percent(tot.PadBytes(), tot.Bytes()), strconv.FormatInt(tot.Bytes(), 10))
	if tot.MatmulFLOPs > 0 && t.Kind == target.KindTPU {
		fmt.Fprintf(&b, "; the MXU runs %d FLOPs for %d useful", tot.PaddedMatmulFLOPs, tot.MatmulFLOPs)
	}
	b.WriteString("\n")
	b.WriteString(loopNotes(f))
	b.WriteString(customCallNotes(f))
	fp := an.Footprint()
	fmt.Fprintf(&b, "memory: parameters %d + constants %d + peak activations %d = %d bytes (%s) of %s %s\n",
		an.ParamBytes, an.ConstBytes, an.PeakBytes, fp, binary(fp), binary(t.Memory), t.MemoryName)
	if !an.Fits() {
		fmt.Fprintf(&b, "warning: @%s needs %s of %s, more than one %s chip has (%s)\n",
			f.Name, binary(fp), t.MemoryName, t.Name(), binary(t.Memory))
	}
	return b.String(), nil
}

// compiledMemory is the report's line of what each chip's memory holds as
// the plugin compiled the program (pjrt.MemoryStats), beside the memory
// line's estimate: for a program split over mesh, one chip's share.
func compiledMemory(s pjrt.MemoryStats, t *target.Target, topology string, mesh *ir.Mesh) string {
	chips := "on one chip of " + topology
	if mesh != nil {
		chips = fmt.Sprintf("per chip, @%s split over the %d chips of %s", mesh.Name, mesh.Devices(), topology)
	}
	line := fmt.Sprintf("compiled memory %s: arguments %d + outputs %d - aliased %d + temporaries %d + code %d = %d bytes (%s) of %s %s\n",
		chips, s.Arguments, s.Outputs, s.Alias, s.Temp, s.GeneratedCode, s.Total(), binary(s.Total()), binary(t.Memory), t.MemoryName)
	if s.Total() > t.Memory {
		line += fmt.Sprintf("warning: the compiled program needs %s of %s per chip, more than one %s chip has (%s)\n",
			binary(s.Total()), t.MemoryName, t.Name(), binary(t.Memory))
	}
	return line
}

// describe is the target line of the report: the figures the model uses.
func describe(t *target.Target) string {
	mem := fmt.Sprintf("%s %s at %s", binary(t.Memory), t.MemoryName, decimal(t.Bandwidth, "B/s", 1e9))
	if t.Kind == target.KindCPU {
		var caches []string
		for _, c := range t.Caches {
			scope := " per core"
			if c.Shared {
				scope = " shared"
			}
			caches = append(caches, c.Name+" "+binary(c.Bytes)+scope)
		}
		return fmt.Sprintf("%s: %d cores, %d-bit SIMD, %s; %s; peaks %s f32 matmul, %s vector",
			t.Chip, t.Cores, t.SIMDBits, strings.Join(caches, ", "), mem,
			decimal(t.MatmulF32, "FLOP/s", 1e12), decimal(t.Vector, "FLOP/s", 1e12))
	}
	cores := "TensorCore"
	if t.Cores > 1 {
		cores += "s"
	}
	passes := "pass"
	if t.F32Passes != 1 {
		passes = "passes"
	}
	return fmt.Sprintf("%s: %d %s x %d MXUs of %dx%d, VMEM %s per core; %s; peaks %s bf16, %s f32 matmul (%d bf16 %s), %s int8, %s vector",
		t.Chip, t.Cores, cores, t.MXUs, t.MXUSize, t.MXUSize, binary(t.LocalBytes), mem,
		decimal(t.MatmulBF16, "FLOP/s", 1e12), decimal(t.MatmulF32, "FLOP/s", 1e12), t.F32Passes, passes,
		decimal(t.MatmulInt8, "OP/s", 1e12), decimal(t.Vector, "FLOP/s", 1e12))
}

func bound(c target.Cost) string {
	if c.ComputeBound() {
		return "compute"
	}
	return "memory"
}

// mxuUse is the useful share of the MXU's FLOPs, or - without a matmul or an MXU.
func mxuUse(t *target.Target, c target.Cost) string {
	if c.PaddedMatmulFLOPs == 0 || t.Kind != target.KindTPU {
		return "-"
	}
	return percent(c.MatmulFLOPs, c.PaddedMatmulFLOPs)
}

func percent(part, whole int64) string {
	if whole <= 0 {
		return "0%"
	}
	return strconv.FormatFloat(100*float64(part)/float64(whole), 'f', 1, 64) + "%"
}

// seconds writes a time with three significant digits in ns, us, ms or s.
func seconds(s float64) string {
	switch {
	case s == 0:
		return "0 s"
	case s < 1e-6:
		return sig3(s*1e9) + " ns"
	case s < 1e-3:
		return sig3(s*1e6) + " us"
	case s < 1:
		return sig3(s*1e3) + " ms"
	}
	return sig3(s) + " s"
}

// decimal writes a rate with an SI prefix up to top (1e9 or 1e12), as the vendors
// write them: 819 GB/s, 7380 GB/s, 197 TFLOP/s, 1836 TOP/s.
func decimal(x float64, unit string, top float64) string {
	for _, p := range []struct {
		scale  float64
		prefix string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if x >= p.scale && p.scale <= top {
			return sig3(x/p.scale) + " " + p.prefix + unit
		}
	}
	return sig3(x) + " " + unit
}

// binary writes a size in KiB, MiB or GiB, three significant digits.
func binary(n int64) string {
	x := float64(n)
	for _, p := range []struct {
		scale float64
		unit  string
	}{{1 << 40, "TiB"}, {1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if x >= p.scale {
			return sig3(x/p.scale) + " " + p.unit
		}
	}
	return strconv.FormatInt(n, 10) + " B"
}

// sig3 is x with three significant digits, or rounded to a whole number from 999.5 on
// (never an exponent).
func sig3(x float64) string {
	if x >= 999.5 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// table aligns cells in columns two spaces apart; right[i] right-aligns column i.
type table struct {
	right []bool
	rows  [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) String() string {
	width := make([]int, len(t.right))
	for _, r := range t.rows {
		for i, c := range r {
			width[i] = max(width[i], len(c))
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		var line strings.Builder
		for i, c := range r {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-len(c))
			if t.right[i] {
				line.WriteString(pad + c)
			} else {
				line.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	return b.String()
}

// groupOp names a group's kernel: its root op, "+N" for N more fused
// instructions. A fusion instruction is named by its kind and the op that
// roots it (the dot_general of an output fusion, the reduction or composite
// of an input fusion, the last op of a loop fusion): "output:dot_general+3".
func groupOp(g []*ir.Instr) string {
	root := g[len(g)-1]
	if root.Op != ir.OpFusion || len(g) != 1 {
		op := root.Op.String()
		if len(g) > 1 {
			op += "+" + strconv.Itoa(len(g)-1)
		}
		return op
	}
	a, _ := root.Attr.(*ir.FusionAttr)
	var body []*ir.Instr
	for _, x := range root.FusionBody().Instrs {
		if x.Op != ir.OpReturn && x.Op != ir.OpConstant {
			body = append(body, x)
		}
	}
	if len(body) == 0 || a == nil {
		return "fusion"
	}
	main := body[len(body)-1]
	for _, x := range body {
		g := x.Op.Info().Group
		if (a.Kind == ir.FusionOutput && x.Op == ir.OpDotGeneral) ||
			(a.Kind == ir.FusionInput && (g == ir.GroupReduction || g == ir.GroupComposite && !x.Op.Info().Elementwise)) {
			main = x
			break
		}
	}
	op := a.Kind.String() + ":" + main.Op.String()
	if len(body) > 1 {
		op += "+" + strconv.Itoa(len(body)-1)
	}
	return op
}

// loopNotes says, for each while of f (nested ones too), how often the
// report counted its body: its trip count when the IR shows it
// (ir.TripCount), else once, which it says.
func loopNotes(f *ir.Func) string {
	var b strings.Builder
	names := ir.ValueNames(f)
	f.Body.Walk(func(in *ir.Instr) {
		if in.Op != ir.OpWhile || len(in.Results) == 0 {
			return
		}
		name := "%" + names[in.Results[0]]
		if n, ok := ir.TripCount(in); ok {
			fmt.Fprintf(&b, "loop %s (%s): runs %d times; its body is counted %d times\n", name, in.Pos, n, n)
			return
		}
		fmt.Fprintf(&b, "loop %s (%s): the trip count depends on the data; its body is counted once\n", name, in.Pos)
	})
	return b.String()
}

// customCallNotes says where the FLOPs of each custom_call come from: its
// cost attribute, or nothing (counted as 0), since its kernel is opaque.
func customCallNotes(f *ir.Func) string {
	var b strings.Builder
	names := ir.ValueNames(f)
	f.Body.Walk(func(in *ir.Instr) {
		a, ok := in.Attr.(*ir.CustomCallAttr)
		if !ok {
			return
		}
		name := "custom_call @" + a.Target
		if len(in.Results) > 0 {
			name = "%" + names[in.Results[0]] + " = " + name
		}
		if a.HasCost {
			fmt.Fprintf(&b, "%s (%s): %d FLOPs, from its cost attribute\n", name, in.Pos, a.Cost)
			return
		}
		fmt.Fprintf(&b, "%s (%s): no cost attribute; counted as 0 FLOPs\n", name, in.Pos)
	})
	return b.String()
}
