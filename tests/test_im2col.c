/* cpu: im2col maps - the checker (tma_check_im2col: every rule of cuTensorMapEncodeIm2col and the measured ones,
 * each with its status and message), the per-copy rules (tma_check_im2col_coords), the footprints and the CPU model
 * (tma_model_load_im2col) on cases worked out by hand from the walk of tma/rules.h "im2col maps". The GPU suite
 * gpu_im2col (when it exists) holds the same model to the silicon.
 *
 * No test here dereferences a fake address: the checker never reads global memory; model tests use host arrays. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "tma/tma.h"

#define FAKE ((const void *)(uintptr_t)0x100000)
#define P32 (UINT64_C(1) << 32)

/* A 3x3, pad 1 convolution's input: bf16 NHWC {C 64, W 8, H 8, N 2}, 64 channels (128 bytes) per pixel, 64 pixels
 * per copy, SWIZZLE_128B; lower = -pad = -1, upper = pad - (3 - 1) = -1. */
static tma_im2col_desc base(void) {
    return (tma_im2col_desc){
        .dtype = TMA_DTYPE_BF16,
        .rank = 4,
        .global_address = FAKE,
        .global_dim = {64, 8, 8, 2},
        .global_stride = {128, 1024, 8192},
        .pixel_box_lower = {-1, -1},
        .pixel_box_upper = {-1, -1},
        .channels_per_pixel = 64,
        .pixels_per_column = 64,
        .swizzle = TMA_SWIZZLE_128B,
    };
}

/* Expect status st and a message containing `part`. */
static void expect(const tma_im2col_desc *d, tma_status st, const char *part, const char *what) {
    tma_diag diag;
    const tma_status got = tma_check_im2col(d, &diag);
    cr_expect_eq(got, st, "%s: status %s, expected %s (%s)", what, tma_status_name(got), tma_status_name(st),
                 diag.message);
    cr_expect_eq(diag.status, got, "%s: diag.status is the status", what);
    if (part == NULL)
        cr_expect_str_eq(diag.message, "", "%s: no message for TMA_OK", what);
    else
        cr_expect(strstr(diag.message, part) != NULL, "%s: message \"%s\" lacks \"%s\"", what, diag.message, part);
}

Test(im2col_check, the_base_passes) {
    const tma_im2col_desc d = base();
    expect(&d, TMA_OK, NULL, "base");
    expect(NULL, TMA_ERR_NULL_ARG, "pass the address of a tma_im2col_desc", "NULL");
}

Test(im2col_check, all_lists_every_broken_rule) {
    tma_im2col_desc d = base();
    d.channels_per_pixel = 300, d.pixels_per_column = 2000;
    tma_diag diags[4], first;
    size_t count = 0;
    cr_expect_eq(tma_check_im2col_all(&d, diags, 4, &count), tma_check_im2col(&d, &first));
    cr_expect_eq(count, 2u, "two broken rules, got %zu", count);
    cr_expect_eq(diags[0].status, TMA_ERR_IM2COL_CHANNELS);
    cr_expect_str_eq(diags[0].message, first.message);
    cr_expect_eq(diags[1].status, TMA_ERR_IM2COL_PIXELS);
    d = base();
    cr_expect_eq(tma_check_im2col_all(&d, NULL, 0, &count), TMA_OK);
    cr_expect_eq(count, 0u);
}

