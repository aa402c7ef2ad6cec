/* tma_permute without a GPU (tma_permute_model, tma/kernels.h; the plan of kernels/permute_tiles.h):
 *   permute_lanes - the lane map is conflict-free for 1- and 8-byte elements too (every 16-byte read and write
 *                   of every quarter-warp hits 8 distinct bank groups, by libtma's swizzle helper).
 *   permute_plan  - what the plan makes of the issue's shapes: merged dimensions, COPY or TRANSPOSE, boxes; which
 *                   kernel (the thread kernel only where no TMA map describes the tensor exactly).
 *   permute_model - the chunk transpose's geometry (conflict-free tile, a walk that takes every tile once), and
 *                   the CPU-model pipeline (TMA kernels and thread kernel) against a plain CPU permutation on
 *                   random ranks, odd sizes, perms, dense, aligned and odd strides, element-aligned addresses inside
 *                   host buffers, every element size (seeded; TMA_TEST_SEED replays), output poisoned first, every
 *                   dst byte checked: elements bitwise, every other byte of dst's span (between rows, a row's tail,
 *                   gaps) and the guard bytes around dst untouched, src unchanged.
 *   permute_refuse - only what is not a tensor is refused, with the field in the message; what TMA's 16-byte rules
 *                   refused before (rows of 12 or 124 bytes, strides of any element multiple, element-aligned
 *                   addresses) is accepted. */
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
/* The plan of d with src and dst at src_off and dst_off bytes past 16-byte boundaries. */
static pm_layout plan_at(tma_permute_desc d, size_t src_off, size_t dst_off) {
    static uint8_t dummy[32] __attribute__((aligned(16)));
    d.src = dummy + src_off, d.dst = dummy + dst_off;
    pm_layout L;
    tma_diag diag;
    tma_status s = pm_plan(&d, &L, &diag);
    cr_assert_eq(s, TMA_OK, "plan: %s", diag.message);
    return L;
}

static pm_layout plan_of(tma_permute_desc d) { return plan_at(d, 0, 0); }

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

