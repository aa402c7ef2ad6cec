/* Private to libtma_kernels (and its tests): the grouped GEMM's tile scheduler, the per-group map edits and its
 * error record, shared by the kernel (grouped_gemm.cu), its host code and the CPU tests that prove them. The
 * kernel edits three host-encoded template maps per group with the edits below; the tests replay the same edits
 * on the template descriptors (tma_desc_apply_edit) and load through them on the CPU model. Not installed. */
#ifndef KERNELS_GROUPED_TILES_H
#define KERNELS_GROUPED_TILES_H

#include <stdint.h>

#include "gemm_tiles.h"
#include "tuning_sm90.h"

#include "tma/hd.h"
#include "tma/kernels.h"
#include "tma/rules.h"

/** The three maps of a group. */
enum { GG_MAP_A = 0, GG_MAP_B = 1, GG_MAP_C = 2, GG_MAPS = 3 };

/** Tiles of a group of m rows: ceil(m / TMA_GEMM_BM) tile rows times tiles_n tile columns; none for m <= 0. */
TMA_HD uint64_t gg_group_units(int32_t m, uint32_t tiles_n) {
    return m > 0 ? ((uint64_t)m + TMA_GEMM_BM - 1u) / TMA_GEMM_BM * tiles_n : 0u;
}

/** Where the A box of a group's tile whose rows start at `first` is loaded (the group has `rows` rows): at `first`, but
 *  a tile of at most 64 rows with a tile row above it in its group loads its box 64 rows up, so that both consumer
 *  warpgroups compute rows of the group (the first the tile above's last 64, stored by that tile only: GmTile.first;
 *  the second the tile's own, and zeros past M_g). Why: the blocks on one tile column of a group load its B tile stage
 *  by stage at the same time, and the L2 serves them together only while they keep one pace. A tile whose second
 *  warpgroup idled (its rows past M_g), or whose box was half zero-filled past M_g, kept a pace of its own: the L2 read
 *  24% more sectors and every tile of the GEMM ran slower (H100, 128 groups of 448 rows, N = K = 4096: 3.34-3.43 ms;
 *  this way 2.92-2.99; 128 groups of 512 rows 2.74-2.94: docs/lab/grouped_gemm.md "One pace for the blocks that share
 *  B"). A group of at most 64 rows has one tile a column, which shares B with no block: its second warpgroup idles. */