Test(im2col_check, kinds) {
    tma_im2col_desc d = base();
    d.dtype = (tma_dtype)13;
    expect(&d, TMA_ERR_DTYPE, "dtype = 13 is a packed sub-byte type", "packed type");
    d.dtype = (tma_dtype)99;
    expect(&d, TMA_ERR_DTYPE, "dtype = 99 is not a tensor-map element type", "unknown type");
    d = base(), d.rank = 2;
    expect(&d, TMA_ERR_RANK, "rank = 2 is outside 3..5 for an im2col map", "rank 2");
    d.rank = 6;
    expect(&d, TMA_ERR_RANK, "rank = 6 is outside 3..5", "rank 6");
    d = base(), d.interleave = (tma_interleave)3;
    expect(&d, TMA_ERR_INTERLEAVE, "interleave = 3", "interleave enum");
    d = base(), d.swizzle = TMA_SWIZZLE_128B_ATOM_32B;
    expect(&d, TMA_ERR_SWIZZLE_UNSUPPORTED, "TMA_SWIZZLE_128B_ATOM_32B is a compute capability 10.x mode", "atom");
    d.swizzle = (tma_swizzle)9;
    expect(&d, TMA_ERR_SWIZZLE, "swizzle = 9", "swizzle enum");
    d = base(), d.l2_promotion = (tma_l2_promotion)4;
    expect(&d, TMA_ERR_L2_PROMOTION, "l2_promotion = 4", "l2");
    d = base(), d.oob_fill = (tma_oob_fill)2;
    expect(&d, TMA_ERR_OOB_FILL, "oob_fill = 2", "oob enum");
    d = base(), d.dtype = TMA_DTYPE_U16, d.oob_fill = TMA_OOB_NAN;
    expect(&d, TMA_ERR_OOB_FILL_NAN_INTEGER, "dtype = u16", "NaN fill of an integer type");
    d.dtype = TMA_DTYPE_F16;
    expect(&d, TMA_OK, NULL, "NaN fill of f16");
}

Test(im2col_check, the_tensor) {
    tma_im2col_desc d = base();
    d.global_address = NULL;
    expect(&d, TMA_ERR_GLOBAL_ADDRESS_NULL, "global_address = NULL", "NULL address");
    d.global_address = (const void *)(uintptr_t)0x100008;
    expect(&d, TMA_ERR_GLOBAL_ADDRESS_ALIGN, "global_address = 0x100008 is not 16-byte aligned", "address 8");
    d = base(), d.global_address = (const void *)(uintptr_t)0x100010, d.interleave = TMA_INTERLEAVE_32B,
    d.swizzle = TMA_SWIZZLE_NONE;
    expect(&d, TMA_ERR_GLOBAL_ADDRESS_ALIGN, "is not 32-byte aligned (TMA_INTERLEAVE_32B needs 32)", "address 32B");
    d = base(), d.global_dim[2] = 0;
    expect(&d, TMA_ERR_GLOBAL_DIM, "global_dim[2] = 0 is outside 1..2^32", "dim 0");
    d.global_dim[2] = P32 + 1;
    expect(&d, TMA_ERR_GLOBAL_DIM, "global_dim[2] = 4294967297", "dim 2^32 + 1");
    d = base(), d.global_stride[0] = 120;
    expect(&d, TMA_ERR_GLOBAL_STRIDE_ALIGN, "global_stride[0] = 120 bytes is not a multiple of 16", "stride 120");
    d = base(), d.global_stride[2] = UINT64_C(1) << 40;
    expect(&d, TMA_ERR_GLOBAL_STRIDE_RANGE, "global_stride[2] = 1099511627776 bytes", "stride 2^40");
    /* {16, 2^32, 2^32} u8 with strides {16, 2^39}: the last row starts past 2^64 */
    d = (tma_im2col_desc){.dtype = TMA_DTYPE_U8, .rank = 3, .global_address = FAKE, .global_dim = {16, P32, P32},
                          .global_stride = {16, UINT64_C(1) << 39}, .channels_per_pixel = 16, .pixels_per_column = 1};
    expect(&d, TMA_ERR_GLOBAL_EXTENT, "runs past the end of the 64-bit address space", "extent");
    /* overlapping strides are fine: im2col maps are only loaded from */
    d = base(), d.global_stride[1] = 128;
    expect(&d, TMA_OK, NULL, "overlapping view");
}

