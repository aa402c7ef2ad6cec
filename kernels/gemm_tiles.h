/* Private to libtma_kernels (and its tests): the GEMM's tile scheduler and epilogue box addressing, shared by
 * the kernel (gemm.cu) and the tests that prove them on the CPU. Not installed. */
#ifndef KERNELS_GEMM_TILES_H
#define KERNELS_GEMM_TILES_H

#include <stdbool.h>
#include <stdint.h>

#include "tma/hd.h"
#include "tma/swizzle.h"

#define GM_EPI_ROWS 64u          /* the epilogue's C boxes: 64 rows (one consumer warpgroup's) */
#define GM_EPI_ROW_BYTES TMA_SWIZZLE_SPAN_128B /* ... of 128 bytes, one 128B swizzle span: 64 bf16 or 32 fp32 */
#define GM_EPI_SWIZZLE TMA_SWIZZLE_128B
#define GM_K_STEP_BYTES 32u      /* one wgmma K step of bf16 (16 elements): the descriptor advance between steps */

/** Tile scheduler: the t-th tile in launch order -> tile coordinates (tm, tn) of a tiles_m x tiles_n grid.
 *  Tiles go column by column inside groups of `group` tile rows, so the blocks running at one time share
 *  A rows and B rows in L2. A bijection for any shape and group >= 1 (tests/test_wgmma.c). */
TMA_HD void gm_tile_of(uint32_t t, uint32_t tiles_m, uint32_t tiles_n, uint32_t group, uint32_t *tm, uint32_t *tn) {
    uint32_t per_group = group * tiles_n;
    uint32_t g = t / per_group, first = g * group;
    uint32_t rows = tiles_m - first < group ? tiles_m - first : group;
    uint32_t local = t - g * per_group;
    *tm = first + local % rows;
    *tn = local / rows;
}

/** Stream-K: the work of one launch is `units` tiles (numbered in gm_tile_of order) of `nk` pipeline stages each,
 *  shared by `workers` persistent workers (blocks, or clusters of two).
 *  - Units [0, dp) are taken whole and in turn: unit u by worker u % workers (dp = units: the plain persistent
 *    schedule).
 *  - The stages of the other units, S = (units - dp) * nk, are cut into `workers` consecutive ranges, worker w's
 *    the w-th, of S / workers stages (the first S % workers one more). The part of a range that falls on one unit is
 *    a segment.
 *  - A unit cut into several segments is finished by its OWNER, the worker holding its first stage. The owner adds
 *    the partial sums of the unit's other workers (the HELPERS, in worker order: the sum does not depend on timing)
 *    to its own, then stores the tile.
 *  - A helper's segment starts inside a unit, so it is the first of the helper's range: each worker stores at most one
 *    partial tile per launch (its workspace slot), and before any wait. An owner's segment ends inside its unit, so it
 *    is the last of its range: the owner waits only at the end, for work its helpers did first. No cycle: with every
 *    worker resident, no wait is long.
 *  Proven on the CPU: every stage of every unit exactly once (tests/test_wgmma.c). */
typedef struct gm_sched {
    uint32_t units, nk, workers, dp;
    uint32_t per, rem; /* stream-K: S = per * workers + rem; the first rem ranges are per + 1 stages long */
    uint32_t split;    /* split-K (gm_sched_split): the parts each unit's stages are cut into; 0 otherwise */
} gm_sched;

/** How gm_pipeline_kernel shares the units among its workers (its SCHED template parameter). */
#define GM_SCHED_TILES 0    /* every unit whole */
#define GM_SCHED_STREAM_K 1 /* gm_sched_make(..., true) */
#define GM_SCHED_SPLIT_K 2  /* gm_sched_split */
/** Split-K: the most parts a unit is cut into: a unit's parts are one cluster, and 8 blocks is the largest portable
 *  cluster size (beyond a few parts the fixup outweighs the shorter parts anyway). */
#define GM_SPLIT_MAX 8u

/** One worker's segment: stages [kb0, kb1) of unit `unit`. */
typedef struct gm_segment {
    uint32_t unit, kb0, kb1;
} gm_segment;

/** The units taken whole before the stream-K ones: none where they fit in one wave (units < 2 workers: every worker
 *  gets between 1 and 2 units' stages, unless there are fewer units than workers), else all but the last one to two
 *  waves, so each stream-K unit is split between at most two workers and every tile before them stays whole. */
TMA_HD uint32_t gm_sk_dp_units(uint32_t units, uint32_t workers) {
    return units % workers == 0 ? units : units < 2u * workers ? 0u : (units / workers - 1u) * workers;
}

/** Whether a launch's stream-K stages fit the schedule's 32-bit arithmetic (else: whole tiles only). */
TMA_HD bool gm_sk_fits(uint32_t units, uint32_t nk, uint32_t workers) {
    return (uint64_t)(units - gm_sk_dp_units(units, workers)) * nk <= 0xFFFFFFFFull;
}