Test(permute_plan, tiles_that_stack_slabs_are_tall) {
    /* issue 31's rank-5 case, fp32 {48, 40, 24, 32, 16}, perm {2, 0, 3, 1, 4}: dst's innermost dimension (src 2, 24
     * elements) takes 32-row slabs, stacked 8 to a tile of PM_TALL_TILE_LINES lines (pm_stacks_slabs); an a of 128
     * rows or more stacks nothing, and one that fills its slabs stacks them in the usual PM_TILE_LINES */
    tma_permute_desc d = {.elem_bytes = 4, .rank = 5, .src_dims = {48, 40, 24, 32, 16}, .perm = {2, 0, 3, 1, 4}};
    pm_layout L = plan_of(d);
    cr_assert_eq(L.transpose, 1);
    cr_assert_eq(L.grid.box[1], 32u, "rows of a: %u", L.grid.box[1]);
    cr_assert_eq(L.grid.box[2], PM_TALL_TILE_LINES / 32u, "slabs: %u", L.grid.box[2]);
    cr_assert(pm_tall(&L.grid, 4), "a tile of %u lines runs in the tall instances", L.grid.box[1] * L.grid.box[2]);
    d.src_dims[2] = 256;
    L = plan_of(d);
    cr_assert_eq(L.grid.box[1] * L.grid.box[2], PM_TILE_LINES, "a of 256: one slab of %u rows", L.grid.box[1]);
    cr_assert(!pm_tall(&L.grid, 4));
    d.src_dims[2] = 64; /* rows that fill their slabs: the usual tile (2 slabs of 64), with its L2 hints */
    L = plan_of(d);
    cr_assert_eq(L.grid.box[1] * L.grid.box[2], PM_TILE_LINES, "a of 64: %u x %u", L.grid.box[1], L.grid.box[2]);
    cr_assert(!pm_tall(&L.grid, 4));
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
    /* 1-byte elements never: u8 12352 x 6789, src pitch 6,800 bytes (dst rows of 12,352 bytes: a TMA map's exactly) */
    tma_permute_desc u = {.elem_bytes = 1, .rank = 2, .src_dims = {6789, 12352}, .perm = {1, 0},
                          .src_strides = {6800}, .dst_strides = {12352}};
    cr_assert_eq(plan_of(u).threads, 0u, "u8 12352 x 6789: the TMA transpose");
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

/* Run d through the model on fresh random data, dst at dst_off bytes past a 64-byte boundary in a guarded host
 * buffer, poisoned, and src src_off bytes into an allocation that ends with it (so AddressSanitizer, in CI, reports
 * a read past src); both offsets multiples of the element. Check every dst byte (pr_check: elements bitwise, every
 * other byte of its span the poison), the guards around dst, and that src is unchanged. Returns the facts. */
static tma_permute_model_facts model_run(uint64_t *rng, tma_permute_desc d, size_t src_off, size_t dst_off) {
    const pr_layout L = pr_layout_of(&d);
    uint8_t *dst, *dbuf = pr_buf_alloc(L.dst_bytes, dst_off, &dst);
    uint8_t *sbuf = malloc(src_off + L.src_bytes); /* 16-byte aligned (glibc) */
    uint8_t *want = malloc(L.dst_bytes), *src_copy = malloc(L.src_bytes);
    cr_assert(sbuf && dbuf && want && src_copy && (uintptr_t)sbuf % 16u == 0);
    uint8_t *src = sbuf + src_off;
    for (size_t i = 0; i < L.src_bytes; i++)
        src[i] = (uint8_t)pr_next(rng);
    memcpy(src_copy, src, L.src_bytes);
    memset(want, PR_POISON, L.dst_bytes);
    pr_reference(&d, src, want);
    d.src = src, d.dst = dst;
    char what[480], where[200] = "";
    pr_describe(&d, what, sizeof what);
    tma_diag diag;
    tma_permute_model_facts f;
    const tma_status s = tma_permute_model(&d, &f, &diag);
    cr_assert_eq(s, TMA_OK, "%s: refused a valid tensor: %s: %s", what, tma_status_name(s), diag.message);
    const char *how = f.threads ? "thread kernel" : f.transpose ? "TMA transpose" : "TMA copy";
    const size_t bad = pr_check(&d, dst, want, where, sizeof where);
    cr_assert_eq(bad, 0, "%s (%s): %zu bad bytes, first %s", what, how, bad, where);
    size_t before, after;
    cr_assert_eq(pr_buf_outside(dbuf, L.dst_bytes, dst_off, &before, &after), 0,
                 "%s (%s): wrote %zu bytes before dst and %zu after it", what, how, before, after);
    cr_assert_eq(memcmp(src, src_copy, L.src_bytes), 0, "%s (%s): src changed", what, how);
    if (!f.threads)
        cr_assert_eq(f.load_tx_bytes, tma_box_tx_bytes(&f.load_desc), "%s", what);
    free(sbuf), free(dbuf), free(want), free(src_copy);
    return f;
}

/* d at 64-byte aligned addresses; returns 1 for a transpose plan. */
static int model_case(uint64_t *rng, tma_permute_desc d) { return (int)model_run(rng, d, 0, 0).transpose; }

Test(permute_model, random_permutations_every_element_size, .timeout = 300) {
    /* pr_random: odd sizes, dense, 16-byte aligned and odd strides on each side (dimensions in another order in
     * memory, odd strides on dimensions of one element, src rows overlapping now and then), at element-aligned
     * addresses; every fourth one in the TMA kernels' domain (rows of whole 16-byte chunks, aligned strides and
     * addresses), so their share stays large */
    uint64_t rng = seed_of("permute_model");
    int n = 0, threads = 0, tr = 0;
    for (int i = 0; i < 1000; i++, n++) {
        const uint32_t e = 1u << (i % 4);
        const int tma = i % 16 < 4;
        const tma_permute_desc d = pr_random(&rng, e, 4000, tma);
        const size_t so = tma ? 0 : pr_offset(&rng, e), dof = tma ? 0 : pr_offset(&rng, e);
        const tma_permute_model_facts f = model_run(&rng, d, so, dof);
        threads += f.threads != 0, tr += !f.threads && f.transpose;
    }
    cr_log_info("permute_model: %d random permutations (%d on the thread kernel, %d TMA transposes, %d TMA copies) "
                "matched the CPU permutation, nothing written outside dst's elements",
                n, threads, tr, n - threads - tr);
}

Test(permute_model, odd_shapes_every_element_size_and_address) {
    /* Shapes of real models that no TMA map describes densely, scaled down: 17 x 31 and 31 x 17, rows of 12 bytes
     * (fp32 3 x 50 transposed, and copied), NCHW <-> NHWC of 3-channel images and of 7 x 7 maps, a logits-like row
     * of 257 elements, the rank-3 and rank-5 permutations of the issue; dense at 64-byte aligned and at odd
     * addresses, then with odd strides (each row a few elements longer) */
    uint64_t rng = seed_of("permute_model odd shapes");
    static const struct { uint32_t rank; uint64_t dims[5]; uint32_t perm[5]; } cases[] = {
        {2, {31, 17}, {1, 0}},       {2, {17, 31}, {1, 0}},          {2, {3, 50}, {1, 0}},
        {3, {3, 7, 5}, {0, 2, 1}},   {4, {9, 11, 3, 2}, {2, 0, 1, 3}}, {4, {3, 9, 11, 2}, {1, 2, 0, 3}},
        {4, {7, 7, 40, 2}, {2, 0, 1, 3}}, {4, {40, 7, 7, 2}, {1, 2, 0, 3}}, {2, {257, 5}, {1, 0}},
        {3, {11, 13, 7}, {1, 2, 0}}, {5, {6, 5, 4, 3, 2}, {2, 0, 3, 1, 4}}, {1, {37}, {0}},
    };
    int threads = 0, n = 0;
    for (uint32_t e = 1; e <= 8; e *= 2)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            tma_permute_desc d = {.elem_bytes = e, .rank = cases[i].rank};
            memcpy(d.src_dims, cases[i].dims, sizeof d.src_dims);
            memcpy(d.perm, cases[i].perm, sizeof d.perm);
            threads += model_run(&rng, d, 0, 0).threads != 0;
            model_run(&rng, d, e, (5u * e) % 64u);
            /* odd strides: every stride of each side a few elements more than the span inside it */
            const pr_layout L = pr_layout_of(&d);
            uint64_t ss = e * d.src_dims[0], ds = e * L.dd[0];
            for (uint32_t k = 1; k < d.rank; k++) {
                d.src_strides[k - 1] = ss + e * (k % 3 + 1), ss = d.src_strides[k - 1] * d.src_dims[k];
                d.dst_strides[k - 1] = ds + e * (k % 2 + 1), ds = d.dst_strides[k - 1] * L.dd[k];
            }
            model_run(&rng, d, pr_offset(&rng, e), pr_offset(&rng, e));
            n += 3;
        }
    cr_log_info("permute_model: %d odd shapes matched (%d of the dense aligned ones on the thread kernel)", n,
                threads);
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
    /* fp32 48 x 37 -> 37 x 48 with dst rows of 192 bytes at a pitch of 208 (16 mod 32): the plan stores with the
     * threads (THREAD STORES in permute_tiles.h); at a pitch of 224, TMA boxes. (dst rows of whole 16-byte chunks:
     * a TMA map describes both exactly.) */
    uint64_t rng = seed_of("permute_model thread stores");
    tma_permute_desc d = {.elem_bytes = 4, .rank = 2, .src_dims = {37, 48}, .perm = {1, 0}, .src_strides = {160},
                          .dst_strides = {208}};
    pm_layout L = plan_of(d);
    cr_assert_eq(L.grid.tstore, 1, "dst pitch 208: tstore %u", L.grid.tstore);
    cr_assert_eq(L.grid.dst_stride[0], 208u);
    cr_assert_eq(model_case(&rng, d), 1);
    d.dst_strides[0] = 224;
    L = plan_of(d);
    cr_assert_eq(L.grid.tstore, 0, "dst pitch 224: tstore %u", L.grid.tstore);
    cr_assert_eq(model_case(&rng, d), 1);
    /* every element size (1-byte ones keep TMA boxes), dst rows of 32 elements at a pitch 16 bytes past a multiple of
     * 32, slabs stacked (rank 3, a short) */
    for (uint32_t e = 1; e <= 8; e *= 2) {
        tma_permute_desc s3 = {.elem_bytes = e, .rank = 3, .src_dims = {300 / e, 32, 3}, .perm = {1, 0, 2}};
        s3.src_strides[0] = (300 / e * e + 15) / 16 * 16 + 32, s3.src_strides[1] = s3.src_strides[0] * 32;
        uint64_t pitch = 32u * e;
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
     * unswizzled through a map of order {C, N, HW} and stored as W x C0 x K boxes. HW = 16 x 9 (dst rows of whole
     * 16-byte chunks for every element size, which TMA stores exactly; ragged against the tile's W rows but for
     * 8-byte elements) and N not a multiple of K. */
    uint64_t rng = seed_of("permute_model packed tiles");
    static const struct { uint32_t e, c, c0; } cases[] = {
        {1, 16, 16}, {1, 20, 32}, {1, 64, 64}, {1, 65, 0}, {2, 8, 8},  {2, 12, 16}, {2, 32, 32},
        {2, 33, 0},  {4, 4, 4},   {4, 6, 8},   {4, 16, 16}, {4, 17, 0}, {8, 2, 2},  {8, 8, 8},   {8, 9, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const uint32_t e = cases[i].e, c = cases[i].c, w = 128u / e;
        tma_permute_desc d = {.elem_bytes = e, .rank = 4, .src_dims = {c, 16, 9, w + 5}, .perm = {1, 2, 0, 3}};
        d.src_strides[0] = (c * e + 15u) / 16u * 16u;
        d.src_strides[1] = d.src_strides[0] * 16u, d.src_strides[2] = d.src_strides[1] * 9u;
        /* dst {W, H, C, N}: H dense after W (they merge), C's stride an H W plane padded to 32 bytes (TMA stores,
         * not the threads) */
        d.dst_strides[0] = 16u * e;
        d.dst_strides[1] = (144u * e + 31u) / 32u * 32u, d.dst_strides[2] = d.dst_strides[1] * c;
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

/* The chunks of the tile at dimension-0 coordinate x0 (slab 0) in the run buffer (pm_dst_slab_runs): for every slot,
 * a whole chunk at a distinct 16-byte place inside its slab's run (pm_dst_run_len of the tile's rows inside dst, at
 * pm_dst_run_bytes a slab), the place its dst byte offset within its slab; every byte of the runs of the tile's slabs
 * inside dst written, nothing else. */
static void check_slab_runs(const pm_grid *g, uint32_t e, int32_t x0, uint32_t len_expected) {
    const uint32_t w = 128u / e, v = 16u / e, room = pm_dst_run_bytes(g, e), len = pm_dst_run_len(g, x0, e);
    cr_assert_eq(room, w * g->lim_a * e, "a slab's room: W rows");
    cr_assert_eq(len, len_expected, "tile at %d: runs of %u bytes", x0, len);
    const uint32_t lines = pm_tile_lines(g->box[0], g->box[1], g->box[2], e), threads = 64u * lines / w;
    static uint8_t seen[32768 / 16];
    cr_assert_leq((size_t)g->box[2] * room, sizeof seen * 16u);
    memset(seen, 0, sizeof seen);
    const int32_t at[5] = {x0, 0, 0, 0, 0};
    for (uint32_t i = 0; i < v * threads; i++) {
        pm_slot sl;
        pm_tstore_slot(g, i, e, &sl);
        const uint32_t bytes = pm_tstore_bytes(g, at, &sl, e);
        if (bytes == 0u)
            continue;
        cr_assert_eq(bytes, 16u, "slot %u: a whole chunk", i);
        const uint32_t in_run = sl.run_off - sl.c2 * room;
        cr_assert(sl.run_off % 16u == 0u && in_run + 16u <= len, "slot %u at %u", i, sl.run_off);
        cr_assert_eq((uint64_t)in_run, sl.rel - sl.c2 * g->dst_stride[2],
                     "slot %u: its place in the run is its dst offset in the slab", i);
        cr_assert_eq(seen[sl.run_off / 16u]++, 0, "slot %u: run chunk %u written twice", i, sl.run_off / 16u);
    }
    const uint32_t slabs = g->lim_c < g->box[2] ? g->lim_c : g->box[2]; /* the tile's slabs inside dst */
    for (uint32_t c = 0; c < g->box[2] * room / 16u; c++)
        cr_assert_eq(seen[c], c / (room / 16u) < slabs && c % (room / 16u) < len / 16u ? 1 : 0,
                     "run chunk %u written %u times", c, seen[c]);
}

Test(permute_plan, slab_runs_where_each_slab_of_a_thread_stored_tile_is_one_dst_run) {
    /* The issue-31 rank-5 case in bf16 (dst rows of 24 elements, 48 bytes, dense; src's dimension 0 of 48 in one
     * tile) and bf16 {112, 7, 24, 3} (dimension 0 in two tiles, the second's runs 48 rows) store each slab of a tile as
     * one run (pm_dst_slab_runs); with dst's rows 80 or 64 bytes apart (a gap after each) they do not, nor where a
     * run would be shorter than PM_SLAB_RUN_MIN_BYTES. */
    uint64_t rng = seed_of("permute_plan slab runs");
    tma_permute_desc d = {.elem_bytes = 2, .rank = 5, .src_dims = {48, 40, 24, 32, 16}, .perm = {2, 0, 3, 1, 4}};
    const pm_layout L = plan_of(d);
    cr_assert(L.transpose && L.grid.tstore && L.grid.dspan, "rank 5 bf16: tstore %u dspan %u", L.grid.tstore,
              L.grid.dspan);
    check_slab_runs(&L.grid, 2, 0, 48u * 48u);
    cr_assert_eq(model_case(&rng, d), 1);
    const tma_permute_desc two = {.elem_bytes = 2, .rank = 4, .src_dims = {112, 7, 24, 3}, .perm = {2, 0, 3, 1}};
    const pm_layout L2 = plan_of(two);
    cr_assert(L2.transpose && L2.grid.tstore && L2.grid.dspan && L2.grid.n[0] == 2u,
              "bf16 {112, 7, 24, 3}: tstore %u dspan %u, %u tiles of dimension 0", L2.grid.tstore, L2.grid.dspan,
              L2.grid.n[0]);
    check_slab_runs(&L2.grid, 2, 0, 64u * 48u);
    check_slab_runs(&L2.grid, 2, 64, 48u * 48u);
    cr_assert_eq(model_case(&rng, two), 1);
    d.dst_strides[0] = 80, d.dst_strides[1] = 80u * 48u, d.dst_strides[2] = 80u * 48u * 32u,
    d.dst_strides[3] = 80u * 48u * 32u * 40u;
    cr_assert(plan_of(d).grid.tstore && !plan_of(d).grid.dspan, "dst rows 80 bytes apart: thread stores, no runs");
    d.dst_strides[0] = 64, d.dst_strides[1] = 64u * 48u, d.dst_strides[2] = 64u * 48u * 32u,
    d.dst_strides[3] = 64u * 48u * 32u * 40u;
    cr_assert(!plan_of(d).grid.dspan, "dst rows 64 bytes apart (a gap after each): no runs");
    /* the shortest run, the last tile's of dimension 0, against PM_SLAB_RUN_MIN_BYTES (2 KiB) */
    cr_assert_eq(PM_SLAB_RUN_MIN_BYTES, 2048u, "the plans below straddle the threshold");
    const tma_permute_desc c16 = {.elem_bytes = 4, .rank = 3, .src_dims = {1088, 16, 3}, .perm = {1, 0, 2}};
    cr_assert(plan_of(c16).grid.dspan, "16 channels of fp32, 34 full tiles: runs of 2 KiB");
    const tma_permute_desc c16p = {.elem_bytes = 4, .rank = 3, .src_dims = {1072, 16, 3}, .perm = {1, 0, 2}};
    cr_assert(plan_of(c16p).grid.tstore && !plan_of(c16p).grid.dspan, "the last tile's 16 rows: 1 KiB, no runs");
    const tma_permute_desc r64 = {.elem_bytes = 4, .rank = 5, .src_dims = {48, 32, 6, 16, 5}, .perm = {3, 0, 4, 1, 2}};
    cr_assert(!plan_of(r64).grid.dspan, "rank 5 with 64-byte rows, dimension 0 of 48: the last tile's runs 1 KiB");
    const tma_permute_desc r40 = {.elem_bytes = 2, .rank = 3, .src_dims = {40, 24, 35}, .perm = {1, 0, 2}};
    cr_assert(!plan_of(r40).grid.dspan, "40 rows of 48 bytes in one tile: runs of 1,920 bytes");
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

/* CHUNK TRANSPOSE: the number of (instruction, lane group) pairs in which two lanes touch distinct words of one bank,
 * for accesses of `bytes` each (32 / (bytes / 4) lanes served together), lane l at word words[l]. */
static int chunk_conflicts(const uint32_t *words, uint32_t bytes) {
    const uint32_t per = bytes / 4u, lanes = 32u / per;
    int bad = 0;
    for (uint32_t l0 = 0; l0 < 32u; l0 += lanes) {
        uint32_t bank_word[32];
        for (uint32_t b = 0; b < 32u; b++)
            bank_word[b] = UINT32_MAX;
        for (uint32_t l = l0; l < l0 + lanes; l++)
            for (uint32_t w = words[l]; w < words[l] + per; w++) {
                bad += bank_word[w % 32u] != UINT32_MAX && bank_word[w % 32u] != w;
                bank_word[w % 32u] = w;
            }
    }
    return bad;
}

Test(permute_model, chunk_transpose_reads_and_writes_are_conflict_free) {
    /* The loads' 16-byte writes (8 threads a tile row, pm_ct_word's chunk) and each item's reads (its V rows, 4
     * elements each: 4, 8, 16 or 2 x 16 bytes) fall in distinct banks, every warp, every instruction, every element
     * size; and the tile's 4,096 words are each written once and read once (the XOR is a permutation). */
    for (uint32_t e = 1; e <= 8; e *= 2) {
        const uint32_t v = pm_ct_v(e), wide = e < 4u ? 4u * e : 16u;
        uint8_t written[PM_CT_ROWS * 32u] = {0}, read[PM_CT_ROWS * 32u] = {0};
        for (uint32_t warp = 0; warp < PM_THR_THREADS / 32u; warp++) {
            for (uint32_t j = 0; j < PM_CT_LOADS_PER_THREAD; j++) {
                uint32_t words[32];
                for (uint32_t l = 0; l < 32u; l++) {
                    const uint32_t i = 32u * warp + l, y = i / 8u + (PM_THR_THREADS / 8u) * j;
                    words[l] = pm_ct_word(e, y, 4u * (i % 8u)) & ~3u;
                    for (uint32_t m = 0; m < 4u; m++)
                        written[pm_ct_word(e, y, 4u * (i % 8u) + m)]++;
                }
                cr_assert_eq(chunk_conflicts(words, 16), 0, "e %u warp %u load %u: conflicts", e, warp, j);
            }
            for (uint32_t part = 0; part < (e == 8u ? 2u : 1u); part++)
                for (uint32_t m = 0; m < v; m++) {
                    uint32_t words[32];
                    for (uint32_t l = 0; l < 32u; l++) {
                        uint32_t xq, k;
                        pm_ct_item(e, 32u * warp + l, &xq, &k);
                        const uint32_t w = e * xq + 4u * part; /* the item's first word of this read */
                        words[l] = pm_ct_word(e, v * k + m, w);
                        for (uint32_t b = 0; b < wide / 4u; b++) {
                            cr_assert_eq(pm_ct_word(e, v * k + m, w + b), words[l] + b, "e %u: a read's words in order", e);
                            read[words[l] + b]++;
                        }
                    }
                    cr_assert_eq(chunk_conflicts(words, wide), 0, "e %u warp %u read %u.%u: conflicts", e, warp, part, m);
                }
        }
        for (uint32_t w = 0; w < PM_CT_ROWS * 32u; w++)
            cr_assert(written[w] == 1 && read[w] == 1, "e %u word %u written %u times, read %u", e, w, written[w], read[w]);
    }
}

Test(permute_model, chunk_transpose_walk_visits_every_tile_once) {
    /* pm_thr_walk (bands of `group` tile columns, each outer index in turn) is a permutation of the tile indices for
     * any tile grid and band width, the last band narrower included: every tile taken once. */
    uint64_t rng = seed_of("permute_model.chunk_transpose_walk_visits_every_tile_once");
    for (int trial = 0; trial < 200; trial++) {
        pm_thr R;
        memset(&R, 0, sizeof R);
        R.tn[0] = (uint32_t)pr_in(&rng, 1, 40), R.tn[1] = (uint32_t)pr_in(&rng, 1, 40);
        R.tn[2] = (uint32_t)pr_in(&rng, 1, 3);
        R.rank = 3;
        const uint32_t group = trial == 0 ? PM_CT_GROUP : (uint32_t)pr_in(&rng, 0, 12);
        const uint64_t tiles = (uint64_t)R.tn[0] * R.tn[1] * R.tn[2];
        uint8_t *seen = calloc(tiles, 1);
        cr_assert(seen != NULL);
        for (uint64_t t = 0; t < tiles; t++) {
            const uint64_t w = pm_thr_walk(&R, t, group);
            cr_assert(w < tiles && !seen[w], "tiles %u x %u x %u, bands of %u: step %llu gives tile %llu twice or past "
                      "the end", R.tn[0], R.tn[1], R.tn[2], group, (unsigned long long)t, (unsigned long long)w);
            seen[w] = 1;
        }
        free(seen);
    }
}

Test(permute_model, chunk_transpose_walk_tile_is_the_walk_s_tile) {
    /* pm_thr_walk_tile (the kernel's) gives, field for field, the tile pm_thr_tile_of gives for pm_thr_walk's index:
     * ranks 2 to 5, random tile grids, band widths and strides, every index. */
    uint64_t rng = seed_of("permute_model.chunk_transpose_walk_tile_is_the_walk_s_tile");
    for (int trial = 0; trial < 300; trial++) {
        pm_thr R;
        memset(&R, 0, sizeof R);
        R.rank = (uint32_t)pr_in(&rng, 2, 5);
        R.tx = (uint32_t)pr_in(&rng, 1, 128), R.ty = (uint32_t)pr_in(&rng, 1, 128);
        for (uint32_t k = 0; k < 5u; k++) {
            R.tn[k] = k < R.rank ? (uint32_t)pr_in(&rng, 1, k < 2u ? 30 : 3) : 1u;
            R.n[k] = k == 0 ? (R.tn[0] - 1u) * R.tx + (uint32_t)pr_in(&rng, 1, (int)R.tx)
                   : k == 1 ? (R.tn[1] - 1u) * R.ty + (uint32_t)pr_in(&rng, 1, (int)R.ty) : R.tn[k];
            R.ss[k] = (uint64_t)pr_in(&rng, 1, 1 << 20), R.ds[k] = (uint64_t)pr_in(&rng, 1, 1 << 20);
        }
        const uint32_t group = trial == 0 ? PM_CT_GROUP : (uint32_t)pr_in(&rng, 0, 12);
        const uint64_t tiles = (uint64_t)R.tn[0] * R.tn[1] * R.tn[2] * R.tn[3] * R.tn[4];
        for (uint64_t t = 0; t < tiles; t++) {
            pm_thr_tile a, b;
            pm_thr_tile_of(&R, pm_thr_walk(&R, t, group), &a);
            pm_thr_walk_tile(&R, t, group, &b);
            cr_assert(a.x0 == b.x0 && a.y0 == b.y0 && a.nx == b.nx && a.ny == b.ny && a.s == b.s && a.d == b.d,
                      "rank %u, tiles %u x %u x %u x %u x %u, bands of %u: step %llu", R.rank, R.tn[0], R.tn[1],
                      R.tn[2], R.tn[3], R.tn[4], group, (unsigned long long)t);
        }
    }
}

Test(permute_model, chunk_transpose_src_at_any_phase) {
    /* Transposes long in both dimensions whose dst rows start on 16 bytes (the chunk transpose, pm_thr_chunks): src
     * rows of odd lengths at odd addresses and with odd strides, last tiles short in both dimensions, every element
     * size, batched (rank 3) too; the same with dst rows off 16 bytes is not taken (each dst row's end chunks would
     * be partial). */
    uint64_t rng = seed_of("permute_model chunks");
    int n = 0;
    for (uint32_t e = 1; e <= 8; e *= 2)
        for (int i = 0; i < 6; i++) {
            tma_permute_desc d = {.elem_bytes = e, .rank = 2, .perm = {1, 0}};
            /* longer than the tiles that take a short side whole (PM_THR_WHOLE_X, PM_THR_WHOLE_Y); dst rows of 16
             * bytes times an odd number (32-byte sectors go to the element tiles for 4- and 8-byte elements) */
            const uint32_t v = 16u / e;
            d.src_dims[0] = pr_in(&rng, PM_THR_WHOLE_X + 1u, 400) | 1u;
            d.src_dims[1] = (pr_in(&rng, PM_THR_WHOLE_Y / v + 1u, 600u / v) | 1u) * v;
            if (i >= 4) { /* batched: [b, rows, cols] -> [b, cols, rows] */
                d.rank = 3, d.src_dims[2] = pr_in(&rng, 2, 3), d.perm[2] = 2;
            }
            const size_t so = pr_offset(&rng, e);
            cr_assert(plan_at(d, so % 16u, 0).thr.chunks, "e %u %u x %u: the chunk transpose", e,
                      (unsigned)d.src_dims[1], (unsigned)d.src_dims[0]);
            const pm_layout H = plan_at(d, so % 16u, e);
            cr_assert(H.thr.chunks && H.thr.halo, "e %u, dst off 16 bytes: the chunk transpose with the halo", e);
            model_run(&rng, d, so, 0);
            model_run(&rng, d, so, e * pr_in(&rng, 1, 15u / e > 1u ? 15u / e : 1u)); /* the halo */
            if (i % 2) { /* odd src strides (an odd number of elements: rows off 16 bytes), dst strides of whole chunks */
                d.src_strides[0] = e * (d.src_dims[0] + 2u * pr_in(&rng, 1, 4));
                d.dst_strides[0] = e * d.src_dims[1] + 32u;
                if (d.rank == 3)
                    d.src_strides[1] = d.src_strides[0] * d.src_dims[1] + e,
                    d.dst_strides[1] = d.dst_strides[0] * d.src_dims[0] + 48u;
            }
            model_run(&rng, d, pr_offset(&rng, e), 16u * pr_in(&rng, 0, 3));
            n += 2;
        }
    cr_log_info("permute_model: %d chunk transposes matched", n);
}

Test(permute_model, merged_strides_need_not_be_16_byte_multiples) {
    /* dense fp32 8 x 5 x 3 -> its own layout: src strides 32 and 160 bytes merge into one run of 120 elements, and
     * 7 x 5 x 3 (strides 28 and 140, one run of 105 elements: 420 bytes, not whole 16-byte chunks) */
    uint64_t rng = seed_of("permute_model merged");
    tma_permute_desc d = {.elem_bytes = 4, .rank = 3, .src_dims = {8, 5, 3}, .perm = {0, 1, 2}};
    cr_assert_eq(model_case(&rng, d), 0);
    d.src_dims[0] = 7;
    cr_assert_eq(model_case(&rng, d), 0);
}

/* ------------------------------------------------------------------------------------------------ which kernel */
Test(permute_plan, thread_kernel_only_where_tma_cannot_describe) {
    /* A dense fp32 17 x 31 transpose: src rows of 124 bytes, which no TMA map describes: the thread kernel. A dense
     * fp32 8192 x 8192 one is a TMA map's exactly: the TMA transpose (plan only: the model would take minutes). */
    uint64_t rng = seed_of("permute_plan threads");
    tma_permute_desc d = {.elem_bytes = 4, .rank = 2, .src_dims = {31, 17}, .perm = {1, 0}};
    cr_assert_eq(plan_of(d).threads, 1u, "fp32 17 x 31: the thread kernel");
    const tma_permute_model_facts f = model_run(&rng, d, 0, 0);
    cr_assert_eq(f.threads, 1u, "fp32 17 x 31 on the model: the thread kernel");
    d.src_dims[0] = 8192, d.src_dims[1] = 8192;
    const pm_layout L = plan_of(d);
    cr_assert_eq(L.threads, 0u, "fp32 8192^2: the TMA kernels");
    cr_assert_eq(L.transpose, 1u, "fp32 8192^2: a tile transpose");
}

Test(permute_plan, dst_spans_where_a_tile_holds_whole_dst_rows_back_to_back) {
    /* bf16 NHWC -> NCHW of 7 x 7 maps (dst rows of 98 bytes): each tile holds whole dst rows, back to back in dst, so
     * it leaves as one span (DST SPANS in permute_tiles.h), at 64-byte aligned and odd addresses alike. fp32 37 x 32
     * transposed (dst rows of 128 bytes, src rows of 148 that no map describes): a warp's elements of one src row go
     * 32 elements apart in the span, one bank, so the tile is stored as before. */
    uint64_t rng = seed_of("permute_plan spans");
    tma_permute_desc d = {.elem_bytes = 2, .rank = 4, .src_dims = {40, 7, 7, 2}, .perm = {1, 2, 0, 3}};
    const pm_layout L = plan_of(d);
    cr_assert(L.threads && L.thr.dspan, "bf16 NHWC -> NCHW 2x40x7x7: dst spans (threads %u)", L.threads);
    cr_assert_eq(model_run(&rng, d, 0, 0).stores, 2u * (40u * 49u * 2u / 16u),
                 "a span of 245 16-byte chunks an image");
    model_run(&rng, d, 6, 10);
    tma_permute_desc t = {.elem_bytes = 4, .rank = 2, .src_dims = {37, 32}, .perm = {1, 0}};
    const pm_layout T = plan_of(t);
    cr_assert(T.threads && T.thr.ty == 32u && !T.thr.dspan, "fp32 32 x 37 transposed: element stores (dspan %u)",
              T.thr.dspan);
    model_run(&rng, t, 0, 0);
    /* dst rows of 128 bytes or more that no map describes: the TMA kernel's threads would store them element by
     * element, so the thread kernel takes them where its spans read src in runs of PM_THR_SPAN_MIN_RUN bytes (fp32
     * 7 x 7 maps, 40 channels: runs of 160 bytes), not where they would be short (bf16 14 x 14 maps: tiles of 10
     * channels, runs of 20 bytes) */
    tma_permute_desc f = {.elem_bytes = 4, .rank = 4, .src_dims = {40, 7, 7, 2}, .perm = {1, 2, 0, 3}};
    const pm_layout F = plan_of(f);
    cr_assert(F.threads && F.thr.dspan, "fp32 NHWC -> NCHW 2x40x7x7: the thread kernel's spans");
    model_run(&rng, f, 0, 0);
    tma_permute_desc b = {.elem_bytes = 2, .rank = 4, .src_dims = {256, 14, 14, 2}, .perm = {1, 2, 0, 3}};
    const pm_layout B = plan_of(b);
    cr_assert(!B.threads && B.grid.dst_any, "bf16 NHWC -> NCHW 2x256x14x14: the TMA kernel, threads storing");
}

/* pm_thr_span_ways counted by brute force: every pass of the tile, each distinct word of a pass once in its bank. */
static uint32_t span_ways_brute(const pm_thr *R, enum pm_span_access how) {
    uint32_t most = 1;
    for (uint32_t o0 = 0; o0 < R->tx * R->ty; o0 += 32u) {
        uint32_t words[32], n = 0;
        for (uint32_t o = o0; o < o0 + 32u && o < R->tx * R->ty; o++) {
            uint32_t x, y;
            if (how == PM_READS_SRC_SPAN)
                pm_thr_store_xy(R, o % PM_THR_THREADS, o / PM_THR_THREADS, &x, &y);
            else
                pm_thr_load_xy(R, o % PM_THR_THREADS, o / PM_THR_THREADS, &x, &y);
            words[n++] = (how == PM_READS_SRC_SPAN   ? (y * R->tx + x) * R->e
                          : how == PM_WRITES_DST_ROWS ? x * pm_thr_row_stride(R) + y * R->e
                                                      : pm_thr_span_at(R, 0, x, y)) /
                         4u;
        }
        uint32_t ways[32] = {0};
        for (uint32_t j = 0; j < n; j++) {
            int first = 1;
            for (uint32_t i = 0; i < j; i++)
                first &= words[i] != words[j];
            ways[words[j] % 32u] += (uint32_t)first;
        }
        for (uint32_t bank = 0; bank < 32u; bank++)
            most = ways[bank] > most ? ways[bank] : most;
    }
    return most;
}

Test(permute_plan, span_ways_count_each_kind_of_pass_once) {
    /* The plan counts the bank conflicts of a span tile's passes once per kind (pm_thr_span_ways: passes a multiple of
     * the order's row apart touch words moved by one count); the brute-force count of every pass agrees on random
     * tiles of every element size, both orders, copies and transposes, up to the span tiles' 16 KiB. */
    uint64_t rng = seed_of("permute_plan span ways");
    for (int it = 0; it < 4000; it++) {
        pm_thr R;
        memset(&R, 0, sizeof R);
        R.e = 1u << pr_next(&rng) % 4u;
        R.transpose = pr_next(&rng) % 4u != 0u;
        const uint32_t most = PM_THR_SPAN_TILE_BYTES / R.e;
        R.tx = 1u + (uint32_t)(pr_next(&rng) % (pr_next(&rng) % 2u ? 64u : 256u));
        R.ty = 1u + (uint32_t)(pr_next(&rng) % (most / R.tx));
        R.mx = pm_div_magic(R.tx), R.my = pm_div_magic(R.ty);
        for (uint32_t how = PM_WRITES_DST_SPAN; how <= PM_READS_SRC_SPAN; how++)
            cr_assert_eq(pm_thr_span_ways(&R, (enum pm_span_access)how), span_ways_brute(&R, (enum pm_span_access)how),
                         "e %u tx %u ty %u transpose %u access %u", R.e, R.tx, R.ty, R.transpose, how);
    }
}

Test(permute_plan, src_spans_where_a_tile_holds_whole_src_rows_back_to_back) {
    /* NCHW -> NHWC of 7 x 7 maps: src rows of 49 elements back to back, so a tile of whole src rows is one span
     * (SRC SPANS in permute_tiles.h), up to PM_THR_SPAN_TILE_BYTES: fp32 2048 channels, 83 a tile. With 40 channels
     * a tile holds dst's rows whole too, but its writes into a dst span would go 40 words apart (8 ways a bank): src
     * spans only. NHWC -> NCHW of 3 channels: src rows of 12 bytes. Each on the model, at aligned and odd addresses. */
    uint64_t rng = seed_of("permute_plan src spans");
    tma_permute_desc d = {.elem_bytes = 4, .rank = 4, .src_dims = {7, 7, 2048, 2}, .perm = {2, 0, 1, 3}};
    pm_layout L = plan_of(d);
    cr_assert(L.threads && L.thr.sspan && !L.thr.dspan && L.thr.tx == 49u && L.thr.ty == 83u,
              "fp32 NCHW -> NHWC 2x2048x7x7: src spans of 49 x 83 (sspan %u dspan %u, %u x %u)", L.thr.sspan,
              L.thr.dspan, L.thr.tx, L.thr.ty);
    model_run(&rng, d, 0, 0);
    model_run(&rng, d, 0, 12);
    model_run(&rng, d, 4, 0);
    d.src_dims[2] = 40;
    L = plan_of(d);
    cr_assert(L.threads && L.thr.sspan && !L.thr.dspan, "fp32 NCHW -> NHWC 2x40x7x7: src spans only");
    model_run(&rng, d, 8, 4);
    tma_permute_desc c = {.elem_bytes = 2, .rank = 4, .src_dims = {3, 30, 30, 2}, .perm = {1, 2, 0, 3}};
    L = plan_of(c);
    cr_assert(L.threads && L.thr.sspan && L.thr.tx == 3u, "bf16 NHWC -> NCHW 2x3x30x30: src spans");
    model_run(&rng, c, 0, 0);
    model_run(&rng, c, 2, 6);
    /* fp32 [3, 444, 55] (2, 0, 1): src rows of 55 back to back, but a span tile of 55 x 74 would store dst runs of
     * 74 elements where the chunk transpose's tile of 32 x 128 stores 128 (dst rows of 444 elements, 1,776 bytes:
     * on 16 bytes, off 32-byte sectors) */
    tma_permute_desc r = {.elem_bytes = 4, .rank = 3, .src_dims = {55, 444, 3}, .perm = {1, 2, 0}};
    L = plan_of(r);
    cr_assert(L.threads && !L.thr.sspan && L.thr.chunks && L.thr.tx == 32u && L.thr.ty == 128u,
              "fp32 [3, 444, 55] (2, 0, 1): the chunk transpose (sspan %u, chunks %u, %u x %u)", L.thr.sspan,
              L.thr.chunks, L.thr.tx, L.thr.ty);
    model_run(&rng, r, 0, 0);
}

Test(permute_plan, dst_row_spans_where_a_tile_holds_long_dst_row_segments) {
    /* fp64 11 x 299 transposed to 299 x 11 (src rows of 88 bytes, too short for the chunk transpose; dst rows of 2,392
     * bytes, off 16): tiles of 8 src elements by 256 dst elements, each dst row segment 2 KiB, a span of its own (DST
     * ROW SPANS in permute_tiles.h), at aligned and odd addresses. Long in both dimensions (301 x 299) every element
     * size takes the chunk transpose with the halo there; so does fp64 T 300 x 302 with dst 8 bytes off 16, which no
     * TMA store map describes, from the TMA kernel's element stores */
    uint64_t rng = seed_of("permute_plan dst rows");
    tma_permute_desc d = {.elem_bytes = 8, .rank = 2, .src_dims = {11, 299}, .perm = {1, 0}};
    pm_layout L = plan_of(d);
    cr_assert(L.threads && L.thr.drows && L.thr.tx == 8u && L.thr.ty == 256u,
              "fp64 T 299 x 11: dst row spans of 8 x 256 (drows %u, %u x %u)", L.thr.drows, L.thr.tx, L.thr.ty);
    model_run(&rng, d, 0, 0);
    model_run(&rng, d, 8, 8);
    model_run(&rng, d, 24, 56);
    d.src_dims[0] = 301;
    for (uint32_t e = 2; e <= 8; e *= 2) {
        d.elem_bytes = e;
        L = plan_of(d);
        cr_assert(L.threads && !L.thr.drows && L.thr.chunks && L.thr.halo, "e %u T 299 x 301: the chunk transpose", e);
        model_run(&rng, d, e, 3u * e);
    }
    tma_permute_desc w = {.elem_bytes = 8, .rank = 2, .src_dims = {302, 300}, .perm = {1, 0}};
    cr_assert(!plan_of(w).threads, "fp64 T 300 x 302, dst aligned: the TMA kernel");
    L = plan_at(w, 0, 8);
    cr_assert(L.threads && L.thr.chunks && L.thr.halo, "fp64 T 300 x 302, dst 8 bytes off: the chunk transpose");
    model_run(&rng, w, 0, 8);
}

/* ------------------------------------------------------------------------------------------------ refusals */
Test(permute_refuse, messages_name_the_rule) {
    static uint8_t buf[4096] __attribute__((aligned(64)));
    tma_diag diag;
    tma_permute_desc d = {.elem_bytes = 3, .rank = 2, .src = buf, .dst = buf + 2048, .src_dims = {4, 4},
                          .perm = {1, 0}};
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_ARG);
    cr_assert(strstr(diag.message, "elem_bytes = 3") != NULL, "%s", diag.message);
    d.elem_bytes = 4, d.rank = 6;
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_ARG);
    cr_assert(strstr(diag.message, "rank = 6") != NULL, "%s", diag.message);
    d.rank = 0;
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_ARG, "rank 0");
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
    d.dst = buf + 2048, d.src = NULL;
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_NULL_ARG);
    cr_assert(strstr(diag.message, "src = NULL") != NULL, "%s", diag.message);
    d.src = buf;
    cr_assert_eq(tma_permute_model(NULL, NULL, &diag), TMA_ERR_NULL_ARG, "NULL desc");
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_OK, "4 x 4 fp32: %s", diag.message);
}