Test(im2col_check, corners_exact_at_both_ends) {
    static const struct {
        uint32_t rank;
        int32_t min, max;
    } r[] = {{3, -32768, 32767}, {4, -128, 127}, {5, -16, 15}};
    for (size_t k = 0; k < 3; k++) {
        tma_im2col_desc d = base();
        d.rank = r[k].rank;
        d.global_dim[0] = 64, d.global_dim[1] = 100000, d.global_dim[2] = 10, d.global_dim[3] = 10,
        d.global_dim[4] = 2;
        d.global_stride[0] = 128, d.global_stride[1] = 128 * 100000ull, d.global_stride[2] = 128 * 1000000ull,
        d.global_stride[3] = 128 * 10000000ull;
        d.pixel_box_lower[0] = r[k].min, d.pixel_box_upper[0] = r[k].max;
        char what[64];
        snprintf(what, sizeof what, "rank %u at the ends", r[k].rank);
        expect(&d, TMA_OK, NULL, what);
        d.pixel_box_lower[0] = r[k].min - 1;
        char part[128];
        snprintf(part, sizeof part, "pixel_box_lower[0] = %d is outside %d..%d, the corner range of a rank-%u",
                 r[k].min - 1, r[k].min, r[k].max, r[k].rank);
        expect(&d, TMA_ERR_IM2COL_CORNER, part, what);
        d.pixel_box_lower[0] = 0, d.pixel_box_upper[0] = r[k].max + 1;
        snprintf(part, sizeof part, "pixel_box_upper[0] = %d is outside", r[k].max + 1);
        expect(&d, TMA_ERR_IM2COL_CORNER, part, what);
    }
}

Test(im2col_check, bounding_box_not_empty) {
    tma_im2col_desc d = base();
    d.pixel_box_lower[0] = 0, d.pixel_box_upper[0] = -7; /* [0, 8 - 7 - 1] = [0, 0]: one pixel */
    expect(&d, TMA_OK, NULL, "one-pixel box");
    d.pixel_box_upper[0] = -8;
    expect(&d, TMA_ERR_IM2COL_BOX_EMPTY,
           "spatial dimension 0 (global_dim[1] = 8) with pixel_box_lower[0] = 0 and pixel_box_upper[0] = -8: the "
           "bounding box [0, 8 + -8 - 1] holds no pixel",
           "empty W");
    d = base(), d.pixel_box_lower[1] = 3, d.pixel_box_upper[1] = -6; /* H: 8 - 6 - 3 = -1 */
    expect(&d, TMA_ERR_IM2COL_BOX_EMPTY, "spatial dimension 1 (global_dim[2] = 8)", "empty H");
    /* measured: interleaved maps are checked against global_dim[i] (the channels for W) */
    d = base(), d.interleave = TMA_INTERLEAVE_16B, d.swizzle = TMA_SWIZZLE_NONE, d.global_dim[0] = 8,
    d.global_dim[1] = 64, d.channels_per_pixel = 8, d.pixel_box_lower[0] = 0, d.pixel_box_upper[0] = -8;
    expect(&d, TMA_ERR_IM2COL_BOX_EMPTY, "against global_dim[0] = 8 (an off-by-one of the driver)", "interleaved");
    d.pixel_box_upper[0] = -7;
    expect(&d, TMA_OK, NULL, "interleaved, one channel-row of slack");
}

/* measured: the driver sums global_dim + pixel_box_upper in 32 bits (W = 2^31 with upper -1 encodes, with upper 0
 * it is refused, and W = 2^32 with upper 1 wraps to a 1-pixel box and is accepted): libtma stops at 2^31 - 1 */
