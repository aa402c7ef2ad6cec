/* The grouped GEMM's CPU half (kernels/grouped_tiles.h), without a GPU:
 *   grouped_sched  - the units the blocks take at run time (gg_unit_taken, in a random order of the blocks)
 *                    together visit each tile of each group with rows exactly once, for random row counts (0 and
 *                    negative ones included), grids and band heights; with the last wave's tiles cut into K parts
 *                    (gg_sched_make, gg_take_of) every stage of every tile exactly once, each owner after its
 *                    helpers.
 *   grouped_maps   - the kernel's per-group edits, replayed on the template descriptors (tma_desc_apply_edit,
 *                    the host mirror of what the device does), give each group's own descriptor; through them the
 *                    CPU model loads the tiles of a random grouped problem, and the product of the loaded boxes,
 *                    read as the kernel reads them (128B swizzle), equals the direct product, every element;
 *                    rows past M_g arrive as zeros. Bad groups are refused with the host's message, prefixed
 *                    with the group and the map. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include "bf16.h"
#include "desc_equal.h"
#include "grouped_tiles.h"
#include "kernel_rules.h"
#include "tma/tma.h"
#include "test_seed.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd32(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}
static uint32_t rnd_below(uint32_t n) { return rnd32() % n; }

static void seed(const char *name) { rng = test_seed(name); }

/* Every tile of every group with rows, once, whatever the grid and band height. */
Test(grouped_sched, every_tile_once) {
    seed("grouped_sched.every_tile_once");
    for (int trial = 0; trial < 300; trial++) {
        const uint32_t groups = 1 + rnd_below(40), tiles_n = 1 + rnd_below(5), grid = 1 + rnd_below(24);
        const uint32_t group_m = 1 + rnd_below(20);
        int32_t m[40];
        uint64_t total = 0, offset[41];
        for (uint32_t g = 0; g < groups; g++) {
            const uint32_t kind = rnd_below(5);
            m[g] = kind == 0 ? 0 : kind == 1 ? -(int32_t)rnd_below(100) - 1 : (int32_t)rnd_below(700);
            offset[g] = total;
            total += gg_group_units(m[g], tiles_n);
        }
        uint8_t *seen = calloc(total + 1, 1);
        cr_assert(seen != NULL);
        /* the blocks take units as the kernel's do (gg_unit_taken: its index, then a shared counter's next; or every
         * unit from the counter), one block at a time in a random order, each with its own cursor */
        const int by_index = (int)rnd_below(2);
        gg_cursor c[24];
        uint32_t last_group[24], done = 0;
        int first[24], finished[24];
        uint64_t taken = 0;
        for (uint32_t b = 0; b < grid; b++)
            c[b].group = 0, c[b].first = 0, last_group[b] = 0, first[b] = 1, finished[b] = 0;
        while (done < grid) {
            const uint32_t b = rnd_below(grid);
            if (finished[b])
                continue;
            const int own = by_index && first[b];
            const uint64_t u = gg_unit_taken(b, grid, by_index, own, own ? 0 : taken++);
            first[b] = 0;
            uint32_t g, tm, tn;
            if (!gg_locate(&c[b], u, m, groups, tiles_n, group_m, &g, &tm, &tn)) {
                cr_assert_geq(u, total, "unit %llu of %llu not located", (unsigned long long)u,
                              (unsigned long long)total);
                finished[b] = 1, done++;
                continue;
            }
            cr_assert(m[g] > 0, "group %u with %d rows has a tile", g, m[g]);
            cr_assert_geq(g, last_group[b], "a block's groups go in order");
            last_group[b] = g;
            const uint32_t tiles_m = ((uint32_t)m[g] + TMA_GEMM_BM - 1) / TMA_GEMM_BM;
            cr_assert(tm < tiles_m && tn < tiles_n, "group %u tile (%u, %u) outside %u x %u", g, tm, tn, tiles_m,
                      tiles_n);
            const uint64_t id = offset[g] + (uint64_t)tm * tiles_n + tn;
            cr_assert_eq(seen[id], 0, "group %u tile (%u, %u) twice", g, tm, tn);
            seen[id] = 1;
        }
        for (uint64_t i = 0; i < total; i++)
            cr_assert_eq(seen[i], 1, "trial %d: tile %llu of %llu never visited", trial, (unsigned long long)i,
                         (unsigned long long)total);
        free(seen);
    }
}

