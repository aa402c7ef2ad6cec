/* The convolution's argument rules, its four maps, and its tile pipeline on the CPU model (conv_plan.h,
 * tma/kernels.h). Plain C: part of the CPU-model objects, so the rules and the pipeline are tested without a GPU. */
#include "conv_plan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_tiles.h"
#include "kernel_diag.h"

#include "tma/swizzle.h"

/* Stand-in addresses for the checks without pointers: 1024-aligned, distinct. */
#define STANDIN_X ((const void *)(uintptr_t)0x7f0000000000ull)
#define STANDIN_W ((const void *)(uintptr_t)0x7f4000000000ull)
#define STANDIN_Y ((const void *)(uintptr_t)0x7f8000000000ull)

static long out_extent(long in, long pad, long filter, long dil, long stride) {
    const long span = in + 2 * pad - dil * (filter - 1);
    return span >= 1 && stride >= 1 ? (span - 1) / stride + 1 : 0;
}

void tma_conv2d_out_size(const tma_conv2d_shape *sh, int *p, int *q) {
    const long pp = sh ? out_extent(sh->h, sh->pad_h, sh->r, sh->dilation_h, sh->stride_h) : 0;
    const long qq = sh ? out_extent(sh->w, sh->pad_w, sh->s, sh->dilation_w, sh->stride_w) : 0;
    if (p)
        *p = pp > INT32_MAX ? 0 : (int)pp;
    if (q)
        *q = qq > INT32_MAX ? 0 : (int)qq;
}

/* The copies' integers of a shape whose output is p x q. */
static conv_geom geom_make(const tma_conv2d_shape *sh, int p, int q) {
    conv_geom g;
    g.m = (uint32_t)sh->n * (uint32_t)p * (uint32_t)q;
    g.pq = (uint32_t)p * (uint32_t)q;
    g.q = (uint32_t)q;
    g.s = (uint32_t)sh->s;
    g.c_blocks = ((uint32_t)sh->c + CONV_BK - 1u) / CONV_BK;
    g.stages = (uint32_t)sh->r * (uint32_t)sh->s * g.c_blocks;
    g.stride_h = sh->stride_h, g.stride_w = sh->stride_w;
    g.pad_h = sh->pad_h, g.pad_w = sh->pad_w;
    g.dil_h = (uint32_t)sh->dilation_h, g.dil_w = (uint32_t)sh->dilation_w;
    /* the halo tile (conv_tiles.h): S taps a stage at stride 1, no dilation, rows that fit */
    const int halo = sh->s == (int)CONV_HALO_TAPS && sh->stride_h == 1 && sh->stride_w == 1 && sh->dilation_h == 1 &&
                     sh->dilation_w == 1;
    g.halo_wp = halo ? conv_halo_wp((uint32_t)q, (uint32_t)sh->s) : 0u;
    g.halo_rows = g.halo_wp ? CONV_BM / g.halo_wp : 0u;
    g.halo_tiles = conv_halo_tiles((uint32_t)p, g.halo_wp);
    if ((uint64_t)sh->n * g.halo_tiles * CONV_BM > INT32_MAX) /* its positions, as the pixels, in 31 bits */
        g.halo_wp = g.halo_rows = g.halo_tiles = 0u;
    g.halo_stages = (uint32_t)sh->r * g.c_blocks;
    return g;
}

/* Whether TMA cannot read x and w as they are (conv_tiles.h, PACKED INPUTS): channels the im2col map cannot stride
 * over, or an address TMA cannot start from. NULL pointers are taken as aligned (tma_conv2d_check without them). */
static int unreadable(const tma_conv2d_shape *sh, const void *x, const void *w) {
    const int per_pixel = (int)(TMA_GLOBAL_ALIGN / 2u); /* bf16 channels of a 16-byte pixel: TMA's stride rule */
    return sh->c % per_pixel != 0 || (uintptr_t)x % TMA_GLOBAL_ALIGN != 0 || (uintptr_t)w % TMA_GLOBAL_ALIGN != 0;
}

static uint32_t round_up_u32(uint32_t v, uint32_t m) { return (v + m - 1u) / m * m; }
static size_t round_up_bytes(uint64_t elems) { return (size_t)((elems * 2u + 255u) / 256u * 256u); }

/* The filter rows folded into a packed pixel (conv_tiles.h, FOLDED TAPS): as many as one stage of CONV_BK channels
 * holds, S C each; 0 where one row's taps do not fit (S C > CONV_BK). */
static uint32_t folded_rows(const tma_conv2d_shape *sh) {
    const uint32_t row = (uint32_t)sh->s * (uint32_t)sh->c, r = (uint32_t)sh->r;
    return row > CONV_BK ? 0u : CONV_BK / row < r ? CONV_BK / row : r;
}

/* Whether the convolution `run` (what the kernel runs: the shape as given, or the packed one) keeps to the im2col
 * map's ranges: its x map and its last tap's load pass the rules (conv_x_map, at a stand-in address). */
static int im2col_fits(const tma_conv2d_shape *run) {
    tma_im2col_desc d;
    tma_diag ignored;
    return conv_x_map(run, NULL, CONV_BM, &d, &ignored) == TMA_OK;
}

