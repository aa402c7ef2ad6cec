/* tma_permute without a GPU (tma_permute_model, tma/kernels.h; the plan of kernels/permute_tiles.h):
 *   permute_lanes - the lane map is conflict-free for 1- and 8-byte elements too (every 16-byte read and write
 *                   of every quarter-warp hits 8 distinct bank groups, by libtma's swizzle helper).
 *   permute_plan  - what the plan makes of the issue's shapes: merged dimensions, COPY or TRANSPOSE, boxes.
 *   permute_model - the CPU-model pipeline against a plain CPU permutation on random ranks, shapes, perms,
 *                   strides and element sizes (seeded; TMA_TEST_SEED replays), output poisoned first, every dst
 *                   byte checked.
 *   permute_refuse - refusals name the field, its value, the limit and a fix. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "permute_ref.h"
#include "permute_tiles.h"
#include "tma/swizzle.h"
#include "test_seed.h"

/* (instruction, quarter-warp) pairs of a W x W sub-tile in which two lanes share a bank group (16-byte chunk). */
static int lane_conflicts(uint32_t e, uint32_t base) {
    const uint32_t v = 16u / e;
    int bad = 0;
    for (uint32_t s = 0; s < 8; s++)
        for (uint32_t ins = 0; ins < 2 * v; ins++) {
            uint32_t seen = 0;
            int clash = 0;
            for (uint32_t t = 0; t < 8; t++) {
                uint32_t k, c;
                tr_lane_block(8 * s + t, &k, &c);
                const uint32_t a = ins < v ? tma_swizzle_elem(TMA_SWIZZLE_128B, base, 128, e, k * v + ins, c * v)
                                           : tma_swizzle_elem(TMA_SWIZZLE_128B, base, 128, e, c * v + ins - v, k * v);
                const uint32_t g = (a / 16u) % 8u;
                clash |= (int)((seen >> g) & 1u);
                seen |= 1u << g;
            }
            bad += clash;
        }
    return bad;
}

Test(permute_lanes, every_element_size_conflict_free) {
    for (uint32_t e = 1; e <= 8; e *= 2)
        for (uint32_t base = 0; base < 8 * 1024; base += 1024) {
            const int n = lane_conflicts(e, base);
            cr_assert_eq(n, 0, "elem %u, tile at 0x%x: %d conflicting (instruction, quarter-warp) pairs", e, base, n);
        }
}

Test(permute_lanes, unswizzled_reads_of_a_packed_tile_conflict_free) {
    /* A packed tile (pm_packed_cols) is loaded unswizzled: read i of lane (k, c) is line kV + i, chunk c, at chunk
     * c of its line. Each quarter-warp's 8 lanes must read 8 distinct chunks, for every read and element size. */
    for (uint32_t e = 1; e <= 8; e *= 2) {
        const uint32_t v = 16u / e;
        for (uint32_t s = 0; s < 8; s++)
            for (uint32_t i = 0; i < v; i++) {
                uint32_t seen = 0;
                for (uint32_t t = 0; t < 8; t++) {
                    uint32_t k, c;
                    tr_lane_block(8 * s + t, &k, &c);
                    const uint32_t a = tma_swizzle_elem(TMA_SWIZZLE_NONE, 0, 128, e, k * v + i, c * v);
                    seen |= 1u << (a / 16u % 8u);
                }
                cr_assert_eq(seen, 0xFFu, "elem %u quarter-warp %u read %u: chunks %02x", e, s, i, seen);
            }
    }
}

/* ------------------------------------------------------------------------------------------------ plan */
static pm_layout plan_of(tma_permute_desc d) {
    static uint8_t dummy[16] __attribute__((aligned(16)));
    d.src = dummy, d.dst = dummy;
    pm_layout L;
    tma_diag diag;
    tma_status s = pm_plan(&d, &L, &diag);
    cr_assert_eq(s, TMA_OK, "plan: %s", diag.message);
    return L;
}

