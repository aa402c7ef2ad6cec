/* Private to libtma_kernels (and its tests): where the convolution's copies go, shared by the kernel (conv.cu), the
 * CPU-model pipeline and the plan (conv_plan.c). Not installed.
 *
 * The implicit GEMM: row m of A is output pixel (n, p, q) = m in N x P x Q order, which is also y's row; column
 * (r, s, c) of A is input pixel (p * stride_h - pad_h + r * dil_h, q * stride_w - pad_w + s * dil_w) channel c.
 * One stage of a tile = one filter tap (r, s) and one block of CONV_BK channels:
 *  - A: one im2col load of CONV_BM pixels x CONV_BK channels (CONV_FM_PIXELS in a filter-major tile, where the two
 *    operands change places). Its start is the tile's first output pixel, written
 *    as the walked coordinate (w, h, n) = (q * stride_w - pad_w, p * stride_h - pad_h, n); the map's bounding box
 *    [-pad, dim + pad - dil (R - 1) - 1] and traversal strides (the element strides) make the walk visit exactly
 *    the output pixels in order, carrying from q into p into n; the tap is the im2col offset (s * dil_w, r * dil_h).
 *    Pixels outside the image (padding) and channels past C are filled with zeros by the copy engine.
 *  - B: one tiled load of w viewed as {C, S, R, K}: box {CONV_BK, 1, 1, block_n} at (c0, s, r, k0); filters past K
 *    and channels past C are zeros.
 * Stage kb = tap * c_blocks + channel block. */
#ifndef KERNELS_CONV_TILES_H
#define KERNELS_CONV_TILES_H

#include <stdint.h>

#include "tma/hd.h"
#include "tma/swizzle.h"

#define CONV_BM 128u /* output pixels per tile (the GEMM's BM) */
#define CONV_BK (TMA_SWIZZLE_SPAN_128B / 2u) /* channels per stage: one 128-byte swizzle span of bf16 (the GEMM's BK) */
/* The filter-major tile: CONV_FM_PIXELS output pixels x CONV_FM_FILTERS filters, the filters as wgmma's A operand
 * (the pipeline's 128 rows: two warpgroups of 64 filters) and the pixels as its B operand (m64n192k16), so the
 * im2col load gathers 192 pixels; the epilogue writes y transposed (gemm_device.cuh: epilogue_tma_t). With 128 x 256
 * tiles, 6,272 pixels (ResNet-50's 7x7 layers at batch 128) x 512 filters are 98 tiles for 132 SMs; with these,
 * 33 x 4 = 132. */
#define CONV_FM_PIXELS 192u
#define CONV_FM_FILTERS 128u

/** The integers the copies need, from a checked tma_conv2d_shape (conv_plan.c). */
typedef struct conv_geom {
    uint32_t m;                /* N * P * Q */
    uint32_t pq, q;            /* P * Q, Q */
    uint32_t s;                /* filter columns */
    uint32_t c_blocks;         /* ceil(C / CONV_BK) */
    uint32_t stages;           /* R * S * c_blocks */
    int32_t stride_h, stride_w, pad_h, pad_w;
    uint32_t dil_h, dil_w;
} conv_geom;

/** The im2col start of the tile whose first output pixel is m0 (m0 < m): {0, w, h, n, 0}; the stage adds the
 *  channel. */
TMA_HD void conv_tile_start(const conv_geom *g, uint32_t m0, int32_t start[5]) {
    const uint32_t n = m0 / g->pq, rem = m0 - n * g->pq, p = rem / g->q, q = rem - p * g->q;
    start[0] = 0;
    start[1] = (int32_t)q * g->stride_w - g->pad_w;
    start[2] = (int32_t)p * g->stride_h - g->pad_h;
    start[3] = (int32_t)n;
    start[4] = 0;
}

/** Stage kb of a tile: the first channel c0, and the filter tap (r, s). */
TMA_HD void conv_stage(const conv_geom *g, uint32_t kb, uint32_t *c0, uint32_t *r, uint32_t *s) {
    const uint32_t tap = kb / g->c_blocks;
    *c0 = (kb - tap * g->c_blocks) * CONV_BK;
    *r = tap / g->s;
    *s = tap - *r * g->s;
}

/** The im2col offsets of tap (r, s): {s * dil_w, r * dil_h}. */
TMA_HD void conv_tap_offsets(const conv_geom *g, uint32_t r, uint32_t s, uint16_t off[3]) {
    off[0] = (uint16_t)(s * g->dil_w);
    off[1] = (uint16_t)(r * g->dil_h);
    off[2] = 0;
}

/* ------------------------------------------------------------------------------------------------
 * PACKED INPUTS, for what the im2col map cannot read: a pixel of C channels is 2 C bytes, and TMA's strides are 16-byte
 * multiples, so C must be a multiple of 8 (and x, w 16-byte aligned). Other inputs are packed by a small kernel before
 * each run (conv.cu: conv_pack_kernel; the CPU model does the same) into a workspace of the plan, as a convolution the
 * maps can read with the same output:
 *  - FOLDED TAPS (S C <= CONV_BK: few channels, the 3-channel stem): packed pixel (n, h, q) holds the S input pixels
 *    that output column q's filter row meets, side by side: channel f C + c = x[n, h, q stride_w - pad_w + f dil_w,
 *    c] (0 outside the image), C' = S C rounded up to 8 channels. The packed convolution has S = 1, W = Q, stride_w
 *    = 1, pad_w = 0: the stem's 49 taps x 64 channels (8 of them real) become 7 x 64 (21 real).
 *  - PADDED CHANNELS (otherwise): packed pixel = the input pixel, C' = C rounded up to 8.
 * w is packed the same way: its rows of S C (folded) or C (padded) elements, each padded to C'.
 * conv_pack describes one such packing: the source as rows of `w` pixels of `c` channels, the packed tensor as the same
 * rows of `w_out` pixels of `c_out` channels.
 * ---------------------------------------------------------------------------------------------- */
typedef struct conv_pack {
    uint64_t rows;      /* source rows (n h for x; k r or k r s for w) */
    uint32_t w, c;      /* a source row: w pixels of c channels */
    uint32_t w_out;     /* a packed row: w_out pixels of c_out channels */
    uint32_t c_out;
    uint32_t taps;      /* F: source pixels side by side in a packed pixel */
    int32_t step, pad;  /* packed pixel j, tap f reads source pixel j step - pad + f dil */
    int32_t dil;
} conv_pack;

/** Elements of the packed tensor. */
TMA_HD uint64_t conv_pack_elems(const conv_pack *k) { return k->rows * k->w_out * k->c_out; }

/** Packed pixels (rows x w_out). */
TMA_HD uint64_t conv_pack_pixels(const conv_pack *k) { return k->rows * k->w_out; }

/** The source element of channel j of packed pixel `pixel`, or -1 where it is a zero (a padding pixel, or a channel
 *  past F C). */
TMA_HD int64_t conv_pack_source(const conv_pack *k, uint64_t pixel, uint32_t j) {
    const uint64_t row = pixel / k->w_out;
    const uint32_t q = (uint32_t)(pixel - row * k->w_out);
    const uint32_t f = j / k->c, c = j - f * k->c;
    const int64_t col = (int64_t)q * k->step - k->pad + (int64_t)f * k->dil;
    if (f >= k->taps || col < 0 || col >= (int64_t)k->w)
        return -1;
    return ((int64_t)row * k->w + col) * k->c + c;
}

#endif /* KERNELS_CONV_TILES_H */
