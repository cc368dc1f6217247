/* ssdlab simulated SSD: the native core.
 *
 * A page-mapped FTL over a superblock geometry (one erase block from every plane of every die), driven by
 * a closed-loop host (iodepth x numjobs outstanding I/Os) in virtual time (int64 nanoseconds).
 *
 * Timing is resource reservation in issue order: every host I/O, buffer flush, GC read/program and erase
 * reserves the die / channel / controller / host link it needs at the earliest time that resource is free.
 * Issue order is monotone in virtual time, which keeps the model deterministic and fast (no event objects).
 *
 * Mapping unit = indirection unit (IU). A program unit (pu) is one multi-plane page program on one die and
 * holds spu = planes * page / iu slots. A superblock holds pu_per_sb program units, striped over the dies.
 * Host writes go through a DRAM write buffer (FIFO, coalescing rewrites of pending IUs); the buffer is
 * flushed one program unit at a time into the host open superblock; GC relocations go to a separate open
 * superblock. Greedy (fewest valid slots) or FIFO (oldest closed) victim selection.
 *
 * The Python layer (ssdlab.sim.executor) owns workload parsing and result shaping; this file only knows
 * integers and doubles.
 */
#define _GNU_SOURCE
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <math.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define UNMAPPED 0xFFFFFFFFu
#define BUFBIT 0x80000000u
#define BS_FREE 0
#define BS_OPEN 1
#define BS_CLOSED 2
#define PLAT_BITS 6
#define PLAT_VAL 64
#define PLAT_NR 1856
#define NDIR 3
#define MAX_BSSPLIT 64
#define MAX_ZONES 16 /* zoned random_distribution: zones per direction */
#define STATE_MAGIC 0x53534453494d3034ULL /* "SSDSIM04" */
/* I/Os drawn ahead (a power of 2), so their mapping entries are fetched well before they are needed; the
 * reverse-map entry of the I/O P2L_AHEAD after the current one is fetched (its mapping entry was fetched
 * NX_AHEAD - P2L_AHEAD I/Os ago). On tlc-4k's 4K random writes (benchmarks/sim_ab.py) 16/4 is ~5 % faster
 * than 4/1 (~10 % than the 3/1 of before), 8/2 and 8/3 slower, 16/6 .. 32/12 within the noise. The draws are
 * the same whatever the distances (the results too). */
#ifndef NX_AHEAD
#define NX_AHEAD 16
#endif
#ifndef P2L_AHEAD
#define P2L_AHEAD 4
#endif

/* Inlined into the per-I/O loop whatever the compiler's size heuristics say: a call there costs a spill of the
 * loop's registers, and GCC drops the call of a function it did not inline that only prefetches (a prefetch has no
 * side effects to it, so it takes the function for pure and the call for dead code). */
#define HOT_INLINE static inline __attribute__((always_inline))

typedef struct {
    uint64_t ios[NDIR];
    uint64_t bytes[NDIR];
    double lat[NDIR];
} Interval;

/* An event of the closed-loop host: its time and slot; events order by time, then by slot */
typedef struct {
    int64_t key;
    int64_t slot;
} HeapEnt;
#define EV_KEY(e) ((e).key)
#define EV_SLOT(e) ((int32_t)(e).slot)

static inline int ev_before(HeapEnt a, HeapEnt b) { /* without branches: the outcome is a coin toss */
    return (a.key < b.key) | ((a.key == b.key) & (a.slot < b.slot));
}

/* a slot's I/O in flight: issued at t0, its size and direction, its completion path's time (drawn when it was
 * issued); pend while the host has not seen it complete */
typedef struct {
    int64_t t0, bs, cq;
    int32_t dir, pend;
} SlotIo;

typedef struct {
    int64_t gap; /* pacing gap (rate_ns, or a Poisson draw) */
    int64_t off; /* offset of a random I/O */
    int bi, dir; /* bssplit entry, direction */
} Draw;

/* Division by a run-time constant without a divide instruction (a divide costs tens of cycles and the hot
 * paths need several per I/O): a shift for a power of two, else Lemire's multiply-high, exact for every
 * 32-bit numerator ("Faster remainder by direct computation", 2019). */
typedef struct {
    uint64_t m;
    uint32_t d;
    int shift; /* >= 0: d is 1 << shift */
} Div32;

static void div32_init(Div32 *v, uint32_t d) {
    v->d = d;
    v->shift = -1;
    v->m = 0;
    if (d && (d & (d - 1)) == 0) v->shift = __builtin_ctz(d);
    else if (d) v->m = UINT64_MAX / d + 1;
}

static inline uint32_t div32(const Div32 *v, uint32_t a) {
    if (v->shift >= 0) return a >> v->shift;
    return (uint32_t)(((__uint128_t)v->m * a) >> 64);
}

static inline uint32_t mod32(const Div32 *v, uint32_t a) {
    if (v->shift >= 0) return a & (v->d - 1);
    uint64_t low = v->m * a;
    return (uint32_t)(((__uint128_t)low * v->d) >> 64);
}

/* A shared link (channel, host interface) as a calendar of 4.096 µs bins holding the busy time booked in
 * each. Requests are booked in issue order but may start earlier than requests booked before them (a
 * read that leaves an idle die early is not queued behind one from a backlogged die), so the link is
 * work-conserving. Beyond the horizon the link is treated as uncontended. */
#define CAL_SHIFT 12
#define CAL_W (1LL << CAL_SHIFT)
#define CAL_N_SHIFT 14
#define CAL_N (1 << CAL_N_SHIFT)
/* A bin of the ring in 32 bits: which bin it holds (bits 14..31 of the 32-bit bin number: its slot in the ring is
 * the rest) and the busy ns booked in it (0..4096, 13 bits). A bin whose tag is not that of the bin looked for
 * holds nothing for it, exactly as a comparison of the whole 32-bit bin number would say. Half the size of a
 * pair of words: the five calendars of a 4-channel drive take 320 KiB of cache, not 640. */
typedef uint32_t CalBin;
#define CAL_USED_BITS 13
static inline CalBin cal_bin(int64_t b, int64_t used) {
    return (((uint32_t)b >> CAL_N_SHIFT) << CAL_USED_BITS) | (uint32_t)used;
}
/* the busy ns booked in bin b, held in ring slot x */
static inline int64_t cal_used(CalBin x, int64_t b) {
    return (x >> CAL_USED_BITS) == ((uint32_t)b >> CAL_N_SHIFT) ? (int64_t)(x & ((1u << CAL_USED_BITS) - 1)) : 0;
}
typedef struct {
    CalBin bin[CAL_N];
    int64_t full_lo, full_hi; /* bins [full_lo, full_hi) are known to be fully booked */
    int64_t top; /* the highest bin booked since the calendar was cleared: every bin above it is empty */
    /* A bit per ring slot, set when its bin is booked full. Bins behind the live window (before now - 64 bins)
     * have their bits cleared as time passes them (dead_upto), so a set bit is a full bin of the live window,
     * and a booking skips a run of full bins 64 at a time instead of bin by bin (large transfers book far ahead
     * and every later one has to pass them). A clear bit proves nothing: that bin is looked at as before. */
    uint64_t full[CAL_N / 64];
    int64_t dead_upto; /* bits of bins below this are cleared */
    int64_t hw_now; /* the latest `now` seen: if time went back the bits are not used (not in the model today) */
    /* work past the horizon (deep queues of long transfers) runs one after another: a chain from far_lo to far; a
     * booking that would reach the chain joins it at its end (INT64_MAX: no chain) */
    int64_t far_lo, far;
} Cal;

static inline void cal_mark_full(Cal *c, int64_t b) {
    uint32_t p = (uint32_t)(b & (CAL_N - 1));
    c->full[p >> 6] |= 1ULL << (p & 63);
}

static inline int cal_is_full(const Cal *c, int64_t b) {
    uint32_t p = (uint32_t)(b & (CAL_N - 1));
    return (int)((c->full[p >> 6] >> (p & 63)) & 1);
}

/* the first bin from b on, below bound, whose bit is clear (every bin before it is full), or bound */
static inline int64_t cal_next_open(const Cal *c, int64_t b, int64_t bound) {
    while (b < bound) {
        uint32_t p = (uint32_t)(b & (CAL_N - 1));
        uint64_t open = ~c->full[p >> 6] >> (p & 63); /* from slot p to the end of its word */
        if (open) {
            b += __builtin_ctzll(open);
            return b < bound ? b : bound;
        }
        b += 64 - (p & 63);
    }
    return bound;
}

/* set (or clear) the bits of bins [b, b + n), n <= CAL_N, a word at a time */
static inline void cal_mark_range(Cal *c, int64_t b, int64_t n, int set) {
    while (n > 0) {
        uint32_t p = (uint32_t)(b & (CAL_N - 1)), sh = p & 63, k = 64 - sh;
        if (k > n) k = (uint32_t)n;
        uint64_t mask = (~0ULL >> (64 - k)) << sh; /* k bits from bit sh (1 <= k <= 64 - sh) */
        if (set) c->full[p >> 6] |= mask;
        else c->full[p >> 6] &= ~mask;
        b += k;
        n -= k;
    }
}

/* bins y[0..n) (contiguous in the ring, so one tag) booked full, the first one being bin b: four per 16-byte store */
typedef uint32_t U32x4 __attribute__((vector_size(16)));
static inline void cal_fill_full(CalBin *y, int64_t b, int64_t n) {
    const CalBin full = cal_bin(b, CAL_W);
    const U32x4 v = {full, full, full, full};
    int64_t q = 0;
    for (; q + 4 <= n; q += 4) memcpy(&y[q], &v, sizeof(v));
    for (; q < n; q++) y[q] = full;
}

/* clear the bits of the bins that fell behind the live window since the last call */
static inline void cal_forget(Cal *c, int64_t now) {
    int64_t dead_to = (now >> CAL_SHIFT) - 64;
    if (dead_to <= c->dead_upto) return;
    if (dead_to - c->dead_upto >= CAL_N) memset(c->full, 0, sizeof(c->full));
    else cal_mark_range(c, c->dead_upto, dead_to - c->dead_upto, 0);
    c->dead_upto = dead_to;
}

/* the general booking from bin b on (cal_book has made the checks and adjusted b) */
static int64_t cal_book_run(Cal *c, int64_t b, int64_t dur, int64_t now, int64_t end, int64_t limit) {
    int64_t left = dur;
    int use_bits = now >= c->hw_now;
    if (use_bits) {
        c->hw_now = now;
        cal_forget(c, now);
    }
    /* bins [run_start, run_end) are full afterwards: every bin the booking passes is full, or is filled up,
     * except the one it ends in */
    int64_t run_start = b, run_end = b;
    for (; b < limit; b++) {
        if (use_bits && b <= c->top && cal_is_full(c, b)) { /* a run of full bins: passed as the step below would */
            int64_t top1 = c->top + 1;
            b = cal_next_open(c, b, limit < top1 ? limit : top1);
            run_end = b;
            if (b >= limit) break;
        }
        CalBin *x = &c->bin[b & (CAL_N - 1)];
        if (b > c->top) {
            /* every bin from here on is empty (GC's program units mostly book there, a dozen bins each): fill
             * whole bins in one tight loop and end in the next, as the general step below would bin by bin */
            int64_t nfull = (left - 1) >> CAL_SHIFT;
            if (b + nfull < limit) {
                /* the ring's next lines beyond this booking were last used a wrap ago: fetch them for the next */
                __builtin_prefetch(&c->bin[(b + nfull + 8) & (CAL_N - 1)], 1, 1);
                __builtin_prefetch(&c->bin[(b + nfull + 16) & (CAL_N - 1)], 1, 1);
                for (int64_t k = 0; k < nfull;) { /* in runs of contiguous bins up to the ring's end */
                    CalBin *y = &c->bin[(b + k) & (CAL_N - 1)];
                    int64_t run = CAL_N - ((b + k) & (CAL_N - 1));
                    if (run > nfull - k) run = nfull - k;
                    cal_fill_full(y, b + k, run);
                    k += run;
                }
                cal_mark_range(c, b, nfull, 1);
                b += nfull;
                left -= nfull << CAL_SHIFT;
                if (nfull > 0) run_end = b;
                x = &c->bin[b & (CAL_N - 1)];
                *x = cal_bin(b, left);
                int64_t fin = (b << CAL_SHIFT) + left;
                if (fin > end) end = fin;
                if (left >= CAL_W) {
                    run_end = b + 1;
                    cal_mark_full(c, b);
                }
                left = 0;
                break;
            }
        }
        int64_t used = 0; /* a bin above the top, or not booked since the ring wrapped, is empty */
        if (b <= c->top) used = cal_used(*x, b);
        int64_t cap = CAL_W - used;
        if (cap >= left) { /* the booking ends in this bin */
            used += left;
            left = 0;
            *x = cal_bin(b, used);
            int64_t fin = (b << CAL_SHIFT) + used;
            if (fin > end) end = fin;
            if (used >= CAL_W) {
                run_end = b + 1;
                cal_mark_full(c, b);
            }
            break;
        }
        if (cap > 0) { /* fill it up and go on */
            *x = cal_bin(b, CAL_W);
            left -= cap;
            cal_mark_full(c, b);
        }
        run_end = b + 1;
    }
    if (b > c->top) c->top = b < limit ? b : limit - 1; /* the last bin this booking reached */
    if (left > 0) { /* past the horizon or at the chain: the rest at the chain's end */
        int64_t from = b << CAL_SHIFT;
        if (c->far_lo == INT64_MAX) c->far_lo = from;
        end = (from > c->far ? from : c->far) + left;
        c->far = end;
    }
    if (run_end > run_start) {
        if (run_start <= c->full_hi && run_start >= c->full_lo) c->full_hi = run_end > c->full_hi ? run_end : c->full_hi;
        else if (run_end - run_start > c->full_hi - c->full_lo || c->full_hi <= (now >> CAL_SHIFT)) {
            c->full_lo = run_start;
            c->full_hi = run_end;
        }
    }
    return end;
}

/* book dur ns of the link at the earliest time from t; returns when the transfer ends. Inlined: most bookings
 * (host transfers) end in their first bin without filling it, which takes a few compares */
HOT_INLINE int64_t cal_book(Cal *c, int64_t t, int64_t dur, int64_t now) {
    if (dur <= 0) return t;
    int64_t b = t >> CAL_SHIFT;
    if (t < now - CAL_W * 64) return t + dur;
    if (c->far <= now) c->far_lo = INT64_MAX; /* the chain has run out */
    int64_t limit = (now >> CAL_SHIFT) + CAL_N - 64;
    if (c->far_lo != INT64_MAX && (c->far_lo >> CAL_SHIFT) < limit) limit = c->far_lo >> CAL_SHIFT;
    if (b >= limit) { /* past the horizon, or at the chain: at the chain's end */
        if (c->far_lo == INT64_MAX) c->far_lo = t;
        int64_t end = (t > c->far ? t : c->far) + dur;
        c->far = end;
        return end;
    }
    int64_t end = t + dur;
    if (b >= c->full_lo && b < c->full_hi) b = c->full_hi;
    if (b < limit) {
        CalBin *x = &c->bin[b & (CAL_N - 1)];
        int64_t used = b <= c->top ? cal_used(*x, b) : 0;
        if (used + dur < CAL_W) {
            used += dur;
            *x = cal_bin(b, used);
            if (b > c->top) c->top = b;
            int64_t fin = (b << CAL_SHIFT) + used;
            return fin > end ? fin : end;
        }
    }
    return cal_book_run(c, b, dur, now, end, limit);
}

/* A distribution of a positive random factor of mean 1, as its quantile function at three levels of 64 bins, each
 * value x 65536: level 0 over p in [0, 1), level 1 over the top bin of level 0 ([63/64, 1)), level 2 over the top
 * bin of level 1 ([1 - 1/4096, 1), its last point at p = 1 - 2^-22). A draw picks a bin of level 0 with 6 random
 * bits, of level 1 with 6 more when that is the top one, of level 2 likewise, and interpolates linearly within the
 * bin with 14 more: the values form a continuous distribution whose tail is resolved to about one draw in 4 million
 * (a table of 256 values put the top 1/256 of the draws on its largest: p99.9 = max). Small (13 cache lines, 5 of
 * them for nearly every draw), as it is read for every command among the FTL's cache misses. */
#define DIST_BINS 64
typedef struct {
    uint32_t v[3][DIST_BINS + 1];
} Dist;

/* a draw of D (x 65536) from the 32 random bits r: bits 26..31 pick the bin of level 0, 20..25 and 14..19 those of
 * levels 1 and 2 when the bin above is the top one, bits 0..13 place the value in the bin */
static inline uint32_t dist_draw(const Dist *D, uint32_t r) {
    uint32_t i = r >> 26, f = r & 0x3FFF;
    const uint32_t *q = D->v[0];
    if (__builtin_expect(i == DIST_BINS - 1, 0)) {
        q = D->v[1];
        i = (r >> 20) & 63;
        if (i == DIST_BINS - 1) {
            q = D->v[2];
            i = (r >> 14) & 63;
        }
    }
    return q[i] + (uint32_t)(((uint64_t)(q[i + 1] - q[i]) * f) >> 14);
}

/* x scaled by a draw of D (mean x) from the 32 random bits r */
static inline int64_t dist_scale(const Dist *D, int64_t x, uint32_t r) { return (x * (int64_t)dist_draw(D, r)) >> 16; }

/* x varied by a symmetric triangular factor of half-width h (x 65536) around 1, from the 32 random bits r: the sum
 * of two uniform draws (no table: NAND op times and link transfers are varied this way on every I/O) */
static inline int64_t tri_scale(int64_t x, int64_t h, uint32_t r) {
    int64_t u = (int64_t)(r & 0xFFFF) + (int64_t)(r >> 16) - 65535; /* -65535 .. 65535, symmetric */
    return x + ((x * ((h * u) >> 16)) >> 16);
}

/* the two 32-bit halves of a 64-bit draw, each the random bits of one draw of a distribution */
#define HI32(r) ((uint32_t)((r) >> 32))
#define LO32(r) ((uint32_t)(r))

#define MAX_CORES 64
#define RA_STREAMS 8 /* sequential read streams the read-ahead follows */
#define RA_RING 64 /* prefetched chunks remembered per stream (a power of 2) */
#define DRIFT_SHIFT 26 /* the drive's speed drifts in segments of 67 ms */
#define PW_SHIFT 23 /* power governor: bins of 8.4 ms */
#define PW_N 4096 /* bins in its ring: 34 s ahead */
#define PW_BURST_NS (1LL << 17) /* host work may run this far ahead of the budget's share of a bin (131 us) */

typedef struct {
    int64_t next;          /* the byte offset a sequential read of this stream starts at next */
    int64_t pf_lo, pf_hi;  /* chunks [pf_lo, pf_hi) (chunk numbers) are prefetched or being prefetched */
    int64_t used;          /* when the stream last saw a read (LRU) */
    int hits;              /* sequential reads in a row */
    int64_t ready[RA_RING]; /* when chunk c (c % RA_RING) is in DRAM */
} RaStream;

