/* The convolution without a GPU (tma/kernels.h: tma_conv2d_check, tma_conv2d_out_size, tma_conv2d_model):
 *   out_size       - P and Q by hand for padding, stride, dilation and a filter larger than the input.
 *   model_fixed    - the kernel's tile pipeline on the CPU model (the same im2col and filter loads at the same
 *                    coordinates, conv_tiles.h) against the fp64 direct convolution, every element, y poisoned
 *                    first: shapes chosen for each corner (partial channel blocks, K past a tile, strides,
 *                    dilations, negative padding, 1x1), with the default 128-pixel tiles (tma_conv2d_model) and
 *                    the filter-major tile's 192-pixel loads (conv_model_tiles).
 *   model_packed   - inputs TMA cannot read as they are, packed first (conv_tiles.h, PACKED INPUTS): channels not a
 *                    multiple of 8, folded or padded, and x and w at 2-byte offsets.
 *   model_random   - the same on random shapes (TMA_TEST_SEED replays them), a third with any C.
 *   model_halo     - the halo tile (conv_tiles.h, THE HALO TILE): its tiled loads of whole rows, each tap's operand
 *                    read from row s of the box on (into the slack past it), and its stores through y's {K, Q, P, N}
 *                    map, on rows of every width (16, 32 and 64 positions), partial tiles, padding 0 to 2, packed
 *                    inputs; and the shapes it refuses, with their messages.
 *   refused        - each argument rule and each map rule that a shape can break: the status and a message
 *                    naming the field, its value and the limit; valid shapes at the edges accepted. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "conv_plan.h"
#include "conv_ref.h"
#include "tma/kernels.h"
#include "test_seed.h"

static tma_conv2d_shape shape_of(int n, int h, int w, int c, int k, int r, int s, int stride, int pad, int dil) {
    const tma_conv2d_shape sh = {n, h, w, c, k, r, s, stride, stride, pad, pad, dil, dil};
    return sh;
}

Test(conv, out_size) {
    int p, q;
    tma_conv2d_shape sh = shape_of(1, 56, 56, 64, 64, 3, 3, 1, 1, 1);
    tma_conv2d_out_size(&sh, &p, &q);
    cr_expect(p == 56 && q == 56, "3x3 pad 1 keeps 56: %d x %d", p, q);
    sh = shape_of(1, 56, 56, 64, 64, 3, 3, 2, 1, 1);
    tma_conv2d_out_size(&sh, &p, &q);
    cr_expect(p == 28 && q == 28, "stride 2: (56 + 2 - 2 - 1) / 2 + 1 = 28: %d x %d", p, q);
    sh = shape_of(1, 12, 12, 8, 8, 3, 3, 3, 2, 2);
    tma_conv2d_out_size(&sh, &p, &q);
    cr_expect(p == 4 && q == 4, "(12 + 4 - 4 - 1) / 3 + 1 = 4: %d x %d", p, q);
    sh = shape_of(1, 2, 2, 8, 8, 5, 5, 1, 0, 1);
    tma_conv2d_out_size(&sh, &p, &q);
    cr_expect(p == 0 && q == 0, "a 5x5 filter on 2x2 without padding: no output, %d x %d", p, q);
}

/* The model pipeline on one shape, tiles of block_m pixels (128: tma_conv2d_model's; 192: the filter-major tile's),
 * against the fp64 direct convolution. */
