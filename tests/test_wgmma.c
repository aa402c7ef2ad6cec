/* The wgmma shared-memory descriptor (include/tma/wgmma.h) against the CPU model of the copy engine, and
 * the GEMM kernel's layout (tma/kernels.h, kernels/gemm_tiles.h), without a GPU:
 *   designates_tma_element - for every mode (NONE, 32B, 64B, 128B) and 2- and 4-byte types (bf16, f16, tf32),
 *       tiles loaded with tma_model_load_tiled at several 1024-aligned bases and coordinates (partly out of
 *       bounds too), one descriptor per wgmma K step (start advanced by 32 bytes inside the span, as kernels
 *       do): for every (m, k) the element the descriptor designates holds the global matrix's element
 *       (or the zero fill).
 *   mismatch_detected - a descriptor built from another swizzle mode than the copy used designates the
 *       wrong element for most (m, k).
 *   fields / ok - field packing round-trips; the argument check accepts the kernel's use, refuses bad ones.
 *   scheduler - every output tile exactly once, any shape and group size; stream-K: every stage of every unit once,
 *       each cut unit's owner and helpers as the kernel finds them.
 *   gemm_layout - the kernel's own descriptors (A box of 128 rows x 64 bf16, 128B swizzle, both consumer
 *       halves, ragged K) designate the element the model loaded, and advancing stage 0's first descriptor by
 *       whole boxes and K steps equals deriving each afresh; the epilogue's box addressing puts every element of C where
 *       a model TMA store of C's map writes it, and each of its 4-byte warp stores hits 32 different banks. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "gemm_tiles.h"
#include "tma/kernels.h"
#include "tma/tma.h"
#include "tma/wgmma.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd32(void) {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (uint32_t)((rng * 0x2545F4914F6CDD1Dull) >> 32);
}

enum { ROWS = 128, SMEM = 64 * 1024 };
static const tma_swizzle MODES[] = {TMA_SWIZZLE_NONE, TMA_SWIZZLE_32B, TMA_SWIZZLE_64B, TMA_SWIZZLE_128B};
static const tma_dtype TYPES[] = {TMA_DTYPE_BF16, TMA_DTYPE_F16, TMA_DTYPE_TF32};

typedef struct matrix {
    tma_dtype dtype;
    uint32_t esize, rows, cols; /* row-major rows x cols (cols = K) */
    uint8_t *data;
} matrix;

static matrix make_matrix(tma_dtype t, uint32_t rows, uint32_t cols) {
    matrix g = {t, (uint32_t)tma_dtype_size(t), rows, cols, NULL};
    g.data = malloc((size_t)rows * cols * g.esize);
    cr_assert(g.data);
    for (size_t i = 0; i < (size_t)rows * cols; i++) {
        uint32_t v = rnd32() | 1u; /* never zero, so the zero fill is told apart */
        if (g.esize == 4)
            v = (v & 0x807FE000u) | 0x3F802000u; /* tf32: finite, exactly representable (no rounding on load) */
        memcpy(g.data + i * g.esize, &v, g.esize);
    }
    return g;
}

/* Value of the global element (r, c), zero outside (TMA's zero fill). */
static uint32_t global_elem(const matrix *g, int64_t r, int64_t c) {
    uint32_t v = 0;
    if (r >= 0 && c >= 0 && r < g->rows && c < g->cols)
        memcpy(&v, g->data + ((size_t)r * g->cols + (size_t)c) * g->esize, g->esize);
    return v;
}

static uint32_t smem_elem(const uint8_t *sm, uint32_t addr, uint32_t esize) {
    uint32_t v = 0;
    cr_assert(addr + esize <= SMEM, "address 0x%x outside the arena", addr);
    memcpy(&v, sm + addr, esize);
    return v;
}

/* Load one K-major operand tile of ROWS rows at (r0, k0) the way a kernel would with `mode`: one box of a
 * span of K for a swizzled mode; for NONE, one 16-byte-wide box per K-chunk, chunk j at base + j*ROWS*16.
 * Returns the K elements the tile holds. */
static uint32_t load_tile(const matrix *g, tma_swizzle mode, uint8_t *sm, uint32_t base, int32_t r0, int32_t k0) {
    uint32_t span = mode == TMA_SWIZZLE_NONE ? 16u : tma_swizzle_span(mode);
    uint32_t chunks = mode == TMA_SWIZZLE_NONE ? 4u : 1u; /* NONE: 64 bytes of K, as 4 boxes */
    tma_tiled_desc d = tma_desc_2d(g->dtype, g->data, g->rows, g->cols, (uint64_t)g->cols * g->esize, ROWS,
                                   span / g->esize, mode);
    tma_diag diag;
    cr_assert_eq(tma_check_tiled(&d, &diag), TMA_OK, "%s", diag.message);
    cr_assert_eq(tma_box_row_pitch(&d), span);
    for (uint32_t j = 0; j < chunks; j++) {
        int32_t c[5] = {k0 + (int32_t)(j * span / g->esize), r0, 0, 0, 0};
        tma_status st = tma_model_load_tiled(&d, c, sm, SMEM, base + j * ROWS * span);
        cr_assert_eq(st, TMA_OK, "model load: %s", tma_status_name(st));
    }
    return chunks * span / g->esize;
}