/* The packed convolution of folded taps, FR filter rows a packed pixel (conv_tiles.h, FOLDED TAPS), and its packing. */
static void pack_folded(const tma_conv2d_shape *sh, conv_shape_facts *f, uint32_t fr) {
    const uint32_t c = (uint32_t)sh->c, r = (uint32_t)sh->r, s = (uint32_t)sh->s, r2 = (r + fr - 1u) / fr;
    tma_conv2d_shape *run = &f->run;
    conv_pack *xp = &f->xp, *wp = &f->wp;
    run->c = (int)round_up_u32(fr * s * c, TMA_GLOBAL_ALIGN / 2u);
    run->r = (int)r2, run->s = 1;
    run->dilation_h = (int)fr * sh->dilation_h, run->dilation_w = 1;
    run->pad_h = 0, run->pad_w = 0, run->stride_w = 1;
    run->w = f->q;
    run->h = (int)((uint32_t)(f->p - 1) * (uint32_t)sh->stride_h + (r2 - 1u) * fr * (uint32_t)sh->dilation_h + 1u);
    /* packed row y, fold f: input row y - pad_h + f dil_h; packed column j, tap s: j stride_w - pad_w + s dil_w */
    xp->h_out = (uint32_t)run->h, xp->w_out = (uint32_t)f->q, xp->taps_r = fr, xp->taps_s = s;
    xp->pad_h = sh->pad_h, xp->dil_h = sh->dilation_h;
    xp->step_w = sh->stride_w, xp->pad_w = sh->pad_w, xp->dil_w = sh->dilation_w;
    /* filter row r' fold f: row r' FR + f; tap s: column s */
    wp->h_out = r2, wp->w_out = 1u, wp->taps_r = fr, wp->taps_s = s, wp->step_h = (int32_t)fr, wp->step_w = 0;
}

/* The packed convolution of padded channels (the pixels as they are, C rounded up to 8), and its packing. */
static void pack_padded(const tma_conv2d_shape *sh, conv_shape_facts *f) {
    f->run.c = (int)round_up_u32((uint32_t)sh->c, TMA_GLOBAL_ALIGN / 2u);
    f->xp.h_out = f->xp.h, f->xp.w_out = f->xp.w;
    f->wp.h_out = (uint32_t)sh->r, f->wp.w_out = (uint32_t)sh->s;
}

/* No packing: the kernel runs the shape as given, x and w as they are. */
static void pack_none(const tma_conv2d_shape *sh, conv_shape_facts *f) {
    memset(&f->xp, 0, sizeof f->xp);
    memset(&f->wp, 0, sizeof f->wp);
    f->run = *sh;
    f->x_bytes = f->w_bytes = 0;
    f->packed = 0;
}

/* The source sides of both packings, before pack_folded or pack_padded sets the packed sides. */
static void pack_sources(const tma_conv2d_shape *sh, conv_shape_facts *f) {
    conv_pack *xp = &f->xp, *wp = &f->wp;
    f->packed = 1;
    xp->n = (uint32_t)sh->n, xp->h = (uint32_t)sh->h, xp->w = (uint32_t)sh->w, xp->c = (uint32_t)sh->c;
    wp->n = (uint32_t)sh->k, wp->h = (uint32_t)sh->r, wp->w = (uint32_t)sh->s, wp->c = (uint32_t)sh->c;
    xp->dil_h = xp->dil_w = wp->dil_h = wp->dil_w = 1;
    xp->step_h = xp->step_w = wp->step_h = wp->step_w = 1;
    xp->taps_r = xp->taps_s = wp->taps_r = wp->taps_s = 1u;
}

/* The plan's packing (every stage is one im2col load of the tile's pixels, about 1 us whatever its real channels):
 *  - folded taps where they fit a stage, the folded convolution keeps to the im2col ranges, and folding at least
 *    halves the stages (R S stages of C <= 64 channels become ceil(R / FR)), or the shape as given does not keep to
 *    them (its padding materialised by the packer, the folded one may: pad 0, dilation FR dil_h over R' rows);
 *  - else padded channels where TMA cannot read x as it is;
 *  - else none. A shape neither way fits is refused by its x map (conv_prepare), with the given shape's reason. */
void conv_pack_plan(const tma_conv2d_shape *sh, const void *x, const void *w, conv_shape_facts *f) {
    const uint32_t c = (uint32_t)sh->c, r = (uint32_t)sh->r, s = (uint32_t)sh->s;
    const uint32_t fr = folded_rows(sh);
    const uint32_t stages = r * s * ((c + CONV_BK - 1u) / CONV_BK), folded = fr ? (r + fr - 1u) / fr : stages;
    pack_none(sh, f);
    if (fr != 0) {
        pack_sources(sh, f);
        pack_folded(sh, f, fr);
        tma_conv2d_shape as_given = *sh;
        as_given.c = (int)round_up_u32(c, TMA_GLOBAL_ALIGN / 2u);
        if (!im2col_fits(&f->run) || (2u * folded > stages && im2col_fits(&as_given)))
            pack_none(sh, f);
    }
    if (!f->packed && unreadable(sh, x, w)) {
        pack_sources(sh, f);
        pack_padded(sh, f);
    }
    if (f->packed) {
        f->xp.c_out = f->wp.c_out = (uint32_t)f->run.c;
        f->x_bytes = round_up_bytes(conv_pack_elems(&f->xp));
        f->w_bytes = round_up_bytes(conv_pack_elems(&f->wp));
    }
}

