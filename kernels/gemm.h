/* libtma GEMM sample (issue 5): C = A * B^T, A (M x K) and B (N x K) row-major (K-major) bf16, fp32
 * accumulation, C (M x N) row-major bf16 or fp32. C linkage: C programs and the Criterion tests call it
 * directly.
 *
 * Kernel (kernels/gemm.cu): TMA 128B-swizzled loads (boxes of 64 K-elements x 128 rows of A, x 256 rows of
 * B) into a 4-stage ring of full/empty mbarriers; a producer warpgroup (setmaxnreg down, one thread issues)
 * and two consumer warpgroups (setmaxnreg up) issuing wgmma.mma_async m64n256k16 with descriptors built by
 * tma_wgmma_desc_box from the same box facts as the copies; the epilogue converts to C's type (bf16 or
 * fp32), writes 64-row x 128-byte swizzled boxes to shared memory and TMA-stores them while the consumers go
 * on to the next tile (or, where TMA cannot describe C, stores from registers); a persistent grid (one
 * block per SM) walks the tiles in groups of TMA_GEMM_GROUP_M tile rows (tma_gemm_tile_of) for L2 reuse;
 * where each block has more than one tile, in clusters of two blocks on vertically adjacent tiles that
 * load the shared B tile once, multicast (tma_gemm_plan.cluster). Any M, N >= 0; any K >= 0 that is a
 * multiple of 8 (TMA's 16-byte row stride rule); ragged edges come from TMA's zero fill on loads and its
 * clipping on stores. */
#ifndef TMA_KERNELS_GEMM_H
#define TMA_KERNELS_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "tma/swizzle.h" /* TMA_HD */
#include "tma/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TMA_GEMM_BM 128u     /* output tile rows (two consumer warpgroups of 64) */
#define TMA_GEMM_BN 256u     /* output tile columns (one m64n256 wgmma per warpgroup and K step) */
#define TMA_GEMM_BK 64u      /* K elements per stage: one 128-byte swizzle span of bf16 */
#define TMA_GEMM_STAGES 4u
#define TMA_GEMM_EPI_ROWS 64u       /* the epilogue's C boxes: 64 rows (one consumer warpgroup's) */
#define TMA_GEMM_EPI_ROW_BYTES 128u /* ... of 128 bytes, one 128B swizzle span: 64 bf16 or 32 fp32 */
#define TMA_GEMM_EPI_SWIZZLE TMA_SWIZZLE_128B
#define TMA_GEMM_GROUP_M 16u /* tile rows per rasterization group */

/** Tile scheduler: the t-th tile in launch order -> tile coordinates (tm, tn) of a tiles_m x tiles_n grid.
 *  Tiles go column by column inside groups of `group` tile rows, so the blocks running at one time share
 *  A rows and B rows in L2. A bijection for any shape and group >= 1 (tests/test_wgmma.c). */
TMA_HD void tma_gemm_tile_of(uint32_t t, uint32_t tiles_m, uint32_t tiles_n, uint32_t group, uint32_t *tm,
                             uint32_t *tn) {
    uint32_t per_group = group * tiles_n;
    uint32_t g = t / per_group, first = g * group;
    uint32_t rows = tiles_m - first < group ? tiles_m - first : group;
    uint32_t local = t - g * per_group;
    *tm = first + local % rows;
    *tn = local / rows;
}


/** How the epilogue writes C. */
enum {
    /* Each consumer warpgroup writes its 64 x 256 fp32 accumulators, converted to C's type, into 64-row x
     * 128-byte boxes of shared memory, alternating between two (128B swizzle: conflict-free), and one of its
     * threads TMA-stores each box; the stores run while the warpgroup starts the next tile. Needs C's row
     * pitch (N * element size) and address to be multiples of 16 (TMA's rules). */
    TMA_GEMM_EPILOGUE_TMA_STORE = 0,
    /* Each thread stores its accumulators to global memory (pairs where aligned, clipped to M x N): any N. */
    TMA_GEMM_EPILOGUE_DIRECT = 1,
};

/** C's element type (A and B are bf16; the accumulation is fp32 either way). */
typedef enum tma_gemm_out {
    TMA_GEMM_OUT_BF16 = 0, /* rounded to nearest even */
    TMA_GEMM_OUT_F32 = 1,  /* the fp32 accumulators as they are */
} tma_gemm_out;

/** Byte offset of element (row, col) of an epilogue box of elem_bytes-sized elements from the box's
 *  1024-byte aligned start: where the kernel writes it, and (by the swizzle rule) where the TMA store of
 *  C's map reads it. */
