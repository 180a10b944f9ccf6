// limits measures this machine's limits that bench/cpu and bench/models
// report fractions of: the f32 FMA peak (every core running independent vector
// FMA chains), where the compiler targets AVX512-BF16 the bf16 dot peak
// (vdpbf16ps chains into f32 accumulators, the bf16 products' instruction), and
// the streaming memory bandwidth (a STREAM-style triad over arrays far larger
// than the caches). Built with -O3 -march=native; prints two lines, or three
// with AVX512-BF16:
//
//   fma_peak_flops N
//   bf16_dot_peak_flops N
//   stream_bytes_per_s N
#ifdef __AVX512BF16__
#include <immintrin.h>
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

// The widest vector the machine has: AVX-512's 16 floats where the compiler
// targets it (-march=native), else AVX's 8. A core whose 512-bit FMAs are
// native (Zen 5, most AVX-512 Xeons) does twice the work per instruction of
// 256-bit ones, so chains of 8-float vectors measured half its peak there.
#ifdef __AVX512F__
enum { LANES = 16 };
#else
enum { LANES = 8 };
#endif
typedef float vec __attribute__((vector_size(4 * LANES)));

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

enum { CHAINS = 12, ITERS = 50 * 1000 * 1000 };

// fma_chains runs CHAINS independent chains of vector multiply-adds, enough to hide
// the FMA latency on two FMA ports; the result is returned so nothing is
// optimised away.
static void *fma_chains(void *arg) {
	vec acc[CHAINS];
	vec m, a;
	for (int l = 0; l < LANES; l++) m[l] = 1.0000001f, a[l] = 1e-7f;
	for (int c = 0; c < CHAINS; c++) acc[c] = a * (float)(c + 1);
	for (long i = 0; i < ITERS; i++)
		for (int c = 0; c < CHAINS; c++) acc[c] = acc[c] * m + a;
	float s = 0;
	for (int c = 0; c < CHAINS; c++)
		for (int l = 0; l < LANES; l++) s += acc[c][l];
	*(float *)arg = s;
	return NULL;
}

#ifdef __AVX512BF16__
// dot_chains is fma_chains with vdpbf16ps: each instruction multiplies 32
// bf16 pairs and adds them, two by two, into 16 f32 accumulators (64 FLOPs,
// twice an f32 FMA's). The operands are small powers of two, so the sums
// stay exact and far from overflow.
static void *dot_chains(void *arg) {
	__m512 acc[CHAINS];
	__m512bh m = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1.0f / 1024), _mm512_set1_ps(1.0f / 1024));
	__m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1.0f), _mm512_set1_ps(1.0f));
	for (int c = 0; c < CHAINS; c++) acc[c] = _mm512_set1_ps((float)c);
	for (long i = 0; i < ITERS; i++)
		for (int c = 0; c < CHAINS; c++) acc[c] = _mm512_dpbf16_ps(acc[c], m, a);
	__m512 s = acc[0];
	for (int c = 1; c < CHAINS; c++) s = _mm512_add_ps(s, acc[c]);
	*(float *)arg = _mm512_reduce_add_ps(s);
	return NULL;
}
#endif

// peak runs chains on every core (n of them) three times and returns the
// best rate, flops_per_iter being one thread's FLOPs per ITERS step.
static double peak(void *(*chains)(void *), int n, double flops_per_iter) {
	pthread_t th[64];
	float sink[64];
	double best = 0;
	for (int rep = 0; rep < 3; rep++) {
		double t0 = now();
		for (int i = 0; i < n; i++) pthread_create(&th[i], NULL, chains, &sink[i]);
		for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
		double r = (double)n * ITERS * flops_per_iter / (now() - t0);
		if (r > best) best = r;
	}
	return best;
}

struct triad { float *a, *b, *c; long lo, hi; };

static void *triad(void *arg) {
	struct triad *t = arg;
	for (long i = t->lo; i < t->hi; i++) t->a[i] = t->b[i] + 3.0f * t->c[i];
	return NULL;
}

int main(void) {
	int n = (int)sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t th[64];
	if (n > 64) n = 64;
	printf("fma_peak_flops %.6g\n", peak(fma_chains, n, CHAINS * LANES * 2));
#ifdef __AVX512BF16__
	printf("bf16_dot_peak_flops %.6g\n", peak(dot_chains, n, CHAINS * 16 * 2 * 2));
#endif

	long len = 64L << 20; // 3 arrays of 256 MiB
	float *a = malloc(len * 4), *b = malloc(len * 4), *c = malloc(len * 4);
	if (!a || !b || !c) return 1;
	for (long i = 0; i < len; i++) a[i] = 0, b[i] = 1, c[i] = 2;
	struct triad parts[64];
	double best = 0;
	for (int rep = 0; rep < 5; rep++) {
		double t0 = now();
		for (int i = 0; i < n; i++) {
			parts[i] = (struct triad){a, b, c, len * i / n, len * (i + 1) / n};
			pthread_create(&th[i], NULL, triad, &parts[i]);
		}
		for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
		double r = 3.0 * len * 4 / (now() - t0);
		if (r > best) best = r;
	}
	printf("stream_bytes_per_s %.6g\n", best);
	return a[len / 2] == 7.0f ? 0 : 0;
}