conv_geom conv_geom_of(const tma_conv2d_shape *sh, const void *x, const void *w) {
    conv_shape_facts f;
    tma_conv2d_out_size(sh, &f.p, &f.q);
    conv_pack_plan(sh, x, w, &f);
    return geom_make(&f.run, f.p, f.q);
}

/* The shape's own rules (no maps yet), each with its message; the output size into *p, *q. */
static tma_status check_shape(const tma_conv2d_shape *sh, int *p, int *q, tma_diag *diag) {
    const struct { const char *name; int value; } sizes[] = {
        {"n", sh->n}, {"h", sh->h}, {"w", sh->w}, {"c", sh->c}, {"k", sh->k}, {"r", sh->r}, {"s", sh->s},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].value < 1)
            return KD_FAIL(diag, CONV_SIZE, tma_arg_s(sizes[i].name), tma_arg_i(sizes[i].value));
    const struct { const char *name; int value; } strides[] = {{"stride_h", sh->stride_h}, {"stride_w", sh->stride_w}};
    for (size_t i = 0; i < 2; i++)
        if (strides[i].value < 1 || strides[i].value > 8)
            return KD_FAIL(diag, CONV_STRIDE, tma_arg_s(strides[i].name), tma_arg_i(strides[i].value),
                           tma_arg_u(TMA_MAX_ELEMENT_STRIDE));
    if (sh->dilation_h < 1 || sh->dilation_w < 1)
        return KD_FAIL(diag, CONV_DILATION, tma_arg_s(sh->dilation_h < 1 ? "h" : "w"),
                       tma_arg_i(sh->dilation_h < 1 ? sh->dilation_h : sh->dilation_w));
    tma_conv2d_out_size(sh, p, q);
    if (*p < 1 || *q < 1) {
        const int rows = *p < 1;
        return KD_FAIL(diag, CONV_NO_OUTPUT, tma_arg_s(rows ? "r" : "s"), tma_arg_i(rows ? sh->r : sh->s),
                       tma_arg_s(rows ? "h" : "w"), tma_arg_i(rows ? sh->dilation_h : sh->dilation_w),
                       tma_arg_i(rows ? sh->h : sh->w), tma_arg_i(rows ? sh->pad_h : sh->pad_w),
                       tma_arg_s(rows ? "rows" : "columns"));
    }
    const uint64_t m = (uint64_t)sh->n * (uint64_t)*p * (uint64_t)*q;
    if (m > INT32_MAX)
        return KD_FAIL(diag, CONV_PIXELS, tma_arg_u(m));
    return TMA_OK;
}

/* Every tensor at whole bf16 elements; an x or w that TMA cannot start from (not 16-byte aligned) is packed. */
static tma_status check_pointers(const void *x, const void *w, const void *y, tma_diag *diag) {
    const struct { const char *name; const void *at; } ptrs[] = {{"x", x}, {"w", w}, {"y", y}};
    for (size_t i = 0; i < 3; i++)
        if ((uintptr_t)ptrs[i].at % 2u != 0)
            return KD_FAIL(diag, ELEMENT_ALIGN, tma_arg_s(ptrs[i].name), tma_arg_x((uintptr_t)ptrs[i].at),
                           tma_arg_u(2));
    return TMA_OK;
}

/* Output channels per tile: the width of {256, 128, 64} that pads K the least (ties: the wider). */
static int pick_block_n(int k) {
    int best = 256;
    long best_pad = (k + 255L) / 256 * 256;
    for (int bn = 128; bn >= 64; bn /= 2) {
        const long pad = (k + (long)bn - 1) / bn * bn;
        if (pad < best_pad)
            best = bn, best_pad = pad;
    }
    return best;
}

/* x as an im2col map: {C, W, H, N}; the bounding box [-pad, dim + pad - dil (filter - 1) - 1] per spatial
 * dimension and the traversal strides make one load walk `pixels` consecutive output pixels (conv_tiles.h). */
static tma_im2col_desc x_desc(const tma_conv2d_shape *sh, const void *x, uint32_t pixels) {
    tma_im2col_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = TMA_DTYPE_BF16;
    d.rank = 4;
    d.global_address = x;
    d.global_dim[0] = (uint64_t)sh->c;
    d.global_dim[1] = (uint64_t)sh->w;
    d.global_dim[2] = (uint64_t)sh->h;
    d.global_dim[3] = (uint64_t)sh->n;
    d.global_stride[0] = (uint64_t)sh->c * 2u;
    d.global_stride[1] = d.global_stride[0] * (uint64_t)sh->w;
    d.global_stride[2] = d.global_stride[1] * (uint64_t)sh->h;
    d.pixel_box_lower[0] = -sh->pad_w;
    d.pixel_box_lower[1] = -sh->pad_h;
    d.pixel_box_upper[0] = (int32_t)((long)sh->pad_w - (long)sh->dilation_w * (sh->s - 1));
    d.pixel_box_upper[1] = (int32_t)((long)sh->pad_h - (long)sh->dilation_h * (sh->r - 1));
    d.channels_per_pixel = CONV_BK;
    d.pixels_per_column = pixels;
    d.element_stride[0] = 1;
    d.element_stride[1] = (uint32_t)sh->stride_w;
    d.element_stride[2] = (uint32_t)sh->stride_h;
    d.element_stride[3] = 1;
    d.interleave = TMA_INTERLEAVE_NONE;
    d.swizzle = TMA_SWIZZLE_128B;
    /* a pixel is 128 bytes (CONV_BK channels): 128-byte promotion fetches what the load reads. Against 256 bytes, two
     * alternating runs of the sample's layers: H200 1.7% faster on average, H100 0.7%; the padded stem 4-6% on both,
     * the slowest loss 2.5% (H100, b128 1x1 s2 56x56 256->512) (docs/lab/conv.md "L2 promotion of the pixels' map") */
    d.l2_promotion = TMA_L2_128B;
    d.oob_fill = TMA_OOB_ZERO;
    return d;
}