Test(permute_refuse, addresses_and_strides_off_the_element) {
    static uint8_t buf[8192] __attribute__((aligned(64)));
    tma_diag diag;
    /* fp32 8 x 8 transposed; addresses at any multiple of 4 are fine, at +2 refused, naming src or dst and the
     * element size */
    tma_permute_desc d = {.elem_bytes = 4, .rank = 2, .src = buf + 4, .dst = buf + 4096 + 12, .src_dims = {8, 8},
                          .perm = {1, 0}};
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_OK, "src at +4, dst at +12: %s", diag.message);
    d.src = buf + 2;
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_ARG, "src at +2");
    cr_assert(strstr(diag.message, "src") != NULL && strstr(diag.message, "4") != NULL, "%s", diag.message);
    d.src = buf, d.elem_bytes = 8, d.dst = buf + 4096 + 4;
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_ARG, "8-byte elements, dst at +4");
    cr_assert(strstr(diag.message, "dst") != NULL && strstr(diag.message, "8") != NULL, "%s", diag.message);
    /* strides: any multiple of the element (rows of 32 bytes 36 and 44 apart), not 42 or 2 more than a row */
    d.elem_bytes = 4, d.dst = buf + 4096, d.src_strides[0] = 36, d.dst_strides[0] = 44;
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_OK, "strides 36 and 44: %s", diag.message);
    d.src_strides[0] = 42;
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_ARG, "src stride 42");
    cr_assert(strstr(diag.message, "src_strides[0]") != NULL, "%s", diag.message);
    d.src_strides[0] = 0, d.dst_strides[0] = 34;
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_ARG, "dst stride 34");
    cr_assert(strstr(diag.message, "dst_strides[0]") != NULL, "%s", diag.message);
    /* rank 3: the second stride */
    tma_permute_desc r3 = {.elem_bytes = 2, .rank = 3, .src = buf, .dst = buf + 4096, .src_dims = {4, 3, 2},
                           .perm = {2, 0, 1}, .dst_strides = {0, 17}};
    cr_assert_eq(tma_permute_model(&r3, NULL, &diag), TMA_ERR_ARG, "bf16 dst stride 17");
    cr_assert(strstr(diag.message, "dst_strides[1]") != NULL, "%s", diag.message);
    r3.dst_strides[1] = 0, r3.src_strides[1] = 25;
    cr_assert_eq(tma_permute_model(&r3, NULL, &diag), TMA_ERR_ARG, "bf16 src stride 25");
    cr_assert(strstr(diag.message, "src_strides[1]") != NULL, "%s", diag.message);
}