static void model_check(const tma_conv2d_shape *sh, int block_m, uint64_t *rng) {
    const size_t ny = conv_y_elems(sh);
    uint16_t *x = conv_random_bf16(rng, conv_x_elems(sh)), *w = conv_random_bf16(rng, conv_w_elems(sh));
    uint16_t *y = malloc(ny * 2 + 2);
    cr_assert(x && w && y, "out of host memory");
    memset(y, 0xFF, ny * 2); /* poison: NaN */
    tma_diag d;
    const tma_status st = block_m == (int)CONV_BM ? tma_conv2d_model(sh, x, w, y, &d)
                                                  : conv_model_tiles(sh, x, w, y, block_m, 0, &d);
    cr_assert_eq(st, TMA_OK, "N %d H %d W %d C %d K %d R %d S %d stride %d,%d pad %d,%d dil %d,%d, %d-pixel tiles: %s: "
                 "%s", sh->n, sh->h, sh->w, sh->c, sh->k, sh->r, sh->s, sh->stride_h, sh->stride_w, sh->pad_h,
                 sh->pad_w, sh->dilation_h, sh->dilation_w, block_m, tma_status_name(st), d.message);
    size_t first;
    const size_t bad = conv_count_bad(sh, x, w, y, &first);
    cr_assert_eq(bad, 0, "N %d H %d W %d C %d K %d R %d S %d stride %d,%d pad %d,%d dil %d,%d, %d-pixel tiles: %zu of "
                 "%zu elements differ from the fp64 direct convolution, the first at %zu", sh->n, sh->h, sh->w, sh->c,
                 sh->k, sh->r, sh->s, sh->stride_h, sh->stride_w, sh->pad_h, sh->pad_w, sh->dilation_h,
                 sh->dilation_w, block_m, bad, ny, first);
    free(x), free(w), free(y);
}

Test(conv, model_fixed) {
    uint64_t rng = test_seed("conv/model_fixed");
    const tma_conv2d_shape shapes[] = {
        {2, 7, 9, 24, 40, 3, 3, 1, 1, 1, 1, 1, 1},    {1, 10, 13, 72, 136, 5, 3, 2, 1, 2, 1, 1, 2},
        {3, 5, 6, 8, 8, 1, 1, 1, 1, 0, 0, 1, 1},      {2, 9, 11, 16, 13, 3, 3, 1, 1, 1, 1, 1, 1},
        {1, 12, 12, 200, 300, 3, 3, 3, 3, 2, 2, 2, 2}, {1, 6, 5, 32, 96, 3, 3, 1, 1, -1, 2, 1, 1},
        {1, 1, 1, 8, 1, 1, 1, 1, 1, 0, 0, 1, 1},      {2, 16, 3, 64, 256, 7, 1, 1, 1, 3, 0, 1, 1},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        model_check(&shapes[i], CONV_BM, &rng);
        model_check(&shapes[i], CONV_FM_PIXELS, &rng);
    }
}

/* PACKED INPUTS (conv_tiles.h): channels that are not a multiple of 8, folded (S C <= 64: the 3-channel stem, 1 and 5
 * channels with strides, dilations and negative padding) or padded (S C > 64), and an x and w at 2-byte offsets. */