/* Count of (k-step, m, k) whose descriptor-designated element differs from the global element, for a tile
 * loaded with `load_mode` and read through descriptors built from `desc_mode`. *total receives the count
 * of elements checked. */
static size_t count_mismatches(const matrix *g, tma_swizzle load_mode, tma_swizzle desc_mode, uint32_t base,
                               int32_t r0, int32_t k0, size_t *total) {
    static uint8_t sm[SMEM];
    memset(sm, 0xA5, sizeof sm);
    uint32_t kelems = load_tile(g, load_mode, sm, base, r0, k0);
    uint32_t pitch = desc_mode == TMA_SWIZZLE_NONE ? 16u : tma_swizzle_span(desc_mode);
    uint32_t step_elems = TMA_WGMMA_K_BYTES / g->esize;
    size_t bad = 0, n = 0;
    for (uint32_t ks = 0; ks * step_elems < kelems; ks++) {
        uint32_t kb = ks * TMA_WGMMA_K_BYTES;
        if (desc_mode != TMA_SWIZZLE_NONE && kb + TMA_WGMMA_K_BYTES > pitch)
            break; /* the descriptor's span holds no more K steps */
        cr_assert(tma_wgmma_kmajor_ok(desc_mode, base, pitch, ROWS, kb), "mode %d base %u step %u", desc_mode,
                  base, ks);
        uint64_t desc = tma_wgmma_desc_kmajor(desc_mode, base, pitch, ROWS, kb);
        cr_assert_eq(tma_wgmma_desc_layout(desc), tma_wgmma_layout_of(desc_mode));
        for (uint32_t m = 0; m < ROWS; m++)
            for (uint32_t k = 0; k < step_elems; k++) {
                uint32_t addr = tma_wgmma_kmajor_addr(desc, g->esize, m, k);
                uint32_t want = global_elem(g, r0 + (int64_t)m, k0 + (int64_t)(ks * step_elems + k));
                bad += smem_elem(sm, addr, g->esize) != want;
                n++;
            }
    }
    *total = n;
    return bad;
}

static const uint32_t BASES[] = {0, 1024, 3072, 8192, 16384 + 2048};

Test(wgmma, designates_tma_element) {
    for (size_t t = 0; t < sizeof TYPES / sizeof TYPES[0]; t++) {
        matrix g = make_matrix(TYPES[t], 300, 200);
        for (size_t mi = 0; mi < 4; mi++)
            for (size_t b = 0; b < sizeof BASES / sizeof BASES[0]; b++) {
                /* inside, ragged at the bottom-right, and before the start (negative coordinates) */
                int32_t step = (int32_t)(16 / g.esize);
                int32_t coords[][2] = {{0, 0}, {37, 3 * step}, {250, 23 * step}, {-5, -2 * step}};
                for (size_t c = 0; c < 4; c++) {
                    size_t total = 0;
                    size_t bad = count_mismatches(&g, MODES[mi], MODES[mi], BASES[b], coords[c][0], coords[c][1],
                                                  &total);
                    cr_assert(total > 0);
                    cr_assert_eq(bad, 0, "%s %s base %u coord (%d, %d): %zu of %zu elements differ",
                                 tma_dtype_name(g.dtype), tma_swizzle_name(MODES[mi]), BASES[b], coords[c][0],
                                 coords[c][1], bad, total);
                }
            }
        free(g.data);
    }
}

Test(wgmma, mismatch_detected) {
    matrix g = make_matrix(TMA_DTYPE_BF16, 256, 256);
    for (size_t li = 0; li < 4; li++)
        for (size_t di = 0; di < 4; di++) {
            if (li == di)
                continue;
            size_t total = 0;
            size_t bad = count_mismatches(&g, MODES[li], MODES[di], 1024, 8, 16, &total);
            cr_log_info("TMA %s read as %s: %zu of %zu differ", tma_swizzle_name(MODES[li]),
                        tma_swizzle_name(MODES[di]), bad, total);
            cr_assert(bad * 2 > total, "TMA %s read through a %s descriptor: only %zu of %zu differ",
                      tma_swizzle_name(MODES[li]), tma_swizzle_name(MODES[di]), bad, total);
        }
    free(g.data);
}