/* A dense bf16 tensor of four dimensions (innermost first: channels, then the next three), 128B-swizzled boxes `box`,
 * zeros outside it: w, and the halo tile's x and y. */
static tma_tiled_desc dense4_desc(const void *at, const uint64_t dim[4], const uint32_t box[4],
                                  tma_l2_promotion promotion) {
    tma_tiled_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = TMA_DTYPE_BF16;
    d.rank = 4;
    d.global_address = (void *)(uintptr_t)at;
    for (int i = 0; i < 4; i++) {
        d.global_dim[i] = dim[i];
        d.box_dim[i] = box[i];
    }
    d.global_stride[0] = dim[0] * 2u;
    d.global_stride[1] = d.global_stride[0] * dim[1];
    d.global_stride[2] = d.global_stride[1] * dim[2];
    d.swizzle = TMA_SWIZZLE_128B;
    d.l2_promotion = promotion;
    d.oob_fill = TMA_OOB_ZERO;
    return d;
}

/* w as a tiled map {C, S, R, K}: boxes of CONV_BK channels of one tap of `filters` filters. */
static tma_tiled_desc w_desc(const tma_conv2d_shape *sh, const void *w, uint32_t filters) {
    const uint64_t dim[4] = {(uint64_t)sh->c, (uint64_t)sh->s, (uint64_t)sh->r, (uint64_t)sh->k};
    const uint32_t box[4] = {CONV_BK, 1, 1, filters};
    return dense4_desc(w, dim, box, TMA_L2_256B);
}

tma_tiled_desc conv_y_desc(const tma_conv2d_shape *sh, const conv_geom *g, const void *y) {
    /* the epilogue's boxes, as the GEMM's */
    return tma_desc_2d(TMA_DTYPE_BF16, (void *)(uintptr_t)y, g->m, (uint64_t)sh->k, (uint64_t)sh->k * 2u, GM_EPI_ROWS,
                       GM_EPI_ROW_BYTES / 2u, GM_EPI_SWIZZLE);
}

tma_status conv_shape_check(const tma_conv2d_shape *sh, const void *x, const void *w, const void *y,
                            conv_shape_facts *f, tma_diag *diag) {
    if (sh == NULL)
        return KD_FAIL(diag, CONV_SHAPE_NULL, tma_arg_u(0));
    tma_status st = check_shape(sh, &f->p, &f->q, diag);
    if (st != TMA_OK || (st = check_pointers(x, w, y, diag)) != TMA_OK)
        return st;
    conv_pack_plan(sh, x, w, f);
    f->g = geom_make(&f->run, f->p, f->q);
    const void *ya = y ? y : STANDIN_Y;
    f->y = conv_y_desc(sh, &f->g, ya);
    /* where y's map fails a rule, the epilogue stores from registers instead: any y */
    tma_violation why;
    f->y_tma = (uint64_t)sh->k * 2u % TMA_GLOBAL_ALIGN == 0 && (uintptr_t)ya % TMA_GLOBAL_ALIGN == 0 &&
               tma_rule_check_tiled(&f->y, &why) == TMA_OK;
    return TMA_OK;
}

tma_status conv_tile_check(int block_m, int *block_n, int k, tma_diag *diag) {
    if (block_m != CONV_BM && block_m != CONV_FM_PIXELS && block_m != TMA_CONV2D_HALO)
        return KD_FAIL(diag, CONV_BLOCK_M, tma_arg_i(block_m), tma_arg_u(CONV_BM), tma_arg_u(CONV_FM_PIXELS),
                       tma_arg_u(CONV_FM_FILTERS));
    if (block_m == TMA_CONV2D_HALO) {
        if (*block_n != 0 && *block_n != (int)CONV_HALO_FILTERS)
            return KD_FAIL(diag, CONV_BLOCK_N_HALO, tma_arg_i(*block_n), tma_arg_u(CONV_HALO_FILTERS));
        *block_n = (int)CONV_HALO_FILTERS;
        return TMA_OK;
    }
    if (block_m == CONV_FM_PIXELS && *block_n != 0 && *block_n != CONV_FM_FILTERS)
        return KD_FAIL(diag, CONV_BLOCK_N_FM, tma_arg_i(*block_n), tma_arg_u(CONV_FM_PIXELS),
                       tma_arg_u(CONV_FM_FILTERS));
    if (*block_n != 0 && *block_n != 64 && *block_n != 128 && *block_n != 256)
        return KD_FAIL(diag, CONV_BLOCK_N, tma_arg_i(*block_n));
    *block_n = block_m == CONV_FM_PIXELS ? (int)CONV_FM_FILTERS : *block_n ? *block_n : pick_block_n(k);
    return TMA_OK;
}

