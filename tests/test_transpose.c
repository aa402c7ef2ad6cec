/* The libtma transpose without a GPU (tma_transpose_desc run through tma_permute_model, tma/kernels.h; the lane
 * map of kernels/transpose_tiles.h):
 *   transpose_lanes - the lane map is a bijection onto the 64 blocks of a sub-tile, and every 16-byte
 *                     read and write instruction of every quarter-warp hits 8 distinct physical chunks
 *                     (bank groups), computed with libtma's swizzle helper, for 2- and 4-byte elements
 *                     and every 1024-byte aligned tile placement (test_permute.c: 1 and 8); the plain
 *                     row-major map does not; the tile order visits every tile once.
 *   transpose_model - the permute's CPU-model pipeline on tma_transpose_desc against a plain
 *                     transpose on ragged sizes, 1-, 2-, 4- and 8-byte elements of fresh random data,
 *                     pitches of 16-byte multiples and of any element multiple, element-aligned
 *                     addresses; output poisoned first, every element compared bitwise, every byte of
 *                     each row's padding and the bytes around out untouched; the maps name the matrix
 *                     as given (where the TMA kernels take it); refusals.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "tma/swizzle.h"
#include "tma/kernels.h"
#include "test_seed.h"
#include "transpose_ref.h"
#include "transpose_tiles.h"

/* Physical 16-byte chunk column (bank group: chunk p = banks 4p..4p+3) of element (row, col) of a
 * 128B-swizzled tile at shared address base. */
static uint32_t bank_group(uint32_t base, uint32_t e, uint32_t row, uint32_t col) {
    return (tma_swizzle_elem(TMA_SWIZZLE_128B, base, 128, e, row, col) / 16u) % 8u;
}

typedef void (*lane_map)(uint32_t lb, uint32_t *k, uint32_t *c);

static void row_major_map(uint32_t lb, uint32_t *k, uint32_t *c) {
    *k = lb / 8u;
    *c = lb % 8u;
}

/* Number of (instruction, quarter-warp) pairs in which two lanes share a bank group. */
static int conflicts(lane_map map, uint32_t e, uint32_t base) {
    const uint32_t v = 16u / e;
    int bad = 0;
    for (uint32_t s = 0; s < 8; s++) /* quarter-warp s: lanes 8s..8s+7 */
        for (uint32_t ins = 0; ins < 2 * v; ins++) {
            uint32_t seen = 0;
            int clash = 0;
            for (uint32_t t = 0; t < 8; t++) {
                uint32_t k, c;
                map(8 * s + t, &k, &c);
                /* reads: line k*v + i, chunk c; writes: line c*v + j, chunk k */
                uint32_t g = ins < v ? bank_group(base, e, k * v + ins, c * v) : bank_group(base, e, c * v + ins - v, k * v);
                clash |= (seen >> g) & 1u;
                seen |= 1u << g;
            }
            bad += clash;
        }
    return bad;
}

Test(transpose_lanes, map_is_a_bijection) {
    int hit[8][8] = {{0}};
    for (uint32_t lb = 0; lb < 64; lb++) {
        uint32_t k, c;
        tr_lane_block(lb, &k, &c);
        cr_assert(k < 8 && c < 8);
        hit[k][c]++;
    }
    for (int k = 0; k < 8; k++)
        for (int c = 0; c < 8; c++)
            cr_assert_eq(hit[k][c], 1, "block (%d, %d) taken %d times", k, c, hit[k][c]);
}

Test(transpose_lanes, every_quarter_warp_conflict_free) {
    for (uint32_t e = 2; e <= 4; e += 2)
        for (uint32_t base = 0; base < 8 * 1024; base += 1024) {
            int n = conflicts(tr_lane_block, e, base);
            cr_assert_eq(n, 0, "elem %u, tile at 0x%x: %d conflicting (instruction, quarter-warp) pairs", e, base, n);
        }
    /* The obvious map is not conflict-free (the test can tell): fp32 writes of the row-major map put a
     * quarter-warp's 8 lanes on lines c*4 + j, whose swizzle takes only 2 values. */
    int n4 = conflicts(row_major_map, 4, 0), n2 = conflicts(row_major_map, 2, 0);
    cr_assert_gt(n4 + n2, 0);
    cr_log_info("lane map: 0 conflicting quarter-warps over %d instructions; row-major map: %d (fp32), %d (bf16)",
                8 * (8 + 16), n4, n2);
}

static uint64_t rng;
static void fill_random(uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        p[i] = (uint8_t)(rng >> 32);
    }
}

enum { GUARD = 64 }; /* poisoned bytes before and after out */

/* The transpose as tma_permute's 2-D case: tma_transpose_desc's maps name the matrix as given, and the model
 * pipeline writes exactly the transpose: no padding byte of a row, no byte around out. ip and op: pitches in bytes
 * (multiples of e, at least a row); in and out at in_off and out_off bytes past 64-byte boundaries (multiples of e);
 * dense: pass pitches of 0 where they equal the row. */