Test(im2col_check, bounding_box_end_fits_32_bits) {
    tma_im2col_desc d = base();
    d.rank = 3, d.global_dim[1] = UINT64_C(1) << 31, d.global_dim[2] = 2, d.global_stride[1] = UINT64_C(1) << 38;
    expect(&d, TMA_OK, NULL, "W = 2^31, upper -1: the box ends at 2^31 - 2");
    d.pixel_box_upper[0] = 0;
    expect(&d, TMA_ERR_GLOBAL_DIM,
           "global_dim[1] = 2147483648 with pixel_box_upper[0] = 0: their sum is 2147483648, past 2^31 - 1", "upper 0");
    d.global_dim[1] = P32, d.pixel_box_upper[0] = 1;
    expect(&d, TMA_ERR_GLOBAL_DIM, "the driver computes the bounding box in 32 bits", "the wrap the driver accepts");
    /* interleaved: the driver's own (off-by-one) check of corner 0 against global_dim[0], in 32 bits */
    d = base(), d.interleave = TMA_INTERLEAVE_16B, d.swizzle = TMA_SWIZZLE_NONE, d.global_dim[0] = (UINT64_C(1) << 31),
    d.channels_per_pixel = 8, d.global_stride[0] = UINT64_C(1) << 33, d.global_stride[1] = UINT64_C(1) << 36,
    d.global_stride[2] = UINT64_C(1) << 39, d.pixel_box_lower[0] = 0, d.pixel_box_upper[0] = 0;
    expect(&d, TMA_ERR_IM2COL_BOX_EMPTY, "against global_dim[0] = 2147483648", "2^31 wraps negative");
}

Test(im2col_check, channels_pixels_strides_footprint) {
    tma_im2col_desc d = base();
    d.channels_per_pixel = 0;
    expect(&d, TMA_ERR_IM2COL_CHANNELS, "channels_per_pixel = 0 is outside 1..256", "cpp 0");
    d.channels_per_pixel = 257, d.swizzle = TMA_SWIZZLE_NONE;
    expect(&d, TMA_ERR_IM2COL_CHANNELS, "channels_per_pixel = 257", "cpp 257");
    d.channels_per_pixel = 256;
    expect(&d, TMA_OK, NULL, "cpp 256");
    d = base(), d.channels_per_pixel = 4;
    expect(&d, TMA_ERR_BOX_INNER_BYTES,
           "channels_per_pixel = 4 bf16 elements = 8 bytes is not a multiple of 16 bytes: use a channels_per_pixel "
           "that is a multiple of 8 (e.g. 8)",
           "cpp 8 bytes");
    d = base(), d.channels_per_pixel = 128;
    expect(&d, TMA_ERR_BOX_SWIZZLE_SPAN,
           "channels_per_pixel = 128 bf16 elements = 256 bytes exceeds the 128-byte span of TMA_SWIZZLE_128B: use "
           "channels_per_pixel <= 64",
           "span");
    d = base(), d.pixels_per_column = 0;
    expect(&d, TMA_ERR_IM2COL_PIXELS, "pixels_per_column = 0 is outside 1..1024", "ppc 0");
    d.pixels_per_column = 1025;
    expect(&d, TMA_ERR_IM2COL_PIXELS, "pixels_per_column = 1025", "ppc 1025");
    d.pixels_per_column = 1024;
    expect(&d, TMA_OK, NULL, "ppc 1024");
    d = base(), d.element_stride[2] = 9;
    expect(&d, TMA_ERR_ELEMENT_STRIDE, "element_stride[2] = 9 is outside 1..8", "es 9");
    d.element_stride[2] = 8;
    expect(&d, TMA_OK, NULL, "es 8");
    d = base(), d.element_stride[0] = 2;
    expect(&d, TMA_ERR_ELEMENT_STRIDE, "element_stride[0] = 2 has no effect", "es[0]");
    /* 256-byte rows: 908 of them are exactly 227 KiB */
    d = base(), d.swizzle = TMA_SWIZZLE_NONE, d.channels_per_pixel = 128, d.pixels_per_column = 908;
    expect(&d, TMA_OK, NULL, "227 KiB");
    d.pixels_per_column = 909;
    expect(&d, TMA_ERR_BOX_SMEM,
           "one im2col copy occupies 232704 bytes of shared memory (909 pixels x 256-byte rows), more than the "
           "232448 bytes",
           "227 KiB + 256");
    /* 32-byte rows padded to the 128-byte span: shared memory counts the padding, the mbarrier does not */
    d = base(), d.channels_per_pixel = 16, d.pixels_per_column = 1024;
    expect(&d, TMA_OK, NULL, "padded rows within 227 KiB");
    cr_expect_eq(tma_im2col_smem_bytes(&d), 131072u, "1024 rows of 128 bytes");
    cr_expect_eq(tma_im2col_tx_bytes(&d), 32768u, "1024 x 32 dense bytes");
}