Test(wgmma, fields) {
    for (int i = 0; i < 1000; i++) {
        uint32_t s = (rnd32() % (1u << 14)) << 4, l = (rnd32() % (1u << 14)) << 4, o = (rnd32() % (1u << 14)) << 4;
        uint32_t bo = rnd32() % 8, lay = rnd32() % 4;
        uint64_t d = tma_wgmma_desc_pack(s, l, o, bo, lay);
        cr_assert_eq(tma_wgmma_desc_start(d), s);
        cr_assert_eq(tma_wgmma_desc_lbo(d), l);
        cr_assert_eq(tma_wgmma_desc_sbo(d), o);
        cr_assert_eq(tma_wgmma_desc_base_offset(d), bo);
        cr_assert_eq(tma_wgmma_desc_layout(d), lay);
    }
    /* the kernel's operand: 128B swizzle, 1024-aligned, SBO 1024, LBO 16 (unused), layout 1 */
    uint64_t d = tma_wgmma_desc_kmajor(TMA_SWIZZLE_128B, 0x2000, 128, 64, 96);
    cr_assert_eq(d, ((uint64_t)1 << 62) | ((uint64_t)64 << 32) | ((uint64_t)1 << 16) | ((0x2000 + 96) >> 4));
    for (size_t mi = 0; mi < 4; mi++)
        cr_assert_eq(tma_wgmma_swizzle_of_layout(tma_wgmma_layout_of(MODES[mi])), MODES[mi]);
    cr_assert_eq(tma_wgmma_layout_of(TMA_SWIZZLE_128B_ATOM_64B), 0xFFu);
    /* the box-info form gives the same descriptor as the explicit form */
    tma_box_info box = {.rank = 2, .elem_bytes = 2, .swizzle = TMA_SWIZZLE_128B, .row_pitch = 128, .rows = 256,
                        .box_dim = {64, 256}};
    cr_assert_eq(tma_wgmma_desc_box(&box, 0x4000, 48), tma_wgmma_desc_kmajor(TMA_SWIZZLE_128B, 0x4000, 128, 256, 96));
}

/* A descriptor started at row r of a tile the copy engine wrote (on its period) designates rows r, r + 1, ... of it:
 * the model's reading of the silicon measured by tests/wgmma_probe.cu (base offset 0, the swizzle on absolute
 * addresses), for every row offset up to two periods, every swizzled mode and element size. */
Test(wgmma, descriptor_at_any_row_of_a_tile) {
    for (size_t t = 0; t < sizeof TYPES / sizeof TYPES[0]; t++) {
        matrix g = make_matrix(TYPES[t], 300, 200);
        for (size_t mi = 1; mi < 4; mi++) { /* the swizzled modes */
            static uint8_t sm[SMEM];
            memset(sm, 0xA5, sizeof sm);
            const uint32_t base = 2048, span = tma_swizzle_span(MODES[mi]);
            const int32_t r0 = 11, k0 = (int32_t)(16 / g.esize);
            load_tile(&g, MODES[mi], sm, base, r0, k0);
            for (uint32_t r = 0; r < 16u && r + 8u <= ROWS; r++) {
                const uint32_t start = base + r * span, rows = (ROWS - r) / 8u * 8u;
                cr_assert(tma_wgmma_kmajor_ok(MODES[mi], start, span, rows, 0), "%s row %u", tma_swizzle_name(MODES[mi]), r);
                const uint64_t desc = tma_wgmma_desc_kmajor(MODES[mi], start, span, rows, 0);
                for (uint32_t m = 0; m < rows; m++)
                    for (uint32_t k = 0; k < TMA_WGMMA_K_BYTES / g.esize; k++)
                        cr_assert_eq(smem_elem(sm, tma_wgmma_kmajor_addr(desc, g.esize, m, k), g.esize),
                                     global_elem(&g, r0 + (int64_t)(r + m), k0 + (int64_t)k),
                                     "%s, %u-byte elements: descriptor at row %u, element (%u, %u)",
                                     tma_swizzle_name(MODES[mi]), g.esize, r, m, k);
            }
        }
    }
}

/* Advancing a descriptor by whole swizzle periods equals deriving it afresh at the new address. */
Test(wgmma, advance_equals_fresh_descriptor) {
    for (size_t mi = 1; mi < 4; mi++) { /* the swizzled modes */
        const tma_swizzle mode = MODES[mi];
        const uint32_t span = tma_swizzle_span(mode), period = tma_swizzle_period(mode);
        for (uint32_t base = 0; base < 64u * 1024u; base += period)
            for (uint32_t steps = 0; steps < 8; steps++)
                for (uint32_t kb = 0; kb < span; kb += TMA_WGMMA_K_BYTES) {
                    uint32_t bytes = steps * 4u * period;
                    if (base + bytes + kb >= 256u * 1024u)
                        continue;
                    uint64_t moved = tma_wgmma_desc_advance(tma_wgmma_desc_kmajor(mode, base, span, 64, kb), bytes);
                    uint64_t fresh = tma_wgmma_desc_kmajor(mode, base + bytes, span, 64, kb);
                    cr_assert_eq(moved, fresh, "%s: base %u + %u bytes, k byte %u: advanced 0x%llx, fresh 0x%llx",
                                 tma_swizzle_name(mode), base, bytes, kb, (unsigned long long)moved,
                                 (unsigned long long)fresh);
                }
    }
}

