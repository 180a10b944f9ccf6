// Package target describes the machines tpucc compiles for, as data, and
// estimates what a program costs on them.
//
// A Target is one --target value: the TPU generations v4, v5e, v5p, v6e and
// v7x (generations.go, one struct each, every number with its source), and the
// host CPU, which Host measures (machine.go) and describes in the same terms
// with CPU (host.go), so that one cost model and one report cover every
// target. Lookup finds a TPU generation by name; engine.LookupTarget finds any. A *Target
// implements passes.Target (declared by passes, so that neither package
// imports the other): tiling per dtype, device bytes, the MXU width, VMEM,
// and the roofline time of a group of instructions.
//
// The cost model is a roofline per group, where a group is a set of
// instructions that runs as one kernel: it reads each operand defined outside
// the group once and writes each result used outside it once, in the padded
// tiled size the target stores it in, and takes
//
//	max(matmul FLOPs / MXU peak + vector ops / vector peak, bytes / HBM bandwidth).
//
// Until the fuse pass exists every instruction is its own group (Singletons);
// a fusion instruction, one whose region holds the fused body, is a group by
// itself, and a pass that is still choosing groups can hand any partition to
// GroupCost or Analyze. docs/TARGETS.md says what each number means and where
// it comes from.
package target