tma_status conv_x_map(const tma_conv2d_shape *sh, const void *x, uint32_t pixels, tma_im2col_desc *d,
                      tma_diag *diag) {
    *d = x_desc(sh, x ? x : STANDIN_X, pixels);
    tma_violation why;
    if (tma_rule_check_im2col(d, &why) != TMA_OK)
        return KD_FAIL_CAUSE(diag, &why, MAP_REFUSED, tma_arg_s("x's im2col map"),
                             tma_arg_s("pixel_box_lower = -pad, pixel_box_upper = pad - dilation * (filter - 1), "
                                       "strides, x's sizes"));
    /* The farthest tap's offsets, from the first tile's start, against the offset range of a rank-4 im2col copy (the
     * copy's rule, on the facts of the map just checked: the map is not checked again). They fit a copy's 16-bit
     * offsets: the bounding box the map passed keeps dilation * (filter - 1) = pad - pixel_box_upper at most 128 + 128
     * (pixel_box_lower = -pad and pixel_box_upper are >= -128 in a rank-4 map). */
    const long far_w = (long)sh->dilation_w * (sh->s - 1), far_h = (long)sh->dilation_h * (sh->r - 1);
    const int32_t start[5] = {0, -sh->pad_w, -sh->pad_h, 0, 0};
    const uint16_t far[3] = {(uint16_t)(far_w < UINT16_MAX ? far_w : UINT16_MAX),
                             (uint16_t)(far_h < UINT16_MAX ? far_h : UINT16_MAX), 0};
    const tma_im2col_facts facts = tma_rule_im2col_facts(d);
    tma_rule_sink sink = tma_rule_sink_make(&why, 1);
    if (tma_rules_im2col_copy(&facts, d->rank, start, far, ~0u, &sink) != TMA_OK)
        return KD_FAIL_CAUSE(diag, &why, MAP_REFUSED, tma_arg_s("the last filter tap's im2col load"),
                             tma_arg_s("dilation * (filter - 1) as the offset"));
    return TMA_OK;
}

/* The halo tile's x: {C, W, H, N}, boxes of CONV_BK channels x wp pixels x 128 / wp rows (conv_tiles.h); a box row is
 * wp pixels of a row of x, contiguous where C is 64 (256-byte promotion). */
static tma_tiled_desc halo_x_desc(const tma_conv2d_shape *sh, const conv_geom *g, const void *x) {
    const uint64_t dim[4] = {(uint64_t)sh->c, (uint64_t)sh->w, (uint64_t)sh->h, (uint64_t)sh->n};
    const uint32_t box[4] = {CONV_BK, g->halo_wp, g->halo_rows, 1};
    return dense4_desc(x, dim, box, TMA_L2_256B);
}

/* The halo tile's y: {K, Q, P, N}, boxes of the epilogue's 64 rows = 64 / wp whole output rows of wp positions. */
static tma_tiled_desc halo_y_desc(const tma_conv2d_shape *sh, const conv_geom *g, const void *y) {
    _Static_assert(GM_EPI_SWIZZLE == TMA_SWIZZLE_128B && GM_EPI_ROW_BYTES == 128u, "the epilogue's 128-byte rows");
    const uint64_t dim[4] = {(uint64_t)sh->k, (uint64_t)g->q, (uint64_t)(g->pq / g->q), (uint64_t)sh->n};
    const uint32_t box[4] = {GM_EPI_ROW_BYTES / 2u, g->halo_wp, GM_EPI_ROWS / g->halo_wp, 1};
    tma_tiled_desc d = dense4_desc(y, dim, box, TMA_L2_NONE);
    d.flags = TMA_DESC_STORE;
    return d;
}

tma_status conv_halo_maps(const conv_shape_facts *f, const void *x, const void *y, tma_tiled_desc *xd,
                          tma_tiled_desc *yd, tma_diag *diag) {
    const tma_conv2d_shape *sh = &f->run;
    const conv_geom *g = &f->g;
    if (f->packed && f->xp.taps_s > 1u) /* folded taps: the run's S is 1 */
        return KD_FAIL(diag, CONV_HALO_FOLDED, tma_arg_u(f->xp.taps_s * f->xp.c), tma_arg_u(CONV_BK));
    if (g->halo_wp == 0)
        return KD_FAIL(diag, CONV_HALO_SHAPE, tma_arg_i(sh->s), tma_arg_i(sh->stride_h), tma_arg_i(sh->stride_w),
                       tma_arg_i(sh->dilation_h), tma_arg_i(sh->dilation_w), tma_arg_u(g->q),
                       tma_arg_u(CONV_HALO_TAPS), tma_arg_u(CONV_HALO_MAX_WP - CONV_HALO_TAPS + 1u));
    if (!f->y_tma)
        return KD_FAIL(diag, CONV_HALO_Y, tma_arg_i(sh->k), tma_arg_u(TMA_GLOBAL_ALIGN));
    *xd = halo_x_desc(sh, g, x ? x : STANDIN_X);
    *yd = halo_y_desc(sh, g, y ? y : STANDIN_Y);
    tma_violation why;
    if (tma_rule_check_tiled(xd, &why) != TMA_OK)
        return KD_FAIL_CAUSE(diag, &why, MAP_REFUSED, tma_arg_s("x's tiled map (the halo tile)"),
                             tma_arg_s("x as {C, W, H, N}"));
    if (tma_rule_check_tiled(yd, &why) != TMA_OK)
        return KD_FAIL_CAUSE(diag, &why, MAP_REFUSED, tma_arg_s("y's map (the halo tile)"),
                             tma_arg_s("y as {K, Q, P, N}"));
    return TMA_OK;
}

