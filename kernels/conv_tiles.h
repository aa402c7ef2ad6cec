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
 * PACKED INPUTS, for what the im2col map cannot read, or reads slowly: a pixel of C channels is 2 C bytes and TMA's
 * strides are 16-byte multiples, so C must be a multiple of 8 (and x, w 16-byte aligned); and an im2col load of 128
 * pixels takes about 1 us whatever their channels (H100, docs/lab/conv.md "Packed inputs"), so a stage of few real
 * channels costs as much as a full one. Such inputs are packed by a small kernel before each run (conv.cu:
 * conv_pack_kernel; the CPU model does the same) into a workspace of the plan, as a convolution with the same output
 * whose maps TMA reads:
 *  - FOLDED TAPS (S C <= CONV_BK: few channels, the 3-channel stem): a packed pixel (n, h', q) holds the taps of
 *    FR = min(R, CONV_BK / (S C)) filter rows by S filter columns side by side, channel (f, s, c) (f < FR) =
 *    x[n, h' - pad_h + f dil_h, q stride_w - pad_w + s dil_w, c], 0 outside the image, C' = FR S C rounded up to 8.
 *    The packed convolution has R' = ceil(R / FR) filter rows FR dil_h apart, S = 1, no padding, stride_w 1, Q columns
 *    and the H' = (P - 1) stride_h + (R' - 1) FR dil_h + 1 rows it reads: the stem's 49 stages (3 channels of 64
 *    real) become 3 stages of 63 real.
 *  - PADDED CHANNELS (otherwise, or where the folded convolution breaks the im2col ranges that the shape as given
 *    keeps to: conv_plan.c, conv_pack_plan): packed pixel = the input pixel, C' = C rounded up to 8.
 * w is packed the same way (w'[k, r', 0, (f, s, c)] = w[k, r' FR + f, s, c], 0 past R).
 * conv_pack describes one such packing: the source as images of h rows of w pixels of c channels, the packed tensor
 * as the same images of h_out rows of w_out pixels of c_out channels; packed pixel (img, y, q), channel (f, s, c)
 * (f < taps_r, s < taps_s) reads source pixel (img, y step_h - pad_h + f dil_h, q step_w - pad_w + s dil_w).
 * ---------------------------------------------------------------------------------------------- */
typedef struct conv_pack {
    uint32_t n, h, w, c;             /* the source: images, rows, pixels a row, channels */
    uint32_t h_out, w_out, c_out;    /* the packed images' rows, pixels a row, channels */
    uint32_t taps_r, taps_s;         /* source pixels folded into a packed one: rows by columns */
    int32_t step_h, pad_h, dil_h;
    int32_t step_w, pad_w, dil_w;
} conv_pack;

/** Packed pixels (n h_out w_out) and elements. */
TMA_HD uint64_t conv_pack_pixels(const conv_pack *k) { return (uint64_t)k->n * k->h_out * k->w_out; }
TMA_HD uint64_t conv_pack_elems(const conv_pack *k) { return conv_pack_pixels(k) * k->c_out; }

/** x / d and x % d, in 32-bit arithmetic where x fits (a 64-bit division is a long subroutine on the GPU). */
TMA_HD uint64_t conv_divmod(uint64_t x, uint32_t d, uint32_t *rem) {
    if (x <= 0xFFFFFFFFull) {
        *rem = (uint32_t)x % d;
        return (uint32_t)x / d;
    }
    *rem = (uint32_t)(x % d);
    return x / d;
}

/** Channel j of a packed pixel: the source pixel's row and column past the pixel's first tap (dr, dc) and the source
 *  element's offset past that tap's first element (at); 0 where the channel is a zero (past taps_r taps_s c). */
TMA_HD int conv_pack_tap(const conv_pack *k, uint32_t j, int64_t *dr, int64_t *dc, int64_t *at) {
    const uint32_t tap = j / k->c, c = j - tap * k->c, f = tap / k->taps_s, s = tap - f * k->taps_s;
    *dr = (int64_t)f * k->dil_h, *dc = (int64_t)s * k->dil_w;
    *at = (*dr * k->w + *dc) * k->c + c;
    return f < k->taps_r;
}

/** Packed pixel `pixel`'s first tap: its source image's first element (image), row and column (row0, col0). */
TMA_HD void conv_pack_pixel(const conv_pack *k, uint64_t pixel, int64_t *image, int64_t *row0, int64_t *col0) {
    uint32_t q, y;
    const uint64_t img = conv_divmod(conv_divmod(pixel, k->w_out, &q), k->h_out, &y);
    *image = (int64_t)img * k->h * k->w * k->c;
    *row0 = (int64_t)y * k->step_h - k->pad_h, *col0 = (int64_t)q * k->step_w - k->pad_w;
}

/** The source element of a channel (conv_pack_tap's dr, dc, at; `tap` its result) of a pixel (conv_pack_pixel's
 *  image, row0, col0), or -1 where it is a zero (outside the source image, or no tap). */
TMA_HD int64_t conv_pack_from(const conv_pack *k, int64_t image, int64_t row0, int64_t col0, int tap, int64_t dr,
                              int64_t dc, int64_t at) {
    const int64_t row = row0 + dr, col = col0 + dc;
    const int inside = tap && row >= 0 && row < (int64_t)k->h && col >= 0 && col < (int64_t)k->w;
    return inside ? image + (row0 * k->w + col0) * k->c + at : -1;
}

/** The source elements of channels j0 .. j0 + n - 1 of packed pixel `pixel` (conv_pack_from of each channel's
 *  conv_pack_tap), -1 for a zero. */
TMA_HD void conv_pack_sources(const conv_pack *k, uint64_t pixel, uint32_t j0, uint32_t n, int64_t *from) {
    int64_t image, row0, col0;
    conv_pack_pixel(k, pixel, &image, &row0, &col0);
    for (uint32_t i = 0; i < n; i++) {
        int64_t dr, dc, at;
        const int tap = conv_pack_tap(k, j0 + i, &dr, &dc, &at);
        from[i] = conv_pack_from(k, image, row0, col0, tap, dr, dc, at);
    }
}

#endif /* KERNELS_CONV_TILES_H */
