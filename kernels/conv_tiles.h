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
    uint32_t halo_wp;          /* the halo tile (below): positions a tile row; 0 where the shape has no halo tile */
    uint32_t halo_rows;        /* its output rows a tile, 128 / halo_wp */
    uint32_t halo_tiles;       /* its tiles an image, ceil(P / halo_rows) */
    uint32_t halo_stages;      /* its stages a tile, R * c_blocks */
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
 * THE HALO TILE (block_m TMA_CONV2D_HALO, tma/kernels.h), for filters CONV_HALO_TAPS wide at stride 1 and dilation
 * 1 on output rows of Q <= 64 - S + 1 pixels. Its 128 output positions are rows of wp = 16, 32 or 64 >= Q + S - 1
 * positions (conv_halo_wp), 128 / wp whole output rows of one image; positions q >= Q of a row are computed and never
 * stored. By CONV_HALO_FILTERS filters. Stage kb = filter row r and channel block cb (kb = r c_blocks + cb):
 *  - A: one tiled load of x as {C, W, H, N}, box {CONV_BK, wp, 128 / wp, 1} at (c0, -pad_w, h0 + r - pad_h, n): the
 *    input rows that the tile's output rows read through filter row r, from column -pad_w on; zeros outside the
 *    image. Tap s's operand is that box from row s on: position i (output row i / wp, column i % wp) reads input
 *    column i % wp + s - pad_w, which is box row i + s, for every stored position (i % wp < Q, so i % wp + s < wp).
 *    The rows past the box (up to 128 + S - 2) feed only positions that are never stored (gemm_device.cuh: GmShape's
 *    slack).
 *  - B: S tiled loads of w, box {CONV_BK, 1, 1, CONV_HALO_FILTERS} at (c0, s, r, k0): one per tap of the row.
 *  - y: stored through {K, Q, P, N}, boxes {64, wp, 64 / wp, 1}: a consumer warpgroup's 64 positions are whole output
 *    rows; the copy engine clips columns q >= Q and rows p >= P.
 * Each input row is read once per filter row instead of once per tap: a stage of the 128 x 64 im2col tile moves 24 KiB
 * for one tap, a halo stage 40 KiB for three (docs/lab/conv.md "The halo tile").
 * ---------------------------------------------------------------------------------------------- */
#define CONV_HALO_TAPS 3u     /* S of the halo tile's kernel instances */
#define CONV_HALO_FILTERS 64u /* its filters a tile */
#define CONV_HALO_MAX_WP 64u  /* its widest row: box rows of 64 pixels x 2 rows = the tile's 128 positions */

/** The halo tile's row width for output rows of q pixels under filters s wide: 16, 32 or 64; 0 where none fits. */
TMA_HD uint32_t conv_halo_wp(uint32_t q, uint32_t s) {
    const uint64_t need = (uint64_t)q + s - 1u;
    return need <= 16u ? 16u : need <= 32u ? 32u : need <= CONV_HALO_MAX_WP ? CONV_HALO_MAX_WP : 0u;
}

/** The halo tile's tiles an image of p output rows in rows of wp positions (conv_halo_wp's; 0: none). */
TMA_HD uint32_t conv_halo_tiles(uint32_t p, uint32_t wp) {
    return wp ? (p + CONV_BM / wp - 1u) / (CONV_BM / wp) : 0u;
}

/** Stage kb of halo tile tm: x's box start (c0, -pad_w, h0 + r - pad_h, n) and the filter row r. */
TMA_HD void conv_halo_stage(const conv_geom *g, uint32_t tm, uint32_t kb, int32_t xc[5], uint32_t *r) {
    const uint32_t n = tm / g->halo_tiles, h0 = (tm - n * g->halo_tiles) * g->halo_rows;
    *r = kb / g->c_blocks;
    xc[0] = (int32_t)((kb - *r * g->c_blocks) * CONV_BK);
    xc[1] = -g->pad_w;
    xc[2] = (int32_t)(h0 + *r) - g->pad_h;
    xc[3] = (int32_t)n;
    xc[4] = 0;
}

/** Where the 64 positions from tile position `row0` on (tile tm's row0 = 128 tm + 64 cw) go in y's {K, Q, P, N}
 *  map, past the channel: {0, p, n}. */
TMA_HD void conv_halo_store_at(const conv_geom *g, uint32_t row0, int32_t at[3]) {
    const uint32_t tm = row0 / CONV_BM, n = tm / g->halo_tiles;
    at[0] = 0;
    at[1] = (int32_t)((tm - n * g->halo_tiles) * g->halo_rows + (row0 % CONV_BM) / g->halo_wp);
    at[2] = (int32_t)n;
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