Test(im2col_check, footprints) {
    tma_im2col_desc d = base();
    cr_expect_eq(tma_im2col_tx_bytes(&d), 64u * 2u * 64u, "64 channels x 2 bytes x 64 pixels");
    cr_expect_eq(tma_im2col_smem_bytes(&d), 8192u, "128-byte rows x 64");
    d.channels_per_pixel = 32; /* 64-byte rows, padded to the 128-byte span */
    cr_expect_eq(tma_im2col_tx_bytes(&d), 4096u, "the mbarrier counts the dense bytes");
    cr_expect_eq(tma_im2col_smem_bytes(&d), 8192u, "shared memory counts the padded rows");
    d.swizzle = TMA_SWIZZLE_NONE;
    cr_expect_eq(tma_im2col_smem_bytes(&d), 4096u, "no swizzle: packed rows");
    d.pixels_per_column = 0;
    cr_expect_eq(tma_im2col_tx_bytes(&d), 0u, "invalid: 0");
    cr_expect_eq(tma_im2col_smem_bytes(NULL), 0u, "NULL: 0");
    d = base();
    const tma_box_info b = tma_im2col_box_info_of(&d);
    cr_expect_eq(b.tx_bytes, 8192u);
    cr_expect_eq(b.rows, 64u);
    cr_expect_eq(b.row_pitch, 128u);
    cr_expect(b.flags & TMA_BOX_IM2COL, "im2col flag");
    cr_expect_eq(b.im2col_lo[0], -1);
    cr_expect_eq(b.im2col_hi[0], 6, "8 + -1 - 1");
    cr_expect_eq(b.im2col_hi[1], 6);
}

static void expect_copy(const tma_im2col_desc *d, int32_t c0, int32_t c1, int32_t c2, int32_t c3, uint16_t o0,
                        uint16_t o1, tma_status st, const char *part) {
    const int32_t coord[5] = {c0, c1, c2, c3, 0};
    const uint16_t off[3] = {o0, o1, 0};
    tma_diag diag;
    const tma_status got = tma_check_im2col_coords_diag(d, coord, off, &diag);
    cr_expect_eq(got, st, "coord {%d, %d, %d, %d} offsets {%u, %u}: %s, expected %s (%s)", c0, c1, c2, c3, o0, o1,
                 tma_status_name(got), tma_status_name(st), diag.message);
    cr_expect_eq(tma_check_im2col_coords(d, coord, off), got, "the variant without diag agrees");
    if (part)
        cr_expect(strstr(diag.message, part) != NULL, "message \"%s\" lacks \"%s\"", diag.message, part);
}

