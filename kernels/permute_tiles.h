/* Private to libtma_kernels (and its tests): the permute's plan and tile geometry, shared by the kernels
 * (permute.cu) and the CPU-model pipeline (permute_plan.c). Not installed.
 *
 * THE PLAN. A permutation is first simplified, then described as two tensor maps of the same rank whose
 * dimensions are listed in the same order, so that one set of tile coordinates serves both:
 *   1. dimensions of one element are dropped (except src dimension 0 and dst dimension 0, which TMA needs as
 *      the contiguous ones), and neighbouring src dimensions that are also neighbours, in the same order, in
 *      dst (src stride[j+1] = src stride[j] * dim[j] and the same in dst) are merged: NCHW -> NHWC becomes a
 *      3-D {HW, C, N} -> {C, HW, N};
 *   2. COPY: dst keeps src's innermost dimension. The load map is src, the store map is dst described in src's
 *      dimension order (dst's strides permuted), and every tile is one box loaded and stored at the same
 *      coordinates: the TMA unit does all the index arithmetic.
 *   3. TRANSPOSE: dst's innermost dimension is src dimension a != 0. Both maps list {src dim 0, a, the rest}
 *      (load) and {a, src dim 0, the rest} (store); a tile is one 128B-swizzled box of 128 bytes of src dim 0
 *      by BR indices of a, transposed in shared memory by the lane map of transpose_tiles.h (generalised to 1-
 *      and 8-byte elements there), and stored as BR / W boxes of W x W (W = 128 / elem) at the swapped
 *      coordinates; the other dimensions are one index per tile. */
#ifndef KERNELS_PERMUTE_TILES_H
#define KERNELS_PERMUTE_TILES_H

#include <stdint.h>

#include "transpose_tiles.h"

#include "tma/hd.h"
#include "tma/kernels.h"
#include "tma/swizzle.h"
#include "tuning_sm90.h"

/* The permute's tuning constants (PM_COPY_BOX_BYTES, PM_COPY_STAGES, PM_TR_STAGES, PM_TR_OUT_BUFFERS, PM_TILE_LINES,
 * PM_TALL_TILE_LINES, PM_DEFAULT_GROUP) are tuning_sm90.h's. A TRANSPOSE tile is PM_TILE_LINES lines of 128 bytes (box
 * rows of dimension a times stacked slabs; 64 threads per W lines); a TALL tile (pm_tall: a short or packed one,
 * pm_short_rows, pm_packed_cols, one of 2-byte elements that the threads store, pm_tstore_tall, or one that stacks
 * slabs, pm_stacks_slabs) PM_TALL_TILE_LINES
 * for 1-, 2- and 4-byte elements; 8-byte ones keep PM_TILE_LINES (256 lines would be 1,024 threads of at most 64
 * registers). */

/** The most lines a tile of e-byte elements may have: tall tiles (`tall`: pm_tall) PM_TALL_TILE_LINES but for 8-byte
 *  elements, the others PM_TILE_LINES. A macro: the kernels' launch bounds use it. */
#define PM_MAX_LINES(e, tall) ((tall) && (e) <= 4u ? PM_TALL_TILE_LINES : PM_TILE_LINES)


/** How tile t maps to coordinates: what the kernel receives besides the two maps. */
typedef struct pm_grid {
    uint32_t n[5];     /**< tiles along each map dimension (TRANSPOSE: n[0] along src dim 0, n[1] along a) */
    uint32_t box[5];   /**< the load box (TRANSPOSE: {W, Ba, Bc, 1, 1}, see pm_store_coords) */
    uint32_t rank;     /**< of both maps */
    uint32_t group;    /**< TRANSPOSE: bands of `group` tile columns (tr_tile_xy) */
    uint32_t lim_a;    /**< TRANSPOSE: size of map dimension 1 (dst's innermost) */
    uint32_t lim_c;    /**< TRANSPOSE: size of map dimension 2 (1 for rank 2) */
    uint32_t lim_0;    /**< TRANSPOSE: size of map dimension 0 */
    uint32_t tstore;   /**< TRANSPOSE: 1 = the threads store the tile (pm_tstore_chunk), 0 = TMA store boxes */
    uint64_t dst_stride[5]; /**< TRANSPOSE, thread stores: dst's byte stride of each map dimension (load order) */
    uint32_t outer[3]; /**< TRANSPOSE: the order in which tiles walk the outer map dimensions 2..4 (pm_grid_dst) */
    uint32_t src_keep; /**< TRANSPOSE: 1 = loads with an L2 evict_last policy, stores evict_first (pm_src_keep) */
    uint32_t dst_any;  /**< TRANSPOSE: 1 = dst is no TMA map (its address or a stride not of 16 bytes): the threads
                            store the tile (tstore), a chunk whose address is not 16-byte aligned element by element */
    uint32_t dspan;    /**< TRANSPOSE, thread stores: 1 = each slab of a tile is one run of dst (pm_dst_slab_runs):
                            the threads write it into a shared buffer in dst order, one bulk copy a slab stores it */
} pm_grid;

/** TRANSPOSE: whether the tile is a packed one (box[0] < W: pm_packed_cols), box[2] slabs side by side in each line,
 *  loaded unswizzled through a map that lists {0, slab, a, ...}. */
TMA_HD int pm_packed(const pm_grid *g, uint32_t e) { return g->box[0] < TMA_SWIZZLE_SPAN_128B / e; }

/** TRANSPOSE: whether the tile of box {cols, rows, ...} is a few-channel one: packed (cols < W) or short (rows < W,
 *  pm_short_rows). Those are tall tiles (pm_tall). */
TMA_HD int pm_few(uint32_t cols, uint32_t rows, uint32_t e) {
    return cols < TMA_SWIZZLE_SPAN_128B / e || rows < TMA_SWIZZLE_SPAN_128B / e;
}

/** TRANSPOSE: whether a usual tile of e-byte elements is a tall one (pm_tall) because its threads store it (tstore:
 *  pm_use_tstore) without L2 hints (keep: pm_src_keep): 2-byte elements. Their 128-line tile is 4 warps a block, one
 *  block an SM, too few stores in flight (the few-channel tiles showed it first: bf16 73% of a copy at 128 lines,
 *  96-101% at 256); fp32's is 8 warps, fp64's 16. Measured on two H200s (tma-permute, alternating with the build
 *  before, two rounds each, seeds 1795600002 and 1795600003): bf16 6789 x 12345 (dst pitch 13,584 bytes) 75.0-76.2%
 *  -> 84.4-86.5% of a device-to-device copy. */
TMA_HD int pm_tstore_tall(uint32_t e, uint32_t tstore, uint32_t keep) { return e == 2u && tstore && !keep; }

/** The room of one slab's run in the run buffer (pm_dst_slab_runs): the tile's W rows of dimension a's elements. */
TMA_HD uint32_t pm_dst_run_bytes(const pm_grid *g, uint32_t e) { return g->box[0] * g->lim_a * e; }
/** The bytes of each slab's run of the tile at dimension-0 coordinate x0: its rows inside dst. */
TMA_HD uint32_t pm_dst_run_len(const pm_grid *g, int32_t x0, uint32_t e) {
    const uint32_t left = g->lim_0 - (uint32_t)x0;
    return (left < g->box[0] ? left : g->box[0]) * g->lim_a * e;
}