TMA_HD uint32_t gg_box_row(uint32_t first, uint32_t rows) {
    return rows - first <= TMA_GEMM_BM / 2u && first >= TMA_GEMM_BM / 2u ? first - TMA_GEMM_BM / 2u : first;
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

/** The GEMM's run-time schedule: the unit a block takes. With `by_index` (gg_first_by_index), its own index first
 *  (`own`: its first take), then the grid's count plus `taken`, the value a shared counter of the units taken past the
 *  grid's first had before this block's increment; without, every unit is `taken`, the counter's value
 *  (grouped_gemm.cu: GroupedOps::next; the counter is read for every take but an `own` one). Every unit is taken once,
 *  by one block, and each block's units increase (what gg_locate's cursor needs), in whatever order the blocks come. */
TMA_HD uint64_t gg_unit_taken(uint32_t block, uint32_t grid, int by_index, int own, uint64_t taken) {
    return own ? block : (by_index ? grid : 0u) + taken;
}

/** The GEMM's schedule, made on the device (GroupedOps::device_sched: the tile count is the sum over the groups of
 *  gg_group_units, known only there). K PARTS IN A SHORT LAST WAVE: where the tiles leave a last wave of r tiles (r =
 *  units % workers) that fills at most half of the grid (2 r <= workers), each of those r tiles is cut along K into
 *  `parts` consecutive ranges of stages (as many as the grid holds, at most GG_TAIL_PARTS and at most nk), each a unit
 *  of its own, so the last wave keeps about parts x r blocks busy for 1 / parts of a tile's time instead of r blocks
 *  for a whole one. A tile's first part is its OWNER, the others its HELPERS: each helper stores its partial tile in a
 *  workspace slot of its own (the slot numbered by the helper, not by the block: a block may take two), the owner adds
 *  them to its own and stores the tile (gm_pipeline_kernel's stream-K fixup). The units are taken helpers first, then
 *  owners, all from the counter (gg_first_by_index), so when a block takes an owner every helper of it has been taken
 *  by a running block, which waits for nothing: no owner waits for a block that waits. An owner is its block's last
 *  unit (its fixup reads the partial tiles into the freed stages). Measured against the two 64-row halves a tile that
 *  this replaced: docs/lab/grouped_gemm.md "K parts in the last wave". Stream-K over the last one or two waves, tried
 *  before, ran 1.2-1.5x slower: its blocks worked on K slices of different tiles at once, and with 8 experts' 32 MiB
 *  weights the L2 no longer served the neighbours' B tiles; here every part of the short wave runs at once. */
typedef struct gg_sched {
    uint64_t units; /**< the groups' tiles */
    uint64_t split; /**< the first tile cut into parts (units: none) */
    uint32_t parts; /**< K parts of each tile from split on (1: none) */
    uint32_t nk;    /**< stages of a whole tile */
} gg_sched;

TMA_HD gg_sched gg_sched_make(uint64_t units, uint32_t workers, uint32_t nk) {
    const uint64_t r = workers > 0u ? units % workers : 0u;
    uint32_t parts = 1u;
    if (r > 0u && 2u * r <= workers) {
        const uint64_t fit = workers / r;
        parts = (uint32_t)(fit < GG_TAIL_PARTS ? fit : GG_TAIL_PARTS);
        parts = parts < nk ? parts : nk;
    }
    gg_sched s;
    s.units = units;
    s.parts = parts > 1u ? parts : 1u;
    s.split = s.parts > 1u ? units - r : units;
    s.nk = nk;
    return s;
}

/** Whether each block takes its first unit by its index (gg_unit_taken): only where none of the first wave's units is
 *  a K part, so that every K part is taken by a block that is running and an owner waits only for running blocks, which
 *  wait for nothing (no block has to be resident for another to finish: a grid that does not fit at once, under MPS
 *  say, still ends). Else every unit, the first included, comes from the counter. */
TMA_HD int gg_first_by_index(const gg_sched *s, uint32_t grid) { return s->parts == 1u || s->split >= grid; }

/** The units the blocks take at run time (gg_unit_taken numbers them): the whole tiles before s->split, then the
 *  parts of each tile after. */
TMA_HD uint64_t gg_sched_takes(const gg_sched *s) { return s->split + (uint64_t)s->parts * (s->units - s->split); }

/** What taken unit v (< gg_sched_takes) computes. */
typedef struct gg_take {
    uint64_t tile;    /**< the tile */
    uint32_t kb0, kb1; /**< its stages [kb0, kb1) */
    uint32_t role;    /**< GG_WHOLE, GG_HELPER or GG_OWNER */
    uint32_t slot;    /**< a helper's partial-tile slot; an owner's first helper's (parts - 1 consecutive slots) */
} gg_take;
enum { GG_WHOLE = 0, GG_HELPER = 1, GG_OWNER = 2 };

/** Part p of parts of a tile of nk stages: stages [nk p / parts, nk (p + 1) / parts), none empty (parts <= nk). */
TMA_HD gg_take gg_take_of(const gg_sched *s, uint64_t v) {
    gg_take t;
    t.slot = 0u;
    if (v < s->split) {
        t.tile = v, t.kb0 = 0u, t.kb1 = s->nk, t.role = GG_WHOLE;
        return t;
    }
    /* past the split: fewer units than the grid's blocks, so 32 bits */
    const uint32_t i = (uint32_t)(v - s->split), helpers = (uint32_t)(s->units - s->split) * (s->parts - 1u);
    uint32_t part;
    if (i < helpers) { /* helper i: part 1 + i % (parts - 1) of tile i / (parts - 1) of the tail */
        t.tile = s->split + i / (s->parts - 1u);
        part = 1u + i % (s->parts - 1u);
        t.role = GG_HELPER;
        t.slot = i;
    } else { /* the owner of tail tile j: part 0 */
        const uint32_t j = i - helpers;
        t.tile = s->split + j;
        part = 0u;
        t.role = GG_OWNER;
        t.slot = j * (s->parts - 1u);
    }
    t.kb0 = s->nk * part / s->parts; /* 32 bits: nk < 2^25 (K < 2^31), parts <= GG_TAIL_PARTS */
    t.kb1 = s->nk * (part + 1u) / s->parts;
    return t;
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