Test(wgmma, ok) {
    cr_assert(tma_wgmma_kmajor_ok(TMA_SWIZZLE_128B, 1024, 128, 64, 96));
    cr_assert(tma_wgmma_kmajor_ok(TMA_SWIZZLE_128B, 512, 128, 64, 0), "row 4 of a tile on the period");
    cr_assert(!tma_wgmma_kmajor_ok(TMA_SWIZZLE_128B, 1024 + 64, 128, 64, 0), "off a 128-byte row");
    cr_assert(tma_wgmma_kmajor_ok(TMA_SWIZZLE_32B, 256 + 32, 32, 8, 0), "row 1 of a 32B tile");
    cr_assert(!tma_wgmma_kmajor_ok(TMA_SWIZZLE_64B, 512 + 32, 64, 8, 0), "off a 64-byte row");
    cr_assert(!tma_wgmma_kmajor_ok(TMA_SWIZZLE_128B, 1024, 128, 64, 128), "K step past the span");
    cr_assert(!tma_wgmma_kmajor_ok(TMA_SWIZZLE_128B, 1024, 64, 64, 0), "row pitch of another mode");
    cr_assert(!tma_wgmma_kmajor_ok(TMA_SWIZZLE_64B, 512, 64, 60, 0), "rows not a multiple of 8");
    cr_assert(tma_wgmma_kmajor_ok(TMA_SWIZZLE_32B, 256, 32, 8, 0));
    cr_assert(!tma_wgmma_kmajor_ok(TMA_SWIZZLE_32B, 256, 32, 8, 32), "32B span holds one K step");
    cr_assert(tma_wgmma_kmajor_ok(TMA_SWIZZLE_NONE, 16, 16, 64, 64));
    cr_assert(!tma_wgmma_kmajor_ok(TMA_SWIZZLE_NONE, 16, 32, 64, 0), "NONE needs 16-byte boxes");
    cr_assert(!tma_wgmma_kmajor_ok(TMA_SWIZZLE_128B_ATOM_32B, 1024, 128, 64, 0));
}

/* Every output tile exactly once, for any shape and group size; neighbours in launch order share rows. */
Test(gemm_sched, every_tile_once) {
    const uint32_t shapes[][2] = {{1, 1}, {1, 37}, {37, 1}, {64, 32}, {63, 33}, {17, 5}, {100, 100}, {5, 200}};
    const uint32_t groups[] = {1, 3, 8, 16, 1000};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t gi = 0; gi < sizeof groups / sizeof groups[0]; gi++) {
            uint32_t tm_n = shapes[s][0], tn_n = shapes[s][1];
            uint8_t *seen = calloc((size_t)tm_n * tn_n, 1);
            for (uint32_t t = 0; t < tm_n * tn_n; t++) {
                uint32_t tm = 0, tn = 0;
                gm_tile_of(t, tm_n, tn_n, groups[gi], &tm, &tn);
                cr_assert(tm < tm_n && tn < tn_n, "tile %u -> (%u, %u) outside %u x %u", t, tm, tn, tm_n, tn_n);
                cr_assert_eq(seen[(size_t)tm * tn_n + tn], 0, "tile (%u, %u) twice", tm, tn);
                seen[(size_t)tm * tn_n + tn] = 1;
            }
            free(seen);
        }
}

/* Stream-K (gm_sched): for unit counts around one and two waves, stage counts from 1 and worker counts from 1, every
 * stage of every unit is done exactly once; a unit is either one whole segment or cut into segments whose first
 * (kb0 = 0) is the last segment of its worker (the owner) and whose others are the first stream-K segments of the
 * workers gm_sk_workers_of names (owner + 1 .. last, less the empty ranges), so each worker stores at most one
 * partial tile and waits only after it; the whole units come first and are the dp ones. */