Test(conv, model_packed) {
    uint64_t rng = test_seed("conv/model_packed");
    const tma_conv2d_shape shapes[] = {
        {2, 23, 21, 3, 64, 7, 7, 2, 2, 3, 3, 1, 1},   {1, 9, 11, 1, 5, 3, 3, 1, 1, 1, 1, 1, 1},
        {2, 10, 13, 5, 17, 3, 5, 2, 3, -1, 2, 2, 1},  {1, 8, 9, 13, 70, 3, 3, 1, 1, 1, 1, 1, 2},
        {1, 7, 6, 100, 33, 3, 3, 1, 2, 1, 0, 1, 1},   {1, 5, 5, 3, 8, 1, 1, 1, 1, 0, 0, 1, 1},
        {1, 6, 40, 21, 9, 2, 4, 1, 1, 0, 1, 1, 1},
        /* foldable (S C = 33), but folded the padding is the packer's and the 3 rows 72 apart reach past the map's
         * corner range (upper = 0 - 144): padded channels, read with the shape's own padding (found by the fuzzer) */
        {1, 149, 20, 11, 5, 3, 3, 1, 4, 72, 72, 72, 72},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        model_check(&shapes[i], i % 2 ? CONV_FM_PIXELS : CONV_BM, &rng);
    /* x and w 2 bytes past 16-byte boundaries, C = 64: packed with the channels as they are */
    const tma_conv2d_shape sh = {1, 6, 7, 64, 24, 3, 3, 1, 1, 1, 1, 1, 1};
    const size_t nx = conv_x_elems(&sh), nw = conv_w_elems(&sh), ny = conv_y_elems(&sh);
    uint16_t *x = conv_random_bf16(&rng, nx + 1), *w = conv_random_bf16(&rng, nw + 1), *y = malloc(ny * 2);
    cr_assert(x && w && y, "out of host memory");
    memset(y, 0xFF, ny * 2);
    tma_diag d;
    cr_assert_eq(tma_conv2d_model(&sh, x + 1, w + 1, y, &d), TMA_OK, "%s", d.message);
    size_t first;
    const size_t bad = conv_count_bad(&sh, x + 1, w + 1, y, &first);
    cr_expect_eq(bad, 0, "x and w at 2-byte offsets: %zu of %zu elements differ, the first at %zu", bad, ny, first);
    free(x), free(w), free(y);
}

Test(conv, model_random) {
    uint64_t rng = test_seed("conv/model_random");
    for (int i = 0; i < 10; i++) {
        tma_conv2d_shape sh = conv_random_shape(&rng);
        sh.k = sh.k % 72 + 1; /* the model is slow: fewer filter tiles on the CPU than on the GPU */
        model_check(&sh, i % 2 ? CONV_FM_PIXELS : CONV_BM, &rng);
    }
}

/* THE HALO TILE (conv_tiles.h) on the model: the widths of its rows (Q + 2 <= 16, 32, 64), output rows that do not
 * fill the last tile, channel blocks past C, filters past a tile, padding 0, 1 and 2 and uneven, packed channels
 * (C = 23: padded to 24); random shapes of the kind after. */
Test(conv, model_halo) {
    uint64_t rng = test_seed("conv/model_halo");
    const tma_conv2d_shape shapes[] = {
        {1, 7, 14, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1},   {2, 9, 30, 72, 104, 3, 3, 1, 1, 1, 1, 1, 1},
        {1, 5, 62, 24, 8, 3, 3, 1, 1, 1, 1, 1, 1},    {1, 6, 60, 32, 64, 3, 3, 1, 1, 0, 2, 1, 1},
        {1, 3, 1, 24, 16, 1, 3, 1, 1, 0, 1, 1, 1},    {1, 11, 33, 23, 24, 5, 3, 1, 1, 2, 0, 1, 1},
        {3, 4, 5, 136, 72, 2, 3, 1, 1, -1, 1, 1, 1},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        model_check(&shapes[i], TMA_CONV2D_HALO, &rng);
    for (int i = 0; i < 4; i++) {
        tma_conv2d_shape sh = conv_random_shape(&rng);
        sh.s = 3, sh.stride_h = sh.stride_w = 1, sh.dilation_h = sh.dilation_w = 1;
        sh.w = conv_rnd_in(&rng, 1, 62), sh.pad_w = sh.pad_w < 0 ? 0 : sh.pad_w % 3, sh.k = (sh.k % 9 + 1) * 8;
        int p, q;
        tma_conv2d_out_size(&sh, &p, &q);
        if (p < 1 || q < 1 || q + 2 > 64 || sh.c * 3 <= 64) /* no output, rows too wide, or folded (S = 1) */
            continue;
        model_check(&sh, TMA_CONV2D_HALO, &rng);
    }
}

/* The halo tile where a shape has none, or y cannot be stored through a map: refused by the model's plan, with
 * the rule. */
Test(conv, halo_refused) {
    uint16_t x[64], w[64], y[64];
    tma_diag d;
    struct {
        tma_conv2d_shape sh;
        const char *word1, *word2;
    } cases[] = {
        {{1, 8, 8, 64, 64, 3, 3, 2, 2, 1, 1, 1, 1}, "without a halo tile", "stride 2 x 2"},
        {{1, 8, 8, 64, 64, 3, 3, 1, 1, 2, 2, 2, 2}, "without a halo tile", "dilation 2 x 2"},
        {{1, 8, 8, 64, 64, 5, 5, 1, 1, 2, 2, 1, 1}, "without a halo tile", "S = 5"},
        {{1, 8, 63, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1}, "without a halo tile", "Q = 63"},
        {{1, 8, 8, 64, 12, 3, 3, 1, 1, 1, 1, 1, 1}, "TMA cannot describe y", "K = 12"},
        {{1, 8, 8, 16, 8, 3, 3, 1, 1, 1, 1, 1, 1}, "folded into the channels", "S C = 48"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset(&d, 0, sizeof d);
        const tma_status st = conv_model_tiles(&cases[i].sh, x, w, y, TMA_CONV2D_HALO, 0, &d);
        cr_expect_eq(st, TMA_ERR_ARG, "case %zu: %s: %s", i, tma_status_name(st), d.message);
        cr_expect(strstr(d.message, cases[i].word1) && strstr(d.message, cases[i].word2),
                  "case %zu: message without \"%s\" / \"%s\": %s", i, cases[i].word1, cases[i].word2, d.message);
    }
    /* Q = 62: the widest row that fits (62 + 2 = 64), accepted */
    const tma_conv2d_shape wide = {1, 2, 62, 64, 8, 3, 3, 1, 1, 1, 1, 1, 1};
    const size_t ny = conv_y_elems(&wide);
    uint64_t rng = test_seed("conv/halo_refused");
    uint16_t *xw = conv_random_bf16(&rng, conv_x_elems(&wide)), *ww = conv_random_bf16(&rng, conv_w_elems(&wide));
    uint16_t *yw = malloc(ny * 2);
    cr_assert(xw && ww && yw, "out of host memory");
    cr_expect_eq(conv_model_tiles(&wide, xw, ww, yw, TMA_CONV2D_HALO, 0, &d), TMA_OK, "Q = 62: %s", d.message);
    free(xw), free(ww), free(yw);
    int bn = 128;
    cr_expect_eq(conv_tile_check(TMA_CONV2D_HALO, &bn, 64, &d), TMA_ERR_ARG, "block_n 128 with the halo tile");
    cr_expect(strstr(d.message, "block_n = 128") && strstr(d.message, "64 filters wide"), "%s", d.message);
}

/* tma_conv2d_check refuses `sh` (pointers x, w, y) with `status` and a message containing each of the words. */
static void expect_refused(const tma_conv2d_shape *sh, const void *x, const void *y, tma_status status,
                           const char *word1, const char *word2) {
    tma_diag d;
    memset(&d, 0, sizeof d);
    const tma_status st = tma_conv2d_check(sh, x, NULL, y, &d);
    cr_expect_eq(st, status, "expected %s, got %s: %s", tma_status_name(status), tma_status_name(st), d.message);
    cr_expect(strstr(d.message, word1) != NULL && strstr(d.message, word2) != NULL,
              "message without \"%s\" / \"%s\": %s", word1, word2, d.message);
}

Test(conv, refused) {
    tma_conv2d_shape sh = shape_of(1, 8, 8, 64, 64, 3, 3, 1, 1, 1);
    tma_diag d;
    cr_expect_eq(tma_conv2d_check(&sh, NULL, NULL, NULL, &d), TMA_OK, "%s", d.message);
    cr_expect_eq(tma_conv2d_check(NULL, NULL, NULL, NULL, &d), TMA_ERR_NULL_ARG);
    sh.c = 12; /* packed (folded taps), not refused */
    cr_expect_eq(tma_conv2d_check(&sh, NULL, NULL, NULL, &d), TMA_OK, "C = 12: %s", d.message);
    sh.c = 3, sh.r = sh.s = 7, sh.stride_h = sh.stride_w = 2, sh.pad_h = sh.pad_w = 3, sh.h = sh.w = 224;
    cr_expect_eq(tma_conv2d_check(&sh, NULL, NULL, NULL, &d), TMA_OK, "the 3-channel stem: %s", d.message);
    sh = shape_of(1, 8, 8, 64, 64, 3, 3, 1, 1, 1);
    sh.c = 64, sh.h = 0;
    expect_refused(&sh, NULL, NULL, TMA_ERR_ARG, "shape.h = 0", ">= 1");
    sh.h = 8, sh.stride_w = 9;
    expect_refused(&sh, NULL, NULL, TMA_ERR_ARG, "shape.stride_w = 9", "1..8");
    sh.stride_w = 8; /* the largest traversal stride is accepted */
    cr_expect_eq(tma_conv2d_check(&sh, NULL, NULL, NULL, &d), TMA_OK, "stride 8: %s", d.message);
    sh.stride_w = 1, sh.dilation_h = 0;
    expect_refused(&sh, NULL, NULL, TMA_ERR_ARG, "dilation_h = 0", ">= 1");
    sh.dilation_h = 1, sh.pad_h = 0, sh.r = 9;
    expect_refused(&sh, NULL, NULL, TMA_ERR_ARG, "r = 9", "no output rows");
    sh = shape_of(1, 8, 8, 64, 64, 3, 3, 1, 1, 1);
    cr_expect_eq(tma_conv2d_check(&sh, (const void *)(uintptr_t)0x1008, NULL, NULL, &d), TMA_OK,
                 "x at 8 bytes past 16 (packed): %s", d.message);
    expect_refused(&sh, (const void *)(uintptr_t)0x1001, NULL, TMA_ERR_ARG, "x = ", "2-byte");
    expect_refused(&sh, NULL, (const void *)(uintptr_t)0x1001, TMA_ERR_ARG, "y = ", "2-byte");
    /* The im2col bounding box: lower = -pad must be >= -128 for a rank-4 map. */
    sh.pad_w = 128;
    cr_expect_eq(tma_conv2d_check(&sh, NULL, NULL, NULL, &d), TMA_OK, "pad 128: %s", d.message);
    sh.pad_w = 129;
    expect_refused(&sh, NULL, NULL, TMA_ERR_IM2COL_CORNER, "x's im2col map", "pixel_box_lower[0] = -129");
    /* upper = pad - dilation (S - 1) >= -128 (C = 64: taps too wide to fold, read through the map as they are) */
    sh = shape_of(1, 300, 300, 64, 8, 3, 3, 1, 0, 1);
    sh.dilation_w = 65;
    expect_refused(&sh, NULL, NULL, TMA_ERR_IM2COL_CORNER, "x's im2col map", "pixel_box_upper[0] = -130");
    sh.dilation_w = 64; /* upper = -128: accepted */
    cr_expect_eq(tma_conv2d_check(&sh, NULL, NULL, NULL, &d), TMA_OK, "dilation 64: %s", d.message);
    sh.c = 8, sh.dilation_w = 65; /* 8 channels: the taps folded into the packed pixels, no corner to break */
    cr_expect_eq(tma_conv2d_check(&sh, NULL, NULL, NULL, &d), TMA_OK, "C = 8, dilation 65 (folded): %s", d.message);
    /* the other way: folding would break the range (rows 72 apart, padding materialised: upper = -144), the shape as
     * given keeps to it (upper = 72 - 144): not folded, not refused */
    sh = shape_of(19, 149, 145, 11, 378, 3, 3, 1, 72, 72);
    sh.stride_w = 4;
    cr_expect_eq(tma_conv2d_check(&sh, NULL, NULL, NULL, &d), TMA_OK, "C = 11, pad 72, dilation 72: %s", d.message);
    /* the last tap's im2col offset, dilation (S - 1) = 256, past a rank-4 copy's 0..255 (a box the map accepts: pad
     * 128, upper = -128): the copy's rule speaks, in the convolution's terms */
    sh = shape_of(1, 8, 300, 64, 8, 1, 2, 1, 0, 1);
    sh.pad_w = 128, sh.dilation_w = 256;
    expect_refused(&sh, NULL, NULL, TMA_ERR_IM2COL_OFFSET, "the last filter tap's im2col load", "offset[0] = 256");
    sh.dilation_w = 255;
    cr_expect_eq(tma_conv2d_check(&sh, NULL, NULL, NULL, &d), TMA_OK, "offset 255: %s", d.message);
    /* M = N P Q past 2^31 - 1 */
    sh = shape_of(40000, 256, 256, 8, 8, 1, 1, 1, 0, 1);
    expect_refused(&sh, NULL, NULL, TMA_ERR_ARG, "output pixels", "2^31 - 1");
}