Test(im2col_coords, per_copy_rules) {
    const tma_im2col_desc d = base(); /* W and H boxes: [-1, 8 - 1 - 1] = [-1, 6] */
    expect_copy(&d, 0, -1, -1, 0, 0, 0, TMA_OK, NULL);
    expect_copy(&d, 56, 6, 6, 1, 2, 2, TMA_OK, NULL);
    expect_copy(&d, 0, 6, 6, 5, 0, 0, TMA_OK, "");                       /* n is free: past the last image fills */
    expect_copy(&d, 0, 7, 0, 0, 0, 0, TMA_ERR_IM2COL_START,
                "im2col load at coord[1] = 7: the start must lie in the bounding box [-1, 6]");
    expect_copy(&d, 0, 0, -2, 0, 0, 0, TMA_ERR_IM2COL_START, "coord[2] = -2");
    expect_copy(&d, 4, 0, 0, 0, 0, 0, TMA_ERR_COORD_ALIGN, "coord[0] = 4 with 2-byte elements");
    expect_copy(&d, -8, 0, 0, 0, 0, 0, TMA_OK, NULL);                    /* 16 bytes below: aligned */
    expect_copy(&d, 0, 0, 0, 0, 255, 255, TMA_OK, NULL);
    expect_copy(&d, 0, 0, 0, 0, 0, 256, TMA_ERR_IM2COL_OFFSET,
                "offset[1] = 256: a rank-4 im2col copy takes offsets 0..255");
    tma_im2col_desc d5 = base();
    d5.rank = 5, d5.global_dim[3] = 4, d5.global_dim[4] = 2, d5.global_stride[3] = 8192 * 4;
    const int32_t c5[5] = {0, 0, 0, 0, 0};
    const uint16_t o5ok[3] = {31, 31, 31}, o5bad[3] = {0, 0, 32};
    cr_expect_eq(tma_check_im2col_coords(&d5, c5, o5ok), TMA_OK, "rank 5: offsets up to 31");
    cr_expect_eq(tma_check_im2col_coords(&d5, c5, o5bad), TMA_ERR_IM2COL_OFFSET, "rank 5: 32");
    tma_im2col_desc d3 = base();
    d3.rank = 3, d3.global_dim[2] = 2;
    const uint16_t o3[3] = {65535, 0, 0};
    cr_expect_eq(tma_check_im2col_coords(&d3, c5, o3), TMA_OK, "rank 3: 16-bit offsets");
    cr_expect_eq(tma_check_im2col_coords(&d, NULL, o3), TMA_ERR_NULL_ARG, "NULL coord");
    cr_expect_eq(tma_check_im2col_coords(&d, c5, NULL), TMA_ERR_NULL_ARG, "NULL offsets");
    tma_im2col_desc bad = base();
    bad.rank = 7;
    cr_expect_eq(tma_check_im2col_coords(&bad, c5, o3), TMA_ERR_RANK, "the descriptor's own error first");
}

/* ---------------------------------------------------------------------------------------------
 * The model, on hand-worked cases. g[n][w][c] = n * 100 + w * 10 + c (u32), rank 3 {C 4, W 5, N 2}.
 * ------------------------------------------------------------------------------------------- */

static _Alignas(16) uint32_t g3[2][5][4];

static tma_im2col_desc small3(void) {
    for (uint32_t n = 0; n < 2; n++)
        for (uint32_t w = 0; w < 5; w++)
            for (uint32_t c = 0; c < 4; c++)
                g3[n][w][c] = n * 100 + w * 10 + c;
    return (tma_im2col_desc){
        .dtype = TMA_DTYPE_U32,
        .rank = 3,
        .global_address = g3,
        .global_dim = {4, 5, 2},
        .global_stride = {16, 80},
        .pixel_box_lower = {-1}, /* W box: [-1, 5 - 1 - 1] = [-1, 3] */
        .pixel_box_upper = {-1},
        .channels_per_pixel = 4,
        .pixels_per_column = 8,
    };
}

#define POISON 0xABABABABu
#define FILL 0xFFFFFFFFu /* marks an expected fill row in the tables below */

static void run_model(const tma_im2col_desc *d, const int32_t coord[5], const uint16_t off[3], uint32_t *out,
                      size_t words) {
    for (size_t i = 0; i < words; i++)
        out[i] = POISON;
    const tma_status st = tma_model_load_im2col(d, coord, off, out, words * 4, 0);
    cr_assert_eq(st, TMA_OK, "model: %s", tma_status_name(st));
}

/* rows[p] = the (n * 100 + w * 10) of pixel p, or FILL; each row holds 4 channels */
static void expect_rows(const uint32_t *out, const uint32_t *rows, uint32_t n_rows, uint32_t pitch_words,
                        uint32_t fill, const char *what) {
    for (uint32_t p = 0; p < n_rows; p++)
        for (uint32_t c = 0; c < 4; c++) {
            const uint32_t want = rows[p] == FILL ? fill : rows[p] + c;
            cr_expect_eq(out[p * pitch_words + c], want, "%s: row %u channel %u = %u, expected %u", what, p, c,
                         out[p * pitch_words + c], want);
        }
}