/** The schedule of `units` units of nk stages on `workers` workers; stream_k false: every unit whole. Arithmetic
 *  in 32 bits (the kernel's registers are scarce): a stream-K schedule needs gm_sk_fits. */
TMA_HD gm_sched gm_sched_make(uint32_t units, uint32_t nk, uint32_t workers, bool stream_k) {
    gm_sched s;
    s.units = units;
    s.nk = nk;
    s.workers = workers;
    s.dp = stream_k ? gm_sk_dp_units(units, workers) : units;
    const uint32_t stages = (s.units - s.dp) * nk;
    s.per = stages / workers;
    s.rem = stages - s.per * workers;
    s.split = 0;
    return s;
}

/** Split-K: every unit's nk stages are cut into `split` (2 .. GM_SPLIT_MAX) near-equal consecutive parts, one per
 *  worker, so the grid is units * split workers, each with exactly one segment: worker w takes part w % split of unit
 *  w / split, and a unit's workers are consecutive (the kernel launches them as one cluster). The parts' partial sums
 *  are added by all of the unit's workers together (gm_split_slice), each a slice of the tile, after every worker has
 *  finished its part: no worker waits before its own work is done. */
TMA_HD gm_sched gm_sched_split(uint32_t units, uint32_t nk, uint32_t split) {
    gm_sched s;
    s.units = units;
    s.nk = nk;
    s.workers = units * split;
    s.dp = 0;
    s.per = 0;
    s.rem = 0;
    s.split = split;
    return s;
}

/** Split-K: the first and last stage (exclusive) of part i of a unit (32-bit: nk * split < 2^32, gm_split_fits). */
TMA_HD void gm_split_part(const gm_sched *s, uint32_t i, uint32_t *kb0, uint32_t *kb1) {
    *kb0 = s->nk * i / s->split;
    *kb1 = s->nk * (i + 1u) / s->split;
}

/** Whether a split-K schedule's arithmetic fits 32 bits. */
TMA_HD bool gm_split_fits(uint32_t units, uint32_t nk, uint32_t split) {
    return (uint64_t)nk * split <= 0xFFFFFFFFull && (uint64_t)units * split <= 0xFFFFFFFFull;
}

/** Split-K's gm_next_segment: worker w's one segment (*cursor = 0 before the call); called by the split-K kernel
 *  instances only (gm_segment_of in gemm_device.cuh). Written first as a branch of gm_next_segment on s->split, a
 *  run-time value, it slowed every other instance of the convolution though they never took it (H200, alternating
 *  builds, 2026-11-23: b128 56x56x64 whole 64-wide tiles 127 us against 103, b32 14x14x256 27.3 against 23.5,
 *  b128 7x7x512 stream-K 57.7 against 52.5). As a function of its own, their PTX is the old one again (but for the
 *  parameters' sizes), and so are their speeds (the same layers, alternating twice on another H200: within 5 points of
 *  the old build's % of cuBLAS, both ways). */
TMA_HD bool gm_split_segment(const gm_sched *s, uint32_t w, uint32_t *cursor, gm_segment *seg) {
    if (*cursor > 0u || w >= s->workers)
        return false;
    seg->unit = w / s->split;
    gm_split_part(s, w % s->split, &seg->kb0, &seg->kb1);
    *cursor = 1u;
    return true;
}

/** Split-K: the slice [*j0, *j1) of a tile's n groups (the accumulators' float4 columns of one half tile) that part
 *  i of `split` adds up and stores. */
TMA_HD void gm_split_slice(uint32_t n, uint32_t split, uint32_t i, uint32_t *j0, uint32_t *j1) {
    *j0 = n * i / split;
    *j1 = n * (i + 1u) / split;
}

/** The first stream-K stage of worker w's range (w = workers: the end of the last range). */
TMA_HD uint32_t gm_sk_begin(const gm_sched *s, uint32_t w) { return w * s->per + (w < s->rem ? w : s->rem); }

/** The worker whose range holds stream-K stage i: the last w with gm_sk_begin(w) <= i (ranges of per = 0 stages,
 *  where there are fewer stages than workers, hold none). */
TMA_HD uint32_t gm_sk_worker(const gm_sched *s, uint32_t i) {
    const uint32_t longer = s->rem * (s->per + 1u); /* the stages of the first rem ranges */
    return i < longer ? i / (s->per + 1u) : s->rem + (i - longer) / s->per;
}

/** Worker w's next segment: *cursor = 0 before the first call; false when w has no more work. Whole units first,
 *  then the worker's stream-K range. */
TMA_HD bool gm_next_segment(const gm_sched *s, uint32_t w, uint32_t *cursor, gm_segment *seg) {
    const uint32_t whole = w < s->dp ? (s->dp - w - 1u) / s->workers + 1u : 0u; /* units w, w + workers, ... < dp */
    if (*cursor < whole) {
        seg->unit = w + *cursor * s->workers;
        seg->kb0 = 0;
        seg->kb1 = s->nk;
        *cursor += 1u;
        return true;
    }
    const uint32_t i = gm_sk_begin(s, w) + (*cursor - whole), end = gm_sk_begin(s, w + 1u);
    if (i >= end)
        return false;
    seg->unit = s->dp + i / s->nk;
    seg->kb0 = i % s->nk;
    seg->kb1 = end - i < s->nk - seg->kb0 ? seg->kb0 + (end - i) : s->nk;
    *cursor += seg->kb1 - seg->kb0;
    return true;
}