Test(gemm_sched, stream_k_covers_every_stage_once) {
    enum { MAXU = 600, MAXK = 40 };
    static uint8_t done[MAXU * MAXK];
    static int32_t first_seg_worker[MAXU], helpers_seen[MAXU];
    for (int trial = 0; trial < 3000; trial++) {
        const uint32_t workers = 1u + rnd32() % 140u, nk = 1u + rnd32() % MAXK;
        uint32_t units = 1u + rnd32() % (3u * workers);
        units = units > MAXU ? MAXU : units;
        const bool sk = trial % 4 != 0;
        if (sk && !gm_sk_fits(units, nk, workers))
            continue;
        const gm_sched s = gm_sched_make(units, nk, workers, sk);
        cr_assert(s.dp <= units && (!sk || s.dp % workers == 0), "dp %u of %u units, %u workers", s.dp, units, workers);
        memset(done, 0, sizeof done);
        for (uint32_t u = 0; u < units; u++)
            first_seg_worker[u] = -1, helpers_seen[u] = 0;
        for (uint32_t w = 0; w < workers; w++) {
            uint32_t cursor = 0, n = 0, partial_stores = 0;
            gm_segment seg, prev = {0, 0, 0};
            bool seen_sk = false;
            while (gm_next_segment(&s, w, &cursor, &seg)) {
                cr_assert(seg.unit < units && seg.kb0 < seg.kb1 && seg.kb1 <= nk, "worker %u: unit %u [%u, %u)", w,
                          seg.unit, seg.kb0, seg.kb1);
                cr_assert(seg.unit >= s.dp || (seg.kb0 == 0 && seg.kb1 == nk && seg.unit % workers == w),
                          "whole units are taken in turn");
                cr_assert(n == 0 || seg.unit > prev.unit, "units in order");
                for (uint32_t k = seg.kb0; k < seg.kb1; k++) {
                    cr_assert_eq(done[seg.unit * nk + k], 0, "unit %u stage %u twice", seg.unit, k);
                    done[seg.unit * nk + k] = 1;
                }
                const bool whole = seg.kb0 == 0 && seg.kb1 == nk;
                if (!whole) {
                    uint32_t owner, last;
                    gm_sk_workers_of(&s, seg.unit, &owner, &last);
                    if (seg.kb0 == 0) {
                        cr_assert_eq(owner, w, "the first stage's worker owns unit %u", seg.unit);
                        cr_assert(last > w, "an owner of a cut unit has helpers");
                        first_seg_worker[seg.unit] = (int32_t)w;
                    } else {
                        cr_assert(!seen_sk, "worker %u: a helper segment is its first stream-K one", w);
                        cr_assert(w > owner && w <= last && !gm_sk_range_empty(&s, w), "worker %u helps unit %u",
                                  w, seg.unit);
                        partial_stores++;
                        helpers_seen[seg.unit]++;
                    }
                }
                if (seg.unit >= s.dp)
                    seen_sk = true;
                prev = seg;
                n++;
            }
            cr_assert(partial_stores <= 1, "worker %u stores %u partial tiles", w, partial_stores);
            /* an owner's cut segment is the last of its range */
            if (n > 0 && prev.kb0 == 0 && prev.kb1 < nk)
                cr_assert_eq(first_seg_worker[prev.unit], (int32_t)w);
        }
        for (uint32_t u = 0; u < units; u++) {
            for (uint32_t k = 0; k < nk; k++)
                cr_assert_eq(done[u * nk + k], 1, "unit %u stage %u never done (%u units, %u stages, %u workers)", u,
                             k, units, nk, workers);
            if (u < s.dp)
                continue;
            uint32_t owner, last, expect = 0;
            gm_sk_workers_of(&s, u, &owner, &last);
            for (uint32_t h = owner + 1u; h <= last; h++)
                expect += !gm_sk_range_empty(&s, h);
            cr_assert_eq((uint32_t)helpers_seen[u], expect, "unit %u: helpers", u);
            cr_assert_eq(expect, last - owner, "unit %u: every worker after its owner up to the last helps (the "
                         "owner adds last - owner partial tiles, gm_pipeline_kernel)", u);
        }
    }
}

/* Split-K (gm_sched_split): for random unit, stage and part counts, every worker has exactly one segment, of unit
 * w / split, every stage of every unit is done exactly once, and the slices the parts add up (gm_split_slice) cover
 * each tile's 8-column groups of a half tile (8, 16, 24 or 32) exactly once, in order. */