TMA_HD uint32_t tma_gemm_epi_offset(uint32_t row, uint32_t col, uint32_t elem_bytes) {
    return tma_swizzle_elem(TMA_GEMM_EPI_SWIZZLE, 0, TMA_GEMM_EPI_ROW_BYTES, elem_bytes, row, col);
}

/** The epilogue writes each accumulator pair (row, col), (row, col + 1) to its box with 4-byte shared stores:
 *  bf16, one store of the pair at col; fp32, two stores, the s-th (s = 0, 1) of element
 *  tma_gemm_epi_store_col(s, row, col). Odd rows write their second element first: a warp's store (8 rows,
 *  row % 8 all different, x 4 lanes) then hits 32 different banks. One 8-byte store per fp32 pair would
 *  conflict 2-way: rows r and r ^ 1 cover the same 16-byte chunks of the swizzled 128-byte lines. */
TMA_HD uint32_t tma_gemm_epi_store_col(uint32_t s, uint32_t row, uint32_t col) { return col + (s ^ (row & 1u)); }

/** Everything one launch needs, prepared once (tensor maps encoded, kernel attributes set). */
typedef struct tma_gemm_plan {
    tma_tensor a;      /* the TMA map of A (boxes of 64 K x 128 rows), with its box facts */
    tma_tensor b;      /* B, boxes of 64 K x 256 rows: one per stage (cluster == 1) */
    tma_tensor b_half; /* B, boxes of 64 K x 128 rows: each block of a pair multicasts one (cluster == 2) */
    tma_tensor c_map;  /* C, boxes of 64 rows x 128 bytes, 128B swizzle: the epilogue's TMA stores */
    void *c;
    tma_gemm_out out;  /* C's element type */
    int m, n, k;
    int cluster;       /* 1: no clusters. 2: pairs of blocks on vertically adjacent tiles share B through TMA
                          multicast. tma_gemm_plan_make picks 2 where every block gets more than one tile
                          (measured faster or equal there, docs/GEMM.md), else 1. May be changed. */
    int group_m;       /* tile rows per rasterization group (default TMA_GEMM_GROUP_M); may be changed */
    int sms;           /* multiprocessors of the device */
    int grid_blocks;   /* 0 (default): as many blocks as can be co-resident (cudaOccupancyMaxActiveClusters with
                          clusters); otherwise this many (rounded down to whole clusters, at least one) */
    int epilogue;      /* TMA_GEMM_EPILOGUE_TMA_STORE (default where TMA can describe C: N * element size and
                          C's address multiples of 16) or TMA_GEMM_EPILOGUE_DIRECT (otherwise); DIRECT may be
                          chosen */
    int diag_no_store; /* diagnostic, for timing only: 1 skips the epilogue's stores (C is not written) */
    size_t smem;       /* dynamic shared memory per block */
} tma_gemm_plan;

/** Prepare C = A * B^T for device pointers A (M x K), B (N x K) bf16, C (M x N) of type `out`, all row-major,
 *  A and B 16-byte aligned, C aligned to its element, K % 8 == 0. @return cudaSuccess; cudaErrorInvalidValue
 *  for a shape or pointer the kernel cannot take (the reason goes to stderr); or the CUDA error of a setup
 *  call. */
cudaError_t tma_gemm_plan_make_out(tma_gemm_plan *p, const void *a, const void *b, void *c, tma_gemm_out out, int m,
                                   int n, int k);

/** tma_gemm_plan_make_out with bf16 C. */
cudaError_t tma_gemm_plan_make(tma_gemm_plan *p, const void *a, const void *b, void *c, int m, int n, int k);

/** Blocks tma_gemm_run launches for the plan as it stands (persistent grid; 0 when nothing is launched). */
int tma_gemm_grid(const tma_gemm_plan *p);

/** Launch a prepared plan on `stream` (asynchronous). @return the launch error; cudaErrorInvalidValue for
 *  a plan whose fields were changed to something it cannot run (the reason goes to stderr). */
cudaError_t tma_gemm_run(const tma_gemm_plan *p, cudaStream_t stream);

/** plan + run + synchronize: the one-call form. @return the first error. */
cudaError_t tma_gemm_bf16(const void *a, const void *b, void *c, int m, int n, int k);

/** Fill n bf16 values at p with uniform values in [-1, 1) from `seed` (for tests and the sample). */
cudaError_t tma_gemm_fill_random_bf16(void *p, size_t n, uint64_t seed, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* TMA_KERNELS_GEMM_H */