typedef struct {
    PyObject_HEAD
    /* geometry */
    int64_t n_lpn;
    uint32_t n_blk, spb, spu, n_dies, n_ch, pu_per_sb, planes;
    int64_t iu_bytes, page_bytes;
    /* timing (ns) */
    int64_t t_r, t_prog, t_bers, xfer_iu, xfer_pu, fw_ns, ctrl_ns, slow_ns;
    int64_t ctrl_w_ns, slow_busy_ns; /* the controller's time per write; the slow path's serial part */
    int64_t slow_free; /* the slow path (one unaligned write at a time) is free from this time on */
    /* NAND timing per page type (LSB, CSB, MSB, TSB: `bits` of them), ns; the page type of a program unit is its
     * word line's (block x pages + page) modulo bits */
    int64_t tr_pt[4], tprog_pt[4];
    int bits;
    Div32 dv_bits;
    int64_t cmd_ns, cmd_bytes; /* per-command latency (submission, completion, interrupt) and link bytes */
    int64_t var_h, link_h; /* half-widths (x 65536) of the symmetric triangular variation of NAND ops and link transfers */
    /* slow drift of the drive's speed (temperature, supply and link conditions): NAND op times, channel and link
     * transfers and command service times are scaled by drift_q16 (x 65536), a symmetric triangular draw of half-width drift_h for
     * each segment of 2^DRIFT_SHIFT ns of the drive's clock (clock_base + t: it runs on across points) */
    int64_t drift_q16, drift_h, drift_seg, clock_base;
    double host_ns_drift, ch_ns_drift; /* ns per byte on the host link and a channel, drift included */
    uint64_t drift_key;
    /* read retry: a page read's raw bit error rate relative to the hard-decision limit is x = rber_m x a draw of
     * d_rber (x 65536: rber_m_q16); below 1 the ECC decodes it in ecc_ns x x^4 (its iterations grow as x nears the
     * limit: x^4), at or above 1 it needs 1 + floor(ln x / retry_lnr) extra sensing steps (each one more tR) */
    uint64_t rber_m_q16;
    double retry_lnr;
    int64_t ecc_ns;
    /* program/erase suspend: on/off, suspend latency, resume overhead, the least time a resumed op runs before it
     * can be suspended again (ns), suspensions per op (0: no limit) */
    int suspend;
    int64_t susp_ns, resume_ns, slice_ns;
    uint32_t susp_max;
    uint64_t trng; /* the timing draws' own generator (the workload's draws stay as they were) */
    int64_t host_xfer_iu; /* host link time of one IU, as do_write computes it for len = iu_bytes */
    double host_ns_per_byte, ch_ns_per_byte;
    int gc_policy; /* 0 greedy, 1 fifo */
    Div32 dv_spb, dv_spu, dv_dies, dv_ch, dv_depth, dv_spp; /* dv_spp: slots per plane of a unit */ /* divisions by geometry constants */
    int iu_shift; /* log2(iu_bytes) when it is a power of two, else -1 */
    uint32_t gc_free_min;
    /* background (idle-time) GC: relocation rate (bytes per ns, 0 = none), idle delay, free-pool target */
    double bg_rate;
    int64_t bg_delay_ns;
    uint32_t bg_target;
    int64_t buf_slots, flush_thr;
    /* map cache */
    int64_t map_entries, n_mp, mc_cap, mc_hand, mc_count;
    uint8_t *mc_flags; /* bit0 resident, bit1 referenced, bit2 dirty */
    int64_t *mc_ring;
    /* power */
    double p_cap, p_idle;
    double e_read, e_prog_pu, e_erase_sb, e_io;
    /* the power governor (gov: the cap can bind; see pw_fit): the budget (cap - idle, mW), the energy booked per bin
     * by host work and by program/erase work (pJ), the bins' tags, what host work overfilled (pJ) */
    int gov;
    int64_t pw_cap_mw;
    int64_t e_read_pj, e_prog_pj, e_erase_pj, e_io_pj; /* one page read, one unit program, one die's erase, a command */
    int64_t *pw_h, *pw_p;
    uint32_t *pw_tag;
    int64_t pw_debt, pw_pay_b; /* the debt; the first bin it may be paid in */
    double pw_ns_per_pj; /* 1 / the budget (ns a pJ of it lasts) */
    /* FTL state */
    uint32_t *l2p, *p2l, *valid;
    int64_t n_mapped; /* LPNs that hold data (l2p entries not UNMAPPED) */
    uint8_t *bstate;
    int32_t *bprev, *bnext; /* the lists of closed blocks per valid count (bucket_insert) */
    uint32_t *freeq, free_head, free_cnt;
    uint32_t *fifoq, fifo_head, fifo_cnt;
    uint32_t host_blk, host_slot, gc_blk, gc_slot;
    int64_t gc_min_hint;
    /* write buffer */
    uint32_t *ring;
    int64_t ring_cap, ring_head, ring_cnt, pend_live, ring_lim;
    int64_t *infl_t, *infl_n, infl_cap, infl_head, infl_cnt, infl_occ, infl_last;
    int64_t rmw_ready;
    int64_t space_t; /* buffer space handed out so far is free from this time on */
    int64_t carry_end; /* end of the previous point: its unfinished NAND work carries over */
    /* resources */
    int64_t *die_free, *ch_free;
    /* the controller: n_cores cores; a command holds the earliest free one for its core time (mean svc_r_ns for a
     * read, svc_w_ns for a write: cores / ceiling), scaled by its firmware-time draw; its latency is that draw of
     * fw_lat_r_ns / fw_lat_w_ns (the firmware time, at least the core time). be_q16: the share of a read's core time
     * spent on its NAND back end (mapping lookup, NAND command, ECC), skipped by a read served from DRAM (x 65536) */
    uint32_t n_cores;
    int64_t svc_r_ns, svc_w_ns, fw_lat_r_ns, fw_lat_w_ns, be_q16;
    /* firmware housekeeping: the next task's start, the mean gap between tasks and their mean length (ns) */
    int64_t hk_next, hk_gap_ns, hk_len_ns;
    /* read-ahead: streams of sequential reads, chunk size (bytes), how far ahead (bytes); page registers: the unit
     * (gpu) whose page each read unit of each die holds, valid while the die's P/E epoch is the one it was read in */
    int64_t ra_bytes, ra_chunk;
    int ra_on;
    uint32_t *reg_gpu, *reg_epoch, *pe_epoch;
    /* die_free: the end of the program/erase (and GC) work booked on each die; reads take priority over it */
    int64_t *op_len;   /* length of the last P/E op booked on the die (the op in progress, as an estimate) */
    int64_t *rd_die;   /* end of the last read on the die (any plane): P/E work waits for it */
    int64_t *rd_from;  /* start of the die's current read window (reads back to back up to rd_die) */
    int64_t *rd_push;  /* reads up to this time have already delayed the die's P/E work */
    int64_t *susp_op;  /* end of the op the last suspension interrupted (identifies it) */
    int64_t *susp_cnt; /* suspensions of that op */
    int64_t *rd_plane; /* end of the last read per read unit (die x read_units): they read independently */
    uint32_t read_units; /* planes of a die that read independently (1: the die reads one page at a time) */
    /* GC in steps: the victim being cleaned, its next program unit, relocation owed (slots x 256) and owed per host
     * slot while GC runs (x 256, set when the victim is chosen) */
    uint32_t gc_vb, gc_vpu;
    int64_t gc_debt, gc_ratio;
    uint32_t gc_start; /* GC runs in steps while fewer superblocks than this are free */
    Cal *cal_ch, *cal_host;
    int64_t cal_now;
    /* lifetime counters */
    uint64_t c_host_w_bytes, c_host_r_bytes, c_host_w_slots, c_nand_w_slots, c_gc_slots, c_gc_runs,
        c_erases, c_rmw_reads, c_nand_reads, c_map_miss, c_map_wr, c_merges, c_trim_slots;
    double c_energy;
    /* run state */
    int running;
    uint64_t rng;
    int time_based, trim_mode, random;
    int rmix; /* percent reads (0..100) */
    int rd_only; /* the point issues reads only: a die's back-to-back reads keep its P/E work suspended */
    int64_t range_start, range_len, align;
    /* block sizes: table 0 for every I/O, or for reads when writes have a table of their own (table 1, bssplit_w);
     * a table is entries [bs_first, bs_first + bs_n) with cumulative weights out of bs_total */
    int nbs, bs_split;
    int bs_first[2], bs_n[2];
    int64_t bs_val[2 * MAX_BSSPLIT];
    uint32_t bs_cum[2 * MAX_BSSPLIT];
    uint32_t bs_total[2];
    int64_t bs_nblk[2 * MAX_BSSPLIT]; /* aligned start offsets of each block size in the range */
    /* zoned random_distribution (fio zoned:A/R:...): per direction, a weighted choice of zone, then a uniform
       aligned offset inside it; nzones 0 = uniform over the range */
    int nzones[NDIR];
    int64_t z_start[NDIR][MAX_ZONES], z_len[NDIR][MAX_ZONES];
    uint32_t z_cum[NDIR][MAX_ZONES], z_total[NDIR];
    int64_t iodepth, numjobs, nslots;
    int64_t t_meas, t_end, io_limit, rate_ns, interval_ns;
    int poisson;
    int64_t *job_pos, *job_issued, *job_next;
    int64_t *job_gate; /* rate_iops: the next time a held submission of the job is woken (one per rate gap) */
    int64_t pos_n; /* entries of job_pos (the previous point's jobs) */
    int64_t *slot_issue;
    uint8_t *slot_gated;
    SlotIo *sio; /* each slot's I/O in flight */
    int64_t cq_last; /* when the host saw the last completion (the completion queue is read in order) */
    HeapEnt *heap; /* the pending events: a sorted ring (ev_ring) or a binary heap (ev_head 0) */
    int64_t heap_n;
    int ev_ring;
    uint32_t ev_head, ev_mask;
    uint32_t ev_inserts, ev_shifts; /* the ring's insertions and the entries they shifted, this window */
    Draw nx[NX_AHEAD]; /* the next I/Os' draws, a ring from nx_head */
    int plain; /* PLAIN_WRITE, PLAIN_READ: this point is only that (advance_loop), else 0 */
    int nx_head;
    int64_t t_now, t_last_done;
    /* stats */
    uint64_t st_n[NDIR], st_bytes[NDIR];
    double st_sum[NDIR], st_sq[NDIR];
    int64_t st_min[NDIR], st_max[NDIR];
    int64_t *hist; /* NDIR * PLAT_NR */
    Interval *iv;
    int64_t iv_n, iv_cap;
    uint64_t all_ios[NDIR], all_bytes[NDIR];
    double all_lat;
    double run_energy0;
    /* histogram log: a ring of per-interval clat histograms indexed by completion interval */
    int64_t hl_ns, hl_base;
    int64_t *hl;
    /* large and read only now and then (kept out of the way of the fields every I/O reads) */
    /* the random factors (mean 1) of NAND op times (symmetric triangular), firmware time per command (log-normal),
     * the completion path (log-normal) and a read's raw bit error rate
     * relative to the hard-decision ECC limit (log-normal) */
    Dist d_fw, d_cmd, d_rber;
    int64_t core_free[MAX_CORES]; /* when each core is free (INT64_MAX beyond n_cores) */
    RaStream ra[RA_STREAMS];
    /* time scale (docs/sim.md, "Time and scale"): the model's capacity stands for a drive ts_q16 / 65536 times
     * larger, whose state a second of host writes moves that many times less. In a time-based point (thin) only one
     * host write in that many changes the drive's state (ts_acc counts); the others are phantoms: they cost what a
     * write costs the drive in its present state (command, link, buffer space, a program per unit of them on the
     * dies in turn and, while GC runs, its reads, programs and erases at the last victim's ratio) and leave the
     * mapping alone. Phantom slots waiting in the buffer (ph_pend), their next unit (ph_seq: die and page type),
     * GC owed by them (ph_mv slots moved, ph_rd victim units read, ph_er slots freed: x 256) */
    int64_t ts_q16, ts_acc, ph_pend, ph_mv, ph_rd, ph_er;
    uint32_t ph_seq, gc_v; /* gc_v: valid slots of the last victim when it was picked */
    double bg_paid; /* time-scaled idle GC: bytes of relocation paid towards the next victim (Dev_idle) */
    int thin;
} Dev;

#define HL_RING 64
#define PLAIN_WRITE 1
#define PLAIN_READ 2
#define SPU_MAX 128 /* slots per program unit at most: 8 planes x 64 KiB pages / 4 KiB IU */

/* ------------------------------------------------------------------ helpers */

/* large tables: 2 MiB aligned and, on Linux, backed by transparent huge pages (fewer TLB misses on the
 * random lookups that dominate the run time) */
static void *big_alloc(size_t bytes) {
    void *p = NULL;
    size_t align = 2u << 20;
    size_t size = (bytes + align - 1) / align * align;
    if (posix_memalign(&p, align, size) != 0) return NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(p, size, MADV_HUGEPAGE);
#endif
    return p;
}