Test(gemm_sched, split_k_covers_every_stage_and_group_once) {
    enum { MAXU = 140, MAXK = 80 };
    static uint8_t done[MAXU * MAXK];
    for (int trial = 0; trial < 3000; trial++) {
        const uint32_t units = 1u + rnd32() % MAXU, nk = 1u + rnd32() % MAXK;
        uint32_t split = 2u + rnd32() % (GM_SPLIT_MAX - 1u);
        split = split > nk ? nk : split;
        if (split < 2u)
            continue;
        const gm_sched s = gm_sched_split(units, nk, split);
        cr_assert_eq(s.workers, units * split);
        memset(done, 0, sizeof done);
        for (uint32_t w = 0; w < s.workers + 2u; w++) { /* and two workers past the grid: none */
            uint32_t cursor = 0, n = 0;
            gm_segment seg;
            while (gm_split_segment(&s, w, &cursor, &seg)) {
                cr_assert(w < s.workers && seg.unit == w / split && seg.kb0 < seg.kb1 && seg.kb1 <= nk,
                          "worker %u: unit %u [%u, %u) (%u units, %u stages, %u parts)", w, seg.unit, seg.kb0,
                          seg.kb1, units, nk, split);
                for (uint32_t k = seg.kb0; k < seg.kb1; k++) {
                    cr_assert_eq(done[seg.unit * nk + k], 0, "unit %u stage %u twice", seg.unit, k);
                    done[seg.unit * nk + k] = 1;
                }
                n++;
            }
            cr_assert_eq(n, w < s.workers ? 1u : 0u, "worker %u: %u segments", w, n);
        }
        for (uint32_t i = 0; i < units * nk; i++)
            cr_assert_eq(done[i], 1, "unit %u stage %u never done", i / nk, i % nk);
        for (uint32_t groups = 8; groups <= 32; groups += 8) {
            uint32_t next = 0;
            for (uint32_t p = 0; p < split; p++) {
                uint32_t j0, j1;
                gm_split_slice(groups, split, p, &j0, &j1);
                cr_assert(j0 == next && j1 >= j0 && j1 <= groups, "part %u of %u: groups [%u, %u)", p, split, j0, j1);
                next = j1;
            }
            cr_assert_eq(next, groups, "%u parts cover %u groups", split, groups);
        }
    }
}

/* The kernel's A box (TMA_GEMM_BM rows x TMA_GEMM_BK bf16, 128B swizzle) loaded by the model over a ragged K: each
 * consumer half's descriptors, one per K step, designate the element the model wrote (zero past K). */
Test(gemm_layout, kernel_descriptors_designate_the_loaded_elements) {
    enum { R = TMA_GEMM_BM, KD = 200, BASE = 2048 };
    static uint16_t g[R * KD];
    static uint8_t smem[64 * 1024];
    for (int i = 0; i < R * KD; i++)
        g[i] = (uint16_t)(rnd32() >> 16) | 1u; /* never zero: the zero fill is told apart */
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_BF16, g, R, KD, KD * 2, TMA_GEMM_BM, TMA_GEMM_BK, TMA_SWIZZLE_128B);
    const tma_box_info box = tma_box_info_of(&d);
    long bad = 0;
    for (int32_t k0 = 0; k0 < KD; k0 += TMA_GEMM_BK) {
        const int32_t c[5] = {k0, 0, 0, 0, 0};
        memset(smem, 0xA5, sizeof smem);
        cr_assert_eq(tma_model_load_tiled(&d, c, smem, sizeof smem, BASE), TMA_OK, "model load at k0 = %d", k0);
        for (uint32_t half = 0; half < 2; half++)
            for (uint32_t kk = 0; kk < TMA_GEMM_BK / 16u; kk++) {
                const uint64_t desc = tma_wgmma_desc_box(&box, BASE + half * 64u * box.row_pitch, kk * 16u);
                for (uint32_t m = 0; m < 64; m++)
                    for (uint32_t k = 0; k < 16; k++) {
                        const uint32_t addr = tma_wgmma_kmajor_addr(desc, 2, m, k);
                        const uint32_t gr = half * 64u + m, gc = (uint32_t)k0 + kk * 16u + k;
                        uint16_t want = gc < KD ? g[gr * KD + gc] : 0, got;
                        memcpy(&got, smem + addr, 2);
                        bad += got != want;
                    }
            }
    }
    cr_assert_eq(bad, 0, "%ld elements designated wrongly", bad);
    /* Stage 0's descriptors advanced by whole boxes (tma_wgmma_desc_advance) equal each stage's derived afresh,
     * for every stage, K step, and box (A and B: 128 and 256 rows). */
    for (uint32_t rows = TMA_GEMM_BM; rows <= TMA_GEMM_BN; rows *= 2) {
        tma_tiled_desc dd = tma_desc_2d(TMA_DTYPE_BF16, g, R, KD, KD * 2, rows, TMA_GEMM_BK, TMA_SWIZZLE_128B);
        const tma_box_info bx = tma_box_info_of(&dd);
        const uint32_t tile = rows * TMA_GEMM_BK * 2u, base = 1024u + 64u * bx.row_pitch;
        for (uint32_t k = 0; k < TMA_GEMM_BK; k += 16)
            for (uint32_t st = 0; st < TMA_GEMM_STAGES; st++)
                cr_assert_eq(tma_wgmma_desc_box(&bx, base + st * tile, k),
                             tma_wgmma_desc_advance(tma_wgmma_desc_box(&bx, base, 0),
                                                    st * tile + k / 16u * GM_K_STEP_BYTES),
                             "rows %u stage %u k %u: gm_mainloop's derivation from stage 0's first K step", rows,
                             st, k);
    }
}