Test(permute_plan, nchw_to_nhwc_merges_h_and_w) {
    /* src {W, H, C, N} = {56, 56, 256, 32} bf16 -> dst {C, W, H, N} */
    tma_permute_desc d = {.elem_bytes = 2, .rank = 4, .src_dims = {56, 56, 256, 32}, .perm = {2, 0, 1, 3}};
    pm_layout L = plan_of(d);
    cr_assert_eq(L.transpose, 1);
    cr_assert_eq(L.ld.rank, 3, "HW merged: rank %u", L.ld.rank);
    cr_assert_eq(L.ld.global_dim[0], 56u * 56u);
    cr_assert_eq(L.ld.global_dim[1], 256u);
    cr_assert_eq(L.st.global_dim[0], 256u);
    cr_assert_eq(L.st.global_stride[0], 512u, "dst stride of a pixel: C x 2 bytes");
    cr_assert_eq(L.ld.box_dim[0], 64u);
    cr_assert_eq(L.ld.box_dim[1], PM_TILE_LINES < 256u ? PM_TILE_LINES : 256u);
}

Test(permute_plan, heads_split_is_a_copy) {
    /* [B, S, H, D] -> [B, H, S, D]: src {D, H, S, B}, dst {D, S, H, B} = perm {0, 2, 1, 3} */
    tma_permute_desc d = {.elem_bytes = 2, .rank = 4, .src_dims = {128, 32, 4096, 8}, .perm = {0, 2, 1, 3}};
    pm_layout L = plan_of(d);
    cr_assert_eq(L.transpose, 0);
    cr_assert_eq(L.ld.rank, 4);
    cr_assert_eq(L.st.global_stride[0], 4096u * 256u, "H in dst: S x D x 2 bytes");
    size_t bytes = tma_box_smem_bytes(&L.ld);
    cr_assert(bytes <= PM_COPY_BOX_BYTES && bytes >= PM_COPY_BOX_BYTES / 2, "box %zu bytes", bytes);
    cr_assert_gt(L.ld.box_dim[1], 1u, "box spans H (src contiguous)");
    cr_assert_gt(L.ld.box_dim[2], 1u, "box spans S (dst contiguous)");
}

Test(permute_plan, dense_identity_is_rows_of_a_copy) {
    tma_permute_desc d = {.elem_bytes = 4, .rank = 2, .src_dims = {8192, 8192}, .perm = {0, 1}};
    pm_layout L = plan_of(d);
    cr_assert_eq(L.transpose, 0);
    cr_assert_eq(L.ld.rank, 2);
    cr_assert_eq(L.ld.global_dim[0], 256u);
    cr_assert_eq(L.ld.box_dim[0] * L.ld.box_dim[1] * 4u, PM_COPY_BOX_BYTES);
}

Test(permute_plan, rank5_walks_slabs_in_dst_order) {
    /* src {256, 128, 64, 32, 16}, perm {1, 3, 0, 4, 2}: outer map dimensions 2, 3, 4 (src 2, 3, 4) have dst strides
     * 64 MiB, 512 B and 4 MiB, so the tiles walk 3, 4, 2 (dst order) */
    tma_permute_desc d = {.elem_bytes = 4, .rank = 5, .src_dims = {256, 128, 64, 32, 16}, .perm = {1, 3, 0, 4, 2}};
    pm_layout L = plan_of(d);
    cr_assert_eq(L.transpose, 1);
    cr_assert_eq(L.grid.dst_stride[2], 64ull << 20, "%llu", (unsigned long long)L.grid.dst_stride[2]);
    cr_assert_eq(L.grid.dst_stride[3], 512u);
    cr_assert_eq(L.grid.dst_stride[4], 4ull << 20);
    const uint32_t want[3] = {3, 4, 2};
    for (int j = 0; j < 3; j++)
        cr_assert_eq(L.grid.outer[j], want[j], "outer[%d] = %u", j, L.grid.outer[j]);
    cr_assert_eq(L.grid.tstore, 0, "dst rows of 512 bytes: TMA boxes");
}