/** TRANSPOSE, thread stores: whether each slab of a tile is one contiguous run of dst bytes, whole 16-byte chunks:
 *  the tile is W elements of map dimension 0 (not a packed tile) and all of dimension a, dst's rows (dimension a, then
 *  0) are dense and whole chunks, and dst is a map (its address and strides of 16 bytes, so each run starts on 16).
 *  A slab's run is then the tile's rows of dimension 0 that lie inside dst, one after another (pm_dst_run_len), whether
 *  dimension 0 fits one tile or not. Only where every run, the last tile's of dimension 0 too, holds at least
 *  PM_SLAB_RUN_MIN_BYTES: a bulk copy of a shorter run costs more than the threads' stores of it. The issue-31 rank-5
 *  case in bf16 (48 x 48-byte rows a slab): its thread stores' global writes were a fifth of its time (docs/lab/
 *  permute.md "The thread stores' share of the rank-5 bf16 case"). */
TMA_HD uint32_t pm_dst_slab_runs(const pm_grid *g, uint32_t e) {
    const uint32_t w = TMA_SWIZZLE_SPAN_128B / e;
    return g->tstore && !g->dst_any && g->rank >= 2u && g->box[0] == w && g->lim_a <= g->box[1] &&
           g->dst_stride[0] == (uint64_t)g->lim_a * e && g->lim_a * e % TMA_SWIZZLE_CHUNK_BYTES == 0u &&
           pm_dst_run_len(g, (int32_t)((g->lim_0 - 1u) / w * w), e) >= PM_SLAB_RUN_MIN_BYTES; /* the last tile's */
}

/** x / n with *rem = x % n, in 32-bit arithmetic whenever x fits (a 64-bit division is a long subroutine on the
 *  GPU; the thread that issues the copies runs this twice per tile, on the pipeline's critical path). */
TMA_HD uint64_t pm_divmod(uint64_t x, uint32_t n, uint32_t *rem) {
    if (x <= 0xFFFFFFFFull) {
        const uint32_t y = (uint32_t)x;
        *rem = y % n;
        return y / n;
    }
    *rem = (uint32_t)(x % n);
    return x / n;
}

/* The loops below run over all 5 dimensions with a constant trip count (dimensions past the rank have one tile),
 * so the compiler unrolls them and keeps the coordinates in registers: indexed by the run-time rank they went to
 * local memory. */

/** COPY: the box of tile t (dimension 0 fastest); load and store use the same coordinates. */
TMA_HD void pm_copy_coords(const pm_grid *g, uint64_t t, int32_t c[5]) {
    for (uint32_t k = 0; k < 5u; k++) {
        uint32_t r = 0;
        if (k < g->rank)
            t = pm_divmod(t, g->n[k], &r);
        c[k] = (int32_t)(r * g->box[k]);
    }
}

/** TRANSPOSE: the load coordinates of tile t. Tiles are taken slab by slab over the outer dimensions (in the order
 *  g->outer), banded inside a slab. */
TMA_HD void pm_transpose_coords(const pm_grid *g, uint64_t t, int32_t ld[5]) {
    uint32_t inner, tx, ty;
    uint64_t o = pm_divmod(t, g->n[0] * g->n[1], &inner); /* n[0] * n[1] < 2^31 (pm_plan) */
    tr_tile_xy(inner, g->n[0], g->n[1], g->group, &tx, &ty);
    ld[0] = (int32_t)(tx * g->box[0]), ld[1] = (int32_t)(ty * g->box[1]);
    /* the outer dimensions in the order g->outer (selects, not indexing by a run-time value: see above) */
    uint32_t r2 = 0, r3 = 0, r4 = 0;
    for (uint32_t j = 0; j < 3u; j++) {
        const uint32_t k = g->outer[j];
        uint32_t r = 0;
        if (k < g->rank)
            o = pm_divmod(o, k == 2u ? g->n[2] : k == 3u ? g->n[3] : g->n[4], &r);
        if (k == 2u)
            r2 = r;
        else if (k == 3u)
            r3 = r;
        else
            r4 = r;
    }
    ld[2] = (int32_t)(r2 * g->box[2]), ld[3] = (int32_t)(r3 * g->box[3]), ld[4] = (int32_t)(r4 * g->box[4]);
}

/** TRANSPOSE: a tile is Bc = box[2] slabs (indices of map dimension 2) of Ba = box[1] rows of dimension a (Bc > 1
 *  only where a is short: slabs fill the tile up to 128 lines); in shared memory line l = slab * Ba + row. The
 *  sub-tile of rows a2 * W .. a2 * W + W - 1 of slab c2 (lines (c2 * Ba / W + a2) * W ..) is stored as one W x W box
 *  at the load coordinates ld swapped in dimensions 0 and 1, offset by a2 * W in dimension 0 and c2 in dimension 2.
 *  Returns 0 for a box wholly past dst (not issued). */
TMA_HD int pm_store_coords(const pm_grid *g, const int32_t ld[5], uint32_t a2, uint32_t c2, uint32_t w, int32_t c[5]) {
    c[0] = ld[1] + (int32_t)(a2 * w), c[1] = ld[0], c[2] = ld[2] + (int32_t)c2, c[3] = ld[3], c[4] = ld[4];
    return (uint32_t)c[0] < g->lim_a && (uint32_t)c[2] < g->lim_c;
}

/** THREAD STORES (TRANSPOSE, where pm_use_tstore): instead of W x W TMA store boxes (each dst row of a box 128
 *  bytes), the block's threads store the transposed tile from the output buffer with 16-byte st.global. Chunk i of
 *  the tile (i = j * threads + tid, j = 0 .. V - 1) is chunk x of row r (map dimension 0) of slab c2 = i / (S W), S =
 *  box[1] / V chunks per dst row segment; its first tile line l = c2 box[1] + x V is its column in the transposed
 *  rows (sub-tile l / W, column l % W of line r). Within a slab:
 *  - S >= 8 (box[1] a multiple of W): x = i % S, r = (i / S) % W. Consecutive lanes write consecutive 16 bytes of
 *    one dst row (a warp 512 contiguous bytes for fp32), and each quarter-warp reads 8 consecutive chunks of one
 *    line.
 *  - S < 8 (SHORT TILES, pm_short_rows: W / box[1] slabs side by side in each line): quarter-warp u of each group
 *    of 8 rows takes rows u, u + S, u + 2 S, ... (S chunks each). Its chunks' swizzled positions in their lines are
 *    (S m + x) ^ (S j + u) = S (m ^ j) + (x ^ u) for row 8 g + u + S j: 8 distinct bank groups. A warp covers 32 / S
 *    rows of one slab: 512 contiguous bytes where dst's rows are dense (C = 4 fp32: 32 rows of 16 bytes).
 *  Each quarter-warp thus reads 8 distinct 16-byte bank groups (tests/test_permute.c checks every one). What
 *  depends only on i is computed once per thread (pm_tstore_slot), so a tile costs each chunk a compare, an add, a
 *  16-byte shared read and a 16-byte global write. */
