/* A yardstick for the simulator core's speed (once its ceiling; the core now beats it: docs/sim.md): a bare
 * page-mapped FTL with greedy GC and nothing else (no timing model, no write buffer, no host queue, no
 * statistics), on tlc-4k's geometry: 2 GiB user capacity, 7 % OP,
 * 4 KiB mapping unit, 16 dies x 4 pages x (4 planes x 16 KiB) per superblock = 1024 slots, GC while at most 2
 * superblocks are free. It writes 4K random at steady state and prints simulated writes per CPU second, with the
 * same prefetches the core makes (mapping entry of a write a few ahead, its old slot's reverse-map entry, the
 * victim's mapping entries before they are rewritten); PREFETCH=0 builds it without them.
 *
 *     cc -O2 -o /tmp/sim_ceiling benchmarks/sim_ceiling.c && /tmp/sim_ceiling [phases]
 *
 * With `-` for phases it times one phase per line read on its standard input, until end of input (flushing its
 * output after each): benchmarks/sim_speed.py drives it so, alternating its phases with the core's, so both see
 * the same load.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#ifndef PREFETCH
#define PREFETCH 1
#endif
#define UNMAPPED 0xFFFFFFFFu
#define AHEAD 4 /* writes drawn ahead */

static uint32_t n_lpn, spb, n_blk, *l2p, *p2l, *valid, *freeq, free_head, free_cnt;
static uint32_t host_blk = UNMAPPED, host_slot, gc_blk = UNMAPPED, gc_slot;
static int32_t *bprev, *bnext, *bhead;
static uint8_t *closed;
static int64_t min_hint;
static uint64_t rng = 88172645463325252ULL, moved;

static uint64_t rng_next(void) { /* xorshift64*, as the core */
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1DULL;
}

static uint32_t random_lpn(void) { return (uint32_t)(((unsigned __int128)rng_next() * n_lpn) >> 64); }

static void *big_alloc(size_t bytes) { /* 2 MiB aligned, transparent huge pages where there are, as the core */
    void *p = NULL;
    size_t align = 2u << 20, size = (bytes + align - 1) / align * align;
    if (posix_memalign(&p, align, size) != 0) exit(1);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(p, size, MADV_HUGEPAGE);
#endif
    return p;
}

/* closed blocks per valid count, newest first: greedy takes the head of the lowest non-empty bucket */
static void bucket_insert(uint32_t b) {
    uint32_t v = valid[b];
    bprev[b] = -1;
    bnext[b] = bhead[v];
    if (bhead[v] >= 0) bprev[bhead[v]] = (int32_t)b;
    bhead[v] = (int32_t)b;
    if (v < min_hint) min_hint = v;
}

static void bucket_remove(uint32_t b) {
    uint32_t v = valid[b];
    if (bprev[b] >= 0) bnext[bprev[b]] = bnext[b];
    else bhead[v] = bnext[b];
    if (bnext[b] >= 0) bprev[bnext[b]] = bprev[b];
}

static uint32_t pop_free(void) {
    uint32_t b = freeq[free_head];
    free_head = (free_head + 1) % n_blk;
    free_cnt--;
    valid[b] = 0;
    closed[b] = 0;
    return b;
}

static void push_free(uint32_t b) {
    freeq[(free_head + free_cnt) % n_blk] = b;
    free_cnt++;
    valid[b] = 0;
    closed[b] = 0;
}

static void place(uint32_t *blk, uint32_t *slot, uint32_t lpn);

static void gc_one(void) {
    int64_t v = min_hint;
    while (bhead[v] < 0) v++;
    min_hint = v;
    uint32_t b = (uint32_t)bhead[v], base = b * spb;
    bucket_remove(b);
    closed[b] = 0;
    if (PREFETCH)
        for (uint32_t s = base; s < base + spb; s++) {
            uint32_t lpn = p2l[s];
            __builtin_prefetch(&l2p[lpn == UNMAPPED ? 0 : lpn], 1, 1);
        }
    for (uint32_t s = base; s < base + spb; s++) {
        uint32_t lpn = p2l[s];
        if (lpn == UNMAPPED) continue;
        p2l[s] = UNMAPPED;
        valid[b]--;
        place(&gc_blk, &gc_slot, lpn);
        moved++;
    }
    push_free(b);
}