static void run_model_at(uint32_t e, uint32_t rows, uint32_t cols, size_t ip, size_t op, size_t in_off,
                         size_t out_off, int dense) {
    const size_t in_row = (size_t)cols * e, out_row = (size_t)rows * e;
    const size_t ip_arg = dense && ip == in_row ? 0 : ip, op_arg = dense && op == out_row ? 0 : op;
    const size_t out_n = (GUARD + out_off + cols * op + GUARD + 63) / 64 * 64;
    uint8_t *in_buf = aligned_alloc(64, (in_off + rows * ip + 63) / 64 * 64), *out_buf = aligned_alloc(64, out_n),
            *want = malloc(cols * op);
    cr_assert(in_buf && out_buf && want);
    uint8_t *in = in_buf + in_off, *out = out_buf + GUARD + out_off;
    fill_random(in, rows * ip);
    memset(out_buf, 0xEE, out_n);
    memset(want, 0xEE, cols * op);
    ref_transpose(e, in, want, rows, cols, ip, op);
    char where[160] = "";
    tma_diag diag;
    tma_permute_model_facts f;
    const tma_permute_desc d = tma_transpose_desc(e, in, out, rows, cols, ip_arg, op_arg);
    tma_status s = tma_permute_model(&d, &f, &diag);
    cr_assert_eq(s, TMA_OK, "%u x %u elem %u (pitch %zu -> %zu, in at +%zu, out at +%zu): %s", rows, cols, e, ip, op,
                 in_off, out_off, diag.message);
    size_t bad = ref_compare(e, out, want, cols, rows, op, where, sizeof where);
    cr_assert_eq(bad, 0, "%u x %u elem %u (pitch %zu -> %zu, in at +%zu, out at +%zu): %zu elements differ, first %s",
                 rows, cols, e, ip, op, in_off, out_off, bad, where);
    /* No byte of any row's padding is written, nor any byte around out. */
    for (uint32_t r = 0; r < cols; r++)
        for (size_t b = out_row; b < op; b++)
            cr_assert_eq(out[r * op + b], 0xEE, "%u x %u elem %u (pitch %zu): row %u byte %zu of the padding written",
                         rows, cols, e, op, r, b);
    for (size_t b = 0; b < out_n; b++)
        if (b < GUARD + out_off || b >= GUARD + out_off + cols * op)
            cr_assert_eq(out_buf[b], 0xEE, "%u x %u elem %u: byte %td from out written, outside it", rows, cols, e,
                         (ptrdiff_t)b - (ptrdiff_t)(GUARD + out_off));
    if (rows > 1 && cols > 1 && !f.threads) { /* load map {cols, rows} over in, store map {rows, cols} over out */
        cr_assert_eq(f.transpose, 1u);
        cr_assert(f.load_desc.global_dim[0] == cols && f.load_desc.global_dim[1] == rows &&
                      f.load_desc.global_stride[0] == ip,
                  "load map {%llu, %llu} stride %llu", (unsigned long long)f.load_desc.global_dim[0],
                  (unsigned long long)f.load_desc.global_dim[1], (unsigned long long)f.load_desc.global_stride[0]);
        cr_assert(f.store_desc.global_dim[0] == rows && f.store_desc.global_dim[1] == cols &&
                      f.store_desc.global_stride[0] == op,
                  "store map {%llu, %llu} stride %llu", (unsigned long long)f.store_desc.global_dim[0],
                  (unsigned long long)f.store_desc.global_dim[1], (unsigned long long)f.store_desc.global_stride[0]);
    }
    free(in_buf), free(out_buf), free(want);
}

/* Pitches: the row rounded up to 16 bytes, plus 16 on odd sizes (the pipeline must honour pitches, not assume them),
 * or 0 (dense) where the row is already a 16-byte multiple; 64-byte aligned addresses. */
static void run_model(uint32_t e, uint32_t rows, uint32_t cols) {
    const size_t in_row = (size_t)cols * e, out_row = (size_t)rows * e;
    const size_t ip = (in_row + 15) / 16 * 16 + 16 * (rows % 2), op = (out_row + 15) / 16 * 16 + 16 * (cols % 2);
    run_model_at(e, rows, cols, ip, op, 0, 0, 1);
}

Test(transpose_model, ragged_every_element_size) {
    rng = test_seed("transpose_model.ragged_every_element_size");
    static const uint32_t sz[][2] = {{1, 1},    {3, 5},     {1, 70},    {70, 1},    {31, 33},
                                     {32, 32},  {129, 67},  {200, 37},  {257, 130}, {300, 77}};
    static const uint32_t elems[] = {1, 2, 4, 8};
    for (size_t k = 0; k < 4; k++)
        for (size_t i = 0; i < sizeof sz / sizeof sz[0]; i++) {
            run_model(elems[k], sz[i][0], sz[i][1]);
            run_model(elems[k], sz[i][1], sz[i][0]);
        }
}

