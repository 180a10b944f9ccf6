package target

// CPU makes d the description of a CPU as the "cpu" target: d with its name
// set to "cpu" and its Kind to KindCPU, in the same terms as the TPUs so that
// one cost model and one report cover every target.
//
// The host's own numbers are not here: they are the machine's, not a
// product's, so Host (machine.go) measures them where it runs (cores, SIMD
// width and caches from the operating system) and describes the host with
// this function; engine.LookupTarget is where "cpu" and the TPU names meet.
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

// ReferenceCPU is a fixed CPU description, for what must not depend on the
// machine it runs on (the cost model's tests, the compiler's version
// fingerprint): the 2-core AVX-512 AMD EPYC under KVM that the
// figures of docs/TARGETS.md were once measured on (lscpu, /proc/meminfo, a
// streaming add and the FMA peak). The real host is backend/cpu's Host.
var ReferenceCPU = CPU(Target{
	Chip:       "host CPU (AMD EPYC, 2 cores, AVX-512)",
	Cores:      2,
	MemoryName: "RAM",
	Memory:     24683584 * 1024,
	Bandwidth:  28e9,
	LocalBytes: 1 << 20,
	Caches: []Cache{
		{Name: "L1d", Bytes: 48 << 10},
		{Name: "L2", Bytes: 1 << 20},
		{Name: "L3", Bytes: 32 << 20, Shared: true},
	},
	SIMDBits:          512,
	MatmulBF16:        453e9,
	MatmulInt8:        453e9,
	MatmulF32:         453e9,
	Vector:            226.5e9,
	TranscendentalOps: 10,
})
