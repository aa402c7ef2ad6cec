/* The libtma transpose without a GPU (tma_transpose_model, tma/kernels.h; the lane map of kernels/transpose_tiles.h):
 *   transpose_lanes - the lane map is a bijection onto the 64 blocks of a sub-tile, and every 16-byte
 *                     read and write instruction of every quarter-warp hits 8 distinct physical chunks
 *                     (bank groups), computed with libtma's swizzle helper, for both element sizes and
 *                     every 1024-byte aligned tile placement; the plain row-major map does not.
 *   transpose_model - the CPU-model tile pipeline (model load -> helper-addressed reads and writes ->
 *                     model store) against a plain transpose on ragged sizes, fp32 and bf16, output
 *                     poisoned first, every element compared bitwise; padding past the 16-byte chunk
 *                     of each row untouched.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "tma/swizzle.h"
#include "tma/kernels.h"
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

/* The libtma-wide variant writes into an unswizzled box of rows 128 * e bytes (box_rows = 128 input rows):
 * lane (q, k, c) writes line c*v + j at element column q*w + k*v. Conflicting (instruction, quarter-warp)
 * pairs over the 64-lane groups of every sub-tile q. */
static int wide_write_conflicts(uint32_t e) {
    const uint32_t v = 16u / e, w = 128u / e, pitch = 128u * e;
    int bad = 0;
    for (uint32_t q = 0; q < 128u / w; q++)
        for (uint32_t s = 0; s < 8; s++)
            for (uint32_t j = 0; j < v; j++) {
                uint32_t seen = 0;
                int clash = 0;
                for (uint32_t t = 0; t < 8; t++) {
                    uint32_t k, c;
                    tr_lane_block(8 * s + t, &k, &c);
                    uint32_t g = (tma_swizzle_elem(TMA_SWIZZLE_NONE, 0, pitch, e, c * v + j, q * w + k * v) / 16u) % 8u;
                    clash |= (seen >> g) & 1u;
                    seen |= 1u << g;
                }
                bad += clash;
            }
    return bad;
}

Test(transpose_lanes, wide_output_conflict_free) {
    cr_assert_eq(wide_write_conflicts(4), 0);
    cr_assert_eq(wide_write_conflicts(2), 0);
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

static void run_model(uint32_t e, uint32_t rows, uint32_t cols, uint32_t box_rows) {
    size_t ip = (cols * (size_t)e + 15) / 16 * 16 + 16 * (rows % 2), op = (rows * (size_t)e + 15) / 16 * 16 + 16 * (cols % 2);
    uint8_t *in = malloc(rows * ip), *out = malloc(cols * op), *want = malloc(cols * op);
    cr_assert(in && out && want);
    for (size_t i = 0; i < rows * ip; i++)
        in[i] = (uint8_t)(i * 2654435761u >> 13);
    memset(out, 0xEE, cols * op);
    memset(want, 0xEE, cols * op);
    ref_transpose(e, in, want, rows, cols, ip, op);
    char where[160] = "";
    tma_diag diag;
    tma_transpose_model_facts f;
    tma_status s = tma_transpose_model(e, in, out, rows, cols, ip, op, box_rows, &f, &diag);
    cr_assert_eq(s, TMA_OK, "%u x %u elem %u box_rows %u: %s", rows, cols, e, box_rows, diag.message);
    size_t bad = ref_compare(e, out, want, cols, rows, op, where, sizeof where);
    cr_assert_eq(bad, 0, "%u x %u elem %u box_rows %u: %zu elements differ, first %s", rows, cols, e, box_rows, bad,
                 where);
    /* Bytes past the 16-byte chunk holding each output row's last element are never written. */
    size_t chunk_end = (rows * (size_t)e + 15) / 16 * 16;
    for (uint32_t r = 0; r < cols; r++)
        for (size_t b = chunk_end; b < op; b++)
            cr_assert_eq(out[r * op + b], 0xEE, "row %u byte %zu of the padding written", r, b);
    cr_assert_eq(f.in_tx_bytes, (size_t)box_rows * 128u);
    cr_assert_eq(f.out_smem_bytes, (size_t)(128u / e) * 128u);
    free(in), free(out), free(want);
}

Test(transpose_model, ragged_fp32) {
    static const uint32_t sz[][2] = {{1, 1}, {3, 5}, {31, 33}, {32, 32}, {129, 67}, {200, 37}, {257, 130}};
    for (size_t i = 0; i < sizeof sz / sizeof sz[0]; i++) {
        run_model(4, sz[i][0], sz[i][1], 128);
        run_model(4, sz[i][0], sz[i][1], 64);
        run_model(4, sz[i][1], sz[i][0], 32);
    }
}

Test(transpose_model, ragged_bf16) {
    static const uint32_t sz[][2] = {{1, 1}, {3, 5}, {63, 65}, {64, 64}, {129, 67}, {300, 77}, {257, 130}};
    for (size_t i = 0; i < sizeof sz / sizeof sz[0]; i++) {
        run_model(2, sz[i][0], sz[i][1], 128);
        run_model(2, sz[i][1], sz[i][0], 64);
    }
}

Test(transpose_model, refuses_bad_arguments_with_a_message) {
    uint8_t buf[64] = {0};
    tma_diag diag;
    cr_assert_eq(tma_transpose_model(4, buf, buf, 2, 2, 16, 16, 48, NULL, &diag), TMA_ERR_ARG, "box_rows 48");
    cr_assert(strstr(diag.message, "box_rows = 48") != NULL, "%s", diag.message);
    cr_assert_eq(tma_transpose_model(3, buf, buf, 2, 2, 16, 16, 32, NULL, &diag), TMA_ERR_ARG, "3-byte elements");
    cr_assert(strstr(diag.message, "elem_bytes = 3") != NULL, "%s", diag.message);
    cr_assert_eq(tma_transpose_model(4, buf, NULL, 2, 2, 16, 16, 32, NULL, &diag), TMA_ERR_NULL_ARG, "out NULL");
    /* a pitch that breaks TMA's stride rule: the descriptor's own message, naming the map */
    cr_assert_eq(tma_transpose_model(4, buf, buf, 2, 2, 24, 16, 32, NULL, &diag), TMA_ERR_GLOBAL_STRIDE_ALIGN, "pitch");
    cr_assert(strstr(diag.message, "input map: global_stride[0] = 24 bytes") != NULL, "%s", diag.message);
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
