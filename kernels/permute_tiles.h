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

/** Bytes of shared memory one COPY box aims at (a plain TMA copy with 256 x 32 fp32 boxes reached 94.7% of a
 *  device-to-device copy, docs/HARDWARE.md). */
#define PM_COPY_BOX_BYTES 32768u
/** Load stages of the COPY kernel (each box is loaded into a stage and stored from it). */
#define PM_COPY_STAGES 4u
/** Input stages and output buffers of the TRANSPOSE kernel (those of tma_transpose, docs/TRANSPOSE.md). */
#define PM_TR_STAGES 4u
#define PM_TR_OUT_BUFFERS 3u
/** Lines (of 128 bytes) of a TRANSPOSE tile: box rows of dimension a times stacked slabs; 64 threads per W lines. */
#ifndef PM_TILE_LINES
#define PM_TILE_LINES 128u
#endif
/** Default tile order of the TRANSPOSE kernel: bands of this many tile columns (tma_transpose's default). */
#define PM_DEFAULT_GROUP 8u

/** How tile t maps to coordinates: what the kernel receives besides the two maps. */
typedef struct pm_grid {
    uint32_t n[5];     /**< tiles along each map dimension (TRANSPOSE: n[0] along src dim 0, n[1] along a) */
    uint32_t box[5];   /**< the load box (TRANSPOSE: {W, Ba, Bc, 1, 1}, see pm_store_coords) */
    uint32_t rank;     /**< of both maps */
    uint32_t group;    /**< TRANSPOSE: bands of `group` tile columns (tr_tile_xy) */
    uint32_t lim_a;    /**< TRANSPOSE: size of map dimension 1 (dst's innermost) */
    uint32_t lim_c;    /**< TRANSPOSE: size of map dimension 2 (1 for rank 2) */
} pm_grid;

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

/** TRANSPOSE: the load coordinates of tile t. Tiles are taken slab by slab over the outer dimensions, banded
 *  inside a slab. */
TMA_HD void pm_transpose_coords(const pm_grid *g, uint64_t t, int32_t ld[5]) {
    uint32_t inner, tx, ty;
    uint64_t o = pm_divmod(t, g->n[0] * g->n[1], &inner); /* n[0] * n[1] < 2^31 (pm_plan) */
    tr_tile_xy(inner, g->n[0], g->n[1], g->group, &tx, &ty);
    ld[0] = (int32_t)(tx * g->box[0]), ld[1] = (int32_t)(ty * g->box[1]);
    for (uint32_t k = 2; k < 5u; k++) {
        uint32_t r = 0;
        if (k < g->rank)
            o = pm_divmod(o, g->n[k], &r);
        ld[k] = (int32_t)(r * g->box[k]);
    }
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

/** Everything the plan decides without a GPU: the kernel's maps and grid. */
typedef struct pm_layout {
    uint32_t transpose;      /**< 0: COPY, 1: TRANSPOSE */
    uint32_t elem_bytes;
    tma_tiled_desc ld, st;   /**< load (src) and store (dst) descriptors, dimensions in the same order */
    pm_grid grid;
    uint64_t tiles;          /**< tiles in all */
    uint32_t src_dim[5];     /**< the lowest src dimension merged into each map dimension */
    uint32_t merged[5];      /**< bit j: src dimension j is merged into this map dimension */
} pm_layout;

#ifdef __cplusplus
extern "C" {
#endif

/** Check a permute description and plan it (the argument rules, the merging, both descriptors checked by
 *  tma_check_tiled, the map named in diag). @return TMA_OK or the first refusal's status, with diag filled */
tma_status pm_plan(const tma_permute_desc *d, pm_layout *L, tma_diag *diag);

#ifdef __cplusplus
}
#endif

#endif /* KERNELS_PERMUTE_TILES_H */