/* xorshift64* */
static inline uint64_t xorshift_next(uint64_t *state) {
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* the workload's draws (offsets, sizes, directions, pacing) */
static inline uint64_t rng_next(Dev *d) { return xorshift_next(&d->rng); }

static inline uint64_t rng_below(Dev *d, uint64_t n) {
    return (uint64_t)(((__uint128_t)rng_next(d) * (__uint128_t)n) >> 64);
}

static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Offset of a random I/O of `bs` bytes in direction `dir`: aligned to `align` from range_start, inside the
 * range; with zones, the zone is drawn by its access weight and the start is uniform among the aligned starts
 * inside it (an I/O may run past the zone's end, never past the range's). */
static inline int64_t random_offset(Dev *d, int dir, int64_t bs) {
    int nz = d->nzones[dir];
    int64_t last = d->range_start + d->range_len - bs; /* the last start that fits */
    if (nz > 0) {
        int z = 0;
        if (nz > 1) {
            uint32_t r = (uint32_t)rng_below(d, d->z_total[dir]);
            while (z < nz - 1 && r >= d->z_cum[dir][z]) z++;
        }
        int64_t start = d->z_start[dir][z];
        int64_t end = start + d->z_len[dir][z] - 1;
        if (end > last) end = last;
        if (end >= start) return start + (int64_t)rng_below(d, (uint64_t)((end - start) / d->align + 1)) * d->align;
    }
    return d->range_start + (int64_t)rng_below(d, (uint64_t)((last - d->range_start) / d->align + 1)) * d->align;
}

static int plat_idx(int64_t v) {
    if (v < 0) v = 0;
    uint64_t u = (uint64_t)v;
    int msb = u ? 63 - __builtin_clzll(u) : 0;
    if (msb <= PLAT_BITS) return (int)u;
    int shift = msb - PLAT_BITS;
    int64_t idx = (int64_t)(shift + 1) * PLAT_VAL + (int64_t)((u >> shift) & (PLAT_VAL - 1));
    return idx < PLAT_NR ? (int)idx : PLAT_NR - 1;
}

static inline int64_t iu_div(const Dev *d, int64_t x) { /* x >= 0 */
    return d->iu_shift >= 0 ? x >> d->iu_shift : x / d->iu_bytes;
}

static inline int64_t iu_mod(const Dev *d, int64_t x) { /* x >= 0 */
    return d->iu_shift >= 0 ? x & (d->iu_bytes - 1) : x % d->iu_bytes;
}

/* a + b for ring positions a, b < n (no divide) */
static inline int64_t ring_add(int64_t a, int64_t b, int64_t n) {
    int64_t x = a + b;
    return x >= n ? x - n : x;
}

/* the timing draws (NAND op variation, firmware time, read retry, full erases): a generator of their own */
static inline uint64_t trng_next(Dev *d) { return xorshift_next(&d->trng); }

/* a NAND op time t varied by a draw of its distribution (mean t) */
static inline int64_t vary(const Dev *d, int64_t t, uint64_t r) {
    return tri_scale((t * d->drift_q16) >> 16, d->var_h, HI32(r));
}

/* the drive's speed factor for the segment of its clock that time t falls in (see Dev.drift_q16): a hash of the
 * segment, so it needs no state beyond the clock and does not depend on the order of the draws */
static void drift_update(Dev *d, int64_t t) {
    int64_t seg = (d->clock_base + t) >> DRIFT_SHIFT;
    uint64_t z = (uint64_t)seg * 0x9E3779B97F4A7C15ULL ^ d->drift_key;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    d->drift_seg = seg;
    d->drift_q16 = tri_scale(65536, d->drift_h, (uint32_t)z);
    d->host_ns_drift = d->host_ns_per_byte * (double)d->drift_q16 / 65536.0;
    d->ch_ns_drift = d->ch_ns_per_byte * (double)d->drift_q16 / 65536.0;
}

/* an exponential draw of mean m (ns), at least 1 */
static int64_t exp_draw(Dev *d, int64_t m) {
    double u = ((double)(trng_next(d) >> 11) + 0.5) / 9007199254740992.0;
    int64_t x = (int64_t)(-log(u) * (double)m);
    return x > 0 ? x : 1;
}

/* page type (0 LSB, 1 CSB, 2 MSB, 3 TSB) of global program unit gpu: its word line (block x pages + page) modulo
 * the bits per cell (gpu / dies is that word line: a superblock holds dies x pages units, die-major) */
static inline uint32_t ptype_of(const Dev *d, uint32_t gpu) {
    return d->bits > 1 ? mod32(&d->dv_bits, div32(&d->dv_dies, gpu)) : 0;
}

/* ------------------------------------------------------------------ power governor */

/* The governor keeps the energy booked in each bin of 2^PW_SHIFT ns under the budget (the cap less idle power, x the
 * bin's length): host work (commands, host reads) and program/erase work (programs, erases, GC's reads) apart. Host
 * work starts when the bins it spans have room for it among the host work booked there: it goes ahead of program/
 * erase work (the NAND scheduler serves reads first and suspends programs); the energy by which it then overfills a
 * bin is a debt that program/erase work pays back before it starts (it leaves that much of the budget unused), so
 * the average power stays at the cap. Program/erase work starts when the bins it spans have room under the budget
 * for it with everything booked there. Work booked later may use room left before work booked earlier. */

/* the slot of bin b in the ring, its contents cleared when it last held another bin */
static inline uint32_t pw_slot(Dev *d, int64_t b) {
    uint32_t x = (uint32_t)(b & (PW_N - 1)), tag = (uint32_t)(b >> 12);
    if (d->pw_tag[x] != tag) {
        d->pw_tag[x] = tag;
        d->pw_h[x] = d->pw_p[x] = 0;
    }
    return x;
}

/* the part of [s, s + dur) in bin b, ns */
static inline int64_t pw_overlap(int64_t b, int64_t s, int64_t dur) {
    int64_t lo = max64(s, b << PW_SHIFT), hi = s + dur;
    if (hi > (b + 1) << PW_SHIFT) hi = (b + 1) << PW_SHIFT;
    return hi - lo;
}

/* The earliest start from t at which program/erase work of dur ns drawing mw (mW = pJ per ns) fits under the budget
 * in every bin it spans, with everything booked there; it is booked there. Work that alone exceeds the budget runs in
 * the first empty bin; work beyond the ring's horizon is not held. */
static int64_t pw_fit(Dev *d, int64_t t, int64_t dur, int64_t mw) {
    const int64_t cap = d->pw_cap_mw << PW_SHIFT, now_b = d->cal_now >> PW_SHIFT;
    if (dur < 1) dur = 1;
    int64_t s = t > 0 ? t : 0, b0, b1;
    for (;;) {
        b0 = s >> PW_SHIFT;
        b1 = (s + dur - 1) >> PW_SHIFT;
        if (b1 - now_b >= PW_N - 1 || b0 < now_b - 64) return s;
        int64_t bad = -1;
        for (int64_t b = b0; b <= b1; b++) {
            uint32_t x = pw_slot(d, b);
            int64_t u = d->pw_h[x] + d->pw_p[x];
            if (u + mw * pw_overlap(b, s, dur) > cap && (u > 0 || b != b0)) {
                bad = b;
                break;
            }
        }
        if (bad < 0) break;
        s = (bad + 1) << PW_SHIFT;
    }
    for (int64_t b = b0; b <= b1; b++) d->pw_p[pw_slot(d, b)] += mw * pw_overlap(b, s, dur);
    return s;
}

/* program/erase work of dur ns and e_pj from t: the debt paid first (that much of the budget left unused in the
 * first bins with room from now on, as far as the ring reaches), then the work booked; returns its start */
static int64_t pw_pe(Dev *d, int64_t t, int64_t dur, int64_t e_pj) {
    const int64_t cap = d->pw_cap_mw << PW_SHIFT, now_b = d->cal_now >> PW_SHIFT;
    int64_t s = t > 0 ? t : 0;
    int64_t b = max64(now_b, d->pw_pay_b); /* bins before pw_pay_b were full when the debt was last paid */
    for (; d->pw_debt > 0 && b - now_b < PW_N - 1; b++) {
        uint32_t x = pw_slot(d, b);
        int64_t room = cap - d->pw_h[x] - d->pw_p[x];
        if (room <= 0) continue;
        int64_t take = room < d->pw_debt ? room : d->pw_debt;
        d->pw_p[x] += take;
        d->pw_debt -= take;
        if (d->pw_debt == 0) break;
    }
    d->pw_pay_b = b;
    d->pw_debt = 0; /* (beyond the horizon: forgotten) */
    if (dur < 1) dur = 1;
    return pw_fit(d, s, dur, (e_pj + dur - 1) / dur);
}

/* Host work (a host read with its command) of dur ns and e_pj at t: it starts when its bin has room for it among the
 * host work booked there, and no sooner than the bin's host energy (this work's included) is within the budget's
 * share of the bin so far, plus PW_BURST_NS of it: so the host's own demand is paced evenly under the budget (with
 * the bins alone, reads would spend a bin's budget at its start and wait for the next). It is booked in the bins it
 * spans (what it overfills is the debt). Returns when it can start. */
static int64_t pw_host(Dev *d, int64_t t, int64_t dur, int64_t e_pj) {
    const int64_t capc = d->pw_cap_mw << PW_SHIFT, now_c = d->cal_now >> PW_SHIFT;
    if (dur < 1) dur = 1;
    const int64_t mw = (e_pj + dur - 1) / dur, e = mw * dur;
    int64_t s = t > 0 ? t : 0;
    for (;;) {
        int64_t c = s >> PW_SHIFT;
        if (c - now_c >= PW_N - 1 || c < now_c - 64) return s; /* beyond the ring's horizon: not held */
        uint32_t x = pw_slot(d, c);
        int64_t h = d->pw_h[x] + e;
        if (d->pw_h[x] > 0 && h > capc) { /* the bin's budget is the host's at most */
            s = (c + 1) << PW_SHIFT;
            continue;
        }
        int64_t at = (c << PW_SHIFT) + (int64_t)((double)h * d->pw_ns_per_pj) - PW_BURST_NS; /* paced */
        if (at > s) s = at;
        if ((s + dur - 1) >> PW_SHIFT == c && (s >> PW_SHIFT) == c) { /* within the bin (nearly always) */
            int64_t over0 = d->pw_h[x] + d->pw_p[x] - capc;
            d->pw_h[x] += e;
            int64_t over1 = over0 + e;
            if (over1 > 0) d->pw_debt += over1 - (over0 > 0 ? over0 : 0);
            return s;
        }
        break;
    }
    for (int64_t cb = s >> PW_SHIFT; cb <= (s + dur - 1) >> PW_SHIFT; cb++) {
        if (cb - now_c >= PW_N - 1) break;
        uint32_t z = pw_slot(d, cb);
        int64_t over0 = d->pw_h[z] + d->pw_p[z] - capc;
        d->pw_h[z] += mw * pw_overlap(cb, s, dur);
        int64_t over1 = d->pw_h[z] + d->pw_p[z] - capc;
        if (over1 > 0) d->pw_debt += over1 - (over0 > 0 ? over0 : 0);
    }
    return s;
}

/* a command's energy, in the coarse bin of its start: the controller is not held by the governor (its share is
 * small; the NAND work a command brings is), what it overfills is the debt */
static inline void pw_cmd(Dev *d, int64_t s) {
    const int64_t nowc = d->cal_now >> PW_SHIFT, b = s >> PW_SHIFT;
    if (b - nowc >= PW_N - 1 || b < nowc - 64) return;
    uint32_t x = pw_slot(d, b);
    const int64_t capc = d->pw_cap_mw << PW_SHIFT, over0 = d->pw_h[x] + d->pw_p[x] - capc;
    d->pw_h[x] += d->e_io_pj;
    int64_t over1 = over0 + d->e_io_pj;
    if (over1 > 0) d->pw_debt += over1 - (over0 > 0 ? over0 : 0);
}

/* ------------------------------------------------------------------ controller */

/* the core that is free first (up to 4 cores in a fixed scan: the slots of missing cores hold INT64_MAX) */
HOT_INLINE uint32_t ctrl_core(const Dev *d) {
    const int64_t *cf = d->core_free;
    if (d->n_cores <= 4) {
        uint32_t a = cf[1] < cf[0], b = 2 + (cf[3] < cf[2]);
        return cf[b] < cf[a] ? b : a;
    }
    uint32_t c = 0;
    int64_t m = cf[0];
    for (uint32_t k = 1; k < d->n_cores; k++) {
        int64_t f = cf[k];
        c = f < m ? k : c;
        m = f < m ? f : m;
    }
    return c;
}

/* firmware housekeeping (mapping-table journal, SMART and telemetry, wear-levelling and patrol scans) that started
 * by t: each task takes the core free first for its length (exponential), tasks a Poisson stream */
static void hk_book(Dev *d, int64_t t) {
    while (d->hk_next <= t) {
        uint32_t c = ctrl_core(d);
        d->core_free[c] = max64(d->hk_next, d->core_free[c]) + exp_draw(d, d->hk_len_ns);
        d->hk_next += exp_draw(d, d->hk_gap_ns);
    }
}

/* A command at t: it takes the core free first (when that one is free) for its core time, svc scaled by the
 * command's firmware-time draw from r, plus `busy` more; it pays the governor its energy. Returns when its firmware
 * work ends: its start plus lat scaled by the same draw. */
HOT_INLINE int64_t ctrl_cmd(Dev *d, int64_t t, int64_t svc, int64_t busy, int64_t lat, uint64_t r, const int read) {
    if (t >= d->hk_next) hk_book(d, t);
    uint32_t c = ctrl_core(d);
    int64_t s = max64(t, d->core_free[c]);
    if (d->gov && !read) pw_cmd(d, s); /* a read's command is paced with its NAND read (nand_fetch); a write's is
                                           small against its NAND work */
    int64_t f = (dist_draw(&d->d_fw, HI32(r)) * d->drift_q16) >> 16;
    d->core_free[c] = s + ((svc * f) >> 16) + busy;
    return s + ((lat * f) >> 16);
}

/* controller time for the NAND commands of a prefetch (their back end), on the core free first, from t */
static inline void ctrl_charge(Dev *d, int64_t t, int64_t busy) {
    uint32_t c = ctrl_core(d);
    d->core_free[c] = max64(t, d->core_free[c]) + busy;
}

/* host-link time of len bytes (and the command's own bytes), varied by its draw from the low half of r (the high
 * half is the command's firmware-time draw) */
static inline int64_t link_time(const Dev *d, int64_t len, uint64_t r) {
    return tri_scale((int64_t)((double)(len + d->cmd_bytes) * d->host_ns_drift + 0.5), d->link_h, LO32(r));
}

/* channel time of len bytes */
static inline int64_t ch_time(const Dev *d, int64_t len) { return (int64_t)((double)len * d->ch_ns_drift + 0.5); }

/* ------------------------------------------------------------------ dies */

/* Program/erase work (and GC's reads: background work) of dur ns and e_pj on a die, from time t: after the die's
 * earlier P/E work and after the reads booked on it (reads go first), and when the governor's budget for P/E work
 * has room. Returns when it ends. */
static inline int64_t die_op(Dev *d, uint32_t die, int64_t t, int64_t dur, int64_t e_pj) {
    int64_t s = max64(max64(t, d->die_free[die]), d->rd_die[die]);
    if (d->gov) s = pw_pe(d, s, dur, e_pj);
    d->die_free[die] = s + dur;
    d->op_len[die] = dur;
    d->pe_epoch[die]++;
    return s + dur;
}

/* How long a read that could start at s waits for the P/E work in progress on its die (work queued behind it waits
 * for the read), when the read is not admitted to the die's current suspension (nand_read). The op in progress is
 * estimated from the end of the die's P/E work and the length of its last op. The op resumed when the die's last
 * read window ended (rd_die) and runs slice_ns before it can be suspended again: a read waits for that, then the
 * suspend latency. With suspend off (or once the op has been suspended susp_max times) the read waits for the rest
 * of the op. *resume gets the overhead the suspended op pays. */
static inline int64_t pe_wait(Dev *d, uint32_t die, int64_t s, int64_t *resume) {
    int64_t left = d->die_free[die] - s, len = d->op_len[die];
    int64_t rest = len > 0 && left > len ? (left - 1) % len + 1 : left; /* the op in progress ends in rest */
    if (!d->suspend || rest <= d->susp_ns) return rest;
    if (d->susp_max) {
        int64_t op_end = s + rest;
        if (op_end != d->susp_op[die]) {
            d->susp_op[die] = op_end;
            d->susp_cnt[die] = 0;
        }
        if (d->susp_cnt[die] >= (int64_t)d->susp_max) return rest;
        d->susp_cnt[die]++;
    }
    int64_t free_at = d->rd_die[die] + d->resume_ns + d->slice_ns, wait = d->susp_ns;
    if (s < free_at) wait += free_at - s;
    if (wait >= rest) return rest;
    *resume = d->resume_ns;
    return wait;
}

/* A NAND read of dur ns and e_pj on one read unit of a die, issued at t. Read units read independently (each waits
 * only for its own earlier reads). The die's reads come in windows (rd_from .. rd_die): a suspension of the die's P/E
 * work serves every read that arrived by slice_ns after it began (reads queued on their read unit included), without
 * a wait of their own; a read arriving later waits for pe_wait and begins the next window. In a point that issues only
 * reads, a read that starts within the current window joins it whenever it arrived: with no host write needing the
 * P/E work, the firmware has no reason to resume it. The die's P/E work is delayed by the part of each read not
 * already covered by other reads (and the resume overhead). Under a power cap the read starts when the governor has
 * room for it. Returns when the read ends. */
static inline int64_t nand_read(Dev *d, uint32_t die, uint32_t plane, int64_t t, int64_t dur, int64_t e_pj) {
    int64_t *rp = &d->rd_plane[die * d->planes + plane];
    int64_t s = max64(t, *rp), resume = 0;
    int64_t from = d->rd_from[die], to = d->rd_die[die];
    int joins = from < to && s >= from && (d->rd_only ? s <= to : t <= from + d->slice_ns);
    if (d->die_free[die] > s && !joins) s += pe_wait(d, die, s, &resume);
    if (d->gov) s = pw_host(d, s, dur, e_pj);
    int64_t e = s + dur;
    *rp = e;
    if (!joins && s > to) d->rd_from[die] = s; /* a new window */
    else if (s < from && e >= from) d->rd_from[die] = s; /* joins the window from before its start */
    if (e > to) d->rd_die[die] = e;
    if (d->die_free[die] > s) {
        int64_t pfrom = max64(s, d->rd_push[die]);
        int64_t push = (e > pfrom ? e - pfrom : 0) + resume;
        d->die_free[die] += push;
        d->susp_op[die] += push;
    }
    if (e > d->rd_push[die]) d->rd_push[die] = e;
    return e;
}

/* The time of one host read of global program unit gpu: its page type's tR, varied, then its decoding. The page's
 * raw bit error rate relative to the hard-decision limit, x, is drawn from a log-normal distribution: below 1 the
 * ECC decodes it in ecc_ns x x^4 more (its iterations grow steeply as x nears the limit); at or above 1 it needs 1 + floor(ln x /
 * retry_lnr) extra sensing steps, each another tR and a decode at the limit. *steps gets the extra steps. */
static inline int64_t read_time(Dev *d, uint32_t gpu, uint32_t *steps) {
    uint64_t r = trng_next(d);
    int64_t tr = vary(d, d->tr_pt[ptype_of(d, gpu)], r);
    uint64_t x = (d->rber_m_q16 * dist_draw(&d->d_rber, LO32(r))) >> 16; /* x 65536 */
    if (__builtin_expect(x < 65536, 1)) {
        *steps = 0;
        uint64_t x2 = (x * x) >> 16;
        return tr + (int64_t)(((uint64_t)d->ecc_ns * ((x2 * x2) >> 16)) >> 16);
    }
    uint32_t k = 1 + (uint32_t)(log((double)x / 65536.0) / d->retry_lnr);
    if (k > 64) k = 64;
    *steps = k;
    return tr * (1 + k) + d->ecc_ns * k;
}

/* ------------------------------------------------------------------ block lists */

/* Closed blocks per valid count (greedy GC takes the newest of the fewest valid), as doubly linked lists whose
 * nodes are the blocks (0 .. n_blk - 1), a head node per count (n_blk + v) and one end node (LIST_END) that every
 * list ends at: taking a block out or putting one in takes no branch on where in its list it is (a block's place
 * in its list is a coin toss, which cost a mispredicted branch or two per host write). */
#define LIST_HEAD(d, v) ((int32_t)((d)->n_blk + (v)))
#define LIST_END(d) ((int32_t)((d)->n_blk + (d)->spb + 1))

HOT_INLINE void bucket_insert(Dev *d, uint32_t b) {
    uint32_t v = d->valid[b];
    int32_t h = LIST_HEAD(d, v), first = d->bnext[h];
    d->bnext[b] = first;
    d->bprev[b] = h;
    d->bprev[first] = (int32_t)b; /* the end node's is never read */
    d->bnext[h] = (int32_t)b;
    if ((int64_t)v < d->gc_min_hint) d->gc_min_hint = v;
}

HOT_INLINE void bucket_remove(Dev *d, uint32_t b) {
    int32_t p = d->bprev[b], n = d->bnext[b];
    d->bnext[p] = n;
    d->bprev[n] = p;
}

static inline void invalidate(Dev *d, uint32_t slot) {
    uint32_t b = div32(&d->dv_spb, slot);
    d->p2l[slot] = UNMAPPED;
    if (d->gc_policy == 0 && d->bstate[b] == BS_CLOSED) {
        bucket_remove(d, b);
        d->valid[b]--;
        bucket_insert(d, b);
    } else {
        d->valid[b]--;
    }
}

static void close_block(Dev *d, uint32_t b) {
    d->bstate[b] = BS_CLOSED;
    if (d->gc_policy == 0) bucket_insert(d, b);
    else {
        d->fifoq[ring_add(d->fifo_head, d->fifo_cnt, d->n_blk)] = b;
        d->fifo_cnt++;
    }
}

static uint32_t pop_free(Dev *d) {
    uint32_t b = d->freeq[d->free_head];
    d->free_head = (uint32_t)ring_add(d->free_head, 1, d->n_blk);
    d->free_cnt--;
    d->bstate[b] = BS_OPEN;
    d->valid[b] = 0;
    return b;
}

static void push_free(Dev *d, uint32_t b) {
    d->freeq[ring_add(d->free_head, d->free_cnt, d->n_blk)] = b;
    d->free_cnt++;
    d->bstate[b] = BS_FREE;
    d->valid[b] = 0;
}

/* ------------------------------------------------------------------ GC */

static int gc_one(Dev *d, int64_t t);

/* the program time of global unit gpu: its page type's tPROG, varied */
static inline int64_t prog_time(Dev *d, uint32_t gpu) { return vary(d, d->tprog_pt[ptype_of(d, gpu)], trng_next(d)); }

static void gc_program_unit(Dev *d, uint32_t pu_first_slot, int64_t t) {
    uint32_t gpu = div32(&d->dv_spu, pu_first_slot), die = mod32(&d->dv_dies, gpu);
    uint32_t ch = mod32(&d->dv_ch, die);
    int64_t ce = cal_book(&d->cal_ch[ch], t, (d->xfer_pu * d->drift_q16) >> 16, d->cal_now);
    die_op(d, die, ce, prog_time(d, gpu), d->e_prog_pj);
    d->c_energy += d->e_prog_pu;
}

/* map `lpn` to the next slot of open block `blk` (write point `*next`); returns the slot */
static inline uint32_t place_slot(Dev *d, uint32_t blk, uint32_t *next, uint32_t lpn) {
    uint32_t slot = blk * d->spb + (*next)++;
    d->p2l[slot] = lpn;
    d->l2p[lpn] = slot;
    d->valid[blk]++;
    d->c_nand_w_slots++;
    return slot;
}

/* GC moves `lpns[0..n)`, the data of the valid slots of one program unit of victim block b (in slot order), to the
 * GC write point, then programs every unit they complete. Returns how many it placed (< n: no free block; the
 * slot being moved then is lost with the run). The caller unmaps the moved slots in the victim. */
static uint32_t gc_move(Dev *d, uint32_t b, const uint32_t *lpns, uint32_t n, int64_t t) {
    uint32_t *p2l = d->p2l, *l2p = d->l2p;
    const uint32_t spb = d->spb, spu = d->spu;
    uint32_t i = 0;
    while (i < n) {
        if (d->gc_blk == UNMAPPED || d->gc_slot >= spb) {
            if (d->gc_blk != UNMAPPED) close_block(d, d->gc_blk);
            if (d->free_cnt == 0) {
                d->valid[b]--;
                return i;
            }
            d->gc_blk = pop_free(d);
            d->gc_slot = 0;
        }
        uint32_t blk = d->gc_blk, from = d->gc_slot;
        uint32_t take = n - i < spb - from ? n - i : spb - from;
        uint32_t dst = blk * spb + from;
        memcpy(&p2l[dst], &lpns[i], sizeof(uint32_t) * take);
#pragma GCC unroll 4
        for (uint32_t j = 0; j < take; j++) l2p[lpns[i + j]] = dst + j;
        d->valid[b] -= take;
        d->valid[blk] += take;
        d->gc_slot = from + take;
        for (uint32_t end = (div32(&d->dv_spu, from) + 1) * spu; end <= from + take; end += spu)
            gc_program_unit(d, blk * spb + end - spu, t); /* each unit filled, in order */
        i += take;
    }
    return n;
}

static int64_t select_victim(Dev *d) {
    if (d->gc_policy == 0) {
        int64_t v = d->gc_min_hint < 0 ? 0 : d->gc_min_hint;
        for (; v <= (int64_t)d->spb; v++) {
            int32_t first = d->bnext[LIST_HEAD(d, v)];
            if (first != LIST_END(d)) {
                d->gc_min_hint = v;
                return first;
            }
        }
        d->gc_min_hint = d->spb + 1;
        return -1;
    }
    /* FIFO: the oldest closed block; one that holds nothing invalid (nothing to gain) goes to the back of the queue */
    for (uint32_t k = 0; k < d->fifo_cnt; k++) {
        uint32_t b = d->fifoq[d->fifo_head];
        if (d->valid[b] < d->spb) return b;
        d->fifo_head = (uint32_t)ring_add(d->fifo_head, 1, d->n_blk);
        d->fifoq[ring_add(d->fifo_head, d->fifo_cnt - 1, d->n_blk)] = b;
    }
    return d->fifo_cnt ? (int64_t)d->fifoq[d->fifo_head] : -1;
}

/* the valid slots' mapping entries are fetched again while scanning (the step before fetched them already, except
 * for a victim's first unit, but they may have left the cache since): 13 % faster than without, timed process by
 * process (one process per build and run, alternated: builds timed in one process get their memory unequally) */
#ifndef SCAN_PREFETCH
#define SCAN_PREFETCH 1
#endif

/* the data of the valid slots of the program unit at slot s0, in slot order, without a branch per slot (a slot is
 * valid or not at random); their mapping entries are prefetched for gc_move. Returns how many. */
HOT_INLINE uint32_t gc_scan_n(const uint32_t *restrict in, const uint32_t *restrict l2p, uint32_t spu,
                              uint32_t *restrict lpns) {
    uint32_t n = 0;
#pragma GCC unroll 16
    for (uint32_t k = 0; k < spu; k++) {
        uint32_t lpn = in[k];
        uint32_t gone = (uint32_t)((int32_t)lpn >> 31); /* all ones for an empty slot (LPNs are < 2^31) */
#if SCAN_PREFETCH
        __builtin_prefetch(&l2p[lpn & ~gone], 1, 1);     /* an empty slot fetches entry 0 */
#else
        (void)l2p;
#endif
        lpns[n] = lpn;
        n += 1 + gone;
    }
    return n;
}

/* the mapping entries of the valid slots of the unit at in[0 .. spu), fetched for the next GC step (an empty slot
 * fetches entry 0); 16 slots (every 4K preset) unrolled */
HOT_INLINE void gc_ahead_n(const uint32_t *restrict in, const uint32_t *restrict l2p, uint32_t spu) {
#pragma GCC unroll 16
    for (uint32_t k = 0; k < spu; k++) {
        uint32_t lpn = in[k];
        __builtin_prefetch(&l2p[lpn & ~(uint32_t)((int32_t)lpn >> 31)], 1, 1);
    }
}

static inline void gc_ahead(const uint32_t *in, const uint32_t *l2p, uint32_t spu) {
    if (spu == 16) gc_ahead_n(in, l2p, 16);
    else gc_ahead_n(in, l2p, spu);
}

/* 16 slots per unit (4 planes x 16 KiB pages / 4 KiB IU, every 4K preset) unrolled: a fixed-count loop, in a
 * function of its own (inlined in gc_one's loop, the count lived on the stack for want of registers) */
static __attribute__((noinline)) uint32_t gc_scan16(const uint32_t *in, const uint32_t *l2p, uint32_t *lpns) {
    return gc_scan_n(in, l2p, 16, lpns);
}

static inline uint32_t gc_scan(const Dev *d, uint32_t s0, uint32_t spu, uint32_t *lpns) {
    return spu == 16 ? gc_scan16(d->p2l + s0, d->l2p, lpns) : gc_scan_n(d->p2l + s0, d->l2p, spu, lpns);
}

/* the victim's reverse map is fetched this many units ahead of the step (7 or 15: within the noise) */
#ifndef VP_AHEAD
#define VP_AHEAD 3
#endif

/* take the next victim out of the lists for GC in steps; 0 when none would gain space */
static int gc_pick(Dev *d) {
    int64_t vb = select_victim(d);
    if (vb < 0) return 0;
    uint32_t b = (uint32_t)vb, v = d->valid[b];
    if (v >= d->spb) return 0;
    if (d->gc_policy == 0) bucket_remove(d, b);
    else {
        d->fifo_head = (uint32_t)ring_add(d->fifo_head, 1, d->n_blk);
        d->fifo_cnt--;
    }
    d->bstate[b] = BS_OPEN; /* out of the lists while being cleaned */
    d->c_gc_runs++;
    d->gc_vb = b;
    d->gc_vpu = 0;
    d->gc_ratio = (int64_t)v * 256 / (int64_t)(d->spb - v); /* slots moved per slot freed (x 256) */
    d->gc_v = v;
    for (uint32_t k = 0; k < (1 + VP_AHEAD) * d->spu && k < d->spb; k += 16)
        __builtin_prefetch(&d->p2l[b * d->spb + k], 0, 1);
    return 1;
}

/* the victim is empty: erase it (one multi-plane erase per die, charged pro rata: the model's blocks hold `pages`
 * pages of a real block's block_pages) and return it to the free pool */
static void gc_erase(Dev *d, uint32_t b, int64_t t) {
    for (uint32_t die = 0; die < d->n_dies; die++) die_op(d, die, t, vary(d, d->t_bers, trng_next(d)), d->e_erase_pj);
    d->c_erases++;
    d->c_energy += d->e_erase_sb;
    push_free(d, b);
    d->gc_vb = UNMAPPED;
}

/* One GC step: the valid slots of the victim's next program unit are read (one read on its die) and programmed at
 * the GC write point (each GC unit they fill is programmed), then the victim is erased once it is empty. Returns
 * the slots moved + 1 (a step), 0 without a victim, -1 when no free block is left. */
static int64_t gc_step(Dev *d, int64_t t) {
    if (d->gc_vb == UNMAPPED && !gc_pick(d)) return 0;
    const uint32_t b = d->gc_vb, pu = d->gc_vpu, spu = d->spu, s0 = b * d->spb + pu * spu;
    uint32_t *p2l = d->p2l;
    uint32_t lpns[SPU_MAX];
    uint32_t n = gc_scan(d, s0, spu, lpns);
    if (pu + 1 + VP_AHEAD < d->pu_per_sb) /* the victim's reverse map, a few units ahead */
        for (uint32_t k = 0; k < spu; k += 16) __builtin_prefetch(&p2l[s0 + (1 + VP_AHEAD) * spu + k], 0, 1);
    if (pu + 1 < d->pu_per_sb) /* the mapping entries the next step rewrites */
        gc_ahead(p2l + s0 + spu, d->l2p, spu);
    if (n > 0) {
        uint32_t gpu = b * d->pu_per_sb + pu;
        die_op(d, mod32(&d->dv_dies, gpu), t, vary(d, d->tr_pt[ptype_of(d, gpu)], trng_next(d)), d->e_read_pj);
        d->c_nand_reads++;
        d->c_energy += d->e_read;
        uint32_t placed = gc_move(d, b, lpns, n, t);
        d->c_nand_w_slots += placed;
        d->c_gc_slots += placed;
        if (placed < n) { /* out of free blocks: the moved slots and the lost one are unmapped, the rest stay */
            for (uint32_t k = 0, gone = 0; gone <= placed; k++) {
                if (p2l[s0 + k] == UNMAPPED) continue;
                p2l[s0 + k] = UNMAPPED;
                gone++;
            }
            return -1;
        }
        /* every slot of the unit is unmapped now; 16 slots (every 4K preset) in a fixed-size store */
        if (spu == 16) memset(&p2l[s0], 0xFF, sizeof(uint32_t) * 16);
        else memset(&p2l[s0], 0xFF, sizeof(uint32_t) * spu);
    }
    if (++d->gc_vpu >= d->pu_per_sb) gc_erase(d, b, t);
    return (int64_t)n + 1;
}

/* relocate the rest of the victim being cleaned (or of a new one), erase it; returns 0 when no progress is
 * possible, -1 without free blocks */
static int gc_one(Dev *d, int64_t t) {
    if (d->gc_vb == UNMAPPED && !gc_pick(d)) return 0;
    uint32_t vb = d->gc_vb;
    while (d->gc_vb == vb)
        if (gc_step(d, t) < 0) return -1;
    return 1;
}

/* GC interleaved with host writes: while fewer than gc_start superblocks are free, every host slot programmed owes
 * the victim's relocation ratio (slots moved per slot freed) times the free-space pressure (1 at gc_start, 3 at the
 * floor gc_free), paid in steps of one victim unit right after the host unit that owed it */
static int gc_pace(Dev *d, int64_t t, int64_t n_host) {
    if (d->free_cnt >= d->gc_start) return 0;
    if (d->gc_vb == UNMAPPED && !gc_pick(d)) return 0;
    int64_t span = (int64_t)d->gc_start - d->gc_free_min;
    int64_t below = (int64_t)d->gc_start - d->free_cnt;
    if (below > span) below = span;
    d->gc_debt += n_host * d->gc_ratio * (span + 2 * below) / span;
    while (d->gc_debt > 0) {
        int64_t r = gc_step(d, t);
        if (r < 0) return -1;
        if (r == 0) {
            d->gc_debt = 0;
            break;
        }
        d->gc_debt -= (r - 1) * 256 + 64; /* a unit without valid data still costs a look */
        if (d->gc_vb == UNMAPPED && !gc_pick(d)) {
            d->gc_debt = 0;
            break;
        }
    }
    return 0;
}

static int open_host_block(Dev *d, int64_t t) {
    int guard = 0;
    while (d->free_cnt <= d->gc_free_min) {
        int r = gc_one(d, t);
        if (r <= 0) break;
        if (++guard > (int)d->n_blk * 4) break;
    }
    if (d->free_cnt == 0) return -1;
    d->host_blk = pop_free(d);
    d->host_slot = 0;
    return 0;
}

/* make sure the host write point has a free slot (closing a full block, opening a new one) */
static inline int host_ready(Dev *d, int64_t t) {
    if (d->host_blk != UNMAPPED && d->host_slot < d->spb) return 0;
    if (d->host_blk != UNMAPPED) close_block(d, d->host_blk);
    d->host_blk = UNMAPPED;
    return open_host_block(d, t);
}

/* place one host IU at the host write point; the caller programs whole units */
HOT_INLINE int host_place(Dev *d, uint32_t lpn, int64_t t) {
    if (host_ready(d, t) < 0) return -1;
    place_slot(d, d->host_blk, &d->host_slot, lpn);
    d->c_host_w_slots++;
    return 0;
}

/* ------------------------------------------------------------------ write buffer */

/* The units in flight (programs whose data still hold buffer space) as a binary heap by completion time
 * (infl_t/infl_n[0 .. infl_cnt)): space is freed as each program completes, in any order. */
static void infl_push(Dev *d, int64_t t, int64_t n) {
    int64_t i = d->infl_cnt++;
    while (i > 0) {
        int64_t pa = (i - 1) / 2;
        if (d->infl_t[pa] <= t) break;
        d->infl_t[i] = d->infl_t[pa];
        d->infl_n[i] = d->infl_n[pa];
        i = pa;
    }
    d->infl_t[i] = t;
    d->infl_n[i] = n;
    d->infl_occ += n;
}

/* the unit that completes first frees its space */
static void infl_pop(Dev *d) {
    d->infl_occ -= d->infl_n[0];
    int64_t n = --d->infl_cnt, i = 0;
    if (n == 0) return;
    int64_t t = d->infl_t[n], c = d->infl_n[n];
    for (;;) {
        int64_t k = 2 * i + 1;
        if (k >= n) break;
        if (k + 1 < n && d->infl_t[k + 1] < d->infl_t[k]) k++;
        if (d->infl_t[k] >= t) break;
        d->infl_t[i] = d->infl_t[k];
        d->infl_n[i] = d->infl_n[k];
        i = k;
    }
    d->infl_t[i] = t;
    d->infl_n[i] = c;
}

static int64_t dispatch_unit(Dev *d, int64_t t, int partial) {
    /* take up to spu live entries from the ring head and program them as one unit */
    uint32_t die = 0;
    int64_t n = 0;
    const int64_t spu = d->spu;
    while (d->ring_cnt > 0 && d->ring[d->ring_head] == UNMAPPED) { /* trimmed while pending */
        d->ring_head = ring_add(d->ring_head, 1, d->ring_cap);
        d->ring_cnt--;
    }
    if (d->ring_cnt == 0) return t;
    if (host_ready(d, t) < 0) return -1;
    const uint32_t gpu = div32(&d->dv_spu, d->host_blk * d->spb + d->host_slot);
    die = mod32(&d->dv_dies, gpu);
    if (d->host_slot + (uint32_t)spu <= d->spb) {
        /* the unit fits in the open block (units are aligned in it, so it always does): the live entries go to
         * its slots in one loop, the block's counters once */
        uint32_t *ring = d->ring, *p2l = d->p2l, *l2p = d->l2p;
        const uint32_t blk = d->host_blk, slot0 = blk * d->spb + d->host_slot;
        int64_t head = d->ring_head, cnt = d->ring_cnt;
        const int64_t cap = d->ring_cap;
        while (n < spu && cnt > 0) {
            uint32_t lpn = ring[head];
            head = head + 1 == cap ? 0 : head + 1;
            cnt--;
            if (lpn == UNMAPPED) continue;
            uint32_t slot = slot0 + (uint32_t)n;
            p2l[slot] = lpn;
            l2p[lpn] = slot;
            n++;
        }
        d->ring_head = head;
        d->ring_cnt = cnt;
        d->valid[blk] += (uint32_t)n;
        d->host_slot += (uint32_t)n;
        d->c_nand_w_slots += (uint64_t)n;
        d->c_host_w_slots += (uint64_t)n;
        d->pend_live -= n;
    } else {
        while (n < spu && d->ring_cnt > 0) {
            uint32_t lpn = d->ring[d->ring_head];
            d->ring_head = ring_add(d->ring_head, 1, d->ring_cap);
            d->ring_cnt--;
            if (lpn == UNMAPPED) continue;
            if (host_place(d, lpn, t) < 0) return -1;
            d->pend_live--;
            n++;
        }
    }
    if (partial && n < (int64_t)d->spu) {
        /* pad the program unit: the remaining slots stay empty */
        d->host_slot += (uint32_t)(d->spu - n);
    }
    uint32_t ch = mod32(&d->dv_ch, die);
    int64_t ce = cal_book(&d->cal_ch[ch], t, (d->xfer_pu * d->drift_q16) >> 16, d->cal_now);
    int64_t done = die_op(d, die, ce, prog_time(d, gpu), d->e_prog_pj);
    d->c_energy += d->e_prog_pu;
    if (gc_pace(d, t, n) < 0) return -1;
    infl_push(d, done, n); /* its buffer space is freed when its program completes, whatever the order */
    return done;
}

static int64_t phantom_unit(Dev *d, int64_t t);

static void flush_pending(Dev *d, int64_t t) {
    while (d->pend_live > 0) {
        if (dispatch_unit(d, t, 1) < 0) break;
    }
    if (d->ph_pend > 0) { /* the phantom slots left: one more (padded) unit */
        infl_push(d, phantom_unit(d, t), d->ph_pend);
        d->ph_pend = 0;
    }
    d->ring_head = 0;
    d->ring_cnt = 0;
}

static void flush_all(Dev *d, int64_t t) {
    flush_pending(d, t);
    d->infl_head = 0;
    d->infl_cnt = 0;
    d->infl_occ = 0;
}

/* ------------------------------------------------------------------ map cache */

static int64_t map_miss(Dev *d, uint32_t lpn, int64_t t, int dirty);

/* the mapping entry of lpn, through the map cache when the map does not fit in DRAM: when it is available */
static inline int64_t map_lookup(Dev *d, uint32_t lpn, int64_t t, int dirty) {
    if (d->mc_cap >= d->n_mp) return t;
    return map_miss(d, lpn, t, dirty);
}

static int64_t map_miss(Dev *d, uint32_t lpn, int64_t t, int dirty) {
    int64_t mp = (int64_t)lpn / d->map_entries;
    uint8_t f = d->mc_flags[mp];
    if (f & 1) {
        d->mc_flags[mp] = (uint8_t)(f | 2 | (dirty ? 4 : 0));
        return t;
    }
    d->c_map_miss++;
    /* evict with CLOCK when full */
    if (d->mc_count >= d->mc_cap) {
        for (;;) {
            int64_t victim = d->mc_ring[d->mc_hand];
            uint8_t vf = d->mc_flags[victim];
            if (vf & 2) {
                d->mc_flags[victim] = (uint8_t)(vf & ~2);
                d->mc_hand = (d->mc_hand + 1) % d->mc_cap;
                continue;
            }
            if (vf & 4) {
                uint32_t die = (uint32_t)(victim % d->n_dies);
                die_op(d, die, t, vary(d, d->t_prog, trng_next(d)), d->e_prog_pj / d->planes);
                d->c_map_wr++;
                d->c_energy += d->e_prog_pu / d->planes;
            }
            d->mc_flags[victim] = 0;
            d->mc_ring[d->mc_hand] = mp;
            d->mc_hand = (d->mc_hand + 1) % d->mc_cap;
            break;
        }
    } else {
        d->mc_ring[d->mc_count++] = mp;
    }
    d->mc_flags[mp] = (uint8_t)(1 | 2 | (dirty ? 4 : 0));
    uint32_t die = (uint32_t)(mp % d->n_dies);
    d->c_nand_reads++;
    d->c_energy += d->e_read;
    return nand_read(d, die, 0, t, vary(d, d->t_r, trng_next(d)), d->e_read_pj);
}

/* ------------------------------------------------------------------ host I/O */

/* NAND reads of the IUs covering [off, off + len), from t (the part of each IU in the range moves over its
 * channel): one sensing per page of a read unit, unless, in a sequential point, that read unit's page register still
 * holds the page (no program or erase on its die since it was sensed): then its data is read out without one (a
 * random read finds its page there by chance only on a scaled-down drive, so random points always sense). *pages
 * gets the sensings. Returns when the last byte is off its channel. */
static int64_t nand_fetch(Dev *d, int64_t t, int64_t off, int64_t len, int64_t *pages, int64_t cmd_pj) {
    int64_t done = t, e = t, n = 0;
    int64_t first = iu_div(d, off), last = iu_div(d, off + len - 1);
    uint32_t last_pu = UNMAPPED, last_plane = 0, ch = 0;
    int64_t span = 0, from = t; /* the bytes of the page being read that go out on its channel, from when */
    for (int64_t lpn = first; lpn <= last; lpn++) {
        int64_t rr = map_lookup(d, (uint32_t)lpn, t, 0);
        uint32_t m = d->l2p[lpn];
        if (m == UNMAPPED || (m & BUFBIT)) {
            if (rr > done) done = rr;
            continue;
        }
        uint32_t gpu = div32(&d->dv_spu, m);
        uint32_t die = mod32(&d->dv_dies, gpu);
        uint32_t plane = div32(&d->dv_spp, mod32(&d->dv_spu, m));
        if (gpu != last_pu || plane != last_plane) { /* a new page: one read of it (a plane of a multi-plane unit) */
            if (span > 0) done = max64(done, cal_book(&d->cal_ch[ch], from, ch_time(d, span), d->cal_now));
            span = 0;
            uint32_t ru = die * d->planes + plane;
            if (d->ra_on && d->reg_gpu[ru] == gpu && d->reg_epoch[ru] == d->pe_epoch[die]) {
                e = max64(rr, d->rd_plane[ru]); /* still in the page register */
            } else {
                uint32_t steps;
                int64_t dur = read_time(d, gpu, &steps);
                e = nand_read(d, die, plane, rr, dur, d->e_read_pj * (1 + steps) + cmd_pj);
                cmd_pj = 0;
                d->reg_gpu[ru] = gpu;
                d->reg_epoch[ru] = d->pe_epoch[die];
                d->c_nand_reads += 1 + steps;
                d->c_energy += d->e_read * (1 + steps);
                n++;
            }
            last_pu = gpu;
            last_plane = plane;
            ch = mod32(&d->dv_ch, die);
            from = e;
        }
        int64_t lo = max64(off, lpn * d->iu_bytes), hi = off + len;
        if (hi > (lpn + 1) * d->iu_bytes) hi = (lpn + 1) * d->iu_bytes;
        span += hi - lo; /* the page's IUs go out on its channel in one transfer */
        from = max64(from, rr);
    }
    if (span > 0) done = max64(done, cal_book(&d->cal_ch[ch], from, ch_time(d, span), d->cal_now));
    if (cmd_pj > 0 && d->gov) done = max64(done, pw_host(d, t, 1, cmd_pj)); /* a read that sensed nothing */
    *pages = n;
    return done;
}

/* Read-ahead: the stream a read of [off, off + len) continues (it starts where one's last read ended), its count
 * of sequential reads advanced; else the stream used least recently starts over from this read. */
static RaStream *ra_follow(Dev *d, int64_t t, int64_t off, int64_t len) {
    RaStream *lru = &d->ra[0];
    for (int i = 0; i < RA_STREAMS; i++) {
        RaStream *st = &d->ra[i];
        if (st->next == off) {
            st->hits++;
            st->next = off + len;
            st->used = t;
            return st;
        }
        if (st->used < lru->used) lru = st;
    }
    lru->next = off + len;
    lru->hits = 1;
    lru->used = t;
    lru->pf_lo = lru->pf_hi = (off + len) / d->ra_chunk;
    return lru;
}

/* when [off, off + len) is in DRAM (the stream prefetched every chunk of it), or -1 */
static int64_t ra_ready(const Dev *d, const RaStream *st, int64_t off, int64_t len) {
    int64_t c0 = off / d->ra_chunk, c1 = (off + len - 1) / d->ra_chunk, at = 0;
    if (c0 < st->pf_lo || c1 >= st->pf_hi) return -1;
    for (int64_t c = c0; c <= c1; c++) at = max64(at, st->ready[c & (RA_RING - 1)]);
    return at;
}

/* The firmware reads ahead of a sequential stream: every chunk (a program unit's bytes) from `from` up to ra_bytes
 * beyond it not yet fetched is read from NAND at t (one sensing per page, as a host read) into DRAM; the controller
 * pays the back end of each NAND read. */
static void ra_prefetch(Dev *d, RaStream *st, int64_t from, int64_t t) {
    int64_t user = d->n_lpn * d->iu_bytes, end = from + d->ra_bytes;
    if (end > user) end = user;
    int64_t c = max64(st->pf_hi, from / d->ra_chunk), c_end = (end + d->ra_chunk - 1) / d->ra_chunk;
    if (c > st->pf_hi) st->pf_lo = c; /* a gap: what was fetched before is no longer ahead */
    for (; c < c_end; c++) {
        int64_t lo = c * d->ra_chunk, n = 0, len = d->ra_chunk < user - lo ? d->ra_chunk : user - lo;
        st->ready[c & (RA_RING - 1)] = nand_fetch(d, t, lo, len, &n, 0);
        ctrl_charge(d, t, ((d->svc_r_ns * d->be_q16) >> 16) * n);
        st->pf_hi = c + 1;
        if (st->pf_hi - st->pf_lo > RA_RING) st->pf_lo = st->pf_hi - RA_RING;
    }
}

/* read-ahead on (when the drive has one) or off for what runs next, its streams forgotten */
static void ra_reset(Dev *d, int on) {
    d->ra_on = on && d->ra_bytes > 0;
    for (int i = 0; i < RA_STREAMS; i++) {
        d->ra[i].next = -1;
        d->ra[i].used = -1 - i;
        d->ra[i].hits = 0;
        d->ra[i].pf_lo = d->ra[i].pf_hi = 0;
    }
}

/* a write of [off, off + len): data a stream prefetched there is stale */
static void ra_forget(Dev *d, int64_t off, int64_t len) {
    for (int i = 0; i < RA_STREAMS; i++) {
        RaStream *st = &d->ra[i];
        if (off < st->pf_hi * d->ra_chunk && off + len > st->pf_lo * d->ra_chunk) st->pf_lo = st->pf_hi;
    }
}

/* A host read: a command on the controller, the NAND reads of its IUs (or, for a read the read-ahead fetched, the
 * DRAM copy and the command's front end only), the host-link transfer and the completion path. */
/* a read of one whole IU in a random point (every read of a 4K random workload on a 4 KiB IU drive): nand_fetch's
 * and do_read's steps for one IU, in the same order, without their loops */
HOT_INLINE int64_t read_one_iu(Dev *d, int64_t t, uint32_t lpn, uint64_t r) {
    int64_t ready = ctrl_cmd(d, t, d->svc_r_ns, 0, d->fw_lat_r_ns, r, 1);
    int64_t rr = map_lookup(d, lpn, ready, 0), done = ready;
    uint32_t m = d->l2p[lpn];
    if (m == UNMAPPED || (m & BUFBIT)) {
        done = max64(done, rr);
        if (d->gov) done = max64(done, pw_host(d, ready, 1, d->e_io_pj));
    } else {
        uint32_t gpu = div32(&d->dv_spu, m), die = mod32(&d->dv_dies, gpu);
        uint32_t plane = div32(&d->dv_spp, mod32(&d->dv_spu, m)), steps;
        int64_t dur = read_time(d, gpu, &steps);
        int64_t e = nand_read(d, die, plane, rr, dur, d->e_read_pj * (1 + steps) + d->e_io_pj);
        uint32_t ru = die * d->planes + plane;
        d->reg_gpu[ru] = gpu;
        d->reg_epoch[ru] = d->pe_epoch[die];
        d->c_nand_reads += 1 + steps;
        d->c_energy += d->e_read * (1 + steps);
        done = max64(done, cal_book(&d->cal_ch[mod32(&d->dv_ch, die)], max64(e, rr), ch_time(d, d->iu_bytes),
                                    d->cal_now));
    }
    d->c_host_r_bytes += (uint64_t)d->iu_bytes;
    return cal_book(d->cal_host, done, link_time(d, d->iu_bytes, r), d->cal_now);
}

static int64_t do_read(Dev *d, int64_t t, int64_t off, int64_t len) {
    uint64_t r = trng_next(d); /* the command's draws: firmware time, link */
    if (!d->ra_on && len == d->iu_bytes && iu_mod(d, off) == 0) return read_one_iu(d, t, (uint32_t)iu_div(d, off), r);
    RaStream *st = d->ra_on && len < d->ra_chunk ? ra_follow(d, t, off, len) : NULL;
    int64_t at = st ? ra_ready(d, st, off, len) : -1, ready, done;
    if (at >= 0) {
        int64_t f = 65536 - d->be_q16;
        ready = ctrl_cmd(d, t, (d->svc_r_ns * f) >> 16, 0, (d->fw_lat_r_ns * f) >> 16, r, 1);
        if (d->gov) ready = pw_host(d, ready, 1, d->e_io_pj);
        done = max64(ready, at);
    } else {
        int64_t n;
        ready = ctrl_cmd(d, t, d->svc_r_ns, 0, d->fw_lat_r_ns, r, 1);
        done = nand_fetch(d, ready, off, len, &n, d->e_io_pj); /* the command's energy with its first read */
    }
    if (st && st->hits >= 2) ra_prefetch(d, st, off + len, ready);
    d->c_host_r_bytes += (uint64_t)len;
    return cal_book(d->cal_host, done, link_time(d, len, r), d->cal_now);
}

static int64_t do_trim(Dev *d, int64_t t, int64_t off, int64_t len) {
    int64_t done = ctrl_cmd(d, t, d->svc_r_ns, 0, d->fw_lat_r_ns, trng_next(d), 0);
    int64_t first = (off + d->iu_bytes - 1) / d->iu_bytes, end = (off + len) / d->iu_bytes;
    for (int64_t lpn = first; lpn < end; lpn++) {
        uint32_t m = d->l2p[lpn];
        if (m == UNMAPPED) continue;
        if (m & BUFBIT) {
            d->ring[m & ~BUFBIT] = UNMAPPED;
            d->pend_live--;
        } else {
            invalidate(d, m);
        }
        d->l2p[lpn] = UNMAPPED;
        d->n_mapped--;
        d->c_trim_slots++;
    }
    return done;
}

/* a write of n_new more units into the write buffer, which completes at `done`: wait for buffer space (units
 * in flight release it when their program completes; space freed by a unit whose program ends in the future is
 * only usable from then on: space_t), then retire the units already programmed by the time the write completes
 * (they no longer hold space); returns when it completes */
HOT_INLINE int64_t buffer_room(Dev *d, int64_t n_new, int64_t done) {
    while (d->pend_live + d->ph_pend + d->infl_occ + n_new > d->buf_slots && d->infl_cnt > 0) {
        if (d->infl_t[0] > d->space_t) d->space_t = d->infl_t[0];
        infl_pop(d);
    }
    if (n_new > 0 && d->space_t > done) done = d->space_t;
    while (d->infl_cnt > 0 && d->infl_t[0] <= done) infl_pop(d);
    return done;
}

/* a write of one whole IU (every write of a 4K random workload on a 4 KiB IU drive): do_write's steps for
 * first == last, aligned, in the same order, without its loops */
HOT_INLINE int64_t write_one_iu(Dev *d, int64_t t, uint32_t lpn, int64_t len) {
    uint64_t r = trng_next(d); /* the command's draws: firmware time, link */
    int64_t ready = ctrl_cmd(d, t, d->svc_w_ns, 0, d->fw_lat_w_ns, r, 0);
    int64_t done = cal_book(d->cal_host, ready, tri_scale((d->host_xfer_iu * d->drift_q16) >> 16, d->link_h, LO32(r)),
                            d->cal_now);
    uint32_t m = d->l2p[lpn];
    int buffered = m != UNMAPPED && (m & BUFBIT);
    int64_t n_new = !buffered;
    done = buffer_room(d, n_new, done);
    map_lookup(d, lpn, ready, 1);
    if (buffered) {
        d->c_merges++;
    } else {
        if (m != UNMAPPED) invalidate(d, m);
        else d->n_mapped++;
        int64_t pos = ring_add(d->ring_head, d->ring_cnt, d->ring_cap);
        d->ring[pos] = lpn;
        d->ring_cnt++;
        d->pend_live++;
        d->l2p[lpn] = BUFBIT | (uint32_t)pos;
    }
    while (d->pend_live >= d->flush_thr || d->ring_cnt >= d->ring_lim) {
        if (d->pend_live == 0) {
            d->ring_cnt = 0;
            break;
        }
        if (dispatch_unit(d, done, d->pend_live < (int64_t)d->spu) < 0) return -1;
    }
    d->c_host_w_bytes += (uint64_t)len;
    return done;
}

static int64_t do_write_any(Dev *d, int64_t t, int64_t off, int64_t len);

/* the next phantom unit's program (host data or GC's), on the dies in turn as the drive's units are laid out */
static int64_t phantom_program(Dev *d, int64_t t, int gc) {
    uint32_t gpu = d->ph_seq++, die = mod32(&d->dv_dies, gpu), ch = mod32(&d->dv_ch, die);
    int64_t ce = cal_book(&d->cal_ch[ch], t, (d->xfer_pu * d->drift_q16) >> 16, d->cal_now);
    int64_t done = die_op(d, die, ce, prog_time(d, gpu), d->e_prog_pj);
    d->c_energy += d->e_prog_pu;
    d->c_nand_w_slots += d->spu;
    if (gc) d->c_gc_slots += d->spu;
    return done;
}

/* A unit of phantom host slots is programmed at t; while the drive's state has GC running (no more free
 * superblocks than GC's start), it owes what GC costs per unit of host data there: with v valid slots in a victim of
 * spb, spu x v / (spb - v) slots moved, spb / (spb - v) victim units read, spu / (spb - v) superblocks erased. The
 * work is booked as GC books its own (P/E work on the dies) and counted alike. Returns when the host unit's program
 * ends. */
static int64_t phantom_unit(Dev *d, int64_t t) {
    int64_t done = phantom_program(d, t, 0);
    if (d->free_cnt > d->gc_start || d->gc_v == 0 || d->gc_v >= d->spb) return done;
    const int64_t spu = d->spu, freed = (int64_t)(d->spb - d->gc_v);
    d->ph_rd += 256 * (int64_t)d->spb / freed;
    while (d->ph_rd >= 256) {
        uint32_t gpu = d->ph_seq + (uint32_t)(d->ph_rd >> 8); /* a victim unit on some die */
        die_op(d, mod32(&d->dv_dies, gpu), t, vary(d, d->tr_pt[ptype_of(d, gpu)], trng_next(d)), d->e_read_pj);
        d->c_nand_reads++;
        d->c_energy += d->e_read;
        d->ph_rd -= 256;
    }
    d->ph_mv += spu * d->gc_ratio;
    while (d->ph_mv >= 256 * spu) {
        phantom_program(d, t, 1);
        d->ph_mv -= 256 * spu;
    }
    d->ph_er += 256 * spu;
    while (d->ph_er >= 256 * freed) {
        for (uint32_t die = 0; die < d->n_dies; die++)
            die_op(d, die, t, vary(d, d->t_bers, trng_next(d)), d->e_erase_pj);
        d->c_erases++;
        d->c_energy += d->e_erase_sb;
        d->ph_er -= 256 * freed;
    }
    return done;
}

/* A phantom host write (see Dev.ts_q16): the command, the slow path of an IU-unaligned write, the link, the read of
 * each partially covered IU that holds data on NAND, buffer space; its slots are programmed in units as they fill
 * one. The mapping is not changed. */
static __attribute__((noinline)) int64_t phantom_write(Dev *d, int64_t t, int64_t off, int64_t len) {
    int64_t head_part = iu_mod(d, off), tail_part = iu_mod(d, off + len);
    uint64_t r0 = trng_next(d);
    int64_t ready = ctrl_cmd(d, t, d->svc_w_ns, 0, d->fw_lat_w_ns, r0, 0);
    if ((head_part || tail_part) && (d->slow_ns > 0 || d->slow_busy_ns > 0)) {
        int64_t s = max64(ready, d->slow_free);
        d->slow_free = s + d->slow_busy_ns;
        ready = s + d->slow_ns;
    }
    int64_t done = cal_book(d->cal_host, ready, link_time(d, len, r0), d->cal_now);
    int64_t first = iu_div(d, off), last = iu_div(d, off + len - 1);
    for (int side = 0; side < 2; side++) {
        int64_t lpn = side == 0 ? first : last;
        if (side == 1 && last == first) break;
        int partial = side == 0 ? (head_part != 0 || (first == last && tail_part != 0)) : (tail_part != 0);
        if (!partial) continue;
        uint32_t m = d->l2p[lpn];
        if (m == UNMAPPED || (m & BUFBIT)) continue;
        uint32_t gpu = div32(&d->dv_spu, m);
        done = max64(done, nand_read(d, mod32(&d->dv_dies, gpu), div32(&d->dv_spp, mod32(&d->dv_spu, m)), ready,
                                     vary(d, d->tr_pt[ptype_of(d, gpu)], trng_next(d)), d->e_read_pj));
        d->c_rmw_reads++;
        d->c_nand_reads++;
        d->c_energy += d->e_read;
    }
    int64_t n = last - first + 1;
    done = buffer_room(d, n, done);
    d->ph_pend += n;
    d->c_host_w_slots += (uint64_t)n; /* host slots as the drive programs them (write amplification counts them) */
    while (d->ph_pend >= (int64_t)d->spu) {
        infl_push(d, phantom_unit(d, done), d->spu); /* its buffer space is freed when its program completes */
        d->ph_pend -= d->spu;
    }
    d->c_host_w_bytes += (uint64_t)len;
    return done;
}

/* whether this write of a time-based point changes the drive's state (1 in ts_q16 / 65536 of them) */
HOT_INLINE int thin_skip(Dev *d) {
    d->ts_acc += 65536;
    if (d->ts_acc >= d->ts_q16) {
        d->ts_acc -= d->ts_q16;
        return 0;
    }
    return 1;
}

/* a host write: one whole IU inlined where it is called, any other in do_write_any */
HOT_INLINE int64_t do_write(Dev *d, int64_t t, int64_t off, int64_t len) {
    if (len == d->iu_bytes && iu_mod(d, off) == 0) {
        if (d->ra_on) ra_forget(d, off, len);
        return write_one_iu(d, t, (uint32_t)iu_div(d, off), len);
    }
    return do_write_any(d, t, off, len);
}

static int64_t do_write_any(Dev *d, int64_t t, int64_t off, int64_t len) {
    int64_t head_part = iu_mod(d, off), tail_part = iu_mod(d, off + len);
    int aligned = head_part == 0 && tail_part == 0;
    uint64_t r0 = trng_next(d); /* the command's draws: firmware time, link */
    int64_t ready = ctrl_cmd(d, t, d->svc_w_ns, 0, d->fw_lat_w_ns, r0, 0);
    if (!aligned && (d->slow_ns > 0 || d->slow_busy_ns > 0)) {
        /* the firmware's slow path for IU-unaligned writes: its serial part takes one write at a time */
        int64_t s = max64(ready, d->slow_free);
        d->slow_free = s + d->slow_busy_ns;
        ready = s + d->slow_ns;
    }
    int64_t done = cal_book(d->cal_host, ready, link_time(d, len, r0), d->cal_now);
    if (d->ra_on) ra_forget(d, off, len);
    int64_t first = iu_div(d, off), last = iu_div(d, off + len - 1);
    /* read-modify-write of partially covered IUs that hold data on NAND */
    for (int side = 0; side < 2; side++) {
        int64_t lpn = side == 0 ? first : last;
        if (side == 1 && last == first) break;
        int partial = side == 0 ? (head_part != 0 || (first == last && tail_part != 0)) : (tail_part != 0);
        if (!partial) continue;
        uint32_t m = d->l2p[lpn];
        if (m == UNMAPPED || (m & BUFBIT)) continue;
        int64_t r = map_lookup(d, (uint32_t)lpn, ready, 0);
        uint32_t gpu = div32(&d->dv_spu, m);
        /* the write completes once the old data is merged: the read holds it (and so the host's queue), which
         * keeps a stream of sub-IU writes from booking reads without bound */
        done = max64(done, nand_read(d, mod32(&d->dv_dies, gpu), div32(&d->dv_spp, mod32(&d->dv_spu, m)), r,
                                     vary(d, d->tr_pt[ptype_of(d, gpu)], trng_next(d)), d->e_read_pj));
        d->c_rmw_reads++;
        d->c_nand_reads++;
        d->c_energy += d->e_read;
    }
    int64_t lpn = first;
    int64_t chunk_max = d->buf_slots - d->flush_thr;
    if (chunk_max < 1) chunk_max = 1;
    while (lpn <= last) {
        int64_t chunk_end = lpn + chunk_max - 1;
        if (chunk_end > last) chunk_end = last;
        int64_t n_new = 0;
        for (int64_t x = lpn; x <= chunk_end; x++) {
            if (!(d->l2p[x] != UNMAPPED && (d->l2p[x] & BUFBIT))) n_new++;
        }
        done = buffer_room(d, n_new, done);
        for (int64_t x = lpn; x <= chunk_end; x++) {
            uint32_t m = d->l2p[x];
            map_lookup(d, (uint32_t)x, ready, 1);
            if (m != UNMAPPED && (m & BUFBIT)) {
                d->c_merges++;
                continue;
            }
            if (m != UNMAPPED) invalidate(d, m);
            else d->n_mapped++;
            int64_t pos = ring_add(d->ring_head, d->ring_cnt, d->ring_cap);
            d->ring[pos] = (uint32_t)x;
            d->ring_cnt++;
            d->pend_live++;
            d->l2p[x] = BUFBIT | (uint32_t)pos;
        }
        while (d->pend_live >= d->flush_thr || d->ring_cnt >= d->ring_cap - d->spu - chunk_max) {
            if (d->pend_live == 0) {
                d->ring_cnt = 0;
                break;
            }
            if (dispatch_unit(d, done, d->pend_live < (int64_t)d->spu) < 0) return -1;
        }
        lpn = chunk_end + 1;
    }
    d->c_host_w_bytes += (uint64_t)len;
    return done;
}

/* the buffer ring stores positions in l2p; after dispatch the positions of later entries stay valid
 * because the ring is never compacted (head advances only). */

/* ------------------------------------------------------------------ allocation */

static void dev_free_all(Dev *d) {
    free(d->l2p); free(d->p2l); free(d->valid); free(d->bstate); free(d->bprev); free(d->bnext);
    free(d->freeq); free(d->fifoq); free(d->ring); free(d->infl_t); free(d->infl_n);
    free(d->die_free); free(d->ch_free); free(d->cal_ch); free(d->cal_host);
    free(d->op_len); free(d->rd_die); free(d->rd_from); free(d->rd_push); free(d->susp_op); free(d->susp_cnt); free(d->rd_plane);
    d->op_len = d->rd_die = d->rd_from = d->rd_push = d->susp_op = d->susp_cnt = d->rd_plane = NULL;
    d->cal_ch = d->cal_host = NULL; free(d->mc_flags); free(d->mc_ring);
    free(d->job_pos); free(d->job_issued); free(d->job_next); free(d->job_gate); free(d->slot_issue); free(d->slot_gated); free(d->heap);
    free(d->sio); d->sio = NULL;
    free(d->hist); free(d->iv); free(d->hl);
    free(d->pw_h); free(d->pw_p); free(d->pw_tag); free(d->reg_gpu); free(d->reg_epoch); free(d->pe_epoch);
    d->pw_h = d->pw_p = NULL; d->pw_tag = NULL; d->reg_gpu = d->reg_epoch = d->pe_epoch = NULL;
    d->hl = NULL;
    d->l2p = d->p2l = d->valid = NULL; d->bstate = NULL; d->bprev = d->bnext = NULL;
    d->freeq = d->fifoq = d->ring = NULL; d->infl_t = d->infl_n = NULL; d->die_free = d->ch_free = NULL;
    d->mc_flags = NULL; d->mc_ring = NULL; d->job_pos = d->job_issued = d->job_next = d->job_gate = NULL;
    d->slot_issue = NULL; d->slot_gated = NULL; d->heap = NULL; d->hist = NULL; d->iv = NULL;
}

/* empty the channel and host-link calendars (time 0 starts over) */
static void cal_clear(Dev *d) {
    d->cal_now = 0;
    for (uint32_t i = 0; i <= d->n_ch; i++) {
        Cal *c = i < d->n_ch ? &d->cal_ch[i] : d->cal_host;
        memset(c->bin, 0, sizeof(c->bin)); /* tag 0, nothing booked: empty for every bin */
        c->full_lo = c->full_hi = 0;
        c->top = -1;
        memset(c->full, 0, sizeof(c->full));
        c->dead_upto = -64;
        c->hw_now = 0;
        c->far = 0;
        c->far_lo = INT64_MAX;
    }
    /* the page registers: a point starts without them */
    memset(d->reg_gpu, 0xFF, sizeof(uint32_t) * (size_t)d->n_dies * d->planes);
}

/* the governor's bins moved `by` ns earlier (a new point's time 0 is the last one's end: the work still booked keeps
 * its energy), or all cleared (by < 0) */
static void pw_rebase(Dev *d, int64_t by) {
    int64_t shift = by >> PW_SHIFT;
    if (by < 0 || shift >= ((int64_t)1 << 40)) {
        memset(d->pw_tag, 0xFF, sizeof(uint32_t) * PW_N);
        d->pw_debt = d->pw_pay_b = 0;
        return;
    }
    if (shift == 0) return;
    int64_t *h = malloc(sizeof(int64_t) * 2 * PW_N);
    uint32_t *tag = malloc(sizeof(uint32_t) * PW_N);
    if (!h || !tag) { /* no room to move them: the point starts without them */
        free(h);
        free(tag);
        memset(d->pw_tag, 0xFF, sizeof(uint32_t) * PW_N);
        return;
    }
    memset(tag, 0xFF, sizeof(uint32_t) * PW_N);
    for (uint32_t x = 0; x < PW_N; x++) {
        if (d->pw_tag[x] == UINT32_MAX) continue;
        int64_t b = ((int64_t)d->pw_tag[x] << 12) | x, nb = b - shift;
        if (nb < 0) continue;
        uint32_t y = (uint32_t)(nb & (PW_N - 1));
        tag[y] = (uint32_t)(nb >> 12);
        h[y] = d->pw_h[x];
        h[PW_N + y] = d->pw_p[x];
    }
    for (uint32_t y = 0; y < PW_N; y++) {
        d->pw_tag[y] = tag[y];
        d->pw_h[y] = h[y];
        d->pw_p[y] = h[PW_N + y];
    }
    d->pw_pay_b = d->pw_pay_b > shift ? d->pw_pay_b - shift : 0;
    free(h);
    free(tag);
}

static void reset_time(Dev *d) {
    for (uint32_t i = 0; i < d->n_dies; i++)
        d->die_free[i] = d->op_len[i] = d->rd_die[i] = d->rd_from[i] = d->rd_push[i] = d->susp_op[i] = d->susp_cnt[i] = 0;
    for (uint32_t i = 0; i < d->n_dies * d->planes; i++) d->rd_plane[i] = 0;
    for (uint32_t i = 0; i < d->n_ch; i++) d->ch_free[i] = 0;
    d->slow_free = 0;
    for (uint32_t i = 0; i < MAX_CORES; i++) d->core_free[i] = i < d->n_cores ? 0 : INT64_MAX;
    d->hk_next = d->hk_gap_ns > 0 ? d->hk_gap_ns / 2 : INT64_MAX; /* the first task half a mean gap in */
    for (uint32_t i = 0; i < d->n_dies; i++) d->pe_epoch[i] = 0;
    cal_clear(d);
    pw_rebase(d, -1);
    d->clock_base = 0;
    d->drift_seg = -1;
    drift_update(d, 0);
    d->rmw_ready = 0;
    d->carry_end = 0;
    d->space_t = 0;
    d->infl_head = d->infl_cnt = d->infl_occ = d->infl_last = 0;
    d->ph_pend = d->ph_mv = d->ph_rd = d->ph_er = d->ts_acc = 0;
    d->ph_seq = 0;
    d->bg_paid = 0;
}

/* start a new point at time 0 = the previous point's end: booked work (die queues, buffer in flight) stays */
static int64_t shift_down(int64_t x, int64_t by) { return x > by ? x - by : 0; }

static void rebase(Dev *d) {
    int64_t by = d->carry_end;
    d->clock_base += by; /* the drive's clock runs on */
    for (uint32_t i = 0; i < d->n_dies; i++) {
        d->die_free[i] = shift_down(d->die_free[i], by);
        d->rd_die[i] = shift_down(d->rd_die[i], by);
        d->rd_from[i] = shift_down(d->rd_from[i], by);
        d->rd_push[i] = shift_down(d->rd_push[i], by);
        d->susp_op[i] = shift_down(d->susp_op[i], by);
    }
    for (uint32_t i = 0; i < d->n_dies * d->planes; i++) d->rd_plane[i] = shift_down(d->rd_plane[i], by);
    for (uint32_t i = 0; i < d->n_ch; i++) d->ch_free[i] = shift_down(d->ch_free[i], by);
    for (uint32_t i = 0; i < d->n_cores; i++) d->core_free[i] = shift_down(d->core_free[i], by);
    if (d->hk_next != INT64_MAX) d->hk_next = shift_down(d->hk_next, by);
    d->slow_free = shift_down(d->slow_free, by);
    for (int64_t k = 0; k < d->infl_cnt; k++) {
        int64_t pos = (d->infl_head + k) % d->infl_cap;
        d->infl_t[pos] = shift_down(d->infl_t[pos], by);
    }
    d->infl_last = shift_down(d->infl_last, by);
    d->space_t = shift_down(d->space_t, by);
    cal_clear(d);
    pw_rebase(d, by);
    d->carry_end = 0;
}

static void rebuild_lists(Dev *d) {
    for (uint32_t v = 0; v <= d->spb; v++) d->bnext[LIST_HEAD(d, v)] = LIST_END(d);
    d->gc_min_hint = 0;
    if (d->gc_policy == 0) {
        for (uint32_t b = 0; b < d->n_blk; b++)
            if (d->bstate[b] == BS_CLOSED) bucket_insert(d, b);
    }
}

static void fob_reset(Dev *d) {
    for (int64_t i = 0; i < d->n_lpn; i++) d->l2p[i] = UNMAPPED;
    d->n_mapped = 0;
    memset(d->p2l, 0xFF, sizeof(uint32_t) * (size_t)d->n_blk * d->spb);
    d->free_head = 0;
    d->free_cnt = 0;
    d->fifo_head = d->fifo_cnt = 0;
    for (uint32_t b = 0; b < d->n_blk; b++) push_free(d, b);
    rebuild_lists(d);
    d->host_blk = d->gc_blk = d->gc_vb = UNMAPPED;
    d->host_slot = d->gc_slot = d->gc_vpu = 0;
    d->gc_debt = d->gc_ratio = 0;
    d->ring_head = d->ring_cnt = d->pend_live = 0;
    if (d->mc_flags) memset(d->mc_flags, 0, (size_t)d->n_mp);
    d->mc_hand = d->mc_count = 0;
    reset_time(d);
}

/* the standard normal's quantile at p, by bisection on erfc (256 of them, once per drive) */
static double norm_quantile(double p) {
    double lo = -9.0, hi = 9.0;
    for (int i = 0; i < 80; i++) {
        double mid = 0.5 * (lo + hi);
        if (0.5 * erfc(-mid / sqrt(2.0)) < p) lo = mid;
        else hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* the quantile at p of a positive factor: kind 0 a symmetric triangular distribution around 1 of standard deviation
 * a (its half-width a x sqrt 6, at most 0.95), kind 1 a log-normal one of coefficient of variation a, kind 2 a
 * log-normal one whose logarithm has standard deviation a (before they are scaled to a mean of 1) */
static double quantile(int kind, double a, double p) {
    if (a <= 0) return 1.0;
    if (kind == 0) {
        double h = a * sqrt(6.0);
        if (h > 0.95) h = 0.95;
        return 1.0 + (p < 0.5 ? -h + h * sqrt(2.0 * p) : h - h * sqrt(2.0 * (1.0 - p)));
    }
    if (p <= 0) return 0.0;
    double sg = kind == 1 ? sqrt(log(1.0 + a * a)) : a;
    return exp(sg * norm_quantile(p));
}

/* D as the quantile function of a distribution (see quantile), scaled to a mean of exactly 1 (x 65536) */
static void dist_fill(Dist *D, int kind, double a) {
    double v[3][DIST_BINS + 1], mean = 0, lo = 0, width = 1.0;
    for (int lv = 0; lv < 3; lv++) { /* level lv covers p in [lo, lo + width) */
        for (int i = 0; i <= DIST_BINS; i++) {
            double p = lo + width * i / DIST_BINS;
            if (i == DIST_BINS) p = lv < 2 ? lo + width : (kind == 0 ? 1.0 : 1.0 - ldexp(1.0, -22));
            v[lv][i] = quantile(kind, a, p);
        }
        int bins = lv < 2 ? DIST_BINS - 1 : DIST_BINS; /* a level's top bin is the next level */
        for (int i = 0; i < bins; i++) mean += (v[lv][i] + v[lv][i + 1]) / 2.0 * width / DIST_BINS;
        lo += width * (DIST_BINS - 1) / DIST_BINS;
        width /= DIST_BINS;
    }
    for (int lv = 0; lv < 3; lv++)
        for (int i = 0; i <= DIST_BINS; i++) D->v[lv][i] = (uint32_t)floor(v[lv][i] / mean * 65536.0 + 0.5);
}

static double dget(PyObject *dict, const char *key, int *err) {
    PyObject *v = PyDict_GetItemString(dict, key);
    if (!v) {
        PyErr_Format(PyExc_KeyError, "missing model parameter %s", key);
        *err = 1;
        return 0;
    }
    double x = PyFloat_AsDouble(v);
    if (x == -1.0 && PyErr_Occurred()) *err = 1;
    return x;
}

static int Dev_init(Dev *d, PyObject *args, PyObject *kw) {
    PyObject *p;
    if (!PyArg_ParseTuple(args, "O!", &PyDict_Type, &p)) return -1;
    dev_free_all(d);
    int err = 0;
    int64_t user = (int64_t)dget(p, "capacity", &err);
    double op = dget(p, "op", &err) / 100.0;
    d->iu_bytes = (int64_t)dget(p, "iu", &err);
    d->page_bytes = (int64_t)dget(p, "page", &err);
    d->planes = (uint32_t)dget(p, "planes", &err);
    uint32_t pages = (uint32_t)dget(p, "pages", &err);
    d->n_ch = (uint32_t)dget(p, "channels", &err);
    d->n_dies = d->n_ch * (uint32_t)dget(p, "dies", &err);
    d->bits = (int)dget(p, "bits", &err);
    if (d->bits < 1 || d->bits > 4) d->bits = 1;
    static const char *tr_keys[4] = {"tr0", "tr1", "tr2", "tr3"}, *tp_keys[4] = {"tprog0", "tprog1", "tprog2", "tprog3"};
    double tr_sum = 0, tp_sum = 0;
    for (int k = 0; k < 4; k++) {
        d->tr_pt[k] = k < d->bits ? (int64_t)(dget(p, tr_keys[k], &err) * 1000.0) : 0;
        d->tprog_pt[k] = k < d->bits ? (int64_t)(dget(p, tp_keys[k], &err) * 1000.0) : 0;
        tr_sum += (double)d->tr_pt[k];
        tp_sum += (double)d->tprog_pt[k];
    }
    d->t_r = (int64_t)(tr_sum / d->bits); /* means over the page types (map pages and the like) */
    d->t_prog = (int64_t)(tp_sum / d->bits);
    div32_init(&d->dv_bits, (uint32_t)d->bits);
    double t_bers_us = dget(p, "tbers", &err);
    double tvar = dget(p, "tvar", &err), fw_cv = dget(p, "fw_cv", &err);
    double cmd_cv = dget(p, "cmd_cv", &err), link_cv = dget(p, "link_cv", &err), rber_sd = dget(p, "rber_sd", &err);
    double rber_m = dget(p, "rber_m", &err), retry_lnr = dget(p, "retry_lnr", &err);
    d->ecc_ns = (int64_t)(dget(p, "ecc_us", &err) * 1000.0);
    d->suspend = (int)dget(p, "suspend", &err);
    d->susp_ns = (int64_t)(dget(p, "susp_us", &err) * 1000.0);
    d->resume_ns = (int64_t)(dget(p, "resume_us", &err) * 1000.0);
    d->slice_ns = (int64_t)(dget(p, "susp_slice_us", &err) * 1000.0);
    double cores = dget(p, "ctrl_cores", &err), be = dget(p, "ctrl_be", &err);
    double hk_hz = dget(p, "hk_hz", &err), hk_us = dget(p, "hk_us", &err), ra_kib = dget(p, "ra_kib", &err);
    d->susp_max = (uint32_t)dget(p, "susp_max", &err);
    d->cmd_ns = (int64_t)(dget(p, "cmd_us", &err) * 1000.0);
    d->cmd_bytes = (int64_t)dget(p, "cmd_bytes", &err);
    double gc_band = dget(p, "gc_band", &err);
    double nand_block_pages = dget(p, "block_pages", &err);
    double ch_mbps = dget(p, "ch_mbps", &err);
    double host_mbps = dget(p, "host_mbps", &err);
    d->fw_ns = (int64_t)(dget(p, "fw_us", &err) * 1000.0);
    double ctrl_kiops = dget(p, "ctrl_kiops", &err);
    d->slow_ns = (int64_t)(dget(p, "slowpath_us", &err) * 1000.0);
    d->gc_policy = (int)dget(p, "gc_policy", &err);
    d->gc_free_min = (uint32_t)dget(p, "gc_free", &err);
    double tscale = dget(p, "time_scale", &err);
    if (tscale < 1.0) tscale = 1.0;
    d->ts_q16 = (int64_t)(tscale * 65536.0 + 0.5);
    /* background GC relocates idle_gc MB/s of a drive time_scale times larger: that share of the model's */
    d->bg_rate = dget(p, "idle_gc", &err) * 1e-3 / tscale; /* MB/s -> bytes per ns */
    d->bg_delay_ns = (int64_t)(dget(p, "idle_gc_ms", &err) * 1e6);
    double bg_free_pct = dget(p, "idle_free", &err);
    int64_t buf_bytes = (int64_t)dget(p, "buffer", &err);
    double map_cache = dget(p, "map_cache", &err);
    d->p_cap = dget(p, "power", &err);
    d->p_idle = dget(p, "idle_w", &err);
    double e_read = dget(p, "e_read_uj", &err), e_prog = dget(p, "e_prog_uj", &err);
    double e_erase = dget(p, "e_erase_uj", &err), e_io = dget(p, "e_io_uj", &err);
    if (err) return -1;
    if (d->iu_bytes <= 0 || d->planes * d->page_bytes < d->iu_bytes || (d->planes * d->page_bytes) % d->iu_bytes) {
        PyErr_SetString(PyExc_ValueError, "planes x page must be a multiple of the indirection unit");
        return -1;
    }
    if (nand_block_pages < pages) nand_block_pages = pages;
    /* the model's blocks are scaled down: erase time and energy are charged pro rata per page */
    d->t_bers = (int64_t)(t_bers_us * 1000.0 * pages / nand_block_pages);
    d->var_h = (int64_t)(fmin(0.95, tvar / 100.0 * sqrt(6.0)) * 65536.0 + 0.5);
    d->drift_h = (int64_t)(fmin(0.95, dget(p, "drift", &err) / 100.0 * sqrt(6.0)) * 65536.0 + 0.5);
    d->drift_key = (uint64_t)dget(p, "seed", &err) * 0xD1B54A32D192ED03ULL + 0x8CB92BA72F3D8DD7ULL;
    dist_fill(&d->d_fw, 1, fw_cv / 100.0);
    dist_fill(&d->d_cmd, 1, cmd_cv / 100.0);
    d->link_h = (int64_t)(fmin(0.95, link_cv / 100.0 * sqrt(6.0)) * 65536.0 + 0.5);
    dist_fill(&d->d_rber, 2, rber_sd);
    d->rber_m_q16 = rber_m > 0 ? (uint64_t)(rber_m * 65536.0 + 0.5) : 0;
    d->retry_lnr = retry_lnr > 1e-6 ? retry_lnr : 1e-6;
    d->spu = (uint32_t)(d->planes * d->page_bytes / d->iu_bytes);
    if (d->spu > SPU_MAX) {
        PyErr_SetString(PyExc_ValueError, "planes x page holds more than 128 indirection units");
        return -1;
    }
    d->pu_per_sb = d->n_dies * pages;
    d->spb = d->spu * d->pu_per_sb;
    d->n_lpn = user / d->iu_bytes;
    d->iu_shift = (d->iu_bytes & (d->iu_bytes - 1)) == 0 ? __builtin_ctzll((uint64_t)d->iu_bytes) : -1;
    div32_init(&d->dv_spb, d->spb);
    div32_init(&d->dv_spu, d->spu);
    div32_init(&d->dv_dies, d->n_dies);
    div32_init(&d->dv_ch, d->n_ch);
    {   /* reads go to one of read_planes independent read units of a die (planes that read independently) */
        uint32_t rp = (uint32_t)dget(p, "read_planes", &err);
        if (rp < 1) rp = 1;
        if (rp > d->planes) rp = d->planes;
        d->read_units = rp;
        uint32_t spp = d->spu / rp;
        div32_init(&d->dv_spp, spp >= 1 ? spp : 1);
    }
    if (d->n_lpn < 1 || d->n_lpn >= (int64_t)BUFBIT || d->spb < 2) {
        PyErr_SetString(PyExc_ValueError, "capacity / geometry out of range");
        return -1;
    }
    double need = ceil((double)d->n_lpn * (1.0 + op) / (double)d->spb);
    uint32_t band = (uint32_t)(gc_band < 0 ? 0 : gc_band);
    int64_t nb = (int64_t)need + d->gc_free_min + 2 + band; /* the reserve GC keeps free is not spare */
    if (nb * (int64_t)d->spb >= (int64_t)BUFBIT) {
        PyErr_SetString(PyExc_ValueError, "raw capacity too large for the model (2^31 slots)");
        return -1;
    }
    d->n_blk = (uint32_t)nb;
    /* background GC refills the free pool up to this share of the spare superblocks (beyond GC's reserve) */
    int64_t spare = nb - (int64_t)ceil((double)d->n_lpn / (double)d->spb) - d->gc_free_min - 2 - band;
    if (spare < 0) spare = 0;
    d->bg_target = d->gc_free_min + 1 + band + (uint32_t)floor((double)spare * bg_free_pct / 100.0);
    d->gc_start = d->gc_free_min + 1 + band;
    d->xfer_iu = (int64_t)((double)d->iu_bytes * 1000.0 / ch_mbps);
    d->xfer_pu = (int64_t)((double)(d->planes * d->page_bytes) * 1000.0 / ch_mbps);
    d->ch_ns_per_byte = 1000.0 / ch_mbps;
    d->host_ns_per_byte = 1000.0 / host_mbps;
    d->ctrl_ns = ctrl_kiops > 0 ? (int64_t)(1e6 / ctrl_kiops) : 0;
    {
        double w_kiops = dget(p, "ctrl_w_kiops", &err), slow_kiops = dget(p, "slowpath_kiops", &err);
        d->ctrl_w_ns = w_kiops > 0 ? (int64_t)(1e6 / w_kiops) : d->ctrl_ns;
        /* the slow path's serial part: it takes 1/slowpath_kiops per unaligned write (its whole latency without
         * slowpath_kiops), one write at a time */
        d->slow_busy_ns = slow_kiops > 0 ? (int64_t)(1e6 / slow_kiops) : d->slow_ns;
        /* cores: a command holds one for cores x the ceiling's time per command, so the ceiling holds on average */
        d->n_cores = cores < 1 ? 1 : cores > MAX_CORES ? MAX_CORES : (uint32_t)cores;
        d->svc_r_ns = d->ctrl_ns * d->n_cores;
        d->svc_w_ns = d->ctrl_w_ns * d->n_cores;
        d->fw_lat_r_ns = max64(d->fw_ns, d->svc_r_ns);
        d->fw_lat_w_ns = max64(d->fw_ns, d->svc_w_ns);
        d->be_q16 = (int64_t)(be / 100.0 * 65536.0 + 0.5);
        d->hk_gap_ns = hk_hz > 0 && hk_us > 0 ? (int64_t)(1e9 / hk_hz) : 0;
        d->hk_len_ns = (int64_t)(hk_us * 1000.0);
        d->ra_bytes = (int64_t)(ra_kib * 1024.0);
        d->ra_chunk = (int64_t)d->planes * d->page_bytes;
    }
    d->buf_slots = buf_bytes / d->iu_bytes;
    if (d->buf_slots < 4 * (int64_t)d->spu) d->buf_slots = 4 * (int64_t)d->spu;
    /* flush eagerly, keeping a 256 KiB coalescing window (sequential sub-IU writes merge in it) */
    d->flush_thr = (256 * 1024) / d->iu_bytes;
    if (d->flush_thr < (int64_t)d->spu) d->flush_thr = d->spu;
    if (d->flush_thr < 2) d->flush_thr = 2;
    if (d->flush_thr > d->buf_slots / 2) d->flush_thr = d->buf_slots / 2;
    d->ring_cap = d->buf_slots * 2 + 2 * (int64_t)d->spu + 8;
    d->infl_cap = d->buf_slots + 8;
    {
        int64_t chunk_max = d->buf_slots - d->flush_thr;
        if (chunk_max < 1) chunk_max = 1;
        d->ring_lim = d->ring_cap - d->spu - chunk_max; /* do_write flushes while the ring holds this many */
    }
    d->host_xfer_iu = (int64_t)((double)(d->iu_bytes + d->cmd_bytes) * d->host_ns_per_byte + 0.5);
    d->map_entries = 4096;
    d->n_mp = (d->n_lpn + d->map_entries - 1) / d->map_entries;
    d->mc_cap = map_cache >= 1.0 ? d->n_mp : (int64_t)ceil(map_cache * (double)d->n_mp);
    if (d->mc_cap < 1) d->mc_cap = 1;
    d->e_read = e_read * 1e-6;
    d->e_prog_pu = e_prog * 1e-6 * d->planes;
    d->e_erase_sb = e_erase * 1e-6 * d->planes * d->n_dies * pages / nand_block_pages;
    d->e_io = e_io * 1e-6;
    d->e_read_pj = (int64_t)(e_read * 1e6 + 0.5);
    d->e_prog_pj = (int64_t)(e_prog * 1e6 * d->planes + 0.5);
    d->e_erase_pj = (int64_t)(d->e_erase_sb * 1e12 / d->n_dies + 0.5);
    d->e_io_pj = (int64_t)(e_io * 1e6 + 0.5);
    {   /* the governor runs when the cap can bind: every die programming (or reading on every read unit) and the
         * controller at its ceiling would draw more than the cap */
        double tprog = (double)d->t_prog > 0 ? (double)d->t_prog : 1.0, tr = (double)d->t_r > 0 ? (double)d->t_r : 1.0;
        double die_w = fmax((double)d->e_prog_pj / tprog, (double)d->e_read_pj * d->read_units / tr) * 1e-3;
        double cmds = ctrl_kiops > 0 ? ctrl_kiops * 1e3 : 5e6;
        double most = d->p_idle + die_w * d->n_dies + cmds * e_io * 1e-6;
        d->gov = d->p_cap > 0 && most > d->p_cap;
        d->pw_cap_mw = d->p_cap > d->p_idle ? (int64_t)((d->p_cap - d->p_idle) * 1000.0) : 0;
        d->pw_ns_per_pj = d->pw_cap_mw > 0 ? 1.0 / (double)d->pw_cap_mw : 0.0;
    }

    size_t nslot = (size_t)d->n_blk * d->spb;
    d->l2p = big_alloc(sizeof(uint32_t) * (size_t)d->n_lpn);
    d->p2l = big_alloc(sizeof(uint32_t) * nslot);
    d->valid = calloc(d->n_blk, sizeof(uint32_t));
    d->bstate = calloc(d->n_blk, 1);
    d->bprev = malloc(sizeof(int32_t) * ((size_t)d->n_blk + d->spb + 2)); /* blocks, heads, the end node */
    d->bnext = malloc(sizeof(int32_t) * ((size_t)d->n_blk + d->spb + 2));
    /* zeroed: save() writes these rings whole, and a greedy drive never fills the FIFO one (the state file would
     * carry whatever the memory held) */
    d->freeq = calloc(d->n_blk, sizeof(uint32_t));
    d->fifoq = calloc(d->n_blk, sizeof(uint32_t));
    d->ring = malloc(sizeof(uint32_t) * (size_t)d->ring_cap);
    d->infl_t = malloc(sizeof(int64_t) * (size_t)d->infl_cap);
    d->infl_n = malloc(sizeof(int64_t) * (size_t)d->infl_cap);
    d->die_free = calloc(d->n_dies, sizeof(int64_t));
    d->op_len = calloc(d->n_dies, sizeof(int64_t));
    d->rd_die = calloc(d->n_dies, sizeof(int64_t));
    d->rd_from = calloc(d->n_dies, sizeof(int64_t));
    d->rd_push = calloc(d->n_dies, sizeof(int64_t));
    d->susp_op = calloc(d->n_dies, sizeof(int64_t));
    d->susp_cnt = calloc(d->n_dies, sizeof(int64_t));
    d->rd_plane = calloc((size_t)d->n_dies * d->planes, sizeof(int64_t));
    d->ch_free = calloc(d->n_ch, sizeof(int64_t));
    d->cal_ch = malloc(sizeof(Cal) * d->n_ch);
    d->cal_host = malloc(sizeof(Cal));
    d->mc_flags = d->mc_cap < d->n_mp ? calloc((size_t)d->n_mp, 1) : NULL;
    d->mc_ring = d->mc_cap < d->n_mp ? malloc(sizeof(int64_t) * (size_t)d->mc_cap) : NULL;
    d->hist = calloc(NDIR * PLAT_NR, sizeof(int64_t));
    d->pw_h = calloc(PW_N, sizeof(int64_t));

    d->pw_p = calloc(PW_N, sizeof(int64_t));
    d->pw_tag = malloc(sizeof(uint32_t) * PW_N);
    d->reg_gpu = malloc(sizeof(uint32_t) * (size_t)d->n_dies * d->planes);
    d->reg_epoch = calloc((size_t)d->n_dies * d->planes, sizeof(uint32_t));
    d->pe_epoch = calloc(d->n_dies, sizeof(uint32_t));
    if (!d->l2p || !d->p2l || !d->valid || !d->bstate || !d->bprev || !d->bnext || !d->freeq ||
        !d->fifoq || !d->ring || !d->infl_t || !d->infl_n || !d->die_free || !d->ch_free ||
        !d->op_len || !d->rd_die || !d->rd_from || !d->rd_push || !d->susp_op || !d->susp_cnt || !d->rd_plane || !d->cal_ch || !d->cal_host || !d->hist ||
        !d->pw_h || !d->pw_p || !d->pw_tag || !d->reg_gpu || !d->reg_epoch || !d->pe_epoch ||
        (d->mc_cap < d->n_mp && (!d->mc_flags || !d->mc_ring))) {
        dev_free_all(d);
        PyErr_NoMemory();
        return -1;
    }
    d->running = 0;
    d->trng = 0x9E3779B97F4A7C15ULL;
    fob_reset(d);
    return 0;
}

static void Dev_dealloc(Dev *d) {
    dev_free_all(d);
    Py_TYPE(d)->tp_free((PyObject *)d);
}

/* ------------------------------------------------------------------ methods: state */

static PyObject *Dev_reset(Dev *d, PyObject *unused) {
    fob_reset(d);
    Py_RETURN_NONE;
}

static PyObject *Dev_fill(Dev *d, PyObject *args) {
    long long start, count;
    if (!PyArg_ParseTuple(args, "LL", &start, &count)) return NULL;
    if (start < 0 || count < 0 || start + count > d->n_lpn) {
        PyErr_SetString(PyExc_ValueError, "fill range outside the user capacity");
        return NULL;
    }
    flush_all(d, 0);
    for (int64_t lpn = start; lpn < start + count; lpn++) {
        uint32_t m = d->l2p[lpn];
        if (m != UNMAPPED) invalidate(d, m);
        if (host_place(d, (uint32_t)lpn, 0) < 0) {
            PyErr_SetString(PyExc_RuntimeError, "simulated drive ran out of free blocks");
            return NULL;
        }
        if (m == UNMAPPED) d->n_mapped++;
    }
    /* finish the open program unit so later units stay aligned */
    uint32_t rem = d->host_slot % d->spu;
    if (rem) d->host_slot += d->spu - rem;
    reset_time(d);
    Py_RETURN_NONE;
}

#define NCOUNTERS 13
static const char *counter_names[NCOUNTERS] = {
    "host_write_bytes", "host_read_bytes", "host_write_slots", "nand_write_slots", "gc_write_slots",
    "gc_runs", "erases", "rmw_reads", "nand_reads", "map_misses", "map_writes", "buffer_merges", "trimmed_slots"};

/* the lifetime counters in counter_names order (read by counters() and save(), restored by load()) */
static void counter_refs(Dev *d, uint64_t *refs[NCOUNTERS]) {
    uint64_t *r[NCOUNTERS] = {&d->c_host_w_bytes, &d->c_host_r_bytes, &d->c_host_w_slots, &d->c_nand_w_slots,
                              &d->c_gc_slots, &d->c_gc_runs, &d->c_erases, &d->c_rmw_reads, &d->c_nand_reads,
                              &d->c_map_miss, &d->c_map_wr, &d->c_merges, &d->c_trim_slots};
    memcpy(refs, r, sizeof(r));
}

static void counter_values(Dev *d, uint64_t *out) {
    uint64_t *refs[NCOUNTERS];
    counter_refs(d, refs);
    for (int i = 0; i < NCOUNTERS; i++) out[i] = *refs[i];
}

/* state image layout: a 32-word header, then these FTL arrays in order, then the timing tail */
#define STATE_HDR (8 * 32)
#define STATE_NARR 6
static size_t state_arrays(Dev *d, void *ptr[STATE_NARR], size_t len[STATE_NARR]) {
    size_t nslot = (size_t)d->n_blk * d->spb, nb = d->n_blk;
    void *p[STATE_NARR] = {d->l2p, d->p2l, d->valid, d->bstate, d->freeq, d->fifoq};
    size_t l[STATE_NARR] = {4 * (size_t)d->n_lpn, 4 * nslot, 4 * nb, nb, 4 * nb, 4 * nb};
    size_t total = STATE_HDR;
    for (int i = 0; i < STATE_NARR; i++) {
        ptr[i] = p[i];
        len[i] = l[i];
        total += l[i];
    }
    return total;
}

static PyObject *Dev_counters(Dev *d, PyObject *unused) {
    uint64_t v[NCOUNTERS];
    counter_values(d, v);
    PyObject *r = PyDict_New();
    for (int i = 0; i < NCOUNTERS; i++) {
        PyObject *x = PyLong_FromUnsignedLongLong(v[i]);
        PyDict_SetItemString(r, counter_names[i], x);
        Py_DECREF(x);
    }
    int64_t backlog = 0;
    for (uint32_t i = 0; i < d->n_dies; i++)
        if (d->die_free[i] - d->carry_end > backlog) backlog = d->die_free[i] - d->carry_end;
    PyObject *bl = PyLong_FromLongLong(backlog);
    PyDict_SetItemString(r, "die_backlog_ns", bl);
    Py_DECREF(bl);
    PyObject *e = PyFloat_FromDouble(d->c_energy);
    PyDict_SetItemString(r, "energy_j", e);
    Py_DECREF(e);
    uint64_t used = (uint64_t)d->n_mapped, freeb = d->free_cnt;
    PyObject *g = Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K}", "user_slots", (unsigned long long)d->n_lpn,
                                "raw_slots", (unsigned long long)d->n_blk * d->spb, "mapped_slots",
                                (unsigned long long)used, "free_blocks", (unsigned long long)freeb, "blocks",
                                (unsigned long long)d->n_blk, "slots_per_block", (unsigned long long)d->spb);
    PyDict_Update(r, g);
    Py_DECREF(g);
    return r;
}

/* state image: header + arrays (the write buffer is flushed first, so it holds no entries) */
/* words of the state image's tail after the units in flight */
static size_t state_extra(const Dev *d) {
    return 6 * (size_t)d->n_dies + (size_t)d->n_dies * d->planes + 12 + d->n_cores + (size_t)d->n_dies + 3;
}

/* the governor's bins that are still ahead after moving them `by` ns earlier: how many (state image entries) */
static size_t pw_live(const Dev *d, int64_t by) {
    size_t n = 0;
    for (uint32_t x = 0; x < PW_N; x++)
        if (d->pw_tag[x] != UINT32_MAX && ((((int64_t)d->pw_tag[x] << 12) | x) - (by >> PW_SHIFT)) >= 0) n++;
    return n;
}

static PyObject *Dev_save(Dev *d, PyObject *unused) {
    if (d->running) {
        PyErr_SetString(PyExc_RuntimeError, "cannot save while a point is running");
        return NULL;
    }
    flush_pending(d, d->carry_end);
    void *arr[STATE_NARR];
    size_t len[STATE_NARR];
    size_t fixed = state_arrays(d, arr, len);
    /* timing tail, relative to the end of the last point: die/channel queues, controller, host link,
     * buffer space and the units still in flight (so a reloaded drive is as busy as the live one was) */
    size_t n_pw = pw_live(d, d->carry_end);
    size_t tail = 8 * ((size_t)d->n_dies + d->n_ch + 5 + 2 * (size_t)d->infl_cnt + state_extra(d) + 3 * n_pw);
    size_t size = fixed + tail;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
    if (!out) return NULL;
    char *p = PyBytes_AS_STRING(out);
    uint64_t h[32] = {0};
    h[0] = STATE_MAGIC;
    h[1] = (uint64_t)d->n_lpn;
    h[2] = d->n_blk;
    h[3] = d->spb;
    h[4] = d->spu;
    h[5] = d->free_head; h[6] = d->free_cnt; h[7] = d->fifo_head; h[8] = d->fifo_cnt;
    h[9] = d->host_blk; h[10] = d->host_slot; h[11] = d->gc_blk; h[12] = d->gc_slot;
    counter_values(d, &h[13]); /* 13 .. 25 */
    memcpy(&h[26], &d->c_energy, 8);
    h[28] = (uint64_t)d->gc_policy;
    memcpy(p, h, STATE_HDR);
    p += STATE_HDR;
    for (int i = 0; i < STATE_NARR; i++) {
        memcpy(p, arr[i], len[i]);
        p += len[i];
    }
    int64_t *q = (int64_t *)p;
    int64_t by = d->carry_end;
    for (uint32_t i = 0; i < d->n_dies; i++) *q++ = shift_down(d->die_free[i], by);
    for (uint32_t i = 0; i < d->n_ch; i++) *q++ = shift_down(d->ch_free[i], by);
    *q++ = d->hk_next == INT64_MAX ? -1 : shift_down(d->hk_next, by);
    *q++ = shift_down(d->slow_free, by);
    *q++ = shift_down(d->space_t, by);
    *q++ = shift_down(d->infl_last, by);
    *q++ = d->infl_cnt;
    for (int64_t k = 0; k < d->infl_cnt; k++) {
        int64_t pos = (d->infl_head + k) % d->infl_cap;
        *q++ = shift_down(d->infl_t[pos], by);
        *q++ = d->infl_n[pos];
    }
    /* per die: the last op's length, reads, suspensions; per plane: reads; GC's victim in steps; timing draws */
    for (uint32_t i = 0; i < d->n_dies; i++) {
        *q++ = d->op_len[i];
        *q++ = shift_down(d->rd_die[i], by);
        *q++ = shift_down(d->rd_from[i], by);
        *q++ = shift_down(d->rd_push[i], by);
        *q++ = shift_down(d->susp_op[i], by);
        *q++ = d->susp_cnt[i];
    }
    for (uint32_t i = 0; i < d->n_dies * d->planes; i++) *q++ = shift_down(d->rd_plane[i], by);
    *q++ = d->gc_vb;
    *q++ = d->gc_vpu;
    *q++ = d->gc_debt;
    *q++ = d->gc_ratio;
    memcpy(q++, &d->trng, 8);
    /* the time scale's phantom accounting (no phantom slots are pending: flushed above) */
    *q++ = d->ts_acc;
    *q++ = d->ph_mv;
    *q++ = d->ph_rd;
    *q++ = d->ph_er;
    *q++ = d->ph_seq;
    *q++ = d->gc_v;
    memcpy(q++, &d->bg_paid, 8);
    /* the controller's cores, the dies' P/E epochs (page registers are per point) */
    for (uint32_t i = 0; i < d->n_cores; i++) *q++ = shift_down(d->core_free[i], by);
    for (uint32_t i = 0; i < d->n_dies; i++) *q++ = d->pe_epoch[i];
    /* the drive's clock, the governor's debt, then its bins still ahead (bin, host energy, P/E energy) */
    *q++ = d->clock_base + by;
    *q++ = d->pw_debt;
    *q++ = (int64_t)n_pw;
    for (uint32_t x = 0; x < PW_N; x++) {
        if (d->pw_tag[x] == UINT32_MAX) continue;
        int64_t b = (((int64_t)d->pw_tag[x] << 12) | x) - (by >> PW_SHIFT);
        if (b < 0) continue;
        *q++ = b;
        *q++ = d->pw_h[x];
        *q++ = d->pw_p[x];
    }
    return out;
}

static PyObject *Dev_load(Dev *d, PyObject *arg) {
    char *p;
    Py_ssize_t n;
    if (PyBytes_AsStringAndSize(arg, &p, &n) < 0) return NULL;
    void *arr[STATE_NARR];
    size_t len[STATE_NARR];
    size_t size = state_arrays(d, arr, len);
    size_t tail0 = 8 * ((size_t)d->n_dies + d->n_ch + 5);
    uint64_t h[32];
    if ((size_t)n < size + tail0) goto bad;
    int64_t n_infl;
    memcpy(&n_infl, p + size + tail0 - 8, 8);
    size_t fixed_n = size + tail0 + 16 * (size_t)n_infl + 8 * state_extra(d);
    if (n_infl < 0 || n_infl > d->infl_cap || (size_t)n < fixed_n) goto bad;
    int64_t n_pw;
    memcpy(&n_pw, p + fixed_n - 8, 8);
    if (n_pw < 0 || n_pw > PW_N || (size_t)n != fixed_n + 24 * (size_t)n_pw) goto bad;
    memcpy(h, p, STATE_HDR);
    if (h[0] != STATE_MAGIC || h[1] != (uint64_t)d->n_lpn || h[2] != d->n_blk || h[3] != d->spb ||
        h[4] != d->spu || h[28] != (uint64_t)d->gc_policy)
        goto bad;
    p += STATE_HDR;
    for (int i = 0; i < STATE_NARR; i++) {
        memcpy(arr[i], p, len[i]);
        p += len[i];
    }
    d->free_head = (uint32_t)h[5]; d->free_cnt = (uint32_t)h[6];
    d->fifo_head = (uint32_t)h[7]; d->fifo_cnt = (uint32_t)h[8];
    d->host_blk = (uint32_t)h[9]; d->host_slot = (uint32_t)h[10];
    d->gc_blk = (uint32_t)h[11]; d->gc_slot = (uint32_t)h[12];
    uint64_t *refs[NCOUNTERS];
    counter_refs(d, refs);
    for (int i = 0; i < NCOUNTERS; i++) *refs[i] = h[13 + i];
    memcpy(&d->c_energy, &h[26], 8);
    d->n_mapped = 0;
    for (int64_t i = 0; i < d->n_lpn; i++) d->n_mapped += d->l2p[i] != UNMAPPED;
    rebuild_lists(d);
    d->ring_head = d->ring_cnt = d->pend_live = 0;
    if (d->mc_flags) memset(d->mc_flags, 0, (size_t)d->n_mp);
    d->mc_hand = d->mc_count = 0;
    reset_time(d);
    int64_t q[8];
    for (uint32_t i = 0; i < d->n_dies; i++) { memcpy(q, p, 8); p += 8; d->die_free[i] = q[0]; }
    for (uint32_t i = 0; i < d->n_ch; i++) { memcpy(q, p, 8); p += 8; d->ch_free[i] = q[0]; }
    memcpy(q, p, 8 * 5);
    p += 8 * 5;
    d->hk_next = q[0] < 0 ? INT64_MAX : q[0];
    d->slow_free = q[1];
    d->space_t = q[2];
    d->infl_last = q[3];
    for (int64_t k = 0; k < n_infl; k++) {
        memcpy(q, p, 16);
        p += 16;
        d->infl_t[k] = q[0];
        d->infl_n[k] = q[1];
        d->infl_occ += q[1];
    }
    d->infl_head = 0;
    d->infl_cnt = n_infl;
    for (uint32_t i = 0; i < d->n_dies; i++) {
        memcpy(q, p, 48);
        p += 48;
        d->op_len[i] = q[0];
        d->rd_die[i] = q[1];
        d->rd_from[i] = q[2];
        d->rd_push[i] = q[3];
        d->susp_op[i] = q[4];
        d->susp_cnt[i] = q[5];
    }
    for (uint32_t i = 0; i < d->n_dies * d->planes; i++) { memcpy(q, p, 8); p += 8; d->rd_plane[i] = q[0]; }
    memcpy(q, p, 40);
    p += 40;
    d->gc_vb = (uint32_t)q[0];
    d->gc_vpu = (uint32_t)q[1];
    d->gc_debt = q[2];
    d->gc_ratio = q[3];
    memcpy(&d->trng, &q[4], 8);
    memcpy(q, p, 56);
    p += 56;
    memcpy(&d->bg_paid, &q[6], 8);
    d->ts_acc = q[0];
    d->ph_mv = q[1];
    d->ph_rd = q[2];
    d->ph_er = q[3];
    d->ph_seq = (uint32_t)q[4];
    d->gc_v = (uint32_t)q[5];
    for (uint32_t i = 0; i < d->n_cores; i++) { memcpy(q, p, 8); p += 8; d->core_free[i] = q[0]; }
    for (uint32_t i = 0; i < d->n_dies; i++) { memcpy(q, p, 8); p += 8; d->pe_epoch[i] = (uint32_t)q[0]; }
    memcpy(q, p, 24);
    p += 24;
    d->clock_base = q[0];
    d->pw_debt = q[1];
    drift_update(d, 0);
    for (int64_t k = 0; k < n_pw; k++) {
        memcpy(q, p, 24);
        p += 24;
        uint32_t x = (uint32_t)(q[0] & (PW_N - 1));
        d->pw_tag[x] = (uint32_t)(q[0] >> 12);
        d->pw_h[x] = q[1];
        d->pw_p[x] = q[2];
    }
    Py_RETURN_NONE;
bad:
    PyErr_SetString(PyExc_ValueError, "state image does not match this drive's geometry");
    return NULL;
}

/* idle(ns): the host issues nothing for ns of virtual time after the last point. NAND work the point left
 * behind completes; once the dies are free and the idle delay has passed, background GC cleans victims (the
 * same victim policy as foreground GC) at no more than the idle relocation rate, until the free pool reaches
 * its target, no victim would gain space, or the idle time is over. The next point starts after the idle
 * time. Returns what the background GC did. */
static PyObject *Dev_idle(Dev *d, PyObject *args) {
    long long ns;
    if (!PyArg_ParseTuple(args, "L", &ns)) return NULL;
    if (d->running) {
        PyErr_SetString(PyExc_RuntimeError, "idle() while a point is running");
        return NULL;
    }
    if (ns < 0) ns = 0;
    int64_t t0 = d->carry_end, t_end = t0 + ns;
    flush_pending(d, t0);
    int64_t t = t0;
    for (uint32_t i = 0; i < d->n_dies; i++) t = max64(t, d->die_free[i]);
    t = max64(t, t0 + d->bg_delay_ns);
    uint32_t free_before = d->free_cnt;
    uint64_t runs = 0, moved = 0;
    double e0 = d->c_energy;
    const int scaled = d->ts_q16 > 65536;
    while (d->bg_rate > 0 && t < t_end && d->free_cnt < d->bg_target) {
        int64_t vb = d->gc_vb != UNMAPPED ? (int64_t)d->gc_vb : select_victim(d); /* the victim being cleaned first */
        if (vb < 0 || d->valid[vb] >= d->spb) break; /* nothing left to gain */
        uint32_t v = d->valid[vb];
        if (scaled) {
            /* time-scaled: a victim stands for time_scale superblocks of the full-size drive, cleaned one after
             * another; it is cleaned once the idle time has paid for its relocation at the (scaled) rate, and what an
             * idle period pays towards it carries into the next (bg_paid, bytes) */
            double need = (double)v * (double)d->iu_bytes - d->bg_paid;
            int64_t wait = need > 0 ? (int64_t)(need / d->bg_rate) : 0;
            if (t + wait > t_end) {
                d->bg_paid += (double)(t_end - t) * d->bg_rate;
                break;
            }
            t += wait;
            d->bg_paid = 0;
        }
        d->cal_now = t;
        if (gc_one(d, t) <= 0) break;
        runs++;
        moved += v;
        /* paced by the relocation rate (time-scaled: paid before), and never ahead of the dies (one victim after
         * the other) */
        int64_t pace = scaled ? 0 : (int64_t)((double)v * (double)d->iu_bytes / d->bg_rate);
        t += pace > 1000 ? pace : 1000;
        for (uint32_t i = 0; i < d->n_dies; i++) t = max64(t, d->die_free[i]);
    }
    d->carry_end = t_end;
    return Py_BuildValue("{s:K,s:K,s:I,s:I,s:d}", "victims", (unsigned long long)runs, "relocated_slots",
                         (unsigned long long)moved, "free_before", free_before, "free_after", d->free_cnt,
                         "energy_j", d->c_energy - e0);
}

/* ------------------------------------------------------------------ methods: running a point */

/* The pending events, one per slot, ordered by (time, slot). Small slot counts (up to EV_RING_MAX) start in a
 * sorted ring: the next event is at the head, and a slot's new event goes in by insertion from the tail, where it
 * belongs when completions come about in issue order (writes into the buffer), so it costs a compare or two instead
 * of a sift-down with a coin-toss branch per level. When they do not (reads, mixes: completion order is random), the
 * insertions shift many entries and the ring turns into a binary heap for the rest of the point (a sorted array is
 * a heap as it stands). Large slot counts use the heap from the start. Events order strictly by (time, slot), so
 * both come out in the same order. */
#define EV_RING_MAX 64
#define EV_WINDOW 256 /* insertions per check of the ring's cost */
#ifndef EV_SHIFTS_MAX
#define EV_SHIFTS_MAX 3 /* mean shifts per insertion above which the heap is cheaper */
#endif

static inline HeapEnt ev_top(const Dev *d) { return d->heap[d->ev_head]; }

/* the sorted ring: insert x among the n entries from the head, shifting the later ones one place up */
static inline void ring_insert(Dev *d, HeapEnt x) {
    HeapEnt *h = d->heap;
    const uint32_t mask = d->ev_mask, tail = d->ev_head + (uint32_t)d->heap_n;
    uint32_t i = tail;
    while (i != d->ev_head && ev_before(x, h[(i - 1) & mask])) {
        h[i & mask] = h[(i - 1) & mask];
        i--;
    }
    h[i & mask] = x;
    d->heap_n++;
    d->ev_shifts += tail - i;
}

/* the ring's entries, in order, from index 0: the binary heap from now on */
static void ring_to_heap(Dev *d) {
    HeapEnt tmp[EV_RING_MAX];
    for (int64_t k = 0; k < d->heap_n; k++) tmp[k] = d->heap[(d->ev_head + (uint32_t)k) & d->ev_mask];
    memcpy(d->heap, tmp, sizeof(HeapEnt) * (size_t)d->heap_n);
    d->ev_head = 0;
    d->ev_ring = 0;
}

static void heap_push(Dev *d, int64_t key, int32_t slot) {
    HeapEnt x = {key, slot}, *h = d->heap;
    if (d->ev_ring) {
        ring_insert(d, x);
        return;
    }
    int64_t i = d->heap_n++;
    while (i > 0) {
        int64_t pa = (i - 1) / 2;
        if (ev_before(h[pa], x)) break;
        h[i] = h[pa];
        i = pa;
    }
    h[i] = x;
}

/* sift `x` down from the root of a heap of n entries */
static inline void heap_sift_root(HeapEnt *h, int64_t n, HeapEnt x) {
    int64_t i = 0;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n) c += ev_before(h[c + 1], h[c]);
        if (ev_before(x, h[c])) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

/* retire the next event's slot */
static void heap_pop(Dev *d) {
    if (d->ev_ring) {
        d->ev_head = (d->ev_head + 1) & d->ev_mask;
        d->heap_n--;
        return;
    }
    HeapEnt last = d->heap[--d->heap_n];
    if (d->heap_n > 0) heap_sift_root(d->heap, d->heap_n, last);
}

/* the next event's time becomes `key` (its slot's next event): in the heap, one sift-down instead of a pop and a
 * push */
HOT_INLINE void heap_replace_top(Dev *d, int64_t key) {
    HeapEnt x = {key, ev_top(d).slot};
    if (d->ev_ring) {
        d->ev_head = (d->ev_head + 1) & d->ev_mask;
        d->heap_n--;
        ring_insert(d, x);
        if (++d->ev_inserts == EV_WINDOW) {
            if (d->ev_shifts > EV_WINDOW * EV_SHIFTS_MAX) ring_to_heap(d);
            d->ev_inserts = d->ev_shifts = 0;
        }
        return;
    }
    heap_sift_root(d->heap, d->heap_n, x);
}

/* The random draws of one I/O, in the order the model makes them: the Poisson gap of a paced job, the block
 * size of a bssplit, the direction of a mix, the offset. Drawing them NX_AHEAD I/Os ahead gives the same sequence
 * and lets the next I/Os fetch their mapping entries from memory while this one is simulated. */
HOT_INLINE void draw_io(Dev *d, Draw *x, const int plain) {
    if (plain) { /* the same draws as below, for a plain point (PLAIN_WRITE, PLAIN_READ): the offset only */
        x->gap = 0;
        x->bi = 0;
        x->dir = plain == PLAIN_WRITE ? 1 : 0;
        x->off = d->range_start + (int64_t)rng_below(d, (uint64_t)d->bs_nblk[0]) * d->align;
        return;
    }
    x->gap = d->rate_ns;
    if (d->rate_ns > 0 && d->poisson) { /* exponential inter-arrival times, same mean (fio rate_process=poisson) */
        double u = ((double)(rng_next(d) >> 11) + 0.5) / 9007199254740992.0;
        x->gap = (int64_t)(-log(u) * (double)d->rate_ns);
    }
    if (d->trim_mode) x->dir = 2;
    else if (d->rmix >= 100) x->dir = 0;
    else if (d->rmix <= 0) x->dir = 1;
    else x->dir = (int64_t)rng_below(d, 100) < d->rmix ? 0 : 1;
    const int tb = d->bs_split && x->dir != 0; /* the block-size table of this direction */
    int bi = d->bs_first[tb];
    if (d->bs_n[tb] > 1) {
        uint32_t r = (uint32_t)rng_below(d, d->bs_total[tb]);
        while (r >= d->bs_cum[bi]) bi++;
    }
    x->bi = bi;
    if (!d->random) x->off = 0;
    else if (d->nzones[x->dir] > 0) x->off = random_offset(d, x->dir, d->bs_val[bi]); /* zoned access */
    else x->off = d->range_start + (int64_t)rng_below(d, (uint64_t)d->bs_nblk[bi]) * d->align;
}

/* Memory the next I/Os will touch, fetched while this one is simulated: the mapping entry of the I/O drawn last
 * (NX_AHEAD I/Os ahead), and the reverse-map entry of a later one's current location (P2L_AHEAD I/Os ahead; its
 * mapping entry was fetched NX_AHEAD - P2L_AHEAD I/Os ago), which a write or trim invalidates. */
HOT_INLINE void prefetch_mapping(Dev *d, const Draw *last, const Draw *next) {
    __builtin_prefetch(&d->l2p[iu_div(d, last->off)], 1, 1);
    if (next->dir == 0) return; /* a read reads its mapping entry only (a load here would wait for it for nothing) */
    uint32_t m = d->l2p[iu_div(d, next->off)];
    if (!(m & BUFBIT)) __builtin_prefetch(&d->p2l[m], 1, 1); /* BUFBIT: buffered or unmapped */
}

static int64_t get_i(PyObject *dict, const char *key, int *err) { return (int64_t)dget(dict, key, err); }

/* workload["zones"] (optional): one list per direction (read, write, trim) of (weight, start, length) with
 * start aligned from range_start and inside the range; an empty list means uniform. */
static int parse_zones(Dev *d, PyObject *w) {
    for (int k = 0; k < NDIR; k++) d->nzones[k] = 0;
    PyObject *zs = PyDict_GetItemString(w, "zones");
    if (!zs || zs == Py_None) return 0;
    if (!PyList_Check(zs) || PyList_GET_SIZE(zs) != NDIR) {
        PyErr_SetString(PyExc_ValueError, "zones must be a list of 3 lists (read, write, trim)");
        return -1;
    }
    for (int k = 0; k < NDIR; k++) {
        PyObject *lst = PyList_GET_ITEM(zs, k);
        if (!PyList_Check(lst) || PyList_GET_SIZE(lst) > MAX_ZONES) {
            PyErr_SetString(PyExc_ValueError, "zones: at most 16 (weight, start, length) per direction");
            return -1;
        }
        uint32_t cum = 0;
        int n = (int)PyList_GET_SIZE(lst);
        for (int i = 0; i < n; i++) {
            long long wt, st, ln;
            if (!PyArg_ParseTuple(PyList_GET_ITEM(lst, i), "LLL", &wt, &st, &ln)) return -1;
            if (wt < 0 || ln <= 0 || st < d->range_start || st + ln > d->range_start + d->range_len ||
                (st - d->range_start) % d->align) {
                PyErr_SetString(PyExc_ValueError, "zone outside the range or not aligned");
                return -1;
            }
            cum += (uint32_t)wt;
            d->z_start[k][i] = st;
            d->z_len[k][i] = ln;
            d->z_cum[k][i] = cum;
        }
        if (n > 0 && cum == 0) {
            PyErr_SetString(PyExc_ValueError, "zones without any access weight");
            return -1;
        }
        d->z_total[k] = cum;
        d->nzones[k] = n;
    }
    return 0;
}

/* a block-size table (a list of (bs, weight) pairs) appended as table tb */
static int parse_bs_table(Dev *d, PyObject *bss, int tb) {
    if (!bss || !PyList_Check(bss) || PyList_GET_SIZE(bss) < 1 || PyList_GET_SIZE(bss) > MAX_BSSPLIT) {
        PyErr_SetString(PyExc_ValueError, "bssplit must be a list of 1..64 (bs, weight) pairs");
        return -1;
    }
    int n = (int)PyList_GET_SIZE(bss);
    uint32_t cum = 0;
    d->bs_first[tb] = d->nbs;
    d->bs_n[tb] = n;
    for (int i = 0; i < n; i++) {
        long long bs, wt;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(bss, i), "LL", &bs, &wt)) return -1;
        d->bs_val[d->nbs] = bs;
        cum += (uint32_t)wt;
        d->bs_cum[d->nbs++] = cum;
    }
    d->bs_total[tb] = cum;
    if (cum == 0) {
        PyErr_SetString(PyExc_ValueError, "bssplit without any weight");
        return -1;
    }
    return 0;
}