tma_status conv_w_maps(const tma_conv2d_shape *sh, const void *w, uint32_t filters, tma_tiled_desc *whole,
                       tma_tiled_desc *half, tma_diag *diag) {
    *whole = w_desc(sh, w ? w : STANDIN_W, filters);
    *half = w_desc(sh, w ? w : STANDIN_W, filters / 2u);
    tma_violation why;
    if (tma_rule_check_tiled(whole, &why) != TMA_OK || tma_rule_check_tiled(half, &why) != TMA_OK)
        return KD_FAIL_CAUSE(diag, &why, MAP_REFUSED, tma_arg_s("w's tiled map"), tma_arg_s("w as {C, S, R, K}"));
    return TMA_OK;
}

tma_status conv_prepare(const tma_conv2d_shape *sh, const void *x, const void *w, const void *y, conv_descs *d,
                        conv_shape_facts *f, int block_m, int *block_n, tma_diag *diag) {
    tma_status st = conv_shape_check(sh, x, w, y, f, diag);
    if (st == TMA_OK)
        st = conv_tile_check(block_m, block_n, sh->k, diag);
    /* the maps of the convolution the kernel runs; packed tensors at stand-in addresses (the workspace's come later) */
    if (st == TMA_OK && block_m == TMA_CONV2D_HALO)
        st = conv_halo_maps(f, f->packed ? NULL : x, y, &d->halo_x, &d->halo_y, diag);
    else if (st == TMA_OK)
        st = conv_x_map(&f->run, f->packed ? NULL : x, (uint32_t)block_m, &d->x, diag);
    if (st == TMA_OK)
        st = conv_w_maps(&f->run, f->packed ? NULL : w, (uint32_t)*block_n, &d->w, &d->w_half, diag);
    return st == TMA_OK ? kd_ok(diag) : st;
}

tma_status tma_conv2d_check(const tma_conv2d_shape *shape, const void *x, const void *w, const void *y,
                            tma_diag *diag) {
    conv_descs d;
    conv_shape_facts f;
    int bn = 0;
    return conv_prepare(shape, x, w, y, &d, &f, CONV_BM, &bn, diag);
}

