/* libtma device API: issue the sub-boxes of a tile plan (tma/tile_plan.h) - the whole tile, or a window of it.
 *
 *     __global__ void k(const __grid_constant__ tma_tensor t,          // encoded from plan.box_desc
 *                       const __grid_constant__ tma_tile_plan plan, int32_t x, int32_t y) {
 *         extern __shared__ uint8_t dyn[];                    // >= plan.smem_bytes + TMA_SWIZZLE_PERIOD_128B
 *         uint8_t *tile = dyn + tma_swizzle_phase0_pad(TMA_SWIZZLE_128B, tma_smem_addr(dyn)); // 128 is the
 *                                                             // rule; a period of the swizzle is its phase 0
 *         __shared__ uint64_t bar;
 *         if (threadIdx.x == 0) { tma_mbar_init(&bar, 1); tma_fence_mbar_init(); }
 *         __syncthreads();
 *         if (threadIdx.x == 0) tma_tile_load<2>(tile, &t, &plan, &bar, {x, y, 0, 0, 0});
 *         tma_mbar_wait(&bar, 0);                                       // the whole tile has landed
 *
 * A tile larger than shared memory (plan.smem_bytes > what the block has) streams through a window of
 * w = tma_tile_plan_window(&plan, budget) sub-boxes: tma_tile_load_range(window, ..., first, n) with
 * first = 0, w, 2w, ..., each on its own barrier phase, the window consumed before the next load overwrites it.
 *
 * One thread issues: it arrives once on `bar` with the expect-tx of exactly the sub-boxes it issues (from the
 * plan: a window's share is n x box_tx_bytes), then issues them; so `bar` needs 1 arrival per phase (or one more
 * per other arriving thread). Every copy goes through tma_load<Rank>, so TMA_CHECKED checks each one's rules; in
 * checked mode the issuer also checks the range, the window's size and that t was encoded from plan.box_desc
 * (the hang that comes of a map of the tile's own box_dim: every copy delivers a different count than expected). */
#ifndef TMA_TILE_PLAN_CUH
#define TMA_TILE_PLAN_CUH

#include <stdint.h>
#include <stdio.h>

#include "tma/detail/tile_plan.h" /* checked mode's refusals (not API) */
#include "tma/device.cuh"
#include "tma/tile_plan.h"

#ifdef TMA_CHECKED
/* The cold path: the refusal's message, as the host words it, then a trap. */
static __device__ __noinline__ void tma_tile_checked_fail_(const tma_tile_refusal *w) {
    char msg[TMA_DIAG_MESSAGE_BYTES];
    tma_tile_refusal_format(w, msg, sizeof msg);
    printf("libtma checked mode: block (%d,%d,%d) thread %d: %s: %s\n", blockIdx.x, blockIdx.y, blockIdx.z,
           threadIdx.x, tma_rule_status_name(tma_tile_refusal_status(w)), msg);
    __trap();
}
#endif

/* What checked mode verifies before a range is issued (nothing without TMA_CHECKED). */
TMA_DEV void tma_tile_check_(const tma_tensor *t, const tma_tile_plan *p, int rank, uint32_t first, uint32_t n) {
#ifdef TMA_CHECKED
    tma_tile_refusal w;
    if (tma_tile_plan_check_range(p, first, n, &w) != TMA_OK)
        tma_tile_checked_fail_(&w);
    if ((uint32_t)rank != p->rank) {
        TMA_TILE_REFUSE_(&w, RANK, tma_arg_u((uint32_t)rank), tma_arg_u(p->rank));
        tma_tile_checked_fail_(&w);
    }
    uint32_t bad = p->rank; /* the first dimension whose box differs; 0 if only the bytes do (another type) */
    for (uint32_t d = p->rank; d-- > 0;)
        if (t->box.box_dim[d] != p->box_dim[d])
            bad = d;
    if (bad == p->rank && t->box.tx_bytes != p->box_tx_bytes)
        bad = 0;
    if (bad < p->rank) {
        TMA_TILE_REFUSE_(&w, MAP_MISMATCH, tma_arg_u(bad), tma_arg_u(t->box.box_dim[bad]), tma_arg_u(t->box.tx_bytes),
                         tma_arg_u(p->box_dim[bad]), tma_arg_u(p->box_tx_bytes));
        tma_tile_checked_fail_(&w);
    }
#else
    (void)t, (void)p, (void)rank, (void)first, (void)n;
#endif
}

/** Load sub-boxes [first, first + n) of plan p for the tile at `origin` through tensor t (encoded from
 *  p->box_desc): sub-box first + j lands at window + j * p->box_stride (window 128-byte aligned), and `bar`
 *  receives one arrival with the expect-tx of those n sub-boxes. One thread calls it. */
template <int Rank>
TMA_DEV void tma_tile_load_range(void *window, const tma_tensor *t, const tma_tile_plan *p, uint64_t *bar,
                                 const int32_t (&origin)[5], uint32_t first, uint32_t n) {
    static_assert(Rank >= 1 && Rank <= 5, "TMA rank is 1..5");
    tma_tile_check_(t, p, Rank, first, n);
    tma_mbar_arrive_expect_tx(bar, tma_tile_plan_tx_bytes(p, n));
    for (uint32_t j = 0; j < n; j++) {
        int32_t c[5];
        tma_tile_plan_coords(p, first + j, origin, c);
        tma_load<Rank>((uint8_t *)window + j * p->box_stride, t, bar, c);
    }
}

/** Load the whole tile: every sub-box of p, sub-box i at tile + i * p->box_stride, one expect-tx of
 *  p->tx_bytes on `bar`. The tile must fit in the block's shared memory (p->smem_bytes). One thread calls it. */
template <int Rank>
TMA_DEV void tma_tile_load(void *tile, const tma_tensor *t, const tma_tile_plan *p, uint64_t *bar,
                           const int32_t (&origin)[5]) {
    tma_tile_load_range<Rank>(tile, t, p, bar, origin, 0u, p->count);
}

#endif /* TMA_TILE_PLAN_CUH */