static PyObject *Dev_begin(Dev *d, PyObject *args) {
    PyObject *w;
    if (!PyArg_ParseTuple(args, "O!", &PyDict_Type, &w)) return NULL;
    int err = 0;
    d->rmix = (int)get_i(w, "rmix", &err);
    d->random = (int)get_i(w, "random", &err);
    d->trim_mode = (int)get_i(w, "trim", &err);
    d->rd_only = !d->trim_mode && d->rmix >= 100;
    d->thin = d->ts_q16 > 65536 && !d->rd_only; /* set again below once time_based is known */
    d->range_start = get_i(w, "range_start", &err);
    d->range_len = get_i(w, "range_len", &err);
    d->align = get_i(w, "align", &err);
    d->iodepth = get_i(w, "iodepth", &err);
    d->numjobs = get_i(w, "numjobs", &err);
    d->time_based = (int)get_i(w, "time_based", &err);
    d->thin = d->thin && d->time_based; /* a point of so many bytes (a fill) changes the state by them all */
    int64_t ramp = get_i(w, "ramp_ns", &err);
    int64_t runtime = get_i(w, "runtime_ns", &err);
    d->io_limit = get_i(w, "io_bytes", &err);
    int64_t rate = get_i(w, "rate_iops", &err);
    d->interval_ns = get_i(w, "interval_ns", &err);
    PyObject *hlo = PyDict_GetItemString(w, "hist_ns");
    d->hl_ns = hlo ? PyLong_AsLongLong(hlo) : 0;
    if (d->hl_ns < 0) d->hl_ns = 0;
    PyObject *seedobj = PyDict_GetItemString(w, "seed");
    if (!seedobj) {
        PyErr_SetString(PyExc_KeyError, "missing workload key seed");
        return NULL;
    }
    uint64_t seed = (uint64_t)PyLong_AsUnsignedLongLongMask(seedobj);
    if (err || PyErr_Occurred()) return NULL;
    d->nbs = 0;
    if (parse_bs_table(d, PyDict_GetItemString(w, "bssplit"), 0) < 0) return NULL;
    PyObject *bsw = PyDict_GetItemString(w, "bssplit_w");
    d->bs_split = bsw && bsw != Py_None;
    if (d->bs_split && parse_bs_table(d, bsw, 1) < 0) return NULL;
    int64_t user = d->n_lpn * d->iu_bytes;
    if (d->range_start < 0 || d->range_len <= 0 || d->range_start + d->range_len > user || d->iodepth < 1 ||
        d->numjobs < 1 || d->align < 1) {
        PyErr_SetString(PyExc_ValueError, "workload outside the drive (range, depth, jobs or block sizes)");
        return NULL;
    }
    for (int i = 0; i < d->nbs; i++) {
        if (d->bs_val[i] < 1 || d->bs_val[i] > d->range_len) {
            PyErr_SetString(PyExc_ValueError, "block size larger than the active range");
            return NULL;
        }
    }
    for (int i = 0; i < d->nbs; i++) d->bs_nblk[i] = (d->range_len - d->bs_val[i]) / d->align + 1;
    div32_init(&d->dv_depth, (uint32_t)d->iodepth);
    if (parse_zones(d, w) < 0) return NULL;
    d->rng = seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
    if (!d->rng) d->rng = 1;
    /* a sample of a continuous series: the sequential writers go on from where the previous sample left them */
    PyObject *keep = PyDict_GetItemString(w, "keep_pos");
    int64_t *old_pos = d->job_pos;
    int keep_pos = keep && PyObject_IsTrue(keep) && old_pos && d->pos_n == d->numjobs;
    d->job_pos = NULL;
    d->nslots = d->iodepth * d->numjobs;
    free(d->job_issued); free(d->job_next); free(d->job_gate); free(d->slot_issue); free(d->slot_gated); free(d->heap); free(d->iv);
    free(d->sio);
    d->sio = calloc((size_t)d->nslots, sizeof(SlotIo));
    d->cq_last = 0;
    d->job_pos = calloc((size_t)d->numjobs, sizeof(int64_t));
    d->job_issued = calloc((size_t)d->numjobs, sizeof(int64_t));
    d->job_next = calloc((size_t)d->numjobs, sizeof(int64_t));
    d->job_gate = calloc((size_t)d->numjobs, sizeof(int64_t));
    d->slot_issue = calloc((size_t)d->nslots, sizeof(int64_t));
    d->slot_gated = calloc((size_t)d->nslots, 1);
    d->ev_ring = d->nslots <= EV_RING_MAX;
    d->ev_mask = 0;
    while (d->ev_ring && d->ev_mask + 1 < (uint32_t)d->nslots) d->ev_mask = d->ev_mask * 2 + 1;
    d->ev_head = d->ev_inserts = d->ev_shifts = 0;
    d->heap = malloc(sizeof(HeapEnt) * (size_t)(d->ev_ring ? d->ev_mask + 1 : d->nslots));
    free(d->hl);
    d->hl = NULL;
    d->hl_base = 0;
    if (d->hl_ns > 0) {
        d->hl = calloc((size_t)HL_RING * NDIR * PLAT_NR, sizeof(int64_t));
        if (!d->hl) {
            free(old_pos);
            d->pos_n = 0;
            return PyErr_NoMemory();
        }
    }
    d->iv_cap = 64;
    d->iv_n = 0;
    d->iv = calloc((size_t)d->iv_cap, sizeof(Interval));
    if (!d->job_pos || !d->job_issued || !d->job_next || !d->job_gate || !d->slot_issue || !d->slot_gated || !d->heap || !d->iv ||
        !d->sio) {
        free(old_pos);
        d->pos_n = 0;
        PyErr_NoMemory();
        return NULL;
    }
    for (int64_t j = 0; j < d->numjobs; j++) {
        int64_t pos = keep_pos ? old_pos[j] : d->range_start;
        d->job_pos[j] = pos >= d->range_start && pos < d->range_start + d->range_len ? pos : d->range_start;
    }
    free(old_pos);
    d->pos_n = d->numjobs;
    d->rate_ns = rate > 0 ? (int64_t)(1e9 / (double)rate) : 0;
    PyObject *po = PyDict_GetItemString(w, "poisson");
    d->poisson = po ? PyObject_IsTrue(po) : 0;
    d->plain = 0;
    if (d->rate_ns == 0 && !d->gov && d->random && d->nbs == 1 && !d->bs_split && !d->trim_mode && !d->hl &&
        d->interval_ns <= 0 && (d->rmix >= 100 || d->rmix <= 0)) {
        int dir = d->rmix >= 100 ? 0 : 1; /* as draw_io decides */
        if (d->nzones[dir] == 0) d->plain = dir ? PLAIN_WRITE : PLAIN_READ;
    }
    d->nx_head = 0;
    for (int k = 0; k < NX_AHEAD; k++) draw_io(d, &d->nx[k], 0);
    d->t_meas = ramp;
    d->t_end = d->time_based ? ramp + runtime : INT64_MAX;
    d->heap_n = 0;
    for (int64_t s = 0; s < d->nslots; s++) heap_push(d, 0, (int32_t)s);
    memset(d->hist, 0, sizeof(int64_t) * NDIR * PLAT_NR);
    for (int i = 0; i < NDIR; i++) {
        d->st_n[i] = d->st_bytes[i] = 0;
        d->st_sum[i] = d->st_sq[i] = 0;
        d->st_min[i] = INT64_MAX;
        d->st_max[i] = 0;
        d->all_ios[i] = d->all_bytes[i] = 0;
    }
    d->all_lat = 0;
    rebase(d);
    d->t_now = 0;
    d->t_last_done = 0;
    d->run_energy0 = d->c_energy;
    /* read-ahead follows the reads of a sequential point (a random point's reads never continue one another) */
    ra_reset(d, !d->random && !d->trim_mode && d->rmix > 0);
    d->running = 1;
    Py_RETURN_NONE;
}