Test(permute_plan, l2_hints_for_4_byte_elements_and_where_the_src_pitch_is_not_128_byte_aligned) {
    /* pm_src_keep, 8-byte elements: the ragged fp64 12345 x 6789 (src pitch 54,320 bytes) takes the hints; a pitch
     * of 212 x 256 bytes and one of 425 x 128 (every 128-byte box row inside one 256-byte block) do not */
    tma_permute_desc r = {.elem_bytes = 8, .rank = 2, .src_dims = {6789, 12345}, .perm = {1, 0},
                          .src_strides = {54320}, .dst_strides = {98768}};
    cr_assert_eq(plan_of(r).grid.src_keep, 1, "fp64, pitch 54320");
    r.src_strides[0] = 54272;
    cr_assert_eq(plan_of(r).grid.src_keep, 0, "fp64, pitch 54272");
    r.src_strides[0] = 54400;
    cr_assert_eq(plan_of(r).grid.src_keep, 0, "fp64, pitch 54400");
    tma_permute_desc a = {.elem_bytes = 8, .rank = 2, .src_dims = {8192, 8192}, .perm = {1, 0}};
    cr_assert_eq(plan_of(a).grid.src_keep, 0, "fp64, pitch 65536");
    /* 4-byte elements always, aligned pitches too */
    a.elem_bytes = 4;
    cr_assert_eq(plan_of(a).grid.src_keep, 1, "fp32, pitch 32768");
    /* in a rank-4 transpose it is map dimension 1's src stride that counts: NHWC -> NCHW {C, W = 56, H = 56, N},
     * map dimension 1 is HW, src stride C x elem */
    tma_permute_desc n = {.elem_bytes = 2, .rank = 4, .src_dims = {64, 56, 56, 2}, .perm = {1, 2, 0, 3}};
    cr_assert_eq(plan_of(n).grid.src_keep, 0, "bf16, stride 128");
    n.src_dims[0] = 40; /* 80 bytes */
    cr_assert_eq(plan_of(n).grid.src_keep, 1, "bf16, stride 80");
    /* 1-byte elements never: u8 12345 x 6789, src pitch 6,800 bytes */
    tma_permute_desc u = {.elem_bytes = 1, .rank = 2, .src_dims = {6789, 12345}, .perm = {1, 0},
                          .src_strides = {6800}, .dst_strides = {12352}};
    cr_assert_eq(plan_of(u).grid.src_keep, 0, "u8");
    u.elem_bytes = 2, u.src_strides[0] = 13584, u.dst_strides[0] = 24704;
    cr_assert_eq(plan_of(u).grid.src_keep, 1, "bf16, pitch 13584");
    u.src_dims[0] = 12345, u.src_dims[1] = 6789, u.src_strides[0] = 24704, u.dst_strides[0] = 13584;
    cr_assert_eq(plan_of(u).grid.src_keep, 0, "bf16, pitch 24704 = 193 x 128");
}

Test(permute_plan, unit_dimensions_dropped) {
    tma_permute_desc d = {.elem_bytes = 4, .rank = 5, .src_dims = {33, 1, 17, 1, 5}, .perm = {2, 1, 0, 4, 3},
                          .src_strides = {144, 144, 2448, 2448}, .dst_strides = {80, 80, 2640, 13200}};
    pm_layout L = plan_of(d);
    cr_assert_eq(L.transpose, 1);
    cr_assert_eq(L.ld.rank, 3, "rank %u", L.ld.rank);
}

/* ------------------------------------------------------------------------------------------------ model */
static uint64_t seed_of(const char *what) { return test_seed(what); }