/* Where a tile's A box is loaded (gg_box_row): every tile of every group size up to 40 tile rows. The box holds the
 * tile's rows [first, min(first + 128, rows)) at the offset the consumer warpgroups store them from (0 or 64, a whole
 * warpgroup's), starts at row 0 or after, and a tile of at most 64 rows with a tile row above it starts 64 rows up,
 * its first half the tile above's last rows (both warpgroups compute rows of the group: the pace of the blocks
 * sharing B); other tiles start at their first row. */
Test(grouped_sched, box_rows_keep_short_tiles_inside_their_group) {
    for (uint32_t rows = 1; rows <= 40u * TMA_GEMM_BM; rows++)
        for (uint32_t first = 0; first < rows; first += TMA_GEMM_BM) {
            const uint32_t row0 = gg_box_row(first, rows);
            const uint32_t last = first + TMA_GEMM_BM < rows ? first + TMA_GEMM_BM : rows;
            cr_assert(row0 <= first && first - row0 <= TMA_GEMM_BM / 2u && (first - row0) % 64u == 0u,
                      "rows %u, tile at %u: box at %u", rows, first, row0);
            cr_assert_leq(last, row0 + TMA_GEMM_BM, "the box holds the tile's rows");
            const bool short_below = rows - first <= TMA_GEMM_BM / 2u && first > 0u;
            if (short_below)
                cr_assert(row0 + TMA_GEMM_BM / 2u == first, "rows %u, tile at %u: the box's first half is the tile "
                          "above's last rows", rows, first);
            else
                cr_assert_eq(row0, first, "rows %u, tile at %u", rows, first);
        }
}

/* The schedule the device makes (gg_sched_make): K parts where the last wave fills at most half of the grid. 8
 * experts over 4,096 tokens at N = K = 4096 (64 stages a tile): 560 or 576 tiles on 132 blocks. */
Test(grouped_sched, k_parts_where_the_last_wave_is_short) {
    const gg_sched s32 = gg_sched_make(560, 132, 64);
    cr_assert(s32.split == 528u && s32.parts == 4u, "32 tiles in the last wave: 4 parts each (128 units)");
    cr_assert_eq(gg_sched_takes(&s32), 528u + 128u);
    const gg_sched s48 = gg_sched_make(576, 132, 64);
    cr_assert(s48.split == 528u && s48.parts == 2u, "48 tiles: 2 parts each (3 would not fit one wave)");
    const gg_sched full = gg_sched_make(528, 132, 64);
    cr_assert(full.split == 528u && full.parts == 1u, "4 whole waves: no parts");
    const gg_sched long_wave = gg_sched_make(600, 132, 64);
    cr_assert(long_wave.split == 600u && long_wave.parts == 1u, "a last wave of 72 tiles: 144 parts would not fit");
    const gg_sched one_wave = gg_sched_make(40, 132, 64);
    cr_assert(one_wave.split == 0u && one_wave.parts == 3u, "40 tiles: 3 parts each");
    cr_assert_eq(gg_sched_make(40, 132, 2).parts, 2u, "no more parts than stages");
    const gg_sched one_stage = gg_sched_make(560, 132, 1);
    cr_assert(one_stage.parts == 1u && one_stage.split == 560u, "a tile of one stage is not cut");
    const gg_sched none = gg_sched_make(0, 132, 64);
    cr_assert_eq(gg_sched_takes(&none), 0u);
    gg_take t = gg_take_of(&s32, 527);
    cr_assert(t.tile == 527u && t.role == GG_WHOLE && t.kb0 == 0u && t.kb1 == 64u);
    t = gg_take_of(&s32, 528); /* the helpers first: tile 528's parts 1-3 */
    cr_assert(t.tile == 528u && t.role == GG_HELPER && t.slot == 0u && t.kb0 == 16u && t.kb1 == 32u);
    t = gg_take_of(&s32, 530);
    cr_assert(t.tile == 528u && t.role == GG_HELPER && t.slot == 2u && t.kb0 == 48u && t.kb1 == 64u);
    t = gg_take_of(&s32, 531);
    cr_assert(t.tile == 529u && t.role == GG_HELPER && t.slot == 3u && t.kb0 == 16u);
    t = gg_take_of(&s32, 528 + 96); /* then the owners: part 0, their helpers' first slot */
    cr_assert(t.tile == 528u && t.role == GG_OWNER && t.slot == 0u && t.kb0 == 0u && t.kb1 == 16u);
    t = gg_take_of(&s32, 655);
    cr_assert(t.tile == 559u && t.role == GG_OWNER && t.slot == 93u);
}