/* the statistics of one completion; `plain` (a constant where it is inlined): the point keeps no histogram or
 * interval log */
HOT_INLINE int record(Dev *d, int dir, int64_t bytes, int64_t t_issue, int64_t t_done, const int plain) {
    int64_t lat = t_done - t_issue;
    d->all_ios[dir]++;
    d->all_bytes[dir] += (uint64_t)bytes;
    d->all_lat += (double)lat;
    /* completions during the ramp are not measured; those after the end of a time-based point are: fio reaps
     * the I/Os still in flight when the runtime ends, counts them, and its runtime runs until the last one */
    if (t_done < d->t_meas) return 0;
    if (t_done > d->t_last_done) d->t_last_done = t_done;
    d->st_n[dir]++;
    d->st_bytes[dir] += (uint64_t)bytes;
    d->st_sum[dir] += (double)lat;
    d->st_sq[dir] += (double)lat * (double)lat;
    if (lat < d->st_min[dir]) d->st_min[dir] = lat;
    if (lat > d->st_max[dir]) d->st_max[dir] = lat;
    int bucket = plat_idx(lat);
    d->hist[dir * PLAT_NR + bucket]++;
    if (plain) return 0;
    if (d->hl) {
        int64_t k = (t_done - d->t_meas) / d->hl_ns;
        if (k < d->hl_base) k = d->hl_base;
        if (k >= d->hl_base + HL_RING) k = d->hl_base + HL_RING - 1; /* latency beyond the ring: clamp */
        d->hl[((k % HL_RING) * NDIR + dir) * PLAT_NR + bucket]++;
    }
    if (d->interval_ns > 0) {
        int64_t k = (t_done - d->t_meas) / d->interval_ns;
        if (k >= d->iv_cap) {
            int64_t nc = d->iv_cap;
            while (nc <= k) nc *= 2;
            Interval *niv = realloc(d->iv, sizeof(Interval) * (size_t)nc);
            if (!niv) return -1;
            memset(niv + d->iv_cap, 0, sizeof(Interval) * (size_t)(nc - d->iv_cap));
            d->iv = niv;
            d->iv_cap = nc;
        }
        if (k + 1 > d->iv_n) d->iv_n = k + 1;
        d->iv[k].ios[dir]++;
        d->iv[k].bytes[dir] += (uint64_t)bytes;
        d->iv[k].lat[dir] += (double)lat;
    }
    return 0;
}