/* Run d through the model on fresh random data and check every dst byte; returns 1 for a transpose plan. */
static int model_case(uint64_t *rng, tma_permute_desc d) {
    const pr_layout L = pr_layout_of(&d);
    uint8_t *src = aligned_alloc(16, L.src_bytes), *got = aligned_alloc(16, L.dst_bytes), *want = malloc(L.dst_bytes);
    cr_assert(src && got && want);
    for (size_t i = 0; i < L.src_bytes; i++)
        src[i] = (uint8_t)pr_next(rng);
    memset(got, PR_POISON, L.dst_bytes);
    memset(want, PR_POISON, L.dst_bytes);
    d.src = src, d.dst = got;
    pr_reference(&d, src, want);
    char what[400], where[200] = "";
    pr_describe(&d, what, sizeof what);
    tma_diag diag;
    tma_permute_model_facts f;
    tma_status s = tma_permute_model(&d, &f, &diag);
    cr_assert_eq(s, TMA_OK, "%s: %s", what, diag.message);
    size_t bad = pr_check(&d, got, want, where, sizeof where);
    cr_assert_eq(bad, 0, "%s (%s): %zu bad bytes, first %s", what, f.transpose ? "transpose" : "copy", bad, where);
    cr_assert_eq(f.load_tx_bytes, tma_box_tx_bytes(&f.load_desc));
    free(src), free(got), free(want);
    return (int)f.transpose;
}

Test(permute_model, random_permutations_every_element_size, .timeout = 300) {
    uint64_t rng = seed_of("permute_model");
    int n = 0, tr = 0;
    for (int i = 0; i < 400; i++, n++)
        tr += model_case(&rng, pr_random(&rng, 1u << (i % 4), 40000));
    cr_log_info("permute_model: %d random permutations (%d transposes, %d copies) matched the CPU permutation", n,
                tr, n - tr);
}

Test(permute_model, issue_shapes_scaled_down) {
    uint64_t rng = seed_of("permute_model shapes");
    /* NCHW -> NHWC and back, [B,S,H,D] -> [B,H,S,D], batched transpose, rank 5, 2-D ragged, all sizes */
    static const struct { uint32_t rank; uint64_t dims[5]; uint32_t perm[5]; } cases[] = {
        {4, {7, 5, 24, 3}, {2, 0, 1, 3}},  {4, {24, 7, 5, 3}, {1, 2, 0, 3}}, {4, {64, 12, 40, 2}, {0, 2, 1, 3}},
        {3, {100, 90, 3}, {1, 0, 2}},      {5, {9, 8, 7, 6, 5}, {3, 0, 4, 1, 2}}, {2, {333, 201}, {1, 0}},
        {2, {1, 77}, {1, 0}},              {2, {77, 1}, {1, 0}},          {1, {1000}, {0}},
    };
    for (uint32_t e = 1; e <= 8; e *= 2)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            tma_permute_desc d = {.elem_bytes = e, .rank = cases[i].rank};
            memcpy(d.src_dims, cases[i].dims, sizeof d.src_dims);
            memcpy(d.perm, cases[i].perm, sizeof d.perm);
            /* rows padded to 16 bytes where dense ones would not be */
            pr_layout L0 = pr_layout_of(&d);
            if (L0.ss[1] % 16 && d.rank > 1)
                d.src_strides[0] = (L0.ss[1] + 15) / 16 * 16;
            if (L0.ds[1] % 16 && d.rank > 1)
                d.dst_strides[0] = (L0.ds[1] + 15) / 16 * 16;
            pr_layout L1 = pr_layout_of(&d);
            for (uint32_t k = 2; k < d.rank; k++) {
                if (L1.ss[k] % 16)
                    d.src_strides[k - 1] = (L1.ss[k] + 15) / 16 * 16, L1 = pr_layout_of(&d);
                if (L1.ds[k] % 16)
                    d.dst_strides[k - 1] = (L1.ds[k] + 15) / 16 * 16, L1 = pr_layout_of(&d);
            }
            model_case(&rng, d);
        }
}