/* bf16 <-> float on the host (round to nearest even; NaN stays NaN). */
static float bf16_to_float(uint16_t h) {
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static uint16_t float_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* The packed tensor of k from src (conv_pack_sources), in a 1024-byte aligned host buffer; NULL without memory. */
static uint16_t *conv_model_pack(const conv_pack *k, const void *src) {
    const uint64_t n = conv_pack_elems(k);
    uint16_t *out = aligned_alloc(1024, (size_t)((n * 2u + 1023u) / 1024u * 1024u));
    if (out == NULL)
        return NULL;
    int64_t *from = malloc(sizeof(int64_t) * k->c_out);
    if (from == NULL) {
        free(out);
        return NULL;
    }
    const uint16_t *in = src;
    for (uint64_t pixel = 0, i = 0; pixel < conv_pack_pixels(k); pixel++) {
        conv_pack_sources(k, pixel, 0, k->c_out, from);
        for (uint32_t j = 0; j < k->c_out; j++, i++)
            out[i] = from[j] < 0 ? 0u : in[from[j]];
    }
    free(from);
    return out;
}

/* One tile of the model pipeline: pixels m0.. (bm of them), filters k0.. (bn of them), every stage. */
static tma_status model_tile(const conv_descs *d, const conv_geom *g, uint32_t m0, uint32_t k0, uint32_t bm,
                             uint32_t bn, uint8_t *sa, uint8_t *sb, float *acc, uint16_t *y, uint32_t k,
                             tma_diag *diag) {
    const size_t a_bytes = (size_t)bm * CONV_BK * 2u, b_bytes = (size_t)bn * CONV_BK * 2u;
    int32_t start[5];
    conv_tile_start(g, m0, start);
    memset(acc, 0, sizeof(float) * bm * bn);
    for (uint32_t kb = 0; kb < g->stages; kb++) {
        uint32_t c0, r, s;
        conv_stage(g, kb, &c0, &r, &s);
        uint16_t off[3];
        conv_tap_offsets(g, r, s, off);
        const int32_t ac[5] = {(int32_t)c0, start[1], start[2], start[3], 0};
        const int32_t bc[5] = {(int32_t)c0, (int32_t)s, (int32_t)r, (int32_t)k0, 0};
        tma_status st = tma_model_load_im2col(&d->x, ac, off, sa, a_bytes, 0);
        if (st == TMA_OK)
            st = tma_model_load_tiled(&d->w, bc, sb, b_bytes, 0);
        if (st != TMA_OK)
            return KD_FAIL_STATUS(diag, st, CONV_MODEL_LOAD, tma_arg_u(m0), tma_arg_u(kb), tma_arg_u(r), tma_arg_u(s),
                                  tma_arg_u(c0), tma_arg_s(tma_status_name(st)));
        for (uint32_t i = 0; i < bm; i++)
            for (uint32_t j = 0; j < bn; j++) {
                float sum = 0.f;
                for (uint32_t c = 0; c < CONV_BK; c++) {
                    uint16_t a, b;
                    memcpy(&a, sa + tma_swizzle_elem(TMA_SWIZZLE_128B, 0, TMA_SWIZZLE_SPAN_128B, 2, i, c), 2);
                    memcpy(&b, sb + tma_swizzle_elem(TMA_SWIZZLE_128B, 0, TMA_SWIZZLE_SPAN_128B, 2, j, c), 2);
                    sum += bf16_to_float(a) * bf16_to_float(b);
                }
                acc[i * bn + j] += sum;
            }
    }
    for (uint32_t i = 0; i < bm && m0 + i < g->m; i++)
        for (uint32_t j = 0; j < bn && k0 + j < k; j++)
            y[(size_t)(m0 + i) * k + k0 + j] = float_to_bf16(acc[i * bn + j]);
    return TMA_OK;
}

/* One halo tile of the model pipeline (conv_tiles.h, THE HALO TILE): tile tm, filters k0.., every stage; sa holds the
 * x box and its slack (rows 128 .. 128 + S - 2, left as the last stage wrote them: they feed positions never stored),
 * sb the S tap boxes; y stored through the halo's y map, one 64-position box per consumer warpgroup (ybox). */
static tma_status model_halo_tile(const conv_descs *d, const conv_geom *g, uint32_t tm, uint32_t k0, uint8_t *sa,
                                  uint8_t *sb, float *acc, uint8_t *ybox, tma_diag *diag) {
    const uint32_t bn = CONV_HALO_FILTERS, taps = g->s;
    const size_t a_bytes = (size_t)CONV_BM * CONV_BK * 2u, tap_bytes = (size_t)bn * CONV_BK * 2u;
    memset(acc, 0, sizeof(float) * CONV_BM * bn);
    for (uint32_t kb = 0; kb < g->halo_stages; kb++) {
        int32_t xc[5];
        uint32_t r;
        conv_halo_stage(g, tm, kb, xc, &r);
        tma_status st = tma_model_load_tiled(&d->halo_x, xc, sa, a_bytes, 0);
        for (uint32_t s = 0; st == TMA_OK && s < taps; s++) {
            const int32_t bc[5] = {xc[0], (int32_t)s, (int32_t)r, (int32_t)k0, 0};
            st = tma_model_load_tiled(&d->w, bc, sb + s * tap_bytes, tap_bytes, 0);
        }
        if (st != TMA_OK)
            return KD_FAIL_STATUS(diag, st, CONV_MODEL_LOAD, tma_arg_u(tm * CONV_BM), tma_arg_u(kb), tma_arg_u(r),
                                  tma_arg_s("3 taps"), tma_arg_u((uint32_t)xc[0]), tma_arg_s(tma_status_name(st)));
        for (uint32_t s = 0; s < taps; s++)
            for (uint32_t i = 0; i < CONV_BM; i++)
                for (uint32_t j = 0; j < bn; j++) {
                    float sum = 0.f;
                    for (uint32_t c = 0; c < CONV_BK; c++) {
                        uint16_t a, b;
                        /* row i + s of the box, past its end into the slack (the swizzle of absolute rows) */
                        memcpy(&a, sa + tma_swizzle_elem(TMA_SWIZZLE_128B, 0, TMA_SWIZZLE_SPAN_128B, 2, i + s, c), 2);
                        memcpy(&b, sb + s * tap_bytes + tma_swizzle_elem(TMA_SWIZZLE_128B, 0, TMA_SWIZZLE_SPAN_128B, 2,
                                                                         j, c), 2);
                        sum += bf16_to_float(a) * bf16_to_float(b);
                    }
                    acc[i * bn + j] += sum;
                }
    }
    for (uint32_t half = 0; half < 2u; half++) {
        for (uint32_t i = 0; i < GM_EPI_ROWS; i++)
            for (uint32_t j = 0; j < bn; j++) {
                const uint16_t v = float_to_bf16(acc[(half * GM_EPI_ROWS + i) * bn + j]);
                memcpy(ybox + tma_swizzle_elem(GM_EPI_SWIZZLE, 0, GM_EPI_ROW_BYTES, 2, i, j), &v, 2);
            }
        int32_t at[3];
        conv_halo_store_at(g, tm * CONV_BM + half * GM_EPI_ROWS, at);
        const int32_t yc[5] = {(int32_t)k0, at[0], at[1], at[2], 0};
        const tma_status st = tma_model_store_tiled(&d->halo_y, yc, ybox, (size_t)GM_EPI_ROWS * GM_EPI_ROW_BYTES, 0);
        if (st != TMA_OK)
            return KD_FAIL_STATUS(diag, st, CONV_MODEL_LOAD, tma_arg_u(tm * CONV_BM), tma_arg_u(g->halo_stages),
                                  tma_arg_u(0), tma_arg_s("y's store"), tma_arg_u(k0), tma_arg_s(tma_status_name(st)));
    }
    return TMA_OK;
}

/* Every halo tile of the model pipeline (d's maps, the halo's y map at y). */
static tma_status model_halo(const conv_descs *d, const conv_geom *g, uint32_t k, tma_diag *diag) {
    const uint32_t bn = CONV_HALO_FILTERS, tiles = (uint32_t)(d->halo_y.global_dim[3]) * g->halo_tiles;
    /* the x box and a swizzle period of slack (GmShape's), S tap boxes, the epilogue box */
    uint8_t *sa = aligned_alloc(TMA_SWIZZLE_PERIOD_128B, (size_t)CONV_BM * CONV_BK * 2u + TMA_SWIZZLE_PERIOD_128B);
    uint8_t *sb = aligned_alloc(TMA_SWIZZLE_PERIOD_128B, (size_t)g->s * bn * CONV_BK * 2u);
    uint8_t *ybox = aligned_alloc(TMA_SWIZZLE_PERIOD_128B, (size_t)GM_EPI_ROWS * GM_EPI_ROW_BYTES);
    float *acc = malloc(sizeof(float) * CONV_BM * bn);
    tma_status st = TMA_OK;
    if (sa == NULL || sb == NULL || ybox == NULL || acc == NULL)
        st = KD_FAIL(diag, CONV_MODEL_MEMORY, tma_arg_u(0));
    else
        memset(sa, 0, (size_t)CONV_BM * CONV_BK * 2u + TMA_SWIZZLE_PERIOD_128B);
    for (uint32_t tm = 0; st == TMA_OK && tm < tiles; tm++)
        for (uint32_t k0 = 0; st == TMA_OK && k0 < k; k0 += bn)
            st = model_halo_tile(d, g, tm, k0, sa, sb, acc, ybox, diag);
    free(sa);
    free(sb);
    free(ybox);
    free(acc);
    return st;
}

tma_status conv_model_tiles(const tma_conv2d_shape *shape, const void *x, const void *w, void *y, int block_m,
                            int block_n, tma_diag *diag) {
    if (x == NULL || w == NULL || y == NULL)
        return KD_FAIL(diag, CONV_MODEL_NULL, tma_arg_s(x == NULL ? "x" : w == NULL ? "w" : "y"));
    conv_descs d;
    conv_shape_facts f;
    int bn = block_n;
    tma_status st = conv_prepare(shape, x, w, y, &d, &f, block_m, &bn, diag);
    if (st != TMA_OK)
        return st;
    uint16_t *xp = NULL, *wp = NULL;
    if (f.packed) { /* the kernel's packing (conv_tiles.h, PACKED INPUTS), and the maps over the packed tensors */
        xp = conv_model_pack(&f.xp, x);
        wp = conv_model_pack(&f.wp, w);
        if (xp == NULL || wp == NULL)
            st = KD_FAIL(diag, CONV_MODEL_MEMORY, tma_arg_u(0));
        if (st == TMA_OK && block_m == TMA_CONV2D_HALO)
            st = conv_halo_maps(&f, xp, y, &d.halo_x, &d.halo_y, diag);
        else if (st == TMA_OK)
            st = conv_x_map(&f.run, xp, (uint32_t)block_m, &d.x, diag);
        if (st == TMA_OK)
            st = conv_w_maps(&f.run, wp, (uint32_t)bn, &d.w, &d.w_half, diag);
        if (st != TMA_OK) {
            free(xp);
            free(wp);
            return st;
        }
    }
    const conv_geom g = f.g;
    if (block_m == TMA_CONV2D_HALO) {
        st = model_halo(&d, &g, (uint32_t)shape->k, diag);
        free(xp);
        free(wp);
        return st == TMA_OK ? kd_ok(diag) : st;
    }
    const uint32_t bm = (uint32_t)block_m;
    /* phase 0 of the 128B swizzle, as the kernel's stages (the boxes are whole periods) */
    uint8_t *sa = aligned_alloc(TMA_SWIZZLE_PERIOD_128B, (size_t)bm * CONV_BK * 2u);
    uint8_t *sb = aligned_alloc(TMA_SWIZZLE_PERIOD_128B, (size_t)bn * CONV_BK * 2u);
    float *acc = malloc(sizeof(float) * bm * (size_t)bn);
    if (sa == NULL || sb == NULL || acc == NULL)
        st = KD_FAIL(diag, CONV_MODEL_MEMORY, tma_arg_u(0));
    for (uint32_t m0 = 0; st == TMA_OK && m0 < g.m; m0 += bm)
        for (uint32_t k0 = 0; st == TMA_OK && k0 < (uint32_t)shape->k; k0 += (uint32_t)bn)
            st = model_tile(&d, &g, m0, k0, bm, (uint32_t)bn, sa, sb, acc, y, (uint32_t)shape->k, diag);
    free(sa);
    free(sb);
    free(acc);
    free(xp);
    free(wp);
    return st == TMA_OK ? kd_ok(diag) : st;
}

tma_status tma_conv2d_model(const tma_conv2d_shape *shape, const void *x, const void *w, void *y, tma_diag *diag) {
    return conv_model_tiles(shape, x, w, y, CONV_BM, 0, diag);
}
