/* Private to libtma_kernels (and its tests): the grouped GEMM's tile scheduler, the per-group map edits and its
 * error record, shared by the kernel (grouped_gemm.cu), its host code and the CPU tests that prove them. The
 * kernel edits three host-encoded template maps per group with the edits below; the tests replay the same edits
 * on the template descriptors (tma_desc_apply_edit) and load through them on the CPU model. Not installed. */
#ifndef KERNELS_GROUPED_TILES_H
#define KERNELS_GROUPED_TILES_H

#include <stdint.h>

#include "gemm_tiles.h"

#include "tma/hd.h"
#include "tma/kernels.h"
#include "tma/rules.h"

/** The three maps of a group. */
enum { GG_MAP_A = 0, GG_MAP_B = 1, GG_MAP_C = 2, GG_MAPS = 3 };

/** Tiles of a group of m rows: ceil(m / TMA_GEMM_BM) tile rows times tiles_n tile columns; none for m <= 0. */
TMA_HD uint64_t gg_group_units(int32_t m, uint32_t tiles_n) {
    return m > 0 ? ((uint64_t)m + TMA_GEMM_BM - 1u) / TMA_GEMM_BM * tiles_n : 0u;
}

/** A walk over the groups in order, for the increasing units of one block: `first` is the first unit of `group`. */
typedef struct gg_cursor {
    uint32_t group;
    uint64_t first;
} gg_cursor;

/** The tile of unit u (u at or past the cursor's first unit): units number the tiles of group 0, then group 1,
 *  and so on; inside a group they go in gm_tile_of order (bands of group_m tile rows). Moves the cursor to u's
 *  group. @return 0 when u is past the last group's tiles, else 1 with the group, tile row and tile column */
TMA_HD int gg_locate(gg_cursor *c, uint64_t u, const int32_t *m, uint32_t groups, uint32_t tiles_n, uint32_t group_m,
                     uint32_t *g, uint32_t *tm, uint32_t *tn) {
    for (; c->group < groups; c->group++) {
        const int32_t rows = m[c->group];
        const uint64_t units = gg_group_units(rows, tiles_n);
        if (u < c->first + units) {
            const uint32_t tiles_m = (uint32_t)(((uint64_t)rows + TMA_GEMM_BM - 1u) / TMA_GEMM_BM);
            gm_tile_of((uint32_t)(u - c->first), tiles_m, tiles_n, group_m, tm, tn);
            *g = c->group;
            return 1;
        }
        c->first += units;
    }
    return 0;
}

/** The GEMM's run-time schedule: the unit a block takes, its own index first (first != 0), then the grid's count plus
 *  `taken`, the value a shared counter of the units taken past the grid's first had before this block's increment
 *  (grouped_gemm.cu: GroupedOps::next). Every unit is taken once, by one block, and each block's units increase (what
 *  gg_locate's cursor needs), in whatever order the blocks come. */
TMA_HD uint64_t gg_unit_taken(uint32_t block, uint32_t grid, int first, uint64_t taken) {
    return first ? block : grid + taken;
}

/** The GEMM's schedule, made on the device (GroupedOps::device_sched: the tile count is the sum over the groups of
 *  gg_group_units, known only there). HALF TILES: where the tiles leave a last wave of r tiles (r = units % workers)
 *  that fills at most half of the grid (2 r <= workers), each of those r tiles is taken as two units of 64 rows, one
 *  consumer warpgroup's each (the other idle; with the other SMs idle, about half a tile's time: while every SM is
 *  busy a tile of 64 rows costs a whole one's, docs/lab/grouped_gemm.md "The last wave"), so the last wave takes
 *  about half a tile's time instead of a whole one's, and no block waits for another. The two halves
 *  read the same B tile, taken one after the other (the L2 serves the second). Stream-K over the last waves, tried
 *  first, ran 1.2-1.5x slower there: its blocks work on different K slices of different tiles at once, and with 8
 *  experts' 32 MiB weights the L2 no longer served the neighbours' B tiles (docs/lab/grouped_gemm.md). */
typedef struct gg_sched {
    uint64_t units; /**< the groups' tiles */
    uint64_t split; /**< the first tile taken as two halves (units: none) */
} gg_sched;