Test(permute_model, thread_stores_where_dst_rows_are_not_32_byte_aligned) {
    /* fp32 45 x 37 -> 37 x 45 with dst rows of 208 bytes (16 mod 32): the plan stores with the threads (THREAD
     * STORES in permute_tiles.h), each dst row's last chunk holding one element; with 224-byte rows, TMA boxes */
    uint64_t rng = seed_of("permute_model thread stores");
    tma_permute_desc d = {.elem_bytes = 4, .rank = 2, .src_dims = {37, 45}, .perm = {1, 0}, .src_strides = {160},
                          .dst_strides = {208}};
    pm_layout L = plan_of(d);
    cr_assert_eq(L.grid.tstore, 1, "dst pitch 208: tstore %u", L.grid.tstore);
    cr_assert_eq(L.grid.dst_stride[0], 208u);
    cr_assert_eq(model_case(&rng, d), 1);
    d.dst_strides[0] = 224;
    L = plan_of(d);
    cr_assert_eq(L.grid.tstore, 0, "dst pitch 224: tstore %u", L.grid.tstore);
    cr_assert_eq(model_case(&rng, d), 1);
    /* every element size (1-byte ones keep TMA boxes), dst rows 16 bytes past a multiple of 32, slabs stacked (rank
     * 3, a short) */
    for (uint32_t e = 1; e <= 8; e *= 2) {
        tma_permute_desc s3 = {.elem_bytes = e, .rank = 3, .src_dims = {300 / e, 20, 3}, .perm = {1, 0, 2}};
        s3.src_strides[0] = (300 / e * e + 15) / 16 * 16 + 32, s3.src_strides[1] = s3.src_strides[0] * 20;
        uint64_t pitch = (20u * e + 15u) / 16u * 16u;
        pitch += pitch % 32u ? 0u : 16u;
        s3.dst_strides[0] = pitch, s3.dst_strides[1] = pitch * (300 / e);
        cr_assert_eq(plan_of(s3).grid.tstore, e >= 2, "elem %u", e);
        cr_assert_eq(model_case(&rng, s3), 1);
    }
}