Test(transpose_model, dense_pitches) { /* pitch 0: the row's own bytes */
    rng = test_seed("transpose_model.dense_pitches");
    run_model(4, 64, 128);
    run_model(2, 256, 40);
    run_model(8, 34, 16);
}

Test(transpose_model, odd_pitches_and_addresses) {
    /* What TMA's 16-byte rules refused before issue 31: dense rows of any length (17 x 31 fp32: 124 and 68 bytes),
     * pitches of a few elements more than a row, addresses at any multiple of the element */
    rng = test_seed("transpose_model.odd_pitches_and_addresses");
    static const uint32_t sz[][2] = {{17, 31}, {31, 17}, {1, 70}, {70, 1}, {3, 50}, {129, 67}, {45, 37}};
    for (uint32_t e = 1; e <= 8; e *= 2)
        for (size_t i = 0; i < sizeof sz / sizeof sz[0]; i++) {
            const uint32_t rows = sz[i][0], cols = sz[i][1];
            const size_t in_row = (size_t)cols * e, out_row = (size_t)rows * e;
            run_model_at(e, rows, cols, in_row, out_row, 0, 0, 1);                        /* dense, aligned */
            run_model_at(e, rows, cols, in_row, out_row, e, (3u * e) % 64u, 1);           /* dense, odd addresses */
            run_model_at(e, rows, cols, in_row + e, out_row + 3u * e, 5u * e % 64u, e, 0); /* odd pitches too */
        }
}

Test(transpose_model, refuses_bad_arguments_with_a_message) {
    static _Alignas(128) uint8_t buf[512];
    tma_diag diag;
    tma_permute_desc d = tma_transpose_desc(3, buf, buf + 256, 2, 2, 16, 16);
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_ARG, "3-byte elements");
    cr_assert(strstr(diag.message, "elem_bytes = 3") != NULL, "%s", diag.message);
    d = tma_transpose_desc(4, buf, NULL, 2, 2, 16, 16);
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_NULL_ARG, "out NULL");
    cr_assert(strstr(diag.message, "dst = NULL") != NULL, "%s", diag.message);
    d = tma_transpose_desc(4, buf, buf + 256, 0, 2, 16, 16);
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_ARG, "0 rows");
    cr_assert(strstr(diag.message, "src_dims[1] = 0") != NULL, "%s", diag.message);
    /* a pitch TMA could not describe but a tensor all the same (rows of 20 bytes 24 apart): accepted; a pitch that
     * is not a multiple of the element: refused, naming the stride */
    d = tma_transpose_desc(4, buf, buf + 256, 2, 5, 24, 16);
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_OK, "pitch 24: %s", diag.message);
    d = tma_transpose_desc(4, buf, buf + 256, 2, 5, 22, 16);
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_ARG, "pitch 22");
    cr_assert(strstr(diag.message, "src_strides[0]") != NULL, "%s", diag.message);
    /* out rows that overlap: refused; in's may overlap (it is only read) */
    d = tma_transpose_desc(4, buf, buf + 256, 2, 8, 16, 16); /* in rows of 32 bytes, 16 apart */
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_OK, "in rows overlapping: %s", diag.message);
    d = tma_transpose_desc(4, buf, buf + 256, 8, 2, 16, 16); /* out rows of 32 bytes, 16 apart */
    const tma_status st = tma_permute_model(&d, NULL, &diag);
    cr_assert_neq(st, TMA_OK, "out rows overlapping");
    cr_assert(strstr(diag.message, "dst") != NULL, "%s: %s", tma_status_name(st), diag.message);
}

Test(transpose_model, desc_names_the_matrix) {
    int a = 0, b = 0;
    const tma_permute_desc d = tma_transpose_desc(2, &a, &b, 7, 9, 32, 48);
    cr_assert(d.elem_bytes == 2 && d.rank == 2 && d.src == &a && d.dst == &b);
    cr_assert(d.src_dims[0] == 9 && d.src_dims[1] == 7, "src {cols, rows}");
    cr_assert(d.src_strides[0] == 32 && d.dst_strides[0] == 48 && d.perm[0] == 1 && d.perm[1] == 0);
}

Test(transpose_lanes, tile_order_is_a_bijection) {
    static const uint32_t dims[][2] = {{1, 1}, {7, 3}, {213, 97}, {512, 128}, {33, 5}};
    static const uint32_t groups[] = {1, 4, 8, 16, 32, 1000};
    for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)
        for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
            uint32_t nx = dims[d][0], ny = dims[d][1];
            uint8_t *seen = calloc((size_t)nx * ny, 1);
            cr_assert(seen);
            for (uint32_t t = 0; t < nx * ny; t++) {
                uint32_t tx, ty;
                tr_tile_xy(t, nx, ny, groups[g], &tx, &ty);
                cr_assert(tx < nx && ty < ny, "tile %u of %ux%u, group %u -> (%u, %u)", t, nx, ny, groups[g], tx, ty);
                cr_assert_eq(seen[(size_t)ty * nx + tx]++, 0, "tile (%u, %u) taken twice", tx, ty);
            }
            free(seen);
        }
}