/* The closed loop up to virtual time `until`: 0, or -1 with an exception set. `plain` is a constant in each of
 * the copies Dev_advance calls: 0 for any point, PLAIN_WRITE / PLAIN_READ for a point that is only that (random
 * offsets, one block size, no rate_iops, power cap, zones or logs; the benchmark's and most of PTS's), whose copy
 * has none of the branches for what such a point never does. Both do the same steps in the same order. */
HOT_INLINE int advance_loop(Dev *d, int64_t until, const int plain) {
    while (d->heap_n > 0 && EV_KEY(ev_top(d)) < until) {
        /* the slot whose event comes first: it is retired (pop) or rescheduled (its key replaced) */
        int32_t slot = EV_SLOT(ev_top(d));
        int64_t t = EV_KEY(ev_top(d));
        int64_t job = div32(&d->dv_depth, (uint32_t)slot);
        d->t_now = t;
        d->cal_now = t;
        SlotIo *sio = &d->sio[slot];
        if (((d->clock_base + t) >> DRIFT_SHIFT) != d->drift_seg) drift_update(d, t);
        if (sio->pend) {
            /* the slot's I/O completed on the drive at t: the host sees it after the completion path (posting,
             * interrupt, reaping), and in the order the completions were posted (the completion queue is read in
             * order), so what it sees comes in time order and the next submission is issued then */
            int64_t seen = t + sio->cq;
            if (seen < d->cq_last) seen = d->cq_last;
            d->cq_last = seen;
            sio->pend = 0;
            if (record(d, sio->dir, sio->bs, sio->t0, seen, plain) < 0) {
                heap_pop(d);
                PyErr_NoMemory();
                return -1;
            }
            if (!plain && d->rate_ns > 0 && seen > t) { /* a paced point's submissions wake in time order */
                heap_replace_top(d, seen);
                continue;
            }
            t = seen;
            d->t_now = t;
            d->cal_now = t;
        }
        if (t >= d->t_end || (d->io_limit > 0 && d->job_issued[job] >= d->io_limit)) {
            heap_pop(d); /* time-based point over, or the job's bytes are done: retire the slot */
            continue;
        }
        /* a plain point never holds a submission back, so every one is fresh: issued now */
        int64_t t0 = t;
        if (!plain) {
            if (!d->slot_gated[slot]) d->slot_issue[slot] = t; /* a fresh submission */
            d->slot_gated[slot] = 0;
            if (d->rate_ns > 0 && t < d->job_next[job]) {
                /* rate_iops: fio holds the submission until the job's next slot; the held ones of a job wake one
                 * rate gap apart, not all at that slot (a deep queue would wake whole for each submission) */
                int64_t at = max64(d->job_next[job], d->job_gate[job]);
                d->job_gate[job] = at + d->rate_ns;
                d->slot_issue[slot] = at;
                d->slot_gated[slot] = 1;
                heap_replace_top(d, at);
                continue;
            }
            t0 = d->slot_issue[slot];
        }
        /* the I/O: its random draws were made ahead (draw_io), so its mapping entry is already on its way */
        Draw io = d->nx[d->nx_head];
        draw_io(d, &d->nx[d->nx_head], plain); /* its place in the ring: the I/O NX_AHEAD after this one */
        if (plain || d->random)
            prefetch_mapping(d, &d->nx[d->nx_head], &d->nx[(d->nx_head + P2L_AHEAD) & (NX_AHEAD - 1)]);
        d->nx_head = (d->nx_head + 1) & (NX_AHEAD - 1);
        if (!plain && d->rate_ns > 0) {
            /* the schedule runs on from the ideal time, as fio does: an issue that was late (the queue was
               full) is made up by the next ones, so a curve point reaches its rate whenever the drive can */
            d->job_next[job] += io.gap;
        }
        int64_t bs = d->bs_val[plain ? 0 : io.bi];
        int dir = plain == PLAIN_WRITE ? 1 : plain == PLAIN_READ ? 0 : io.dir;
        int64_t off;
        const int phantom = plain != PLAIN_READ && dir == 1 && d->thin && thin_skip(d);
        if (plain || d->random) {
            off = io.off;
        } else {
            off = d->job_pos[job];
            if (off + bs > d->range_start + d->range_len) off = d->range_start;
            if (!phantom) d->job_pos[job] = off + bs; /* a sequential stream moves on with its state-changing writes */
        }
        d->job_issued[job] += bs;
        int64_t done;
        if (dir == 0) done = do_read(d, t, off, bs);
        else if (phantom) done = phantom_write(d, t, off, bs);
        else if (dir == 1) done = do_write(d, t, off, bs);
        else done = do_trim(d, t, off, bs);
        if (done < 0) {
            heap_pop(d);
            d->running = 0;
            PyErr_SetString(PyExc_RuntimeError, "simulated drive ran out of free blocks (GC could not progress)");
            return -1;
        }
        d->c_energy += d->e_io;
        sio->t0 = t0;
        sio->bs = bs;
        sio->dir = dir;
        sio->pend = 1;
        sio->cq = dist_scale(&d->d_cmd, d->cmd_ns, HI32(d->trng * 0xD6E8FEB86659FD93ULL)); /* (the generator's state,
                                                                                             mixed: no new draw) */
        heap_replace_top(d, done);
    }
    return 0;
}