/* The walk of GroupedOps::next (grouped_gemm.cu) under the device's schedule, for random row counts, grids and
 * stages, the blocks in a random order: units taken at run time (gg_unit_taken), each a whole tile or, past gg_sched's
 * split, a K part (gg_take_of); a block stops after an owner, and its cursor starts again where an owner's tile lies
 * before it. Together the units cover every stage of every tile of every group with rows exactly once; every
 * helper's slot is its own and below the grid's blocks (the workspace has one per block); an owner's slots are its
 * own helpers', each of them taken before it from the counter (gg_first_by_index: where K parts fall in the first
 * wave, every unit comes from the counter), so an owner waits only for running blocks that wait for nothing. */
Test(grouped_sched, every_stage_once_with_k_parts) {
    seed("grouped_sched.every_stage_once_with_k_parts");
    enum { MAXG = 40, MAXB = 40, MAXNK = 12 };
    int cut = 0, all_counted = 0;
    for (int trial = 0; trial < 400; trial++) {
        const uint32_t groups = 1 + rnd_below(MAXG), tiles_n = 1 + rnd_below(5), grid = 1 + rnd_below(MAXB);
        const uint32_t group_m = 1 + rnd_below(20), nk = 1 + rnd_below(MAXNK);
        int32_t m[MAXG];
        uint64_t total = 0;
        for (uint32_t g = 0; g < groups; g++) {
            const uint32_t kind = rnd_below(5);
            m[g] = kind == 0 ? 0 : kind == 1 ? -(int32_t)rnd_below(100) - 1 : (int32_t)rnd_below(700);
            total += gg_group_units(m[g], tiles_n);
        }
        const gg_sched s = gg_sched_make(total, grid, nk);
        const int by_index = gg_first_by_index(&s, grid);
        cut += s.split < s.units;
        all_counted += s.split < s.units && !by_index;
        uint8_t *seen = calloc((total + 1) * MAXNK, 1);         /* stage kb of tile id: seen[id * MAXNK + kb] */
        int64_t *helper_at = calloc((size_t)grid * 2u, sizeof *helper_at); /* slot -> tile + 1, 0: unused */
        uint32_t *owners = calloc(total + 1, sizeof *owners); /* tail tile -> its owner's first slot + 1 */
        cr_assert(seen != NULL && helper_at != NULL && owners != NULL);
        gg_cursor c[MAXB];
        uint64_t taken = 0;
        int first[MAXB], finished[MAXB];
        uint32_t finished_n = 0;
        for (uint32_t b = 0; b < grid; b++)
            c[b].group = 0, c[b].first = 0, first[b] = 1, finished[b] = 0;
        while (finished_n < grid) {
            const uint32_t b = rnd_below(grid);
            if (finished[b])
                continue;
            const int own = by_index && first[b];
            const uint64_t v = gg_unit_taken(b, grid, by_index, own, own ? 0 : taken++);
            first[b] = 0;
            if (v >= gg_sched_takes(&s)) {
                finished[b] = 1, finished_n++;
                continue;
            }
            const gg_take t = gg_take_of(&s, v);
            if (t.tile < c[b].first)
                c[b].group = 0, c[b].first = 0;
            uint32_t g, tm, tn;
            cr_assert(gg_locate(&c[b], t.tile, m, groups, tiles_n, group_m, &g, &tm, &tn), "unit %llu located",
                      (unsigned long long)v);
            cr_assert(t.kb0 < t.kb1 && t.kb1 <= nk, "stages [%u, %u) of %u", t.kb0, t.kb1, nk);
            for (uint32_t kb = t.kb0; kb < t.kb1; kb++) {
                cr_assert_eq(seen[t.tile * MAXNK + kb], 0, "tile %llu stage %u twice", (unsigned long long)t.tile, kb);
                seen[t.tile * MAXNK + kb] = 1;
            }
            if (t.role == GG_WHOLE) {
                cr_assert(t.tile < s.split && t.kb0 == 0u && t.kb1 == nk);
            } else if (t.role == GG_HELPER) {
                cr_assert(t.tile >= s.split && t.kb0 > 0u && t.slot < grid, "helper slot %u of %u", t.slot, grid);
                cr_assert_eq(helper_at[t.slot], 0, "slot %u taken twice", t.slot);
                helper_at[t.slot] = (int64_t)t.tile + 1;
            } else {
                cr_assert(t.tile >= s.split && t.kb0 == 0u && t.kb1 < nk);
                cr_assert(v >= (by_index ? grid : 0u), "an owner comes from the counter");
                for (uint32_t h = 0; h < s.parts - 1u; h++)
                    cr_assert_eq(helper_at[t.slot + h], (int64_t)t.tile + 1, "tile %llu: helper %u taken before its "
                                 "owner", (unsigned long long)t.tile, h);
                owners[t.tile - s.split] = t.slot + 1u;
                finished[b] = 1, finished_n++; /* an owner is its block's last unit */
            }
        }
        for (uint64_t id = 0; id < total; id++)
            for (uint32_t kb = 0; kb < nk; kb++)
                cr_assert_eq(seen[id * MAXNK + kb], 1, "trial %d: tile %llu stage %u not computed", trial,
                             (unsigned long long)id, kb);
        for (uint64_t id = s.split; id < s.units; id++) /* each owner's slots are its own helpers' */
            for (uint32_t h = 0; h < s.parts - 1u; h++)
                cr_assert_eq(helper_at[owners[id - s.split] - 1u + h], (int64_t)id + 1, "tile %llu: slot %u",
                             (unsigned long long)id, owners[id - s.split] - 1u + h);
        free(seen);
        free(helper_at);
        free(owners);
    }
    cr_assert_gt(cut, 20, "the trials exercise K parts (%d of 400)", cut);
    cr_assert_gt(all_counted, 5, "and K parts in the first wave, every unit from the counter (%d)", all_counted);
}