typedef struct pm_slot {
    uint32_t soff;     /**< byte offset of the chunk in the output buffer (sub-tile l / W, line r, column l % W,
                            128B-swizzled as the transpose wrote it) */
    uint32_t r, c2, xe;/**< its row (map dimension 0), slab (map dimension 2) and first element (map dimension 1),
                            relative to the tile's load coordinates */
    uint64_t rel;      /**< its byte offset in dst relative to the tile's first element (pm_tstore_base) */
    uint32_t run_off;  /**< dspan: its byte offset in the tile's runs, slab after slab (pm_dst_run_bytes each) */
} pm_slot;

TMA_HD void pm_tstore_slot(const pm_grid *g, uint32_t i, uint32_t e, pm_slot *sl) {
    const uint32_t v = TMA_SWIZZLE_CHUNK_BYTES / e, w = TMA_SWIZZLE_SPAN_128B / e, seg = g->box[1] / v;
    const uint32_t c2 = i / (seg * w), in = i % (seg * w); /* chunk `in` of slab c2 */
    uint32_t x, r;
    if (seg >= 8u) {
        x = in % seg, r = in / seg;
    } else {
        const uint32_t grp = in / (8u * seg), u = in / 8u % seg, t = in % 8u;
        x = t % seg, r = 8u * grp + u + seg * (t / seg);
    }
    const uint32_t l = c2 * g->box[1] + x * v;
    sl->soff = l / w * w * TMA_SWIZZLE_LINE_BYTES +
               tma_swizzle_elem(TMA_SWIZZLE_128B, 0, TMA_SWIZZLE_SPAN_128B, e, r, l % w);
    sl->r = r, sl->c2 = c2, sl->xe = x * v;
    sl->rel = (uint64_t)r * g->dst_stride[0] + (uint64_t)c2 * g->dst_stride[2] +
              (uint64_t)x * TMA_SWIZZLE_CHUNK_BYTES;
    sl->run_off = g->dspan ? c2 * pm_dst_run_bytes(g, e) + r * g->lim_a * e + x * TMA_SWIZZLE_CHUNK_BYTES : 0u;
}

/** The dst byte offset of the tile's first element (load coordinates ld). */
TMA_HD uint64_t pm_tstore_base(const pm_grid *g, const int32_t ld[5], uint32_t e) {
    return (uint64_t)(uint32_t)ld[0] * g->dst_stride[0] + (uint64_t)(uint32_t)ld[1] * e +
           (uint64_t)(uint32_t)ld[2] * g->dst_stride[2] + (uint64_t)(uint32_t)ld[3] * g->dst_stride[3] +
           (uint64_t)(uint32_t)ld[4] * g->dst_stride[4];
}

/** The bytes of the slot's chunk that are dst's elements for the tile at ld: 16, fewer in a row's last chunk where
 *  the row (dimension a) ends inside it, 0 for a chunk past dst. Only those bytes are written: tma_permute writes no
 *  byte outside dst. (Whole chunks, the tail being the load's zero fill, had been 8-11% of a copy faster on rows of
 *  14 or 28 bytes, bf16 NCHW 7x7 and 14x14 with W padded: docs/lab/permute.md.) */
TMA_HD uint32_t pm_tstore_bytes(const pm_grid *g, const int32_t ld[5], const pm_slot *sl, uint32_t e) {
    if (sl->r >= g->lim_0 - (uint32_t)ld[0] || sl->c2 >= g->lim_c - (uint32_t)ld[2])
        return 0u;
    const uint32_t left = g->lim_a - (uint32_t)ld[1]; /* elements of the row from the tile's first */
    if (sl->xe >= left)
        return 0u;
    const uint32_t n = left - sl->xe;
    return n * e < TMA_SWIZZLE_CHUNK_BYTES ? n * e : TMA_SWIZZLE_CHUNK_BYTES;
}

/** Whether a TMA store into rows of `n` e-byte elements would write past them: a store writes whole 16-byte chunks
 *  in dimension 0 (docs/HARDWARE.md, store rule 7), so a row whose bytes are not a multiple of 16 ends inside a
 *  chunk the store writes whole. Such rows are stored by threads (pm_use_tstore) or by the thread kernel. */
TMA_HD int pm_row_spills(uint64_t n, uint32_t e) { return (n * e) % TMA_SWIZZLE_CHUNK_BYTES != 0u; }

/** Which transposes store with the threads: those whose dst row pitch is not a multiple of 32 bytes, for 2-, 4- and
 *  8-byte elements. Why (H200, one run of
 *  tma-permute each, docs/lab/permute.md): with such a pitch each 128-byte row of a W x W TMA store box begins and ends
 *  inside a 32-byte sector, and L2 fetched sectors from DRAM to complete them (ncu, fp32 12345 x 6789: 398 MB read
 *  for a 335 MB src, 342 MB with the threads storing 512-byte runs); thread stores took fp32 12345 x 6789 from 73.5%
 *  to 82.8% of a device-to-device copy, fp64 75.3% -> 80.1%, bf16 6789 x 12345 78.2% -> 81.2%. 1-byte elements fell
 *  (u8 6789 x 12345: 89.6% -> 58.6%; its 64-thread blocks, 16 chunks each, cannot hide the extra shared-memory pass),
 *  and where the pitch is aligned TMA boxes are as fast or faster (thread stores everywhere: bf16 8192^2 84.8%, u8
 *  59.2%, fp32 93.8%, fp64 92.0%). SHORT TILES (box_rows < W, pm_short_rows) always store with the threads: their
 *  output lines hold several slabs' rows side by side, which no TMA box describes. So do rows of dst_row elements
 *  whose bytes are not a multiple of 16 (pm_row_spills): a TMA store would write past their ends. */
TMA_HD uint32_t pm_use_tstore(uint64_t dst_pitch, uint32_t elem_bytes, uint32_t box_rows, uint64_t dst_row) {
    return elem_bytes >= 2u && (dst_pitch % 32u != 0u || box_rows < TMA_SWIZZLE_SPAN_128B / elem_bytes ||
                                pm_row_spills(dst_row, elem_bytes));
}