Test(im2col_model, the_walk_restarts_at_the_lower_corner_and_carries_into_n) {
    const tma_im2col_desc d = small3();
    uint32_t out[40];
    /* offset 1: walked w = -1, 0, 1, 2, 3 (n 0), then -1, 0, 1 (n 1); fetched w = walked + 1 */
    const int32_t c[5] = {0, -1, 0};
    const uint16_t o1[3] = {1};
    run_model(&d, c, o1, out, 40);
    const uint32_t rows1[8] = {0, 10, 20, 30, 40, 100, 110, 120};
    expect_rows(out, rows1, 8, 4, 0, "offset 1");
    for (uint32_t i = 32; i < 40; i++)
        cr_expect_eq(out[i], POISON, "word %u past the copy untouched", i);
    /* offset 0: fetched w = -1 is outside the image: a zero row */
    const uint16_t o0[3] = {0};
    run_model(&d, c, o0, out, 40);
    const uint32_t rows0[8] = {FILL, 0, 10, 20, 30, FILL, 100, 110};
    expect_rows(out, rows0, 8, 4, 0, "offset 0");
}

Test(im2col_model, element_stride_and_past_the_last_image) {
    tma_im2col_desc d = small3();
    d.element_stride[1] = 2; /* w = -1, 1, 3, then 5 > 3: restart at -1 with n + 1 */
    d.pixels_per_column = 6;
    uint32_t out[24];
    const int32_t c[5] = {0, -1, 0};
    const uint16_t o[3] = {1};
    run_model(&d, c, o, out, 24);
    const uint32_t rows[6] = {0, 20, 40, 100, 120, 140};
    expect_rows(out, rows, 6, 4, 0, "stride 2");
    /* start at n = 1, w = 2: two pixels of image 1, then image 2 does not exist: fill rows, no wrap */
    d = small3();
    d.element_stride[2] = 1;
    d.pixels_per_column = 6;
    const int32_t c1[5] = {0, 2, 1};
    const uint16_t o0[3] = {0};
    run_model(&d, c1, o0, out, 24);
    const uint32_t rows1[6] = {120, 130, FILL, FILL, FILL, FILL};
    expect_rows(out, rows1, 6, 4, 0, "past the last image");
    /* the n step is element_stride[rank - 1] */
    d = small3();
    d.element_stride[2] = 2, d.pixels_per_column = 6;
    const int32_t c2[5] = {0, 2, -1};
    run_model(&d, c2, o0, out, 24);
    /* n = -1: w 2, 3 fill; then w restarts at -1 with n = 1: w -1 fill (offset 0), then 100, 110, 120 */
    const uint32_t rows2[6] = {FILL, FILL, FILL, 100, 110, 120};
    expect_rows(out, rows2, 6, 4, 0, "n steps by element_stride[2]");
}

Test(im2col_model, channels_outside_fill_per_element_and_nan) {
    static _Alignas(16) float gf[1][4][4];
    for (int w = 0; w < 4; w++)
        for (int ch = 0; ch < 4; ch++)
            gf[0][w][ch] = (float)(w * 10 + ch);
    const tma_im2col_desc d = {.dtype = TMA_DTYPE_F32, .rank = 3, .global_address = gf, .global_dim = {4, 4, 1},
                               .global_stride = {16, 64}, .channels_per_pixel = 8, .pixels_per_column = 2,
                               .oob_fill = TMA_OOB_NAN};
    uint32_t out[16];
    const int32_t c[5] = {0, 3, 0};
    const uint16_t o[3] = {0};
    run_model(&d, c, o, out, 16);
    /* pixel 0 = (w 3, n 0): channels 0..3 real, 4..7 past dim C: NaN fill 0x7FF77FF7; pixel 1 = (w 0, n 1): no
     * such image, a whole NaN row (the box is [0, 3]: w 4 > 3 restarts at 0 and carries into n) */
    for (int ch = 0; ch < 4; ch++) {
        float v;
        memcpy(&v, &out[ch], 4);
        cr_expect_eq(v, (float)(30 + ch), "channel %d", ch);
    }
    for (int i = 4; i < 16; i++)
        cr_expect_eq(out[i], 0x7FF77FF7u, "word %d is the NaN fill, got 0x%08x", i, out[i]);
}