/* The epilogue's box addressing (gm_epi_offset), both C types, through the model of a TMA store: a box written
 * where the kernel writes each (row, col), stored at a ragged corner of C with C's map, puts every element at
 * C[row0 + row][col0 + col] inside C and writes nothing else; each of the kernel's 4-byte warp stores into the
 * box (gm_epi_store_col for fp32) hits 32 different banks. */
Test(gemm_layout, epilogue_boxes_store_every_element_conflict_free) {
    enum { EPI_ROWS = GM_EPI_ROWS, M = 100, ROW0 = 64, COL0_BYTES = 128, N_BYTES = 144 };
    static uint8_t box[EPI_ROWS * GM_EPI_ROW_BYTES], c[M * N_BYTES];
    for (uint32_t eb = 2; eb <= 4; eb += 2) {
        const uint32_t cols = GM_EPI_ROW_BYTES / eb, n = N_BYTES / eb, col0 = COL0_BYTES / eb;
        tma_tiled_desc d = tma_desc_2d(eb == 2 ? TMA_DTYPE_BF16 : TMA_DTYPE_F32, c, M, n, N_BYTES, EPI_ROWS, cols,
                                       GM_EPI_SWIZZLE);
        for (uint32_t r = 0; r < EPI_ROWS; r++)
            for (uint32_t col = 0; col < cols; col++) {
                const uint32_t v = r * cols + col + 1u;
                memcpy(box + gm_epi_offset(r, col, eb), &v, eb);
            }
        memset(c, 0xFF, sizeof c);
        const int32_t coord[5] = {(int32_t)col0, ROW0, 0, 0, 0};
        cr_assert_eq(tma_model_store_tiled(&d, coord, box, sizeof box, 0), TMA_OK, "model store, %u-byte C", eb);
        for (uint32_t i = 0; i < M; i++)
            for (uint32_t j = 0; j < n; j++) {
                const int inside = i >= ROW0 && j >= col0;
                uint32_t want = inside ? (i - ROW0) * cols + (j - col0) + 1u : 0xFFFFFFFFu, got = 0xFFFFFFFFu;
                memcpy(&got, c + i * N_BYTES + j * eb, eb);
                if (eb == 2)
                    want &= 0xFFFFu, got &= 0xFFFFu;
                cr_assert_eq(got, want, "%u-byte C (%u, %u): 0x%x, want 0x%x", eb, i, j, got, want);
            }
        for (uint32_t warp = 0; warp < 4; warp++)
            for (uint32_t jj = 0; jj < cols / 8u; jj++)
                for (uint32_t h = 0; h < 2; h++)
                    for (uint32_t st = 0; st < eb / 2u; st++) {
                        uint32_t banks = 0;
                        for (uint32_t lane = 0; lane < 32; lane++) {
                            const uint32_t row = 16u * warp + lane / 4u + 8u * h, col = 8u * jj + 2u * (lane % 4u);
                            const uint32_t cw = eb == 2 ? col : gm_epi_store_col(st, row, col);
                            banks |= 1u << (gm_epi_offset(row, cw, eb) / 4u % 32u);
                        }
                        cr_assert_eq(banks, 0xFFFFFFFFu, "%u-byte C warp %u group %u half %u store %u: banks 0x%08x",
                                     eb, warp, jj, h, st, banks);
                    }
    }
}

/* The transposed epilogue's box addressing (gm_epi_t_offset), played through stmatrix.x4.trans as the PTX ISA
 * defines it (register i of a lane holds row lane / 4, columns 2 (lane % 4) and + 1 of matrix i; the instruction
 * stores column b of matrix i, its 8 rows as 8 contiguous 16-bit elements, at the address that lane 8 i + b gave):
 * every accumulator (row, col) of every consumer warp lands at box element (col % 64, row) of gm_epi_offset's box,
 * i.e. C^T, each box element exactly once; and each matrix's 8 rows of 16 bytes fall in 8 different 16-byte bank
 * groups (one wavefront a matrix). */