/** SHORT TILES (TRANSPOSE): the rows of dimension a (dst's innermost) a tile takes where a is shorter than W = 128 / e
 *  elements, e.g. NCHW -> NHWC with 4-32 channels. A tile of W-multiple rows would then be mostly zero fill (C = 16
 *  fp32: half of every tile; C = 4: seven eighths), and its W x W store boxes would write rows of a elements. A short
 *  tile takes a rounded up to R = V 2^j (a divisor of W: chunks of 16 bytes never straddle a slab) and stacks W / R
 *  slabs in each sub-tile, and its threads store it (pm_use_tstore). Returns R, or 0 for the usual tile: a > W / 2 (R
 *  would be W), 1-byte elements (their kernel has no thread stores), or a single slab (rank 2: the tile would be no
 *  fuller than the usual one). With fewer than W / R slabs the sub-tile's last ones lie past the tensor (the load fills
 *  zeros, the threads store nothing there): bf16 NCHW 7x7, W padded to 8, fills 7 of 8 slabs of 8 rows, where the usual
 *  tile filled 7 of 64 rows. Measured on an H200 (tma-permute, % of a device-to-device copy, the builds alternating in
 *  one session, 2-3 rounds), NCHW -> NHWC 32 x C x H x W: fp32 C = 4 (224^2) 13.7-14.0% with W-row tiles -> 79.7-83.8%,
 *  bf16 C = 8 (224^2) 11.9-13.1% -> 70.9-71.6%, fp32 C = 16 (224^2) 51.6-51.7% -> 87.5-89.8%, bf16 C = 32 (112^2)
 *  58.0-58.6% -> 73.8-77.8%. (With the K slabs of a row side by side in each warp's stores instead of 512 contiguous
 *  bytes, THREAD STORES below: 71.3-76.3%, 65.4-69.8%, 87.9-88.9%, 72.8-81.0%.) These tiles had 128 lines; with 256 in
 *  instances of their own, PM_TALL_TILE_LINES. */
TMA_HD uint32_t pm_short_rows(uint64_t a, uint64_t slabs, uint32_t e) {
    const uint32_t w = TMA_SWIZZLE_SPAN_128B / e;
    uint32_t r = TMA_SWIZZLE_CHUNK_BYTES / e;
    while (r < a && r < w)
        r *= 2u;
    return e >= 2u && r < w && slabs >= 2u ? r : 0u;
}

/** PACKED TILES (TRANSPOSE): the elements of src's innermost dimension (map dimension 0) a tile takes where it is
 *  at most W / 2 elements, e.g. NHWC -> NCHW with 4-32 channels. A tile W elements wide would then be mostly zero
 *  fill (C = 16 fp32: half of every line). A packed tile takes dimension 0 rounded up to C0 = V 2^j elements (16,
 *  32 or 64 bytes) and puts K = W / C0 slabs side by side in each 128-byte line: its load map lists the dimensions
 *  {0, slab, a, ...} with the box {C0, K, rows of a}, unswizzled (a swizzled box row narrower than the span would
 *  take a whole span: the smem image rule of docs/HARDWARE.md), so line l is row l of a with the K slabs' C0
 *  elements in turn. The lane map reads it without conflicts unswizzled too (the 8 lanes of a quarter-warp read
 *  the 8 chunks c = 0..7 of their lines: transpose_tiles.h) and writes the usual 128B-swizzled sub-tile, whose row
 *  x holds element x % C0 of dimension 0 of slab x / C0: a W x C0 x K TMA store box of the store map {a, 0, slab,
 *  ...}. Returns C0, or 0 for the usual tile: dimension 0 > W / 2, or fewer than K slabs (the plan also keeps the
 *  usual tile where the threads store, pm_use_tstore, or a is short too, pm_short_rows). Measured on an H200
 *  (tma-permute, % of a device-to-device copy, the builds alternating, two rounds), NHWC -> NCHW 32 x C x H x W:
 *  fp32 C = 16 (224^2) 50.8% with W-wide tiles -> 89.6-91.3%, bf16 C = 32 (112^2) 50.6-51.4% -> 93.0-93.9%; every
 *  other case of the sample within the rounds' spread. Without the L2 hints (pm_grid_dst): with them, on another
 *  machine, fp32 93.5-94.4% and bf16 81.3-82.6%. At 128 lines; with 256, PM_TALL_TILE_LINES. */
TMA_HD uint32_t pm_packed_cols(uint64_t n0, uint64_t slabs, uint32_t e) {
    const uint32_t w = TMA_SWIZZLE_SPAN_128B / e;
    uint32_t c0 = TMA_SWIZZLE_CHUNK_BYTES / e;
    while (c0 < n0 && c0 < w)
        c0 *= 2u;
    return c0 < w && slabs >= w / c0 ? c0 : 0u;
}

/** Lines (of 128 bytes) of a TRANSPOSE tile of box {cols, rows, slabs}: rows times the slabs stacked below each
 *  other, or, in a packed tile (cols < W), side by side in each line. */
TMA_HD uint32_t pm_tile_lines(uint32_t cols, uint32_t rows, uint32_t slabs, uint32_t e) {
    return cols < TMA_SWIZZLE_SPAN_128B / e ? rows : rows * slabs;
}

/** Whether a TRANSPOSE tile of box {cols, rows, slabs} fits the kernel's shared-memory layout: whole sub-tiles of
 *  W lines, at most PM_MAX_LINES; rows a multiple of W or a short tile's (pm_short_rows); cols W, or a packed
 *  tile's C0 with K = W / C0 slabs (pm_packed_cols). */
TMA_HD int pm_tile_fits(uint32_t cols, uint32_t rows, uint32_t slabs, uint32_t e, int tall) {
    const uint32_t w = TMA_SWIZZLE_SPAN_128B / e, v = TMA_SWIZZLE_CHUNK_BYTES / e;
    const uint32_t lines = pm_tile_lines(cols, rows, slabs, e);
    if (cols != w && (cols == 0u || cols % v != 0u || w % cols != 0u || slabs != w / cols || rows % w != 0u))
        return 0;
    return rows != 0u && lines != 0u && lines <= PM_MAX_LINES(e, tall) && lines % w == 0u &&
           (rows % w == 0u || (e >= 2u && w % rows == 0u && rows % v == 0u));
}

/** The load map's coordinates of the tile at ld (the kernel's order {0, a, slab, ...}): a packed tile's load map
 *  (`packed`: pm_packed) lists {0, slab, a, ...}. The kernels pass a `packed` that is false at compile time in the
 *  instances without few-channel tiles. */
TMA_HD void pm_load_order(int packed, const int32_t ld[5], int32_t mc[5]) {
    mc[0] = ld[0], mc[1] = packed ? ld[2] : ld[1], mc[2] = packed ? ld[1] : ld[2], mc[3] = ld[3], mc[4] = ld[4];
}

