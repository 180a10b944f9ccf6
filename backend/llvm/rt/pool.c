// The thread pool that splits a kernel call across the cores.
//
// Go calls a kernel through purego, as a cgo call. When a goroutine handed
// parts of every kernel call to other goroutines, each call cost wake-ups
// through the Go scheduler and the OS, and while calls ran the scheduler
// took their Ps and woke threads to look for work: on 2 cores the
// transformer block ran 200+ context switches per run and its median was
// 30% above its best run. Here one call from Go runs a whole split kernel:
// the calling thread and the pool's threads take parts from a shared
// counter, and the threads look for the next call for a while before they
// sleep.
#define _GNU_SOURCE
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef void (*kernel)(void *bufs, int64_t lo, int64_t hi, void *scratch);

// The call being run: written by its caller before gen moves, read by the
// threads after they took a part (the caller waits for every part, so the
// fields do not change under a part).
static struct {
	kernel fn;
	void *bufs;
	int64_t rows, chunk;
	_Atomic int64_t parts;
	void **scratch;
} job;

static _Atomic uint64_t next;  // generation << 32 | the next part to take

// closed is a generation's part counter when nothing is left to take.
static const uint64_t closed = UINT32_MAX;
static _Atomic uint32_t gen;   // the generation threads wait on (futex word)
static _Atomic uint32_t left;  // parts not done (futex word)
static _Atomic int waiting;    // the caller sleeps on left
static _Atomic int sleepers;   // threads asleep on gen
static _Atomic int busy;       // a caller holds the pool
static _Atomic int started;

// spin_ns is how long a thread looks before it sleeps: longer than the Go
// code between two kernel calls, short against a kernel call.
static const int64_t spin_ns = 100000;

static int64_t now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void futex_wait(_Atomic uint32_t *w, uint32_t v) {
	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w) {
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

// take runs parts of generation g until none is left.
//
// A thread can come here late: it saw generation g, and the caller has
// since finished g and begun the next call. Its test below may then read
// the next call's job.parts (larger, say) against g's exhausted counter;
// when next still held g's counter at that moment, the compare-and-swap
// took a part that does not exist, ran it with the next call's fields and
// counted it off the next call's left, which went below zero: the caller
// waited for ever (a bf16 decode hung so, 2026-12-07, left 0xffffffff). The
// caller now closes g (begin) before it writes the next job, and a thread
// that read the new job after the fence reads the closed counter too, so
// its swap fails.
static void take(uint32_t g) {
	for (;;) {
		uint64_t v = atomic_load_explicit(&next, memory_order_acquire);
		if ((uint32_t)(v >> 32) != g || (int64_t)(uint32_t)v >= atomic_load_explicit(&job.parts, memory_order_relaxed))
			return;
		atomic_thread_fence(memory_order_acquire);
		if (!atomic_compare_exchange_weak_explicit(&next, &v, v + 1, memory_order_acq_rel, memory_order_acquire))
			continue;
		int64_t p = (int64_t)(uint32_t)v;
		int64_t lo = p * job.chunk, hi = lo + job.chunk < job.rows ? lo + job.chunk : job.rows;
		job.fn(job.bufs, lo, hi, job.scratch[p]);
		if (atomic_fetch_sub(&left, 1) == 1 && atomic_load(&waiting))
			futex_wake(&left);
	}
}

static void *thread(void *arg) {
	(void)arg;
	uint32_t seen = atomic_load(&gen);
	for (;;) {
		int64_t t0 = now_ns();
		uint32_t g;
		for (int i = 0; (g = atomic_load_explicit(&gen, memory_order_acquire)) == seen; i++) {
			__builtin_ia32_pause();
			if ((i & 63) == 63 && now_ns() - t0 > spin_ns) {
				// sleepers is counted before the wait checks gen, and the
				// caller moves gen before it reads sleepers (both
				// sequentially consistent), so no wake-up is lost.
				atomic_fetch_add(&sleepers, 1);
				futex_wait(&gen, seen);
				atomic_fetch_sub(&sleepers, 1);
			}
		}
		seen = g;
		take(g);
	}
	return NULL;
}

// tpucc_pool_start starts n-1 threads (once); 0 when they run.
int tpucc_pool_start(int64_t n) {
	if (atomic_exchange(&started, 1))
		return 0;
	for (int64_t i = 1; i < n; i++) {
		pthread_t t;
		pthread_attr_t a;
		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &a, thread, NULL) != 0)
			return -1;
		pthread_attr_destroy(&a);
	}
	return 0;
}

// begin closes the last generation's counter (take says why) and returns
// the next generation, whose job the caller writes next. The release fence
// orders the close before those writes: a late thread that reads the new
// job.parts (then its acquire fence) finds the closed counter.
static uint32_t begin(void) {
	uint32_t g = atomic_load_explicit(&gen, memory_order_relaxed) + 1;
	atomic_store_explicit(&next, (uint64_t)(g - 1) << 32 | closed, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	return g;
}

// publish publishes generation g's job: its counter, then gen, on which the
// threads wait.
static void publish(uint32_t g) {
	atomic_store_explicit(&next, (uint64_t)g << 32, memory_order_release);
	atomic_store(&gen, g);
	if (atomic_load(&sleepers) > 0)
		futex_wake(&gen);
}

// tpucc_pool_run runs fn over [0, rows) in parts of chunk rows, part p with
// scratch[p], and returns when every part is done. A caller that finds the
// pool held by another runs every part itself.
void tpucc_pool_run(kernel fn, void *bufs, int64_t rows, int64_t chunk, void **scratch) {
	int64_t parts = (rows + chunk - 1) / chunk;
	if (parts <= 1 || atomic_exchange_explicit(&busy, 1, memory_order_acquire)) {
		fn(bufs, 0, rows, scratch[0]);
		return;
	}
	uint32_t g = begin();
	job.fn = fn, job.bufs = bufs, job.rows = rows, job.chunk = chunk, job.scratch = scratch;
	atomic_store_explicit(&job.parts, parts, memory_order_relaxed);
	atomic_store_explicit(&left, (uint32_t)parts, memory_order_relaxed);
#ifdef TPUCC_POOL_LATE
	TPUCC_POOL_LATE(g); // TestPoolLateThread: a thread late for g-1 comes here
#endif
	publish(g);
	take(g);
	int64_t t0 = now_ns();
	for (int i = 0; atomic_load_explicit(&left, memory_order_acquire) != 0; i++) {
		__builtin_ia32_pause();
		if ((i & 63) == 63 && now_ns() - t0 > spin_ns) {
			atomic_store(&waiting, 1);
			uint32_t l = atomic_load(&left);
			if (l != 0)
				futex_wait(&left, l);
		}
	}
	atomic_store(&waiting, 0);
	atomic_store_explicit(&busy, 0, memory_order_release);
}