/* process pops until virtual time `until` (ns); returns True when the point is finished */
static PyObject *Dev_advance(Dev *d, PyObject *args) {
    long long until;
    if (!PyArg_ParseTuple(args, "L", &until)) return NULL;
    if (!d->running) {
        PyErr_SetString(PyExc_RuntimeError, "advance() without begin()");
        return NULL;
    }
    int r = d->plain == PLAIN_WRITE ? advance_loop(d, until, PLAIN_WRITE)
            : d->plain == PLAIN_READ ? advance_loop(d, until, PLAIN_READ)
                                     : advance_loop(d, until, 0);
    if (r < 0) return NULL;
    if (d->heap_n == 0) Py_RETURN_TRUE;
    Py_RETURN_FALSE;
}

/* hist_drain(upto): [(interval, dir, bytes of 1856 int64)] for intervals < upto, which are then cleared */
static PyObject *Dev_hist_drain(Dev *d, PyObject *args) {
    long long upto;
    if (!PyArg_ParseTuple(args, "L", &upto)) return NULL;
    PyObject *out = PyList_New(0);
    if (!out || !d->hl) return out;
    for (; d->hl_base < upto; d->hl_base++) {
        int64_t *slot = &d->hl[(d->hl_base % HL_RING) * NDIR * PLAT_NR];
        for (int dir = 0; dir < NDIR; dir++) {
            PyObject *b = PyBytes_FromStringAndSize((const char *)&slot[dir * PLAT_NR], sizeof(int64_t) * PLAT_NR);
            PyObject *t = Py_BuildValue("(LiN)", (long long)d->hl_base, dir, b);
            PyList_Append(out, t);
            Py_DECREF(t);
        }
        memset(slot, 0, sizeof(int64_t) * NDIR * PLAT_NR);
    }
    return out;
}