/** Which transposes load with an L2 evict_last policy and store with an evict_first one (the kernel instance with
 *  the hints, pm_transpose_kernel<E, true>): those of 4-byte elements, and those of 2- and 8-byte elements whose src
 *  row pitch (map dimension 1's stride) is not a multiple of 128 bytes. All measured on an H200 (tma-permute,
 *  docs/lab/permute.md (the L2 hints' entries), every comparison alternating builds in one session):
 *  - Pitches that are not multiples of 128 bytes: the tile's 128-byte box rows start at a different phase of L2's
 *    256-byte blocks in each row and most of them straddle two blocks, which the neighbouring tile shares; L2 read
 *    5-13% more from DRAM than src holds (ncu, fp32 12345 x 6789, src pitch 27,168 bytes: 378 MB for 335; padded to
 *    27,392 = 107 x 256: 340 MB). Kept longer, the shared blocks are found (364 MB, 186 us against 201), and dst,
 *    never read again, leaves first: fp32 12345 x 6789 90.4-91.4% of a device-to-device copy against 88.5-89.2%
 *    without hints and 84.3-85.0% with evict_last loads alone; fp64 92.5-92.8 against 89.6-90.3%; bf16 94.0 / 93.9
 *    against 88.0 / 84.4%.
 *  - At odd multiples of 128 bytes every box row lies inside one 256-byte block, and for bf16 the hints cost 4-5
 *    points (NCHW -> NHWC 32x256x56x56, pitch 6,272: 86-90% against 91-95%; NHWC -> NCHW 128x64x112x112, pitch 128:
 *    88-89% against 93%; 6789 x 12345, pitch 24,704: 74% against 78%).
 *  - 4-byte elements gain at aligned pitches too (three builds, two rounds: the rule without them / with them / the
 *    hinted instance with the hints off): fp32 8192^2 89.4-90.4 / 92.8-93.6 / 91.3-91.8%, 16384^2 90.2-90.6 /
 *    93.2-93.8 / 90.2-90.8%, NCHW -> NHWC 128x64x112x112 93.1-93.6 / 97.7-97.9 / 96.4-96.7%, NHWC -> NCHW
 *    128x64x112x112 86.6-88.3 / 97.0-97.5 / 94.2-94.4%; the rank-5 case {256, 128, 64, 32, 16} perm {1, 3, 0, 4, 2}
 *    loses (84.9-85.2 / 82.5-82.7 / 81.5-81.6%). So part of the gain is the hints (16384^2: all of it) and part is
 *    the hinted instance's code itself, whose executed instructions differ from the plain one's only by the hints
 *    and their guards; why its layout is worth 3-7 points is not established.
 *  - Not for 8-byte elements at aligned pitches (fp64 8192^2: 87.6-87.8% with them against 94.1-94.6%; 16384^2 88.0
 *    against 86.4%), nor for 1-byte elements (u8 6789 x 12345, pitch 12,352: 93.3% -> 85.9%, one run).
 *  The bytes moved are the same; the CPU model has no L2. */
TMA_HD uint32_t pm_src_keep(uint64_t src_pitch, uint32_t elem_bytes) {
    return elem_bytes == 4u || (elem_bytes >= 2u && src_pitch % 128u != 0u);
}

/** TRANSPOSE: whether the tiles of a plan of `rank` 3 or more stack slabs of the next dimension whose rows are partly
 *  padding (dimension a of `a` elements shorter than PM_TILE_LINES rows and not a multiple of W = 128 / e): such tiles
 *  take PM_TALL_TILE_LINES lines, twice the slabs. Their block waits at its barrier once a tile, and a tile of padded
 *  rows carries little: the issue-31 rank-5 case (fp32 {48, 40, 24, 32, 16}, perm {2, 0, 3, 1, 4}: dst rows of 24
 *  elements in 32-row slabs, src rows of 48 in boxes of 32) spent most of its stalls at the barrier (ncu: 6.8 barrier
 *  stalls per issue, 8 warps an SM, DRAM at 52% of peak). Where a's rows fill their slabs the usual tile keeps its L2
 *  hints (the tall instances have none): fp32 NCHW -> NHWC 128x64x112x112 (a = 64) fell from 96.7-97.3% to 89.8% as a
 *  tall tile. Measured (docs/lab/permute.md "Tall tiles where slabs stack"): the rank-5 case 63.4-63.9% of a
 *  device-to-device copy -> 82.8-82.9% on an H100, 47.5-47.7% -> 74.6% on an H200. */
TMA_HD int pm_stacks_slabs(uint64_t a, uint32_t e, uint32_t rank) {
    const uint32_t w = TMA_SWIZZLE_SPAN_128B / e;
    return rank >= 3u && (a + w - 1u) / w * w < PM_TILE_LINES && a % w != 0u; /* its rows, a rounded up to W */
}

/** TRANSPOSE: whether tile g runs in the TALL kernel instances (up to PM_TALL_TILE_LINES lines, 1 block an SM, no L2
 *  hints): few-channel tiles (pm_few), pm_tstore_tall's, and tiles of more than PM_TILE_LINES lines (stacked slabs,
 *  pm_stacks_slabs). */
TMA_HD int pm_tall(const pm_grid *g, uint32_t e) {
    return pm_few(g->box[0], g->box[1], e) || pm_tstore_tall(e, g->tstore, g->src_keep) ||
           pm_tile_lines(g->box[0], g->box[1], g->box[2], e) > PM_TILE_LINES;
}