TMA_HD gg_sched gg_sched_make(uint64_t units, uint32_t workers) {
    const uint64_t r = workers > 0u ? units % workers : 0u;
    gg_sched s;
    s.units = units;
    s.split = r > 0u && 2u * r <= workers ? units - r : units;
    return s;
}

/** The units the blocks take at run time (gg_unit_taken numbers them): the tiles before s->split, then two halves of
 *  each tile after. */
TMA_HD uint64_t gg_sched_takes(const gg_sched *s) { return s->split + 2u * (s->units - s->split); }

/** The tile of taken unit v (< gg_sched_takes) and its part: 0 the whole tile, 1 its rows 0-63, 2 its rows 64-127.
 *  Monotone in v, so a block's tiles only move forward (gg_locate's cursor). */
TMA_HD uint64_t gg_taken_tile(const gg_sched *s, uint64_t v, uint32_t *part) {
    if (v < s->split) {
        *part = 0u;
        return v;
    }
    *part = 1u + (uint32_t)((v - s->split) % 2u);
    return s->split + (v - s->split) / 2u;
}

/** The template descriptors: A_g (rows x K, K-major; boxes of 64 K x 128 rows), B_g (N x K; 64 K x 256 rows) and
 *  C_g (rows x N; the epilogue's 64 rows x 64 columns), bf16, 128B swizzle. Templates (TMA_DESC_TEMPLATE): one row
 *  and no address until the kernel sets a group's. L2 promotion 256B, as the dense GEMM's. */
static inline void gg_template_descs(uint32_t n, uint32_t k, tma_tiled_desc d[GG_MAPS]) { /* host */
    d[GG_MAP_A] = tma_desc_2d(TMA_DTYPE_BF16, NULL, 1u, k, (uint64_t)k * 2u, TMA_GEMM_BM, TMA_GEMM_BK,
                              TMA_SWIZZLE_128B);
    d[GG_MAP_B] = tma_desc_2d(TMA_DTYPE_BF16, NULL, n, k, (uint64_t)k * 2u, TMA_GEMM_BN, TMA_GEMM_BK,
                              TMA_SWIZZLE_128B);
    d[GG_MAP_C] = tma_desc_2d(TMA_DTYPE_BF16, NULL, 1u, n, (uint64_t)n * 2u, GM_EPI_ROWS,
                              GM_EPI_ROW_BYTES / 2u, GM_EPI_SWIZZLE);
    d[GG_MAP_A].l2_promotion = d[GG_MAP_B].l2_promotion = TMA_L2_256B;
    /* templates: no address until each group's edit sets one (the builder drops the flag, so the built map is
     * checked as a real one, a NULL A_g, B_g or C_g refused) */
    d[GG_MAP_A].flags = d[GG_MAP_B].flags = d[GG_MAP_C].flags = TMA_DESC_TEMPLATE;
}

/** The edits that make template `which` describe group g's matrix at ptr with `rows` rows: its address, and the
 *  rows of A and C (B_g is N x K for every group). @return the number of edits written to out */
TMA_HD uint32_t gg_group_edits(uint32_t which, const void *ptr, int32_t rows, tma_map_edit out[2]) {
    out[0] = tma_edit(TMA_FIELD_GLOBAL_ADDRESS, 0, (uint64_t)(uintptr_t)ptr);
    if (which == GG_MAP_B)
        return 1u;
    out[1] = tma_edit(TMA_FIELD_GLOBAL_DIM, 1, (uint64_t)(rows > 0 ? rows : 0));
    return 2u;
}

/** What the device found wrong in the groups' arguments: the first error since the record was cleared. */
typedef struct gg_error {
    int32_t status; /**< 0: none; else the tma_status of the first error */
    int32_t group;  /**< its group */
    char message[TMA_DIAG_MESSAGE_BYTES];
} gg_error;

/** The matrix of map `which`, as the refusals name it ("group 3: the map of A_g: ...", kernel_rules.h: GROUP_MAP). */
TMA_HD const char *gg_map_name(uint32_t which) {
    return which == GG_MAP_A ? "A" : which == GG_MAP_B ? "B" : "C";
}

#endif /* KERNELS_GROUPED_TILES_H */