Test(permute_refuse, dst_elements_sharing_bytes) {
    static uint8_t buf[8192] __attribute__((aligned(64)));
    tma_diag diag;
    /* dst rows of 8 fp32 (32 bytes) 16 apart; then 28 apart (one element shared); src may overlap: only read */
    tma_permute_desc d = {.elem_bytes = 4, .rank = 2, .src = buf, .dst = buf + 4096, .src_dims = {8, 8},
                          .perm = {1, 0}, .dst_strides = {16}};
    tma_status s = tma_permute_model(&d, NULL, &diag);
    cr_assert_neq(s, TMA_OK, "dst rows 16 bytes apart");
    cr_assert(strstr(diag.message, "dst") != NULL, "%s: %s", tma_status_name(s), diag.message);
    d.dst_strides[0] = 28;
    s = tma_permute_model(&d, NULL, &diag);
    cr_assert_neq(s, TMA_OK, "dst rows 28 bytes apart");
    cr_assert(strstr(diag.message, "dst") != NULL, "%s: %s", tma_status_name(s), diag.message);
    /* rank 3, dst dimension 2 stepping into dimension 1's rows: {4, 3, 2} fp32 with strides 16 and 24 (element
     * (0, 0, 1) at byte 24 is element (2, 1, 0)) */
    tma_permute_desc r3 = {.elem_bytes = 4, .rank = 3, .src = buf, .dst = buf + 4096, .src_dims = {4, 3, 2},
                           .perm = {0, 1, 2}, .dst_strides = {16, 24}};
    s = tma_permute_model(&r3, NULL, &diag);
    cr_assert_neq(s, TMA_OK, "dst strides 16 and 24");
    cr_assert(strstr(diag.message, "dst") != NULL, "%s: %s", tma_status_name(s), diag.message);
    /* the same strides on src: accepted (src is only read) */
    r3.dst_strides[0] = r3.dst_strides[1] = 0, r3.src_strides[0] = 16, r3.src_strides[1] = 24;
    cr_assert_eq(tma_permute_model(&r3, NULL, &diag), TMA_OK, "src strides 16 and 24: %s", diag.message);
    d.dst_strides[0] = 0, d.src_strides[0] = 16;
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_OK, "src rows 16 bytes apart: %s", diag.message);
}