/* ------------------------------------------------------------------------------------------------
 * THE THREAD KERNEL (pm_threads_kernel), for every tensor the TMA kernels cannot take exactly: a TMA map needs a
 * 16-byte aligned address and strides of 16-byte multiples, and a TMA store writes whole 16-byte chunks of a row
 * (pm_row_spills). Rows of 12,345 fp32 elements, 3-channel images read from NHWC, 7x7 feature maps and addresses at
 * any element are none of those. The kernel's dimensions are the plan's (THE PLAN, step 1): 0 is src's innermost, 1
 * dst's innermost (a transpose) or src's next one (a copy), 2.. the rest. A tile is ty indices of dimension 1 by tx
 * elements of dimension 0, at most PM_THR_TILE_ELEMS in all, staged in shared memory; the block's PM_THR_THREADS
 * threads move it element by element, so any address and stride will do and no byte outside the two tensors is read
 * or written:
 * - LOADS: the tile's elements in src order, o = y tx + x: thread i takes o = i, i + PM_THR_THREADS, ...: consecutive
 *   threads read consecutive elements of a src row, and where the tile holds whole src rows that lie back to back
 *   (3 channels of NHWC, a dense 7x7 map), one contiguous run. All of a thread's loads are issued before any is stored
 *   to shared memory.
 * - STORES: a transpose's elements in dst order, o = x ty + y, read down the tile's columns (a pitch that puts
 *   consecutive rows in distinct banks, pm_thr_pitch); a copy's, the element it loaded.
 * A small dimension is taken whole (dimension 0 up to PM_THR_WHOLE_X, dimension 1 up to PM_THR_WHOLE_Y elements), the
 * other side filling the tile: NCHW -> NHWC with 3 channels takes tiles of 682 pixels x 3, the rank-5 case of issue
 * 31 (dst rows of 24 elements, src rows of 48) 48 x 24, so no element of a tile is padding. The divisions by tx and ty
 * are a multiply-high by a reciprocal (pm_div_by).
 * - DST SPANS (dspan): where a transpose's tile holds dst's rows whole (dimension 1 taken whole) and dst's rows lie
 *   back to back (ds[0] = n[1] e: a 7x7 map of NHWC -> NCHW, 3 channels of NCHW -> NHWC), the tile's dst elements are
 *   one contiguous span of bytes. The loads then put each element at its place in the span, in a shared-memory copy
 *   of it that starts at the span's phase in global memory (pm_thr_span_at), and the span leaves as one 1-D bulk copy
 *   of its 16-byte aligned interior (`cp.async.bulk`, no thread instruction a byte), the threads storing only the
 *   elements of its two partial 16-byte chunks. Two such buffers alternate, so a span's bulk copy reads its buffer
 *   while the next tile is loaded. Taken only where the loads' shared writes, a warp's elements ty elements apart,
 *   meet few bank conflicts (pm_thr_span_ways <= PM_THR_SPAN_MAX_WAYS).
 * - DST ROW SPANS (drows): where a tile's dst rows are long but not back to back (a 2-D transpose's tile of 8 src
 *   elements by 256 dst elements), each dst row segment of the tile is a span of its own, staged at its own phase in
 *   the buffer's row x (pm_thr_row_stride apart: 16 x an odd number of bytes, so the 8 rows a warp's loads write fall
 *   in distinct banks) and stored by a bulk copy that thread x issues; the rows' partial chunks by a warp each.
 * - CHUNK TRANSPOSE (chunks, pm_chunks_kernel): a transpose long in both dimensions whose rows no map describes (T
 *   12345 x 6789, logits of 50,257) moves 16-byte chunks only, whatever the rows' phases. A tile is PM_CT_ROWS src
 *   rows by PM_CT_ROW_BYTES bytes of each. LOADS: 8 threads a row, each one aligned 16-byte chunk of global memory
 *   (the row's first chunk holds its first byte; the eighth thread also the ninth chunk where the row has a phase),
 *   each chunk shifted by the row's phase with its neighbour's (a shuffle), so the shared tile holds every row from
 *   its first element (pm_ct_word: an XOR of the word index by the row's piece keeps the reads below
 *   conflict-free). STORES: thread i takes the 4 dst rows x = 4 xq .. 4 xq + 3 and the V = 16 / e tile rows
 *   y = V k .. of one piece k (pm_ct_item): it reads V x 4 elements (64 bytes), transposes them in registers
 *   (byte permutes for 1- and 2-byte elements) into one 16-byte piece of each of its 4 dst rows, consecutive lanes
 *   holding consecutive pieces of a dst row, and stores one aligned chunk a row. Where dst's rows start on 16 bytes
 *   that chunk is the piece. Elsewhere (HALO, `halo`) a dst row's chunk boundaries fall at its own phase q inside the
 *   pieces: the tile then also loads the next tile's first V rows, and each thread stores the aligned chunk that
 *   starts in its piece, 16 - q bytes on (the piece's tail and the next piece's head, which it reads from the tile
 *   too): every chunk of a dst row belongs to the tile its first element is in, and is written whole, once; only a
 *   row's first and last chunks are written in part (the first tile of a row also stores the elements before its
 *   first chunk). A chunk of src that reaches past src's first or last byte is read byte by byte, only the bytes
 *   inside. No instruction a byte: the element kernel's 1- and 2-byte elements were bound by its instructions
 *   (docs/lab/permute.md "The thread kernel", "The chunk transpose").
 * - SRC SPANS (sspan, pm_threads_span_kernel): where a transpose's tile holds src's rows whole (dimension 0 taken
 *   whole) and they lie back to back in src (ss[1] = n[0] e: NCHW -> NHWC of 7x7 maps, NHWC -> NCHW of 3 channels),
 *   the tile's src elements are one span too. It arrives by one 1-D bulk copy of its aligned interior into a buffer
 *   at its phase (the threads load its two partial chunks), the next tile's while this one is stored, so the tile
 *   is no longer bounded by the registers of the loads: up to PM_THR_SPAN_TILE_BYTES. The threads then read it in
 *   dst order and store element by element, or, where dst spans too, write it into a dst span buffer in src order.
 * ---------------------------------------------------------------------------------------------- */

/** The thread kernel's geometry: what it receives besides the two addresses. */
typedef struct pm_thr {
    uint32_t rank;        /**< kernel dimensions, 1..5 */
    uint32_t transpose;   /**< 1: dst's innermost dimension is dimension 1; 0: a copy */
    uint32_t e;           /**< element bytes */
    uint32_t tx, ty;      /**< the tile: tx elements of dimension 0 by ty of dimension 1 */
    uint32_t mx, my;      /**< pm_div_magic of tx and ty */
    uint32_t pitch;       /**< elements between tile rows in shared memory (pm_thr_pitch) */
    uint32_t dspan;       /**< 1: DST SPANS (pm_thr_dspan); the tile's elements in dst order at the span's phase */
    uint32_t sspan;       /**< 1: SRC SPANS (pm_thr_sspan); the tile's src span arrives by a bulk copy */
    uint32_t drows;       /**< 1: DST ROW SPANS (pm_thr_drows); each dst row segment of a tile leaves by a bulk copy */
    uint32_t chunks;      /**< 1: CHUNK TRANSPOSE (pm_thr_chunks); 16-byte chunks on both sides, tiles of PM_CT_ROWS x
                               PM_CT_ROW_BYTES */
    uint32_t halo;        /**< CHUNK TRANSPOSE, 1: some dst row starts off 16 bytes: a tile also loads the next one's
                               first V rows and stores the dst chunks that start in its rows */
    uint32_t n[5];        /**< elements along each dimension (1 past the rank) */
    uint32_t tn[5];       /**< tiles along each dimension */
    uint64_t ss[5], ds[5];/**< byte strides in src and in dst (ss[0] = e; ds[1] = e for a transpose, ds[0] for a copy) */
} pm_thr;

/** The multiplier that divides by d (1..2^16) with pm_div_by: floor(2^32 / d) + 1, or 2^32 / d for a power of two;
 *  0 for d = 1. */
TMA_HD uint32_t pm_div_magic(uint32_t d) { return d > 1u ? 0xFFFFFFFFu / d + 1u : 0u; }

/** n / d for n < 2^16 and d <= 2^16, m = pm_div_magic(d): exact, since n (m - 2^32 / d) / 2^32 < 2^-16 <= the gap from
 *  n / d to the next integer. */
TMA_HD uint32_t pm_div_by(uint32_t n, uint32_t d, uint32_t m) {
#ifdef __CUDA_ARCH__
    return d > 1u ? __umulhi(n, m) : n;
#else
    return d > 1u ? (uint32_t)(((uint64_t)n * m) >> 32) : n;
#endif
}

/** Elements between a transpose tile's rows in shared memory: at least tx, with the rows' 32-bit words an odd number
 *  apart (8-byte elements: an odd number of elements), so a column read by 32 threads hits 32 distinct banks; a copy's
 *  rows are only read along. */
TMA_HD uint32_t pm_thr_pitch(uint32_t tx, uint32_t e, uint32_t transpose) {
    if (!transpose)
        return tx;
    const uint32_t step = e >= 4u ? 1u : 4u / e, unit = e >= 4u ? 2u : 8u / e; /* p e / 4 odd: p = step mod unit */
    uint32_t p = tx;
    while (p % unit != step % unit)
        p++;
    return p;
}

/** One tile: its first element along dimensions 0 and 1, how many it has of each, and the byte offsets of that
 *  element in src and dst. */
typedef struct pm_thr_tile {
    uint32_t x0, y0, nx, ny;
    uint64_t s, d;
} pm_thr_tile;