/* Group g's descriptor, as the device builds it: the template with the group's edits. */
static tma_tiled_desc group_desc(const tma_tiled_desc tmpl[GG_MAPS], uint32_t which, const void *ptr, int32_t rows) {
    tma_tiled_desc d = tmpl[which];
    tma_map_edit e[2];
    const uint32_t n = gg_group_edits(which, ptr, rows, e);
    for (uint32_t i = 0; i < n; i++)
        tma_desc_apply_edit(&d, e[i]);
    return d;
}

Test(grouped_maps, edits_describe_each_group) {
    seed("grouped_maps.edits_describe_each_group");
    for (int trial = 0; trial < 500; trial++) {
        const uint32_t n = 8 * (1 + rnd_below(1024)), k = 8 * (1 + rnd_below(1024));
        const int32_t rows = 1 + (int32_t)rnd_below(100000);
        tma_tiled_desc tmpl[GG_MAPS];
        gg_template_descs(n, k, tmpl);
        void *pa = (void *)(uintptr_t)(0x100000000ull + 16u * rnd_below(1u << 20));
        void *pb = (void *)(uintptr_t)(0x200000000ull + 16u * rnd_below(1u << 20));
        void *pc = (void *)(uintptr_t)(0x300000000ull + 16u * rnd_below(1u << 20));
        const tma_tiled_desc a = group_desc(tmpl, GG_MAP_A, pa, rows), b = group_desc(tmpl, GG_MAP_B, pb, rows),
                             c = group_desc(tmpl, GG_MAP_C, pc, rows);
        tma_tiled_desc want_a = tma_desc_2d(TMA_DTYPE_BF16, pa, (uint64_t)rows, k, (uint64_t)k * 2, TMA_GEMM_BM,
                                            TMA_GEMM_BK, TMA_SWIZZLE_128B);
        tma_tiled_desc want_b = tma_desc_2d(TMA_DTYPE_BF16, pb, n, k, (uint64_t)k * 2, TMA_GEMM_BN, TMA_GEMM_BK,
                                            TMA_SWIZZLE_128B);
        want_a.l2_promotion = want_b.l2_promotion = TMA_L2_256B;
        const tma_tiled_desc want_c = tma_desc_2d(TMA_DTYPE_BF16, pc, (uint64_t)rows, n, (uint64_t)n * 2,
                                                  GM_EPI_ROWS, GM_EPI_ROW_BYTES / 2, GM_EPI_SWIZZLE);
        cr_assert(desc_equal(&a, &want_a), "A_g's descriptor (rows %d, K %u)", rows, k);
        cr_assert(desc_equal(&b, &want_b), "B_g's descriptor (N %u, K %u)", n, k);
        cr_assert(desc_equal(&c, &want_c), "C_g's descriptor (rows %d, N %u)", rows, n);
        tma_diag diag;
        cr_assert_eq(tma_check_tiled(&a, &diag), TMA_OK, "%s", diag.message);
        cr_assert_eq(tma_check_tiled(&b, &diag), TMA_OK, "%s", diag.message);
        cr_assert_eq(tma_check_tiled(&c, &diag), TMA_OK, "%s", diag.message);
    }
}