/** The workers of stream-K unit `unit`: its owner, and its last helper (= owner where the unit is whole). The
 *  helpers are every worker after the owner up to `last`: each holds a stage of the unit (the empty ranges, where
 *  there are fewer stages than workers, all lie past the last stage; tests/test_wgmma.c). */
TMA_HD void gm_sk_workers_of(const gm_sched *s, uint32_t unit, uint32_t *owner, uint32_t *last) {
    const uint32_t first = (unit - s->dp) * s->nk;
    *owner = gm_sk_worker(s, first);
    *last = gm_sk_worker(s, first + s->nk - 1u);
}

/** Whether worker w's stream-K range holds no stage. */
TMA_HD bool gm_sk_range_empty(const gm_sched *s, uint32_t w) { return s->per == 0 && w >= s->rem; }

/** Byte offset of element (row, col) of an epilogue box of elem_bytes-sized elements from the box's
 *  1024-byte aligned start: where the kernel writes it, and (by the swizzle rule) where the TMA store of
 *  C's map reads it. */
TMA_HD uint32_t gm_epi_offset(uint32_t row, uint32_t col, uint32_t elem_bytes) {
    return tma_swizzle_elem(GM_EPI_SWIZZLE, 0, GM_EPI_ROW_BYTES, elem_bytes, row, col);
}

/** The epilogue writes each accumulator pair (row, col), (row, col + 1) to its box with 4-byte shared stores:
 *  bf16, one store of the pair at col; fp32, two stores, the s-th (s = 0, 1) of element
 *  gm_epi_store_col(s, row, col). Odd rows write their second element first: a warp's store (8 rows,
 *  row % 8 all different, x 4 lanes) then hits 32 different banks. One 8-byte store per fp32 pair would
 *  conflict 2-way: rows r and r ^ 1 cover the same 16-byte chunks of the swizzled 128-byte lines. */
TMA_HD uint32_t gm_epi_store_col(uint32_t s, uint32_t row, uint32_t col) { return col + (s ^ (row & 1u)); }

/** The transposed epilogue (gemm_device.cuh: epilogue_tma_t; C^T row-major, bf16): the box offset of the 16 bytes
 *  that `lane` of consumer warp `warp` addresses in the stmatrix.x4.trans of a box's 8-column accumulator groups jj
 *  and jj + 1 (jj even). Lanes 8 i .. 8 i + 7 address matrix i = 2 (group - jj) + h: accumulator rows 16 warp + 8 h
 *  .. + 7 (C^T's columns, 16 bytes of the box row) by the group's 8 columns (C^T's rows: box rows 8 group ..); lane
 *  8 i + b gets box row 8 group + b. tests/test_wgmma.c plays the instruction's transposition through it. */
TMA_HD uint32_t gm_epi_t_offset(uint32_t warp, uint32_t lane, uint32_t jj) {
    const uint32_t h = (lane / 8u) % 2u, group = jj + lane / 16u, b = lane % 8u;
    return gm_epi_offset(8u * group + b, 16u * warp + 8u * h, 2);
}

/** Split-K's staged slice (gemm_device.cuh: gm_split_reduce): a consumer warpgroup writes its added-up slice of the
 *  tile, as rows of C's 2-byte type (C^T's rows where C is stored transposed), into its epilogue buffers, then stores
 *  it to C in 16-byte chunks. Row r's 16-byte chunk k sits at r * pitch + 16 (k ^ (r % 8)), pitch = the row's bytes
 *  rounded up to 128: the XOR keeps a chunk in its 128-byte line of the row and puts one chunk of 8 consecutive rows
 *  in 8 different 16-byte bank groups, so the warp's writes (8 rows x one chunk, or 4 rows x one chunk transposed)
 *  and its reads (consecutive chunks of a row) are conflict-free (tests/test_wgmma.c). */
TMA_HD uint32_t gm_split_stage_pitch(uint32_t row_bytes) {
    return (row_bytes + TMA_SWIZZLE_LINE_BYTES - 1u) / TMA_SWIZZLE_LINE_BYTES * TMA_SWIZZLE_LINE_BYTES;
}
TMA_HD uint32_t gm_split_stage_offset(uint32_t row, uint32_t byte, uint32_t pitch) {
    const uint32_t lines = TMA_SWIZZLE_PERIOD_128B / TMA_SWIZZLE_LINE_BYTES; /* 8: rows whose chunks the XOR spreads */
    return row * pitch + ((byte / TMA_SWIZZLE_CHUNK_BYTES) ^ (row % lines)) * TMA_SWIZZLE_CHUNK_BYTES +
           byte % TMA_SWIZZLE_CHUNK_BYTES;
}

#endif /* KERNELS_GEMM_TILES_H */