/** Tile (r0, r1) of the outer index t (the dimensions past 1, dimension 2 fastest). */
TMA_HD void pm_thr_tile_at(const pm_thr *R, uint32_t r0, uint32_t r1, uint64_t t, pm_thr_tile *T) {
    T->x0 = r0 * R->tx, T->y0 = r1 * R->ty;
    T->nx = R->n[0] - T->x0 < R->tx ? R->n[0] - T->x0 : R->tx;
    T->ny = R->n[1] - T->y0 < R->ty ? R->n[1] - T->y0 : R->ty;
    uint64_t s = (uint64_t)T->x0 * R->ss[0] + (uint64_t)T->y0 * R->ss[1];
    uint64_t d = (uint64_t)T->x0 * R->ds[0] + (uint64_t)T->y0 * R->ds[1];
    for (uint32_t k = 2; k < 5u; k++) { /* a constant trip count: unrolled, coordinates in registers */
        uint32_t r = 0;
        if (k < R->rank)
            t = pm_divmod(t, R->tn[k], &r);
        s += (uint64_t)r * R->ss[k], d += (uint64_t)r * R->ds[k];
    }
    T->s = s, T->d = d;
}

/** Tile t (dimension 0 fastest, then 1, then the rest). */
TMA_HD void pm_thr_tile_of(const pm_thr *R, uint64_t t, pm_thr_tile *T) {
    uint32_t r0, r1;
    t = pm_divmod(t, R->tn[0], &r0);
    t = pm_divmod(t, R->tn[1], &r1);
    pm_thr_tile_at(R, r0, r1, t, T);
}

/** The thread kernel's t-th tile in its walk, as coordinates: bands of `group` tile columns down the tile rows
 *  (tr_tile_xy), each outer index (the dimensions past 1) in turn; 0 = row-major. */
TMA_HD void pm_thr_walk_xy(const pm_thr *R, uint64_t t, uint32_t group, uint32_t *tx, uint32_t *ty, uint64_t *outer) {
    uint32_t inner = (uint32_t)t;
    *outer = R->rank > 2u ? pm_divmod(t, R->tn[0] * R->tn[1], &inner) : 0u;
    tr_tile_xy(inner, R->tn[0], R->tn[1], group, tx, ty);
}

/** The walk's t-th tile as the index pm_thr_tile_of takes: the form the tests check the walk by (a permutation of the
 *  tiles; pm_thr_walk_tile equal to it); the kernels and the model call pm_thr_walk_tile. */
TMA_HD uint64_t pm_thr_walk(const pm_thr *R, uint64_t t, uint32_t group) {
    if (!group)
        return t;
    uint32_t tx, ty;
    uint64_t outer;
    pm_thr_walk_xy(R, t, group, &tx, &ty, &outer);
    return tx + (uint64_t)R->tn[0] * (ty + (uint64_t)R->tn[1] * outer);
}

/** The walk's t-th tile, pm_thr_tile_of(R, pm_thr_walk(R, t, group)), without composing that index to divide it
 *  again: a kernel's tiles took five 32-bit divisions each that way, two this way where the rank is 2
 *  (tests/test_permute.c holds the two equal). */
TMA_HD void pm_thr_walk_tile(const pm_thr *R, uint64_t t, uint32_t group, pm_thr_tile *T) {
    if (!group) {
        pm_thr_tile_of(R, t, T);
        return;
    }
    uint32_t tx, ty;
    uint64_t outer;
    pm_thr_walk_xy(R, t, group, &tx, &ty, &outer);
    pm_thr_tile_at(R, tx, ty, outer, T);
}

/** The chunk transpose's band width for pm_thr_walk: PM_CT_GROUP tile columns with the halo (pm_thr.halo), row-major
 *  without it (tuning_sm90.h says why). */
TMA_HD uint32_t pm_ct_group(uint32_t halo) { return halo ? PM_CT_GROUP : 0u; }

/** Thread i's element of pass k of the loads: (x, y) of element o = i + k PM_THR_THREADS in src order. */
TMA_HD void pm_thr_load_xy(const pm_thr *R, uint32_t i, uint32_t k, uint32_t *x, uint32_t *y) {
    const uint32_t o = i + k * PM_THR_THREADS;
    *y = pm_div_by(o, R->tx, R->mx), *x = o - *y * R->tx;
}

/** Thread i's element of pass k of the stores: a transpose's element o in dst order (x = o / ty); a copy's, the one it
 *  loaded. */
TMA_HD void pm_thr_store_xy(const pm_thr *R, uint32_t i, uint32_t k, uint32_t *x, uint32_t *y) {
    if (R->transpose) {
        const uint32_t o = i + k * PM_THR_THREADS;
        *x = pm_div_by(o, R->ty, R->my), *y = o - *x * R->ty;
    } else {
        pm_thr_load_xy(R, i, k, x, y);
    }
}

/** Whether the tile's sides are powers of two up to PM_THR_THREADS (the kernel's instances without divisions: a
 *  thread's elements are then a column of the tile, a fixed step apart). */
TMA_HD int pm_thr_pow2(const pm_thr *R) {
    return R->tx <= PM_THR_THREADS && R->ty <= PM_THR_THREADS && (R->tx & (R->tx - 1u)) == 0u &&
           (R->ty & (R->ty - 1u)) == 0u;
}

/** DST SPANS: bytes between the two span buffers (a tile's elements, 16 bytes of phase before them, rounded up to 16),
 *  and the shared-memory byte of element (x, y) in the buffer of a span at phase `phase` (its first byte's address
 *  mod 16): the buffer's byte and the span's global byte are equal mod 16, so the span's aligned interior is aligned
 *  in both. */
TMA_HD uint32_t pm_thr_row_stride(const pm_thr *R) { return ((R->ty * R->e + 30u) / 16u | 1u) * 16u; }
TMA_HD uint32_t pm_thr_span_stride(const pm_thr *R) {
    return R->drows ? R->tx * pm_thr_row_stride(R) : (R->tx * R->ty * R->e + 31u) / 16u * 16u;
}
TMA_HD uint32_t pm_thr_span_at(const pm_thr *R, uint32_t phase, uint32_t x, uint32_t y) {
    return phase + (x * R->ty + y) * R->e;
}

/** CHUNK TRANSPOSE: the tile, PM_CT_ROWS src rows of PM_CT_ROW_BYTES (32 words, one bank each), 16 KiB: with the
 *  block's 256 threads, 4 chunks a thread on the way in, one item (64 bytes) on the way out. */
#define PM_CT_ROWS 128u
#define PM_CT_ROW_BYTES 128u
#define PM_CT_LOADS_PER_THREAD (PM_CT_ROWS * PM_CT_ROW_BYTES / 16u / PM_THR_THREADS)

/** Elements of one 16-byte piece: the tile rows an item reads. */
TMA_HD uint32_t pm_ct_v(uint32_t e) { return 16u / e; }
/** Pieces along one dst row of a tile (its PM_CT_ROWS elements), and the lanes a group of them takes (one piece a
 *  lane; 8-byte elements: two groups a dst row). */