/* The kernel's tile loop on the CPU model: every group's tiles, each K step's A and B boxes model-loaded through
 * the group's mirrored maps, multiplied as read through the 128B swizzle; against the direct product. */
Test(grouped_maps, tile_pipeline_on_the_model) {
    seed("grouped_maps.tile_pipeline_on_the_model");
    enum { G = 6, N = 256 + 64, K = 136 };
    static uint8_t sa[TMA_GEMM_BM * 128], sb[TMA_GEMM_BN * 128];
    int32_t m[G];
    uint16_t *a[G], *b[G];
    for (int g = 0; g < G; g++) {
        m[g] = g == 1 ? 0 : g == 3 ? 1 + (int32_t)rnd_below(20) : (int32_t)rnd_below(300);
        a[g] = malloc((size_t)(m[g] > 0 ? m[g] : 1) * K * 2);
        b[g] = malloc((size_t)N * K * 2);
        cr_assert(a[g] && b[g]);
        for (long i = 0; i < (long)m[g] * K; i++)
            a[g][i] = to_bf16((float)((int)rnd_below(2001) - 1000) / 1000.0f);
        for (long i = 0; i < (long)N * K; i++)
            b[g][i] = to_bf16((float)((int)rnd_below(2001) - 1000) / 1000.0f);
    }
    tma_tiled_desc tmpl[GG_MAPS];
    gg_template_descs(N, K, tmpl);
    const uint32_t tiles_n = (N + TMA_GEMM_BN - 1) / TMA_GEMM_BN, nk = (K + TMA_GEMM_BK - 1) / TMA_GEMM_BK;
    static double acc[TMA_GEMM_BM][TMA_GEMM_BN];
    long compared = 0, zero_rows = 0;
    gg_cursor cur = {0, 0};
    for (uint64_t u = 0;; u++) {
        uint32_t g, tm, tn;
        if (!gg_locate(&cur, u, m, G, tiles_n, 4, &g, &tm, &tn))
            break;
        const tma_tiled_desc da = group_desc(tmpl, GG_MAP_A, a[g], m[g]), db = group_desc(tmpl, GG_MAP_B, b[g], m[g]);
        memset(acc, 0, sizeof acc);
        for (uint32_t kb = 0; kb < nk; kb++) {
            const int32_t ca[5] = {(int32_t)(kb * TMA_GEMM_BK), (int32_t)(tm * TMA_GEMM_BM), 0, 0, 0};
            const int32_t cb[5] = {(int32_t)(kb * TMA_GEMM_BK), (int32_t)(tn * TMA_GEMM_BN), 0, 0, 0};
            memset(sa, 0xA5, sizeof sa);
            memset(sb, 0xA5, sizeof sb);
            cr_assert_eq(tma_model_load_tiled(&da, ca, sa, sizeof sa, 0), TMA_OK, "group %u: model load of A", g);
            cr_assert_eq(tma_model_load_tiled(&db, cb, sb, sizeof sb, 0), TMA_OK, "group %u: model load of B", g);
            for (uint32_t r = 0; r < TMA_GEMM_BM; r++)
                for (uint32_t kk = 0; kk < TMA_GEMM_BK; kk++) {
                    uint16_t h;
                    memcpy(&h, sa + tma_swizzle_elem(TMA_SWIZZLE_128B, 0, 128, 2, r, kk), 2);
                    const double x = bf16d(h);
                    if (tm * TMA_GEMM_BM + r >= (uint32_t)m[g] || kb * TMA_GEMM_BK + kk >= K) {
                        cr_assert_eq(h, 0, "group %u tile %u: A row %u col %u past the matrix is not zero", g, tm, r, kk);
                        zero_rows += kk == 0;
                        continue;
                    }
                    for (uint32_t col = 0; col < TMA_GEMM_BN; col++) {
                        memcpy(&h, sb + tma_swizzle_elem(TMA_SWIZZLE_128B, 0, 128, 2, col, kk), 2);
                        acc[r][col] += x * bf16d(h);
                    }
                }
        }
        for (uint32_t r = 0; r < TMA_GEMM_BM && tm * TMA_GEMM_BM + r < (uint32_t)m[g]; r++)
            for (uint32_t col = 0; col < TMA_GEMM_BN && tn * TMA_GEMM_BN + col < N; col++) {
                const uint32_t row = tm * TMA_GEMM_BM + r, ncol = tn * TMA_GEMM_BN + col;
                double want = 0;
                for (uint32_t kk = 0; kk < K; kk++)
                    want += bf16d(a[g][(size_t)row * K + kk]) * bf16d(b[g][(size_t)ncol * K + kk]);
                cr_assert(acc[r][col] == want, "group %u C[%u][%u]: tiles give %.17g, direct %.17g", g, row, ncol,
                          acc[r][col], want);
                compared++;
            }
    }
    long want_elems = 0;
    for (int g = 0; g < G; g++)
        want_elems += (long)(m[g] > 0 ? m[g] : 0) * N;
    cr_assert_eq(compared, want_elems, "every element of every C_g compared");
    cr_log_info("grouped tiles on the model: %ld elements of %d groups equal the direct product; %ld box rows past "
                "M_g arrived as zeros",
                compared, G, zero_rows);
    for (int g = 0; g < G; g++)
        free(a[g]), free(b[g]);
}