static PyObject *Dev_progress(Dev *d, PyObject *unused) {
    return Py_BuildValue("(LKKKKd)", (long long)d->t_now, (unsigned long long)d->all_ios[0],
                         (unsigned long long)d->all_ios[1], (unsigned long long)d->all_bytes[0],
                         (unsigned long long)d->all_bytes[1], d->all_lat);
}

static PyObject *Dev_finish(Dev *d, PyObject *unused) {
    if (!d->running) {
        PyErr_SetString(PyExc_RuntimeError, "finish() without begin()");
        return NULL;
    }
    d->running = 0;
    /* a time-based point ends at its runtime or, when I/Os issued before then complete later, at the last
     * completion (fio's drain); the next point starts from there, as the next fio process would */
    int64_t end = d->time_based ? max64(d->t_end, d->t_last_done) : d->t_last_done;
    PyObject *dirs = PyList_New(NDIR);
    for (int i = 0; i < NDIR; i++) {
        PyObject *h = PyBytes_FromStringAndSize((const char *)&d->hist[i * PLAT_NR], sizeof(int64_t) * PLAT_NR);
        PyObject *t = Py_BuildValue("(KKddLLN)", (unsigned long long)d->st_n[i], (unsigned long long)d->st_bytes[i],
                                    d->st_sum[i], d->st_sq[i], (long long)(d->st_n[i] ? d->st_min[i] : 0),
                                    (long long)d->st_max[i], h);
        PyList_SET_ITEM(dirs, i, t);
    }
    PyObject *series = PyList_New(d->iv_n);
    for (int64_t k = 0; k < d->iv_n; k++) {
        Interval *v = &d->iv[k];
        PyObject *t = Py_BuildValue("(KKKKKKddd)", (unsigned long long)v->ios[0], (unsigned long long)v->ios[1],
                                    (unsigned long long)v->ios[2], (unsigned long long)v->bytes[0],
                                    (unsigned long long)v->bytes[1], (unsigned long long)v->bytes[2], v->lat[0],
                                    v->lat[1], v->lat[2]);
        PyList_SET_ITEM(series, k, t);
    }
    double energy = d->c_energy - d->run_energy0;
    /* the pending buffer entries are flushed at the end; their NAND work carries into the next point */
    flush_pending(d, end);
    d->carry_end = end;
    return Py_BuildValue("{s:L,s:L,s:N,s:N,s:d}", "t_meas_ns", (long long)d->t_meas, "t_end_ns",
                         (long long)end, "dirs", dirs, "series", series, "energy_j", energy);
}

static PyObject *Dev_geometry(Dev *d, PyObject *unused) {
    return Py_BuildValue("{s:L,s:I,s:I,s:I,s:I,s:I,s:L,s:L,s:L}", "user_slots", (long long)d->n_lpn, "blocks",
                         d->n_blk, "slots_per_block", d->spb, "slots_per_unit", d->spu, "dies", d->n_dies,
                         "channels", d->n_ch, "buffer_slots", (long long)d->buf_slots, "map_pages",
                         (long long)d->n_mp, "map_cache_pages", (long long)d->mc_cap);
}

static PyObject *Dev_valid_histogram(Dev *d, PyObject *unused) {
    /* closed blocks per valid count: the steady-state validity distribution */
    PyObject *r = PyList_New(d->spb + 1);
    for (uint32_t v = 0; v <= d->spb; v++) PyList_SET_ITEM(r, v, PyLong_FromLong(0));
    for (uint32_t b = 0; b < d->n_blk; b++) {
        if (d->bstate[b] != BS_CLOSED) continue;
        PyObject *old = PyList_GET_ITEM(r, d->valid[b]);
        PyList_SET_ITEM(r, d->valid[b], PyLong_FromLong(PyLong_AsLong(old) + 1));
        Py_DECREF(old);
    }
    return r;
}

static PyMethodDef Dev_methods[] = {
    {"reset", (PyCFunction)Dev_reset, METH_NOARGS, "Return to the fresh-out-of-box state (everything unmapped)."},
    {"fill", (PyCFunction)Dev_fill, METH_VARARGS, "fill(start_iu, count): write IUs sequentially, untimed."},
    {"counters", (PyCFunction)Dev_counters, METH_NOARGS, "Lifetime counters and occupancy."},
    {"geometry", (PyCFunction)Dev_geometry, METH_NOARGS, "Derived geometry."},
    {"valid_histogram", (PyCFunction)Dev_valid_histogram, METH_NOARGS, "Closed blocks per valid-slot count."},
    {"save", (PyCFunction)Dev_save, METH_NOARGS, "State image (bytes) of the FTL."},
    {"load", (PyCFunction)Dev_load, METH_O, "Restore a state image from save()."},
    {"begin", (PyCFunction)Dev_begin, METH_VARARGS, "begin(workload dict): start a point at virtual time 0."},
    {"idle", (PyCFunction)Dev_idle, METH_VARARGS, "idle(ns): host idle time before the next point (background GC)."},
    {"advance", (PyCFunction)Dev_advance, METH_VARARGS, "advance(until_ns) -> finished?"},
    {"hist_drain", (PyCFunction)Dev_hist_drain, METH_VARARGS, "hist_drain(upto): finished histogram-log rows."},
    {"progress", (PyCFunction)Dev_progress, METH_NOARGS, "(t_ns, read_ios, write_ios, read_b, write_b, lat_sum)."},
    {"finish", (PyCFunction)Dev_finish, METH_NOARGS, "End the point and return its statistics."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject DevType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ssdlab.sim._core.Device",
    .tp_basicsize = sizeof(Dev),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The simulated SSD (FTL state, timing resources, closed-loop host).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Dev_init,
    .tp_dealloc = (destructor)Dev_dealloc,
    .tp_methods = Dev_methods,
};

static PyObject *core_plat_idx(PyObject *self, PyObject *arg) {
    long long v = PyLong_AsLongLong(arg);
    if (v == -1 && PyErr_Occurred()) return NULL;
    return PyLong_FromLong(plat_idx(v));
}

/* ------------------------------------------------------------------ trace replay (sim/replay.py)
 *
 * replay(dev, t, off, len, op, issue, done, bucket, slots, state, acc, streams, depth, until, reads_only): the I/Os of a
 * trace (numpy arrays: arrival ns, offset and length in bytes, direction 0 read / 1 write / 2 trim) issued on the
 * drive in virtual time, each no earlier than its arrival; the issue and completion time of every I/O go into
 * `issue` and `done`, its latency's histogram bucket (fio's scheme, uint16) into `bucket`; per direction the
 * latencies' min and max go into `state` and their sum and sum of squares into `acc` (float64[6]). Two shapes, as fio's iolog replay runs them (fio/replay.py): one stream of up to `depth`
 * I/Os in flight in trace order (streams == 1; as fast as possible the arrivals are all 0), or `streams` streams of
 * queue depth 1 (depth == 1), I/O i on stream i mod streams, each waiting for its previous I/O (timed replays).
 * Either way issue times never go back, as the model's resource reservation needs. `slots` (int64, at least
 * max(depth, 2 x streams)) and `state` (int64[12]: next I/O, entries in the heap, last issue, last completion,
 * begun, finished, min and max latency per direction) carry the replay between calls, each of which stops before the first I/O issued at or after
 * `until` (so the caller can read the counters per interval); it returns True when every I/O is done. The first
 * call starts a point (time 0 = the previous point's end); the last flushes the write buffer as finish() does. */
typedef struct {
    Py_buffer b[9];
    int held;
} ReplayBufs;

static void replay_release(ReplayBufs *rb) {
    for (int i = 0; i < rb->held; i++) PyBuffer_Release(&rb->b[i]);
    rb->held = 0;
}

static int replay_buf(ReplayBufs *rb, PyObject *o, Py_ssize_t itemsize, int writable, const char *what) {
    Py_buffer *v = &rb->b[rb->held];
    if (PyObject_GetBuffer(o, v, PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0)) < 0) return -1;
    rb->held++;
    if (v->itemsize != itemsize) {
        PyErr_Format(PyExc_ValueError, "replay: %s must hold %d-byte items", what, (int)itemsize);
        return -1;
    }
    return 0;
}

/* the heap of the streams' next I/Os: (ready time, I/O index) pairs in an int64 array, laid out as the closed
 * loop's HeapEnt (key, slot) and ordered as its events are (ev_before: by time, then index), so its branch-free
 * sift-down serves here too */
static void rp_push(int64_t *h, int64_t *n, int64_t key, int64_t idx) {
    HeapEnt *e = (HeapEnt *)h, x = {key, idx};
    int64_t i = (*n)++;
    while (i > 0 && ev_before(x, e[(i - 1) / 2])) {
        e[i] = e[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    e[i] = x;
}

/* the heap's first entry becomes (key, idx), sifted down to its place */
static inline void rp_replace_top(int64_t *h, int64_t n, int64_t key, int64_t idx) {
    HeapEnt x = {key, idx};
    heap_sift_root((HeapEnt *)h, n, x);
}

static void rp_pop(int64_t *h, int64_t *n) {
    HeapEnt *e = (HeapEnt *)h;
    (*n)--;
    if (*n > 0) heap_sift_root(e, *n, e[*n]);
}

/* the mapping entry of I/O j, fetched while others are simulated */
HOT_INLINE void replay_prefetch_map(Dev *d, const int64_t *off, int64_t j) {
    if (off[j] >= 0 && iu_div(d, off[j]) < d->n_lpn) __builtin_prefetch(&d->l2p[iu_div(d, off[j])], 1, 1);
}

/* the reverse-map entry of write j's current location (its mapping entry fetched earlier), which the write
 * invalidates */
HOT_INLINE void replay_prefetch_rev(Dev *d, const int64_t *off, const uint8_t *dir, int64_t j) {
    if (off[j] < 0 || dir[j] == 0 || iu_div(d, off[j]) >= d->n_lpn) return;
    uint32_t m = d->l2p[iu_div(d, off[j])];
    if (!(m & BUFBIT)) __builtin_prefetch(&d->p2l[m], 1, 1);
}

/* the min-heap of completion times of the one stream's I/Os in flight */
static void cp_push(int64_t *h, int64_t *n, int64_t v) {
    int64_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2] > v) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

static void cp_pop(int64_t *h, int64_t *n) {
    int64_t last = h[--(*n)], i = 0;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && h[c + 1] < h[c]) c++;
        if (last <= h[c]) break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0) h[i] = last;
}

/* one I/O of the trace on the drive at time s (`user`: the drive's bytes): its completion, or -1 with an
 * exception set */
HOT_INLINE int64_t replay_io(Dev *d, int64_t s, int64_t off, int64_t len, int op, int64_t i, int64_t user) {
    if (off < 0 || len <= 0 || off + len > user || op > 2) {
        PyErr_Format(PyExc_ValueError, "replay: I/O %lld (offset %lld, length %lld, op %d) is outside the drive",
                     (long long)i, (long long)off, (long long)len, op);
        return -1;
    }
    d->t_now = s;
    d->cal_now = s;
    if (((d->clock_base + s) >> DRIFT_SHIFT) != d->drift_seg) drift_update(d, s);
    int64_t done = op == 0 ? do_read(d, s, off, len) : op == 1 ? do_write(d, s, off, len) : do_trim(d, s, off, len);
    if (done < 0) {
        PyErr_SetString(PyExc_RuntimeError, "simulated drive ran out of free blocks (GC could not progress)");
        return -1;
    }
    d->c_energy += d->e_io;
    /* the completion path to the host, as the closed loop draws it (advance_loop) */
    return done + dist_scale(&d->d_cmd, d->cmd_ns, HI32(d->trng * 0xD6E8FEB86659FD93ULL));
}

enum { RS_POS, RS_HEAP, RS_LAST, RS_MAXDONE, RS_BEGUN, RS_FINISHED, RS_MIN, RS_MAX = RS_MIN + NDIR,
       RS_N = RS_MAX + NDIR };

/* an I/O's statistics: its latency bucket, and per direction the latency's min and max (state) and its sum and
 * sum of squares (acc) */
HOT_INLINE void replay_stats(int64_t *st, double *acc, uint16_t *bucket, int64_t i, int dir, int64_t lat) {
    bucket[i] = (uint16_t)plat_idx(lat);
    if (lat < st[RS_MIN + dir]) st[RS_MIN + dir] = lat;
    if (lat > st[RS_MAX + dir]) st[RS_MAX + dir] = lat;
    acc[dir] += (double)lat;
    acc[NDIR + dir] += (double)lat * (double)lat;
}

static PyObject *core_replay(PyObject *self, PyObject *args) {
    PyObject *dev, *ot, *oo, *ol, *op, *oi, *od, *ob, *os, *ost, *oa;
    long long streams, depth, until;
    int reads_only;
    if (!PyArg_ParseTuple(args, "O!OOOOOOOOOOLLLp", &DevType, &dev, &ot, &oo, &ol, &op, &oi, &od, &ob, &os, &ost, &oa,
                          &streams,
                          &depth, &until, &reads_only))
        return NULL;
    Dev *d = (Dev *)dev;
    ReplayBufs rb = {.held = 0};
    if (replay_buf(&rb, ot, 8, 0, "times") < 0 || replay_buf(&rb, oo, 8, 0, "offsets") < 0 ||
        replay_buf(&rb, ol, 8, 0, "lengths") < 0 || replay_buf(&rb, op, 1, 0, "directions") < 0 ||
        replay_buf(&rb, oi, 8, 1, "issue times") < 0 || replay_buf(&rb, od, 8, 1, "completion times") < 0 ||
        replay_buf(&rb, os, 8, 1, "slots") < 0 || replay_buf(&rb, ob, 2, 1, "latency buckets") < 0 ||
        replay_buf(&rb, oa, 8, 1, "latency sums") < 0) {
        replay_release(&rb);
        return NULL;
    }
    Py_buffer stv;
    if (PyObject_GetBuffer(ost, &stv, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
        replay_release(&rb);
        return NULL;
    }
    const int64_t *t = rb.b[0].buf, *off = rb.b[1].buf, *len = rb.b[2].buf;
    const uint8_t *dir = rb.b[3].buf;
    int64_t *issue = rb.b[4].buf, *done_out = rb.b[5].buf, *slots = rb.b[6].buf, *st = stv.buf;
    uint16_t *bucket = rb.b[7].buf;
    double *acc = rb.b[8].buf;
    int64_t n = rb.b[0].len / 8, nslots = rb.b[6].len / 8;
    PyObject *result = NULL;
    if (stv.itemsize != 8 || stv.len < 8 * RS_N || rb.b[1].len / 8 != n || rb.b[2].len / 8 != n ||
        rb.b[3].len != n || rb.b[4].len / 8 != n || rb.b[5].len / 8 != n || rb.b[7].len / 2 != n ||
        rb.b[8].len < 8 * 2 * NDIR || streams < 1 || depth < 1 ||
        (streams > 1 && depth != 1) || nslots < (streams > 1 ? 2 * streams : depth)) {
        PyErr_SetString(PyExc_ValueError, "replay: arrays of different lengths, or streams/depth/slots out of range");
        goto out;
    }
    if (!st[RS_BEGUN]) {
        rebase(d);
        d->rd_only = reads_only;
        d->thin = 0; /* a trace's writes all change the state (its offsets are the trace's) */
        ra_reset(d, 1); /* a trace's sequential runs are read ahead as the drive would (it follows any stream) */
        st[RS_POS] = st[RS_HEAP] = st[RS_LAST] = st[RS_MAXDONE] = 0;
        for (int k = 0; k < NDIR; k++) {
            st[RS_MIN + k] = INT64_MAX;
            st[RS_MAX + k] = 0;
            acc[k] = acc[NDIR + k] = 0.0;
        }
        if (streams > 1)
            for (int64_t k = 0; k < streams && k < n; k++) rp_push(slots, &st[RS_HEAP], t[k], k);
        st[RS_BEGUN] = 1;
    }
    int64_t last = st[RS_LAST], maxd = st[RS_MAXDONE], user = d->n_lpn * d->iu_bytes;
    if (streams == 1) {
        int64_t i = st[RS_POS];
        for (; i < n; i++) {
            int64_t s = max64(t[i], last);
            if (st[RS_HEAP] == depth) s = max64(s, slots[0]);
            if (s >= until) break;
            if (i + 16 < n) replay_prefetch_map(d, off, i + 16); /* one queue: I/Os go in trace order */
            if (i + 4 < n) replay_prefetch_rev(d, off, dir, i + 4);
            if (st[RS_HEAP] == depth) cp_pop(slots, &st[RS_HEAP]);
            int64_t done = replay_io(d, s, off[i], len[i], dir[i], i, user);
            if (done < 0) goto out;
            cp_push(slots, &st[RS_HEAP], done);
            issue[i] = s;
            done_out[i] = done;
            replay_stats(st, acc, bucket, i, dir[i], done - s);
            last = s;
            maxd = max64(maxd, done);
        }
        st[RS_POS] = i;
        st[RS_FINISHED] = i >= n;
    } else {
        while (st[RS_HEAP] > 0 && slots[0] < until) {
            int64_t s = max64(slots[0], last), i = slots[1];
            /* the streams' next I/Os wait in the heap: the root's children go soon (their mapping entries were
             * fetched when they were pushed, `streams` I/Os ago) */
            for (int64_t c = 1; c <= 2 && c < st[RS_HEAP]; c++) replay_prefetch_rev(d, off, dir, slots[2 * c + 1]);
            int64_t done = replay_io(d, s, off[i], len[i], dir[i], i, user);
            if (done < 0) goto out;
            issue[i] = s;
            done_out[i] = done;
            replay_stats(st, acc, bucket, i, dir[i], done - s);
            last = s;
            maxd = max64(maxd, done);
            if (i + streams < n) {
                int64_t ahead = i + 2 * streams; /* the trace's arrays, a stream's turn ahead of what is read next */
                if (ahead < n) {
                    __builtin_prefetch(&t[ahead], 0, 1);
                    __builtin_prefetch(&off[ahead], 0, 1);
                    __builtin_prefetch(&len[ahead], 0, 1);
                    __builtin_prefetch(&dir[ahead], 0, 1);
                    __builtin_prefetch(&issue[ahead], 1, 1);
                    __builtin_prefetch(&done_out[ahead], 1, 1);
                    __builtin_prefetch(&bucket[ahead], 1, 1);
                }
                replay_prefetch_map(d, off, i + streams); /* this stream's next: some `streams` I/Os from now */
                rp_replace_top(slots, st[RS_HEAP], max64(t[i + streams], done), i + streams);
            } else {
                rp_pop(slots, &st[RS_HEAP]);
            }
        }
        st[RS_FINISHED] = st[RS_HEAP] == 0;
    }
    st[RS_LAST] = last;
    st[RS_MAXDONE] = maxd;
    if (st[RS_FINISHED]) { /* as finish() ends a point: the buffer's pending writes flushed, the next starts here */
        flush_pending(d, maxd);
        d->carry_end = maxd;
    }
    result = PyBool_FromLong(st[RS_FINISHED]);
out:
    PyBuffer_Release(&stv);
    replay_release(&rb);
    return result;
}

/* sparse_bins(counts) -> bytes: the non-empty buckets of a dense histogram (int64 counts, as finish() returns
 * them) as (index, count) int64 pairs in ascending order: what a point stores, without a pass over 1856 buckets in
 * Python */
static PyObject *core_sparse_bins(PyObject *self, PyObject *arg) {
    Py_buffer in;
    if (PyObject_GetBuffer(arg, &in, PyBUF_SIMPLE) < 0) return NULL;
    if (in.len % (Py_ssize_t)sizeof(int64_t)) {
        PyBuffer_Release(&in);
        PyErr_SetString(PyExc_ValueError, "sparse_bins: a whole number of int64 counts expected");
        return NULL;
    }
    Py_ssize_t n = in.len / (Py_ssize_t)sizeof(int64_t), k = 0;
    const char *src = (const char *)in.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t c;
        memcpy(&c, src + i * (Py_ssize_t)sizeof(c), sizeof(c));
        k += c != 0;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, k * 2 * (Py_ssize_t)sizeof(int64_t));
    if (out) {
        char *dst = PyBytes_AS_STRING(out);
        for (Py_ssize_t i = 0; i < n; i++) {
            int64_t c, idx = (int64_t)i;
            memcpy(&c, src + i * (Py_ssize_t)sizeof(c), sizeof(c));
            if (!c) continue;
            memcpy(dst, &idx, sizeof(idx));
            memcpy(dst + sizeof(idx), &c, sizeof(c));
            dst += 2 * sizeof(int64_t);
        }
    }
    PyBuffer_Release(&in);
    return out;
}

static PyMethodDef core_methods[] = {
    {"plat_idx", core_plat_idx, METH_O, "fio histogram bucket of a latency in ns (for tests)."},
    {"sparse_bins", core_sparse_bins, METH_O, "sparse_bins(counts) -> (index, count) int64 pairs of the non-empty "
                                              "buckets of a dense int64 histogram"},
    {"replay", core_replay, METH_VARARGS, "replay(dev, t, off, len, op, issue, done, bucket, slots, state, acc, "
                                          "streams, depth, until, reads_only) -> finished? (a trace's I/Os in "
                                          "virtual time)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef coremodule = {PyModuleDef_HEAD_INIT, "_core", "ssdlab simulated SSD core.", -1,
                                        core_methods};

PyMODINIT_FUNC PyInit__core(void) {
    if (PyType_Ready(&DevType) < 0) return NULL;
    PyObject *m = PyModule_Create(&coremodule);
    if (!m) return NULL;
    Py_INCREF(&DevType);
    if (PyModule_AddObject(m, "Device", (PyObject *)&DevType) < 0) {
        Py_DECREF(&DevType);
        Py_DECREF(m);
        return NULL;
    }
    PyModule_AddIntConstant(m, "STATE_VERSION", 1);
    PyObject *names = PyTuple_New(NCOUNTERS);
    if (!names) {
        Py_DECREF(m);
        return NULL;
    }
    for (int i = 0; i < NCOUNTERS; i++) PyTuple_SET_ITEM(names, i, PyUnicode_FromString(counter_names[i]));
    if (PyModule_AddObject(m, "COUNTERS", names) < 0) {
        Py_DECREF(names);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