TMA_HD uint32_t pm_ct_pieces(uint32_t e) { return PM_CT_ROWS * e / 16u; }
TMA_HD uint32_t pm_ct_lanes(uint32_t e) { return pm_ct_pieces(e) < 32u ? pm_ct_pieces(e) : 32u; }

/** The shared-memory word of tile row y's word w (0..31): the row's 32 words with w XOR'd by a function of the row's
 *  piece k = y / V, so that the reads of one instruction (lanes of consecutive pieces, each V rows apart, reading the
 *  same 4-element column: 1, 2, 4 or 8 words) fall in distinct banks. The XOR keeps a 16-byte chunk whole (a multiple
 *  of 4 words) but for 2-byte elements, whose 16 lanes each read 2 words of one column: there it swaps a chunk's
 *  halves on odd pieces (pm_ct_item, test_permute.c "chunk transpose reads and writes are conflict-free"). */
TMA_HD uint32_t pm_ct_word(uint32_t e, uint32_t y, uint32_t w) {
    const uint32_t k = y / pm_ct_v(e);
    return y * 32u + (w ^ (e == 2u ? 2u * (k % 16u) : 4u * (k % 8u)));
}

/** Thread i's item: the 4-element column quad xq (dst rows 4 xq .. 4 xq + 3 of the tile) and the piece k (tile rows
 *  V k .. V k + V - 1); a group's lanes hold consecutive pieces. */
TMA_HD void pm_ct_item(uint32_t e, uint32_t i, uint32_t *xq, uint32_t *k) {
    const uint32_t gl = pm_ct_lanes(e), per = pm_ct_pieces(e) / gl, g = i / gl;
    *xq = g / per, *k = (g % per) * gl + i % gl;
}

/** Bytes from src's first element to one past its last: no chunk is read whole that reaches outside. */
TMA_HD uint64_t pm_thr_extent(const pm_thr *R) {
    uint64_t b = R->e;
    for (uint32_t k = 0; k < 5u; k++)
        b += (uint64_t)(R->n[k] - 1u) * R->ss[k];
    return b;
}

/** Shared memory of a tile, bytes: two span buffers for each side that spans (SRC SPANS, DST SPANS), else the tile. */
TMA_HD size_t pm_thr_smem(const pm_thr *R) {
    if (R->chunks)
        return (size_t)(PM_CT_ROWS + (R->halo ? 16u / R->e : 0u)) * PM_CT_ROW_BYTES;
    const uint32_t spans = 2u * (R->sspan + R->dspan + R->drows);
    return spans ? spans * (size_t)pm_thr_span_stride(R) : (size_t)R->ty * R->pitch * R->e;
}

/** The most any thread-kernel plan of e-byte elements takes: tx ty <= PM_THR_TILE_ELEMS, the pitch at most
 *  8 / e - 1 elements (1 for 8-byte ones) past a row of at least one element; two dst span buffers of such a tile; or
 *  four span buffers of PM_THR_SPAN_TILE_BYTES. */
TMA_HD size_t pm_thr_smem_bound(uint32_t e) {
    const size_t tile = (size_t)PM_THR_TILE_ELEMS * (e >= 4u ? 2u : 8u / e) * e;
    /* dst spans of a tile, or of its rows: at most 32 rows (rows of PM_THR_ROW_SPAN_MIN bytes or more), each's stride
     * at most 46 bytes past it */
    const size_t dspans = 2u * ((size_t)PM_THR_TILE_ELEMS * e + 46u * 32u + 32u);
    const size_t spans = 4u * ((PM_THR_SPAN_TILE_BYTES + 31u) / 16u * 16u);
    const size_t most = tile > dspans ? tile : dspans;
    return most > spans ? most : spans;
}

/** Passes a thread makes over a tile: tx ty / PM_THR_THREADS rounded up (at most PM_THR_TILE_ELEMS / PM_THR_THREADS). */
TMA_HD uint32_t pm_thr_passes(const pm_thr *R) {
    return (R->tx * R->ty + PM_THR_THREADS - 1u) / PM_THR_THREADS;
}

/** Everything the plan decides without a GPU: the kernel's maps and grid. */
typedef struct pm_layout {
    uint32_t transpose;      /**< 0: COPY, 1: TRANSPOSE */
    uint32_t threads;        /**< 1: THE THREAD KERNEL (thr), 0: the TMA kernels (ld, st, grid) */
    pm_thr thr;              /**< the thread kernel's geometry */
    uint32_t elem_bytes;
    tma_tiled_desc ld, st;   /**< load (src) and store (dst) descriptors, dimensions in the same order */
    pm_grid grid;
    uint64_t tiles;          /**< tiles in all */
    uint32_t src_dim[5];     /**< the lowest src dimension merged into each map dimension */
    uint32_t merged[5];      /**< bit j: src dimension j is merged into this map dimension */
    uint32_t src_rank;       /**< the description's rank */
    uint64_t src_stride[5];  /**< bytes between consecutive indices of src dimension j in src (0 resolved) ... */
    uint64_t dst_stride[5];  /**< ... and in dst (pm_strides_of) */
    uint32_t dst_phase;      /**< dst's address % 16 */
} pm_layout;

#ifdef __cplusplus
extern "C" {
#endif

/** Check a permute description and plan it (the argument rules, the strides resolved once, the merging, both
 *  descriptors checked once through the rules, the map named in diag). @return TMA_OK or the first refusal's status,
 *  with diag filled */
tma_status pm_plan(const tma_permute_desc *d, pm_layout *L, tma_diag *diag);

/** The strides of each src dimension j (0 = dense resolved): src_stride[j] in src, dst_stride[j] in dst (the stride
 *  of the dst dimension that is src dimension j); 0 past the rank. */
void pm_strides_of(const tma_permute_desc *d, uint64_t src_stride[5], uint64_t dst_stride[5]);

/** TRANSPOSE: fill g->dst_stride (dst's byte stride of each map dimension: that of the lowest src dimension
 *  L->src_dim[k] merged into map dimension k), g->dst_any (dst no TMA map: L->dst_phase or a stride not of 16 bytes),
 *  g->tstore (pm_use_tstore of map dimension 0's dst stride, or dst_any), g->outer and g->src_keep (pm_src_keep of map
 *  dimension 1's src stride), for the box in g. */
void pm_grid_dst(const pm_layout *L, pm_grid *g);

/** SPANS: which access pm_thr_span_ways counts: the loads' writes into a dst span or into dst row spans (src order),
 *  or the reads of a src span in dst order. */
enum pm_span_access { PM_WRITES_DST_SPAN, PM_WRITES_DST_ROWS, PM_READS_SRC_SPAN };
/** SPANS: the most 4-byte words of one bank that a warp touches in one pass over the tile R (1: no conflict), spans
 *  at phase 0, over every pass (each kind of pass counted once: permute_plan.c). */
uint32_t pm_thr_span_ways(const pm_thr *R, enum pm_span_access how);

#ifdef __cplusplus
}
#endif

#endif /* KERNELS_PERMUTE_TILES_H */
