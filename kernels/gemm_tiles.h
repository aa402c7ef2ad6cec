/* Private to libtma_kernels (and its tests): the GEMM's tile scheduler and epilogue box addressing, shared by
 * the kernel (gemm.cu) and the tests that prove them on the CPU. Not installed. */
#ifndef KERNELS_GEMM_TILES_H
#define KERNELS_GEMM_TILES_H

#include <stdint.h>

#include "tma/hd.h"
#include "tma/swizzle.h"

#define GM_EPI_ROWS 64u          /* the epilogue's C boxes: 64 rows (one consumer warpgroup's) */
#define GM_EPI_ROW_BYTES 128u    /* ... of 128 bytes, one 128B swizzle span: 64 bf16 or 32 fp32 */
#define GM_EPI_SWIZZLE TMA_SWIZZLE_128B

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

#endif /* KERNELS_GEMM_TILES_H */