Test(permute_refuse, strides_of_a_terabyte_on_dimensions_of_more_than_one_element) {
    static uint8_t buf[4096] __attribute__((aligned(64)));
    tma_diag diag;
    tma_permute_desc d = {.elem_bytes = 4, .rank = 2, .src = buf, .dst = buf + 2048, .src_dims = {4, 2},
                          .perm = {1, 0}, .src_strides = {1ull << 40}};
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_ARG, "src stride 2^40 on 2 elements");
    cr_assert(strstr(diag.message, "src_strides[0]") != NULL, "%s", diag.message);
    d.src_strides[0] = 0, d.dst_strides[0] = (1ull << 41) + 4;
    cr_assert_eq(tma_permute_model(&d, NULL, &diag), TMA_ERR_ARG, "dst stride 2^41 + 4 on 4 elements");
    cr_assert(strstr(diag.message, "dst_strides[0]") != NULL, "%s", diag.message);
}

Test(permute_refuse, accepted_now) {
    /* Refused by TMA's 16-byte rules before issue 31, tensors all the same: run on the model, every byte checked.
     * fp32 17 x 31 dense (rows of 124 bytes); rows of 12 bytes (fp32 3 x 50 transposed; a 3 x 7 x 5 copy); src
     * rows 20 bytes apart; an element-aligned address; a stride of 2^40 and more on dimensions of one element,
     * where it steps nowhere (PyTorch gives such dimensions any stride) */
    uint64_t rng = seed_of("permute_refuse accepted");
    const tma_permute_desc t = {.elem_bytes = 4, .rank = 2, .src_dims = {31, 17}, .perm = {1, 0}};
    model_run(&rng, t, 0, 0);
    const tma_permute_desc r12 = {.elem_bytes = 4, .rank = 2, .src_dims = {3, 50}, .perm = {1, 0}};
    model_run(&rng, r12, 0, 0);
    const tma_permute_desc c12 = {.elem_bytes = 4, .rank = 3, .src_dims = {3, 7, 5}, .perm = {0, 2, 1}};
    model_run(&rng, c12, 0, 0);
    const tma_permute_desc p20 = {.elem_bytes = 4, .rank = 2, .src_dims = {5, 4}, .perm = {1, 0}};
    model_run(&rng, p20, 8, 4);
    const tma_permute_desc unit = {.elem_bytes = 2, .rank = 4, .src_dims = {6, 1, 5, 1}, .perm = {2, 3, 0, 1},
                                   .src_strides = {1ull << 40, 12, (1ull << 45) + 2},
                                   .dst_strides = {(1ull << 42) + 6, 10, 4}}; /* dst {5, 1, 6, 1} */
    model_run(&rng, unit, 2, 6);
}
