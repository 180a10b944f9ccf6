// TestPoolLateThread's driver: rt/pool.c with a thread late for the last
// generation arriving while tpucc_pool_run writes the next call's job, the
// moment in which one took a part that did not exist (pool.c's take). No
// pool thread is started: this thread plays both parts, in that order.
#include <stdio.h>
#include <stdint.h>

static void late(uint32_t g);
#define TPUCC_POOL_LATE(g) late(g)
#include "../rt/pool.c"

static int first[2], second[64];
static int late_took;

static void count(void *bufs, int64_t lo, int64_t hi, void *scratch) {
	(void)scratch;
	for (int64_t i = lo; i < hi; i++)
		((int *)bufs)[i]++;
	if (late_took >= 0)
		late_took += (int)(hi - lo);
}

// late is a thread that saw generation g-1 and reaches take only now.
static void late(uint32_t g) {
	late_took = 0;
	take(g - 1);
	printf("late thread took %d parts; left %u\n", late_took, (unsigned)atomic_load(&left));
	late_took = -1;
}

int main(void) {
	void *scratch[64] = {0};
	late_took = -1;
	tpucc_pool_run(count, first, 2, 1, scratch);
	tpucc_pool_run(count, second, 64, 1, scratch);
	int wrong = 0;
	for (int i = 0; i < 2; i++)
		wrong += first[i] != 1;
	for (int i = 0; i < 64; i++)
		wrong += second[i] != 1;
	printf("rows run other than once: %d; left %u\n", wrong, (unsigned)atomic_load(&left));
	return 0;
}
