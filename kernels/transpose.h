/* Transpose through shared memory: the classic kernels and the libtma one (kernels/transpose.cu), the
 * conflict-free lane map they share with the CPU model pipeline (kernels/transpose_model.c), and C-linkage
 * launchers for the sample and the tests.
 *
 * Layout everywhere: the input is rows x cols elements, row-major, in_pitch bytes between rows; the output
 * is cols x rows, out_pitch bytes between rows. Pitches are multiples of 16 bytes (TMA's rule for global
 * strides); a TMA store writes whole 16-byte chunks in dimension 0, so it may write up to 15 bytes of
 * each output row's padding - never past out_pitch.
 *
 * THE LANE MAP. A 128B-swizzled box row is one 128-byte line of eight 16-byte chunks; the copy engine
 * stores logical chunk c of line r at physical chunk c ^ (r % 8) (for a 1024-byte aligned tile). A sub-tile
 * of 8 x 8 chunks holds 8V x 8V elements, V = 16 / elem_bytes elements per chunk (fp32: 32 x 32, bf16:
 * 64 x 64), i.e. 64 blocks of V x V elements: block (k, c) = rows kV..kV+V-1, chunk c. One thread takes
 * one block: V 16-byte reads (line kV+i, chunk c), a V x V transpose in registers, V 16-byte writes into
 * the output sub-tile (line cV+j, chunk k). A 16-byte shared access is served a quarter-warp (8 lanes) at
 * a time, and the 8 lanes are conflict-free iff they hit 8 distinct physical chunks (chunk p = banks
 * 4p..4p+3). Lane index lb (0..63) takes
 *
 *     c = lb % 8,   k = (lb % 8) ^ (lb / 8)          (tr_lane_block)
 *
 * Proof, quarter-warp s = lb / 8 fixed, t = lb % 8 running over 0..7:
 *   read i:  physical chunk = c ^ ((kV + i) % 8).
 *            fp32 (V = 4): t ^ 4((t ^ s) & 1) ^ i. For fixed s this is t XOR a function of t & 1 with
 *            values in {0, 4}; it flips bit 2 only, so it keeps t & 3 and maps {t, t ^ 4} onto itself
 *            bijectively -> 8 distinct chunks.
 *            bf16 (V = 8): (8k + i) % 8 = i, so the chunk is t ^ i -> distinct.
 *   write j: physical chunk = k ^ ((cV + j) % 8) = t ^ s ^ (fp32: 4(t & 1) ^ j; bf16: j) -> distinct the
 *            same way.
 *   And (k, c) = (t ^ s, t) runs over all 64 blocks exactly once as (s, t) does.
 * tests/test_transpose.c checks this with the swizzle helper for every instruction and every 1024-aligned
 * tile placement, and shows the row-major map (k = lb / 8, c = lb % 8) is not conflict-free. */
#ifndef TMA_KERNELS_TRANSPOSE_H
#define TMA_KERNELS_TRANSPOSE_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "tma/tensor.h"
#include "tma/tma.h"

#if defined(__CUDACC__)
#define TR_HD static __host__ __device__ __forceinline__
#else
#define TR_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Block (k = row group, c = chunk) of a sub-tile that lane index lb (0..63) handles; see THE LANE MAP. */
TR_HD void tr_lane_block(uint32_t lb, uint32_t *k, uint32_t *c) {
    *c = lb % 8u;
    *k = (lb % 8u) ^ (lb / 8u);
}

/** Tile order of the libtma kernel: tiles are taken in bands of `group` tile columns (the last band may
 *  be narrower), row by row inside a band, so the blocks in flight read `group` neighbouring 128-byte
 *  segments of each input row and write a run of group * box_rows elements of each output row.
 *  group >= tiles_x is plain row-major order. */
TR_HD void tr_tile_xy(uint32_t t, uint32_t tiles_x, uint32_t tiles_y, uint32_t group, uint32_t *tx, uint32_t *ty) {
    uint32_t band = t / (group * tiles_y), idx = t - band * group * tiles_y;
    uint32_t w = tiles_x - band * group < group ? tiles_x - band * group : group;
    *ty = idx / w;
    *tx = band * group + idx % w;
}

