package tpu

// CPU makes d the description of a CPU as the "cpu" target: d with its name
// set to "cpu" and its Kind to KindCPU, in the same terms as the TPUs so that
// one cost model and one report cover every target.
//
// The host's own numbers are not here: they are the machine's, not a
// product's, so backend/cpu measures them where it runs (cpu.Host: cores,
// SIMD width and caches from the operating system) and describes the host
// with this function. This package cannot import backend/cpu, which builds on
// it; runtime.LookupTarget is where "cpu" and the TPU names meet.
//
// On a CPU, values are stored row-major without tiles or padding, and every
// matmul dtype runs through f32 FMAs: tpucc computes bf16 and f16 in f32 (the
// numerics every backend shares), and integer dots have no faster path in
// the kernels.
func CPU(d Target) *Target {
	d.name = "cpu"
	d.Kind = KindCPU
	return &d
}