static void place(uint32_t *blk, uint32_t *slot, uint32_t lpn) {
    if (*blk == UNMAPPED || *slot >= spb) {
        if (*blk != UNMAPPED) {
            closed[*blk] = 1;
            bucket_insert(*blk);
        }
        if (blk == &host_blk)
            while (free_cnt <= 2) gc_one();
        *blk = pop_free();
        *slot = 0;
    }
    uint32_t s = *blk * spb + (*slot)++;
    p2l[s] = lpn;
    l2p[lpn] = s;
    valid[*blk]++;
}

static void invalidate(uint32_t s) {
    uint32_t b = s / spb;
    p2l[s] = UNMAPPED;
    if (closed[b]) {
        bucket_remove(b);
        valid[b]--;
        bucket_insert(b);
    } else {
        valid[b]--;
    }
}

int main(int argc, char **argv) {
    n_lpn = (uint32_t)((2ULL << 30) / 4096);
    spb = 16 * 4 * (4 * 16384 / 4096);
    n_blk = (uint32_t)((n_lpn * 1.07 + spb - 1) / spb) + 2 + 2; /* the core's block count for tlc-4k */
    l2p = big_alloc(4ULL * n_lpn);
    p2l = big_alloc(4ULL * n_blk * spb);
    memset(p2l, 0xFF, 4ULL * n_blk * spb);
    valid = calloc(n_blk, 4);
    freeq = calloc(n_blk, 4);
    bprev = calloc(n_blk, 4);
    bnext = calloc(n_blk, 4);
    bhead = calloc(spb + 2, 4);
    closed = calloc(n_blk, 1);
    for (uint32_t v = 0; v <= spb; v++) bhead[v] = -1;
    for (uint32_t b = 0; b < n_blk; b++) push_free(b);
    for (uint32_t lpn = 0; lpn < n_lpn; lpn++) place(&host_blk, &host_slot, lpn); /* laid out sequentially */
    int on_request = argc > 1 && strcmp(argv[1], "-") == 0;
    int phases = on_request ? 0 : argc > 1 ? atoi(argv[1]) : 5;
    uint32_t next[AHEAD];
    for (int k = 0; k < AHEAD; k++) next[k] = random_lpn();
    char line[64];
    /* phase -1 (2 capacities) reaches steady state, untimed */
    for (int phase = -1; phase < phases || (on_request && fgets(line, sizeof(line), stdin)); phase++) {
        uint64_t n = 2ULL * n_lpn, moved0 = moved;
        struct timespec a, z;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
        for (uint64_t i = 0; i < n; i++) {
            uint32_t lpn = next[i % AHEAD];
            next[i % AHEAD] = random_lpn();
            if (PREFETCH) {
                __builtin_prefetch(&l2p[next[i % AHEAD]], 1, 1);
                uint32_t m = l2p[next[(i + 1) % AHEAD]];
                if (m != UNMAPPED) __builtin_prefetch(&p2l[m], 1, 1);
            }
            invalidate(l2p[lpn]);
            place(&host_blk, &host_slot, lpn);
        }
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &z);
        double cpu = (double)(z.tv_sec - a.tv_sec) + (double)(z.tv_nsec - a.tv_nsec) * 1e-9;
        if (phase >= 0)
            printf("bare greedy-GC FTL, tlc-4k geometry: %llu 4K random writes in %.3f CPU-s = %.2f M per CPU second "
                   "(WA %.2f)\n", (unsigned long long)n, cpu, (double)n / cpu / 1e6,
                   1.0 + (double)(moved - moved0) / (double)n);
        else if (on_request)
            printf("ready: steady state after %llu 4K random writes\n", (unsigned long long)n);
        fflush(stdout);
    }
    return 0;
}