typedef enum tr_variant {
    TR_NAIVE = 0,   /* 32x32 smem tile, 32x8 threads, column reads with bank conflicts */
    TR_PADDED,      /* the same with a 33-element row pitch */
    TR_SWIZZLED,    /* the same with tile[r][c ^ r] */
    TR_TMA,         /* libtma: 128B-swizzled TMA boxes of 128 rows, 4-stage ring, TMA stores */
    TR_TMA_B64,     /* libtma: the same with 64-row boxes, 4 stages, 3 output buffers */
    TR_TMA_WIDE,    /* libtma: as TR_TMA, but the transposed tile is one unswizzled (128 / elem) x 128
                       output box (rows of 128 * elem bytes), stored by one TMA store */
    TR_VARIANT_COUNT
} tr_variant;

/** Short name of a variant ("naive", "padded", "xor-swizzled", "libtma", "libtma-b64", "libtma-wide"). */
const char *tr_variant_name(tr_variant v);

/** Everything a launch needs, prepared once (tensor maps encoded, grid sized) so timing sees the kernel only. */
typedef struct tr_plan {
    tma_tensor tin, tout;     /* TMA variants only */
    tr_variant variant;
    uint32_t elem_bytes;      /* 4 or 2 */
    uint32_t rows, cols;      /* of the input */
    size_t in_pitch, out_pitch;
    const void *in;
    void *out;
    uint32_t box_rows;        /* TMA variants: input box rows */
    uint32_t tiles_x, tiles_y;
    uint32_t group;           /* TMA variants: tile order (tr_tile_xy) */
    tma_l2_promotion l2;      /* TMA variants: L2 promotion of both maps */
    dim3 grid, block;
    size_t smem;              /* dynamic shared memory per block */
} tr_plan;

/** Prepare a launch. On failure returns a CUDA error or cudaErrorInvalidValue with `err` saying why
 *  (a libtma descriptor diagnostic for the TMA variants). */
cudaError_t tr_plan_make(tr_plan *p, tr_variant v, uint32_t elem_bytes, const void *in, void *out, uint32_t rows,
                         uint32_t cols, size_t in_pitch, size_t out_pitch, char *err, size_t errlen);

/** TMA variants: change the tile order (group = 0: row-major) and the maps' L2 promotion (re-encodes). */
cudaError_t tr_plan_tune(tr_plan *p, uint32_t group, tma_l2_promotion l2, char *err, size_t errlen);

/** Launch (asynchronously, on `stream`); returns the launch's error (cudaGetLastError). */
cudaError_t tr_plan_run(const tr_plan *p, cudaStream_t stream);

/* ------------------------------------------------------------------------------------------------
 * The same tile pipeline on the CPU model of the copy engine (kernels/transpose_model.c; no GPU).
 * ---------------------------------------------------------------------------------------------- */

/** Per-tile facts of the pipeline: the two descriptors and what one copy delivers and occupies. */
typedef struct tr_tile_facts {
    tma_tiled_desc din, dout;
    size_t in_tx_bytes, in_smem_bytes, out_tx_bytes, out_smem_bytes;
    uint32_t tiles, stores;
} tr_tile_facts;

/** Input box width in elements: one 128-byte swizzle span. */
TR_HD uint32_t tr_box_cols(uint32_t elem_bytes) { return 128u / elem_bytes; }

/** Transpose with the libtma tile pipeline on the CPU model: tma_model_load_tiled of each box_rows x
 *  (128 / elem) box into a 1024-aligned buffer, reads and writes addressed by tma_swizzle_elem with the
 *  lane map, tma_model_store_tiled of each transposed (128 / elem)^2 box. in/out are host memory.
 *  box_rows: a multiple of 128 / elem, at most 256. facts: optional.
 *  @return TMA_OK or the first libtma status (with err filled) */
tma_status tr_model_transpose(uint32_t elem_bytes, const void *in, void *out, uint32_t rows, uint32_t cols,
                              size_t in_pitch, size_t out_pitch, uint32_t box_rows, tr_tile_facts *facts, char *err,
                              size_t errlen);

/** Reference: plain element-by-element transpose (bit copies). */
void tr_reference(uint32_t elem_bytes, const void *in, void *out, uint32_t rows, uint32_t cols, size_t in_pitch,
                  size_t out_pitch);

/** Compare an out_rows x out_cols output `got` with `want` element by element, bitwise (padding ignored). Returns the number of mismatches; the first is described in `where`. */
size_t tr_compare(uint32_t elem_bytes, const void *got, const void *want, uint32_t out_rows, uint32_t out_cols,
                  size_t out_pitch, char *where, size_t wherelen);

#ifdef __cplusplus
}
#endif

#endif /* TMA_KERNELS_TRANSPOSE_H */