Test(im2col_model, rank4_carries_h_and_n) {
    static _Alignas(16) uint32_t g[1][3][3][4]; /* {C 4, W 3, H 3, N 1}: g[n][h][w][c] = h * 100 + w * 10 + c */
    for (int h = 0; h < 3; h++)
        for (int w = 0; w < 3; w++)
            for (int ch = 0; ch < 4; ch++)
                g[0][h][w][ch] = (uint32_t)(h * 100 + w * 10 + ch);
    const tma_im2col_desc d = {.dtype = TMA_DTYPE_U32, .rank = 4, .global_address = g, .global_dim = {4, 3, 3, 1},
                               .global_stride = {16, 48, 144}, .channels_per_pixel = 4, .pixels_per_column = 6};
    uint32_t out[24];
    const int32_t c[5] = {0, 1, 1, 0};
    const uint16_t o[3] = {0, 0};
    run_model(&d, c, o, out, 24);
    /* (w1 h1) (w2 h1) (w0 h2) (w1 h2) (w2 h2), then h 3 > 2: restart at h 0 with n 1: no such image */
    const uint32_t rows[6] = {110, 120, 200, 210, 220, FILL};
    expect_rows(out, rows, 6, 4, 0, "rank 4");
    /* offsets per spatial dimension, innermost first: {1, 0} shifts w only */
    const uint16_t o10[3] = {1, 0};
    run_model(&d, c, o10, out, 24);
    const uint32_t rows10[6] = {120, FILL, 210, 220, FILL, FILL};
    expect_rows(out, rows10, 6, 4, 0, "offset {1, 0}");
}

Test(im2col_model, swizzle_padding_and_destination_rules) {
    tma_im2col_desc d = small3();
    d.swizzle = TMA_SWIZZLE_64B; /* 16-byte rows in 64-byte spans: bytes 16..63 of each row untouched */
    d.pixels_per_column = 4;
    uint32_t out[64];
    const int32_t c[5] = {0, -1, 0};
    const uint16_t o[3] = {1};
    run_model(&d, c, o, out, 64);
    /* 64B swizzle: chunk bits [5:4] ^= address bits [8:7]; rows at 0, 64, 128, 192 -> chunks 0, 0, 1, 1 */
    const uint32_t where[4] = {0, 16, 32 + 4, 48 + 4};
    for (uint32_t p = 0; p < 4; p++)
        for (uint32_t ch = 0; ch < 4; ch++)
            cr_expect_eq(out[where[p] + ch], p * 10 + ch, "row %u channel %u", p, ch);
    uint32_t touched = 0;
    for (uint32_t i = 0; i < 64; i++)
        touched += out[i] != POISON;
    cr_expect_eq(touched, 16u, "only the 4 x 16 bytes of data are written");

    cr_expect_eq(tma_model_load_im2col(&d, c, o, out, sizeof out, 64), TMA_ERR_SMEM_ALIGN, "dst 64");
    cr_expect_eq(tma_model_load_im2col(&d, c, o, out, 255, 0), TMA_ERR_SMEM_BOUNDS, "4 x 64 bytes need 256");
    cr_expect_eq(tma_model_load_im2col(&d, c, o, NULL, 256, 0), TMA_ERR_NULL_ARG, "NULL smem");
    const int32_t outside[5] = {0, 4, 0};
    cr_expect_eq(tma_model_load_im2col(&d, outside, o, out, sizeof out, 0), TMA_ERR_IM2COL_START,
                 "a start outside the box would fault: refused");
    d.interleave = TMA_INTERLEAVE_16B, d.swizzle = TMA_SWIZZLE_NONE;
    cr_expect_eq(tma_model_load_im2col(&d, c, o, out, sizeof out, 0), TMA_ERR_UNSUPPORTED, "interleaved: not modelled");
}
