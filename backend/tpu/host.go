package tpu

// CPU is the host tpucc runs on, measured (../shared/reference/tpu.md, "This
// machine"): an AMD EPYC with 2 cores and AVX-512, seen through KVM. It is
// described here, in the same terms as the TPUs, so that --target cpu gets
// the same cost report; backend/cpu's code generator may take it over.
//
// Values are stored row-major without tiles or padding. Every matmul dtype
// runs through f32 FMAs: tpucc computes bf16 and f16 in f32 (the numerics
// every backend shares), and integer dots have no faster path in our kernels.
var CPU = &Target{
	name:       "cpu",
	Chip:       "host CPU (AMD EPYC, 2 cores, AVX-512)",
	Kind:       KindCPU,
	Cores:      2, // lscpu: 2 cores, 1 thread each
	MemoryName: "RAM",
	Memory:     24683584 * KiB, // /proc/meminfo MemTotal on this machine
	Bandwidth:  28e9,           // measured: streaming add of 1M floats, ~28 GB/s
	LocalBytes: 1 * MiB,        // L2 per core (lscpu)
	Caches: []Cache{
		{Name: "L1d", Bytes: 48 * KiB},              // L1d per core (lscpu)
		{Name: "L2", Bytes: 1 * MiB},                // per core (lscpu)
		{Name: "L3", Bytes: 32 * MiB, Shared: true}, // one for both cores (lscpu)
	},
	SIMDBits:   512,     // AVX-512: 16 f32 lanes
	MatmulBF16: 453e9,   // computed in f32: the f32 FMA peak
	MatmulInt8: 453e9,   // likewise
	MatmulF32:  453e9,   // measured FMA peak, AVX-512, 2 cores (OpenBLAS sgemm reaches ~310)
	Vector:     226.5e9, // half the FMA peak: one op per lane where an FMA counts two
	// TranscendentalOps: a vectorised exp or log is a range reduction and a
	// polynomial of about ten multiply-adds (as LLVM's and XLA:CPU's are);
	// an estimate, not a measurement.
	TranscendentalOps: 10,
}