Test(permute_model, short_tiles_where_dst_rows_are_shorter_than_128_bytes) {
    /* NCHW -> NHWC with few channels: src {HW, C, N}, dst {C, HW, N}. dst's innermost dimension a = C is shorter
     * than W, so the tile takes C rounded up to V 2^j rows of W / R slabs each (pm_short_rows) and the threads store
     * it. Ragged HW (7 x 9) and N, dst rows padded to 16 bytes where C e is not a multiple of 16. */
    uint64_t rng = seed_of("permute_model short tiles");
    static const struct { uint32_t e, c, rows; } cases[] = {
        {2, 8, 8}, {2, 12, 16}, {2, 16, 16}, {2, 24, 32}, {2, 32, 32}, {2, 40, 0}, {4, 4, 4}, {4, 5, 8},
        {4, 8, 8}, {4, 12, 16}, {4, 16, 16}, {4, 20, 0},  {8, 2, 2},   {8, 3, 4},  {8, 6, 8}, {8, 8, 8}, {8, 9, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const uint32_t e = cases[i].e, c = cases[i].c, w = 128u / e;
        tma_permute_desc d = {.elem_bytes = e, .rank = 4, .src_dims = {7, 9, c, 2 * w + 3}, .perm = {2, 0, 1, 3}};
        d.src_strides[0] = (7u * e + 15u) / 16u * 16u;
        d.src_strides[1] = d.src_strides[0] * 9u, d.src_strides[2] = d.src_strides[1] * c;
        d.dst_strides[0] = (c * e + 15u) / 16u * 16u;
        d.dst_strides[1] = d.dst_strides[0] * 7u, d.dst_strides[2] = d.dst_strides[1] * 9u;
        const pm_layout L = plan_of(d);
        cr_assert_eq(L.transpose, 1, "C %u e %u", c, e);
        if (cases[i].rows) {
            cr_assert_eq(L.grid.box[1], cases[i].rows, "C %u e %u: rows %u", c, e, L.grid.box[1]);
            cr_assert_eq(L.grid.box[1] * L.grid.box[2] % w, 0, "whole sub-tiles");
            cr_assert_eq(L.grid.tstore, 1, "C %u e %u: the threads store a short tile", c, e);
        } else {
            cr_assert_eq(L.grid.box[1] % w, 0, "C %u e %u: W-multiple rows %u", c, e, L.grid.box[1]);
        }
        cr_assert(pm_tile_fits(L.grid.box[0], L.grid.box[1], L.grid.box[2], e, pm_tall(&L.grid, e)));
        cr_assert_eq(model_case(&rng, d), 1);
    }
    /* a single slab (rank 2): the usual tile, TMA boxes; fewer slabs than a sub-tile holds: a short tile */
    cr_assert_eq(pm_short_rows(8, 1, 4), 0);
    cr_assert_eq(pm_short_rows(8, 3, 4), 8);
    cr_assert_eq(pm_short_rows(8, 2, 4), 8);
    cr_assert_eq(pm_short_rows(8, 4, 4), 8);
    cr_assert_eq(pm_short_rows(8, 1000, 1), 0, "1-byte elements: no thread stores");
    tma_permute_desc d2 = {.elem_bytes = 4, .rank = 2, .src_dims = {100, 8}, .perm = {1, 0}, .src_strides = {400},
                           .dst_strides = {32}};
    cr_assert_eq(plan_of(d2).grid.box[1], 32u);
    cr_assert_eq(model_case(&rng, d2), 1);
    /* NHWC -> NCHW bf16 at H = W = 7 and 14, NCHW rows padded to 16 bytes: a = W (R = 8 and 16 rows) and H slabs.
     * 7 slabs, fewer than the 8 a sub-tile holds: one tile of 8 slabs, the last past the tensor, each row's one
     * chunk stored whole. 14 slabs where a 256-line tile holds 16: one tile of 16, not 12 + 4. */
    for (uint32_t hw = 7; hw <= 14; hw += 7) {
        const uint32_t r = hw == 7 ? 8u : 16u, row = 2u * r; /* bytes of a padded NCHW row */
        const tma_permute_desc d3 = {.elem_bytes = 2, .rank = 4, .src_dims = {24, hw, hw, 3}, .perm = {1, 2, 0, 3},
                                     .src_strides = {48, 48 * hw, 48 * hw * hw},
                                     .dst_strides = {row, row * hw, row * hw * 24}};
        const pm_layout L3 = plan_of(d3);
        cr_assert_eq(L3.grid.box[1], r, "H = W = %u", hw);
        cr_assert_eq(L3.grid.box[2], hw == 7 ? 8u : 16u, "H = W = %u", hw);
        cr_assert_eq(L3.grid.n[2], 1u, "H = W = %u: one tile along H", hw);
        cr_assert_eq(L3.grid.tstore, 1u);
        cr_assert_eq(model_case(&rng, d3), 1, "H = W = %u", hw);
    }
}

Test(permute_model, packed_tiles_where_src_rows_are_shorter_than_128_bytes) {
    /* NHWC -> NCHW with few channels: src {C, HW, N}, dst {HW, C, N}. src's innermost dimension is at most W / 2, so
     * the tile takes C rounded up to C0 = V 2^j and W / C0 slabs side by side in each line (pm_packed_cols), loaded
     * unswizzled through a map of order {C, N, HW} and stored as W x C0 x K boxes. Ragged HW (7 x 9) and N (not a
     * multiple of K). */
    uint64_t rng = seed_of("permute_model packed tiles");
    static const struct { uint32_t e, c, c0; } cases[] = {
        {1, 16, 16}, {1, 20, 32}, {1, 64, 64}, {1, 65, 0}, {2, 8, 8},  {2, 12, 16}, {2, 32, 32},
        {2, 33, 0},  {4, 4, 4},   {4, 6, 8},   {4, 16, 16}, {4, 17, 0}, {8, 2, 2},  {8, 8, 8},   {8, 9, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const uint32_t e = cases[i].e, c = cases[i].c, w = 128u / e;
        tma_permute_desc d = {.elem_bytes = e, .rank = 4, .src_dims = {c, 7, 9, w + 5}, .perm = {1, 2, 0, 3}};
        d.src_strides[0] = (c * e + 15u) / 16u * 16u;
        d.src_strides[1] = d.src_strides[0] * 7u, d.src_strides[2] = d.src_strides[1] * 9u;
        /* dst {W, H, C, N}: H dense after W (they merge), C's stride an H W plane padded to 32 bytes (TMA stores,
         * not the threads) */
        d.dst_strides[0] = 7u * e;
        d.dst_strides[1] = (63u * e + 31u) / 32u * 32u, d.dst_strides[2] = d.dst_strides[1] * c;
        const pm_layout L = plan_of(d);
        cr_assert_eq(L.transpose, 1, "C %u e %u", c, e);
        cr_assert_eq(L.grid.tstore, 0, "C %u e %u", c, e);
        if (cases[i].c0) {
            cr_assert_eq(pm_packed(&L.grid, e), 1, "C %u e %u: packed", c, e);
            cr_assert_eq(L.grid.box[0], cases[i].c0, "C %u e %u: C0 %u", c, e, L.grid.box[0]);
            cr_assert_eq(L.grid.box[2], w / cases[i].c0);
            cr_assert_eq(L.ld.swizzle, TMA_SWIZZLE_NONE);
            cr_assert_eq(L.ld.global_dim[1], w + 5u, "the load map lists the slab dimension second");
        } else {
            cr_assert_eq(pm_packed(&L.grid, e), 0, "C %u e %u", c, e);
            cr_assert_eq(L.grid.box[0], w);
        }
        cr_assert(pm_tile_fits(L.grid.box[0], L.grid.box[1], L.grid.box[2], e, pm_tall(&L.grid, e)));
        cr_assert_eq(model_case(&rng, d), 1);
    }
    /* fewer slabs than a line holds: the usual tile */
    cr_assert_eq(pm_packed_cols(16, 1, 4), 0);
    cr_assert_eq(pm_packed_cols(16, 2, 4), 16);
    cr_assert_eq(pm_packed_cols(4, 7, 4), 0);
}

Test(permute_model, thread_store_reads_are_conflict_free) {
    /* Each quarter-warp's 8 consecutive chunks (pm_tstore_slot) read 8 distinct 16-byte bank groups of the output
     * buffer, for the usual tiles (rows a multiple of W) and for short ones (several slabs in each line). */
    for (uint32_t e = 2; e <= 8; e *= 2) {
        const uint32_t w = 128u / e, v = 16u / e;
        for (uint32_t rows = v; rows <= 4u * w; rows *= 2) {
            const uint32_t most = PM_MAX_LINES(e, rows < w), slabs = most / rows ? most / rows : 1u;
            if (!pm_tile_fits(w, rows, slabs, e, pm_few(w, rows, e)))
                continue;
            pm_grid g;
            memset(&g, 0, sizeof g);
            g.box[1] = rows, g.box[2] = slabs;
            const uint32_t chunks = rows * slabs * 8u; /* 8 chunks of 16 bytes in each line */
            uint8_t seen_chunk[PM_TALL_TILE_LINES * 8u];
            memset(seen_chunk, 0, sizeof seen_chunk);
            for (uint32_t i0 = 0; i0 < chunks; i0 += 8u) {
                uint32_t groups = 0;
                for (uint32_t i = i0; i < i0 + 8u; i++) {
                    pm_slot sl;
                    pm_tstore_slot(&g, i, e, &sl);
                    groups |= 1u << (sl.soff / 16u % 8u);
                    cr_assert_lt(sl.soff / 16u, chunks);
                    seen_chunk[sl.soff / 16u]++;
                }
                cr_assert_eq(groups, 0xFFu, "e %u rows %u chunks %u..: bank groups %02x", e, rows, i0, groups);
            }
            for (uint32_t k = 0; k < chunks; k++) /* every chunk of the buffer read once */
                cr_assert_eq(seen_chunk[k], 1, "e %u rows %u: chunk %u read %u times", e, rows, k, seen_chunk[k]);
        }
    }
}

Test(permute_model, merged_strides_need_not_be_16_byte_multiples) {
    /* dense fp32 7 x 5 x 3 -> its own layout: src strides 28 and 140 bytes, which TMA cannot describe, vanish in
     * the merge (one run of 105 elements) */
    uint64_t rng = seed_of("permute_model merged");
    tma_permute_desc d = {.elem_bytes = 4, .rank = 3, .src_dims = {7, 5, 3}, .perm = {0, 1, 2}};
    cr_assert_eq(model_case(&rng, d), 0);
}

/* ------------------------------------------------------------------------------------------------ refusals */
Test(permute_refuse, messages_name_the_rule) {
    static uint8_t buf[4096] __attribute__((aligned(16)));
    tma_diag diag;
    tma_permute_desc d = {.elem_bytes = 3, .rank = 2, .src = buf, .dst = buf, .src_dims = {4, 4}, .perm = {1, 0}};
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_ARG);
    cr_assert(strstr(diag.message, "elem_bytes = 3") != NULL, "%s", diag.message);
    d.elem_bytes = 4, d.rank = 6;
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_ARG);
    cr_assert(strstr(diag.message, "rank = 6") != NULL, "%s", diag.message);
    d.rank = 2, d.perm[1] = 1, d.perm[0] = 1;
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_ARG);
    cr_assert(strstr(diag.message, "perm[1] = 1 repeats") != NULL, "%s", diag.message);
    d.perm[0] = 2;
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_ARG);
    cr_assert(strstr(diag.message, "perm[0] = 2 is not a src dimension") != NULL, "%s", diag.message);
    d.perm[0] = 1, d.perm[1] = 0, d.src_dims[1] = 0;
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_ARG);
    cr_assert(strstr(diag.message, "src_dims[1] = 0") != NULL, "%s", diag.message);
    d.src_dims[1] = 3ull << 30;
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_ARG);
    cr_assert(strstr(diag.message, "exceeds 2^31") != NULL, "%s", diag.message);
    d.src_dims[1] = 4, d.dst = NULL;
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_NULL_ARG);
    cr_assert(strstr(diag.message, "dst = NULL") != NULL, "%s", diag.message);
    d.dst = buf;
    /* a 4 x 4 fp32 transpose with dense 16-byte rows is fine; 5 columns make a 20-byte src stride, refused by the
     * checker, whose message names the stride, with the src dimension behind the map dimension */
    d.src_dims[0] = 5;
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_GLOBAL_STRIDE_ALIGN);
    cr_assert(strstr(diag.message, "src (load) map: global_stride[0] = 20 bytes") != NULL, "%s", diag.message);
    cr_assert(strstr(diag.message, "map dimensions are src dimensions 0:{0}, 1:{1}") != NULL, "%s", diag.message);
    /* a dst whose strides overlap */
    d.src_dims[0] = 8, d.src_strides[0] = 0, d.dst_strides[0] = 16; /* dst rows of 4 fp32 (16 B) hold 8 */
    d.src_dims[1] = 8;
    tma_status s = tma_permute_model(&d, NULL, &diag);
    cr_assert_eq(s, TMA_ERR_GLOBAL_STRIDE_OVERLAP, "%s: %s", tma_status_name(s), diag.message);
    cr_assert(strstr(diag.message, "dst (store) map") != NULL, "%s", diag.message);
    /* a misaligned address */
    d.dst_strides[0] = 0, d.src = buf + 8;
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_GLOBAL_ADDRESS_ALIGN);
    cr_assert(strstr(diag.message, "src (load) map: global_address") != NULL, "%s", diag.message);
}