/* A NULL or misaligned pointer of a group with rows breaks a rule of rules.h; the device's message is the host's,
 * prefixed with the group and the map. */
Test(grouped_maps, bad_groups_get_the_hosts_message) {
    tma_tiled_desc tmpl[GG_MAPS];
    gg_template_descs(512, 256, tmpl);
    struct {
        uint32_t which;
        uintptr_t ptr;
        tma_status want;
    } cases[] = {{GG_MAP_A, 0, TMA_ERR_GLOBAL_ADDRESS_NULL},
                 {GG_MAP_B, 0x100008, TMA_ERR_GLOBAL_ADDRESS_ALIGN},
                 {GG_MAP_C, 0x100002, TMA_ERR_GLOBAL_ADDRESS_ALIGN}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const tma_tiled_desc d = group_desc(tmpl, cases[i].which, (void *)cases[i].ptr, 300);
        tma_violation v;
        tma_rule_sink s = tma_rule_sink_make(&v, 1);
        cr_assert_eq(tma_rules_tiled(&d, &s), cases[i].want, "case %zu", i);
        tma_diag diag;
        cr_assert_eq(tma_check_tiled(&d, &diag), cases[i].want);
        /* what gg_record_violation formats on the device: the kernels' row, then the rule beneath it */
        const tma_violation why = KD_VIOLATION(GROUP_MAP, tma_arg_u(7), tma_arg_s(gg_map_name(cases[i].which)));
        char got[TMA_DIAG_MESSAGE_BYTES], want[TMA_DIAG_MESSAGE_BYTES + 64];
        kd_rule_format(&why, &v, got, sizeof got);
        snprintf(want, sizeof want, "group 7: the map of %s_g: %s", gg_map_name(cases[i].which), diag.message);
        cr_assert_str_eq(got, want);
        cr_assert_eq(kd_rule_status_of(&why, &v), cases[i].want, "the rule's status, not the row's");
    }
    const tma_violation rows = KD_VIOLATION(GROUP_NEGATIVE_ROWS, tma_arg_u(3), tma_arg_i(-12));
    char text[TMA_DIAG_MESSAGE_BYTES];
    kd_rule_format(&rows, NULL, text, sizeof text);
    cr_assert_str_eq(text, "group 3: M_g = -12 rows is negative: give each group 0 or more rows (the group was "
                           "skipped)");
    cr_assert_eq(kd_rule_status_of(&rows, NULL), TMA_ERR_ARG);
}