Test(gemm_layout, transposed_epilogue_stores_every_element_once_conflict_free) {
    static uint16_t box[GM_EPI_ROWS * GM_EPI_ROW_BYTES / 2];
    memset(box, 0, sizeof box);
    for (uint32_t warp = 0; warp < 4; warp++)
        for (uint32_t jj = 0; jj < GM_EPI_ROWS / 8u; jj += 2)
            for (uint32_t i = 0; i < 4; i++) { /* matrix i: group jj + i / 2, rows 16 warp + 8 (i % 2) */
                uint32_t groups = 0;
                for (uint32_t b = 0; b < 8; b++) {
                    const uint32_t addr = gm_epi_t_offset(warp, 8u * i + b, jj);
                    cr_assert_eq(addr % 16u, 0u, "warp %u group %u matrix %u row %u: 16-byte aligned", warp, jj, i, b);
                    groups |= 1u << (addr / 16u % 8u);
                    for (uint32_t r = 0; r < 8; r++) { /* element r of the stored row: fragment row r, column b */
                        const uint32_t lane = 4u * r + b / 2u; /* the lane holding it */
                        const uint32_t acc_row = 16u * warp + lane / 4u + 8u * (i % 2u);
                        const uint32_t acc_col = 8u * (jj + i / 2u) + 2u * (lane % 4u) + b % 2u;
                        const uint32_t at = addr + 2u * r;
                        cr_assert_eq(at, gm_epi_offset(acc_col % GM_EPI_ROWS, acc_row, 2),
                                     "accumulator (%u, %u) at box byte %u, not at C^T's (%u, %u)", acc_row, acc_col,
                                     at, acc_col % GM_EPI_ROWS, acc_row);
                        box[at / 2u]++;
                    }
                }
                cr_assert_eq(groups, 0xFFu, "warp %u groups %u matrix %u: 16-byte bank groups 0x%02x", warp, jj, i,
                             groups);
            }
    for (uint32_t e = 0; e < GM_EPI_ROWS * GM_EPI_ROW_BYTES / 2; e++)
        cr_assert_eq(box[e], 1u, "box element %u written %u times", e, box[e]);
}


/* Split-K's staged slice (gm_split_stage_offset, gemm_device.cuh: gm_split_reduce): for every slice a half tile can
 * have (1 to 16 eight-column groups; C^T's: 8 to 128 rows of 128 bytes), every element of the slice has its own
 * place inside rows x pitch, and the warp's stores into it are conflict-free: C's bf16 pairs (8 rows x 4 lanes, one
 * chunk) hit 32 different banks; C^T's single elements (4 rows x 8 lanes) hit each bank through one 4-byte word only.
 * Where a row is a whole number of 128-byte lines, each quarter-warp's 16-byte reads of the copy-out (consecutive
 * chunks of a row) fall in 8 different 16-byte bank groups. */
Test(gemm_layout, split_stage_slice_unique_and_conflict_free) {
    static uint8_t seen[128u * 256u];
    for (int ct = 0; ct < 2; ct++)
        for (uint32_t groups = 1; groups <= 16; groups++) {
            const uint32_t row_bytes = ct ? 128u : 16u * groups, rows = ct ? 8u * groups : 64u;
            const uint32_t pitch = gm_split_stage_pitch(row_bytes);
            cr_assert(pitch % 128u == 0 && pitch >= row_bytes && rows * pitch <= sizeof seen && rows * pitch <= 16384u,
                      "groups %u: pitch %u", groups, pitch);
            memset(seen, 0, sizeof seen);
            for (uint32_t r = 0; r < rows; r++)
                for (uint32_t b = 0; b < row_bytes; b++) {
                    const uint32_t o = gm_split_stage_offset(r, b, pitch);
                    cr_assert(o < rows * pitch && !seen[o], "%s groups %u: row %u byte %u at %u (seen %u)",
                              ct ? "C^T" : "C", groups, r, b, o, o < rows * pitch ? seen[o] : 0u);
                    seen[o] = 1;
                }
            for (uint32_t warp = 0; warp < 4; warp++)
                for (uint32_t g = 0; g < groups; g++)
                    for (uint32_t h = 0; h < 2; h++)
                        for (uint32_t e = 0; e < (ct ? 2u : 1u); e++) {
                            uint32_t word_of_bank[32];
                            memset(word_of_bank, 0xFF, sizeof word_of_bank);
                            for (uint32_t lane = 0; lane < 32; lane++) {
                                const uint32_t row = 16u * warp + lane / 4u + 8u * h, col = 8u * g + 2u * (lane % 4u);
                                const uint32_t o = ct ? gm_split_stage_offset(col + e, 2u * row, pitch)
                                                      : gm_split_stage_offset(row, 2u * col, pitch);
                                const uint32_t word = o / 4u, bank = word % 32u;
                                cr_assert(word_of_bank[bank] == 0xFFFFFFFFu || word_of_bank[bank] == word,
                                          "%s groups %u warp %u group %u half %u: bank %u of words %u and %u",
                                          ct ? "C^T" : "C", groups, warp, g, h, bank, word_of_bank[bank], word);
                                word_of_bank[bank] = word;
                            }
                        }
            if (row_bytes % 128u)
                continue;
            const uint32_t chunks = row_bytes / 16u;
            for (uint32_t q = 0; q < rows * chunks; q += 8) { /* a quarter-warp: chunks q .. q + 7 */
                uint32_t bank_groups = 0;
                for (uint32_t i = q; i < q + 8u; i++)
                    bank_groups |= 1u << (gm_split_stage_offset(i / chunks, 16u * (i % chunks), pitch) / 16u % 8u);
                cr_assert_eq(bank_groups, 0xFFu, "%s groups %u chunks %u..: bank groups 0x%02x", ct ? "C^T" : "C",
                             groups, q, bank_groups);
            }
        }
}
