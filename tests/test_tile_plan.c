/* Tests of tile plans (tma/tile_plan.h) and the model of a planned tile (src/tile_plan.c).
 *
 * The references here are written out again, sharing nothing with the library but the descriptor type:
 * the sub-box is found by trying every width (brute force), the sub-box order and every element's shared
 * address come from nested index arithmetic, the swizzle from the chunk-index formula.
 *
 * Suites:
 *   tile_plan_random  - plan arithmetic against brute force on random shapes, types, swizzles, ranks 1-5 and
 *                       max_box limits; every sub-box's offsets; every tile element covered exactly once.
 *   tile_plan_refuse  - every refusal: its status, its message (field, value, limit, fix), the plan zeroed; a
 *                       refusal is a row of libtma's rule table, a broken descriptor rule its cause.
 *   tile_model        - the model of a whole tile equals an element-by-element reference (poisoned buffer, every
 *                       byte), windows compose to the whole, the 512 x 512 bf16 128B tile as K-major panels.
 * Seed: env TMA_TEST_SEED, else the clock; logged with cr_log_info and in every failure. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <criterion/parameterized.h>

#include "tma/detail/rules.h"
#include "tma/detail/tile_plan.h"
#include "tma/tile_plan.h"
#include "tma/tma.h"
#include "test_seed.h"

/* =============================================================================================
 * Random numbers: splitmix64, one stream per (seed, iteration) so one iteration replays alone.
 * =========================================================================================== */
static uint64_t sm64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t below(uint64_t *s, uint64_t n) { return sm64(s) % n; }

static int64_t in_range(uint64_t *s, int64_t lo, int64_t hi) { return lo + (int64_t)below(s, (uint64_t)(hi - lo + 1)); }

static void fill_random(uint64_t *s, uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)sm64(s);
}

static uint64_t the_seed(const char *test) { return test_seed(test); }

/* =============================================================================================
 * The independent reference.
 * =========================================================================================== */
static uint32_t ref_es(tma_dtype t) {
    static const uint32_t size[13] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4}; /* cuda.h's order */
    return size[t];
}

static bool ref_is_float(tma_dtype t) {
    return t == TMA_DTYPE_F16 || t == TMA_DTYPE_BF16 || t == TMA_DTYPE_F32 || t == TMA_DTYPE_F32_FTZ ||
           t == TMA_DTYPE_F64 || t == TMA_DTYPE_TF32 || t == TMA_DTYPE_TF32_FTZ;
}

static uint32_t ref_span(tma_swizzle s) {
    return s == TMA_SWIZZLE_32B ? 32 : s == TMA_SWIZZLE_64B ? 64 : s == TMA_SWIZZLE_128B ? 128 : 0;
}

static uint64_t ref_swizzle(uint32_t span, uint64_t addr) {
    if (span == 0)
        return addr;
    uint64_t i = addr / 16, line = i / 8, col = i % 8;
    return (line * 8 + (col ^ (line % (span / 16)))) * 16 + addr % 16;
}

enum { REF_BOX_MAX = 256, REF_SMEM_MAX = 227 * 1024, REF_MAX_BOXES = 4096 };

typedef struct ref_plan {
    uint32_t box[5], grid[5];
    uint64_t count; /* saturated at UINT64_MAX */
    uint64_t pitch, rows, box_smem, stride, box_tx;
    bool shrunk; /* outer dimensions took smaller divisors to fit shared memory */
} ref_plan;

static uint64_t ref_box_smem(const uint32_t box[5], uint32_t rank, uint32_t es, uint32_t span, uint64_t *pitch,
                             uint64_t *rows) {
    uint64_t p = (uint64_t)box[0] * es, r = 1;
    if (span > p)
        p = span;
    for (uint32_t i = 1; i < rank; i++)
        r *= box[i];
    *pitch = p;
    *rows = r;
    return p * r;
}

/* The plan by brute force: every candidate width tried in each dimension. */
static void ref_plan_of(const tma_tiled_desc *t, const uint32_t *max_box, ref_plan *r) {
    const uint32_t es = ref_es(t->dtype), span = ref_span(t->swizzle);
    memset(r, 0, sizeof *r);
    for (uint32_t i = 0; i < 5; i++)
        r->box[i] = 1;
    for (uint32_t i = 0; i < t->rank; i++) {
        uint32_t lim = REF_BOX_MAX;
        if (i == 0 && span != 0 && span / es < lim)
            lim = span / es;
        if (max_box != NULL && max_box[i] != 0 && max_box[i] < lim)
            lim = max_box[i];
        uint32_t best = 0;
        for (uint32_t b = 1; b <= lim && b <= t->box_dim[i]; b++)
            if (t->box_dim[i] % b == 0 && (i > 0 || (b * es) % 16 == 0))
                best = b;
        r->box[i] = best;
    }
    uint64_t pitch, rows;
    for (uint32_t i = t->rank - 1; i >= 1 && i < 5; i--)
        while (r->box[i] > 1 && ref_box_smem(r->box, t->rank, es, span, &pitch, &rows) > REF_SMEM_MAX) {
            uint32_t b = r->box[i] - 1;
            while (t->box_dim[i] % b != 0)
                b--;
            r->box[i] = b;
            r->shrunk = true;
        }
    r->box_smem = ref_box_smem(r->box, t->rank, es, span, &r->pitch, &r->rows);
    r->stride = (r->box_smem + 127) / 128 * 128;
    r->box_tx = (uint64_t)r->box[0] * es * r->rows;
    r->count = 1;
    for (uint32_t i = 0; i < 5; i++) {
        r->grid[i] = i < t->rank ? t->box_dim[i] / r->box[i] : 1;
        r->count = r->count > UINT64_MAX / r->grid[i] ? UINT64_MAX : r->count * r->grid[i];
    }
}

/* A random tile of a random tensor: the tile's dimensions products of small factors (sometimes a prime), past
 * 256 and past the swizzle span at times. global_address stands in at 4096 (the plan reads no memory). */
static tma_tiled_desc random_tile(uint64_t *s, uint32_t max_elems) {
    for (;;) {
        tma_tiled_desc d;
        memset(&d, 0, sizeof d);
        d.dtype = (tma_dtype)below(s, TMA_DTYPE_COUNT_);
        d.rank = (uint32_t)in_range(s, 1, 5);
        d.swizzle = (tma_swizzle)below(s, 4);
        d.oob_fill = ref_is_float(d.dtype) && below(s, 3) == 0 ? TMA_OOB_NAN : TMA_OOB_ZERO;
        const uint32_t es = ref_es(d.dtype), unit0 = 16 / es;
        static const uint32_t factors[] = {1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 7, 9, 11, 13};
        uint64_t elems = 1;
        for (uint32_t i = 0; i < d.rank; i++) {
            uint32_t f = factors[below(s, sizeof factors / sizeof factors[0])];
            uint32_t g = below(s, 4) == 0 ? (uint32_t)in_range(s, 1, 5) : 1;
            uint32_t dim = i == 0                ? unit0 * f * g
                           : below(s, 8) == 0 ? (uint32_t)in_range(s, 1, 700) /* any, primes too */
                                              : f * g * (uint32_t)in_range(s, 1, 6);
            if (i >= 2 && below(s, 2) == 0)
                dim = (uint32_t)in_range(s, 1, 4);
            d.box_dim[i] = dim;
            d.element_stride[i] = (uint32_t)below(s, 2); /* 0 means 1 */
            d.global_dim[i] = (uint64_t)in_range(s, 1, 2 * (int64_t)dim + 8);
            elems *= dim;
        }
        if (elems > max_elems)
            continue;
        uint64_t stride = (d.global_dim[0] * es + 15) / 16 * 16 + 16 * below(s, 2);
        for (uint32_t i = 1; i < d.rank; i++) {
            d.global_stride[i - 1] = stride;
            stride *= d.global_dim[i];
        }
        d.global_address = (void *)(uintptr_t)4096;
        if (tma_global_extent_bytes(&d) > (1u << 20))
            continue;
        return d;
    }
}

static void describe_tile(const tma_tiled_desc *d, char *out, size_t n) {
    snprintf(out, n, "rank %u %s %s oob %d tile {%u,%u,%u,%u,%u} dims {%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
             ",%" PRIu64 "}",
             d->rank, tma_dtype_name(d->dtype), tma_swizzle_name(d->swizzle), (int)d->oob_fill, d->box_dim[0],
             d->box_dim[1], d->box_dim[2], d->box_dim[3], d->box_dim[4], d->global_dim[0], d->global_dim[1],
             d->global_dim[2], d->global_dim[3], d->global_dim[4]);
}

/* Whether two descriptors agree in every field but box_dim. */
static bool same_but_box(const tma_tiled_desc *a, const tma_tiled_desc *b) {
    bool same = a->dtype == b->dtype && a->rank == b->rank && a->global_address == b->global_address &&
                a->interleave == b->interleave && a->swizzle == b->swizzle && a->l2_promotion == b->l2_promotion &&
                a->oob_fill == b->oob_fill && a->flags == b->flags;
    for (int i = 0; i < 5; i++)
        same = same && a->global_dim[i] == b->global_dim[i] && a->element_stride[i] == b->element_stride[i] &&
               (i == 4 || a->global_stride[i] == b->global_stride[i]);
    return same;
}

/* =============================================================================================
 * tile_plan_random: the plan against brute force.
 * =========================================================================================== */
Test(tile_plan_random, matches_brute_force, .timeout = 120) {
    const uint64_t seed = the_seed("tile_plan_random::matches_brute_force");
    int planned = 0, refused_many = 0, shrunk = 0, limited = 0, covered = 0;
    for (int it = 0; it < 4000; it++) {
        uint64_t s = seed ^ ((uint64_t)it * 0x9E3779B97F4A7C15ull);
        sm64(&s);
        tma_tiled_desc d = random_tile(&s, 1u << 22);
        uint32_t max_box[5] = {0, 0, 0, 0, 0}, *mb = NULL;
        if (below(&s, 4) == 0) {
            mb = max_box;
            for (uint32_t i = 0; i < d.rank; i++)
                max_box[i] = below(&s, 2) ? 0 : (uint32_t)in_range(&s, i == 0 ? 16 / ref_es(d.dtype) : 1, 300);
            limited++;
        }
        char what[256];
        describe_tile(&d, what, sizeof what);
        ref_plan r;
        ref_plan_of(&d, mb, &r);
        tma_tile_plan p;
        tma_diag diag;
        tma_status st = tma_tile_plan_make(&d, mb, &p, &diag);
        if (r.count > REF_MAX_BOXES) {
            cr_assert_eq(st, TMA_ERR_ARG, "seed %" PRIu64 " it %d: %" PRIu64 " sub-boxes must be refused, got %s; %s",
                         seed, it, r.count, tma_status_name(st), what);
            cr_assert(strstr(diag.message, "more than the 4096 a plan may have") != NULL, "it %d: message \"%s\"", it,
                      diag.message);
            cr_assert_eq(p.count, 0u, "it %d: a refused plan must be zero", it);
            refused_many++;
            continue;
        }
        cr_assert_eq(st, TMA_OK, "seed %" PRIu64 " it %d: refused: %s; %s", seed, it, diag.message, what);
        planned++;
        for (uint32_t i = 0; i < 5; i++) {
            cr_assert_eq(p.box_dim[i], r.box[i], "seed %" PRIu64 " it %d: box_dim[%u] %u, brute force %u; %s", seed, it,
                         i, p.box_dim[i], r.box[i], what);
            cr_assert_eq(p.grid[i], r.grid[i], "it %d: grid[%u]", it, i);
            cr_assert_eq(p.tile_dim[i], i < d.rank ? d.box_dim[i] : 1u, "it %d: tile_dim[%u]", it, i);
            cr_assert_eq(p.box_desc.box_dim[i], i < d.rank ? r.box[i] : d.box_dim[i], "it %d: box_desc.box_dim[%u]",
                         it, i);
        }
        shrunk += r.shrunk;
        cr_assert_eq(p.count, r.count, "it %d: count", it);
        cr_assert_eq(p.rank, d.rank, "it %d: rank", it);
        cr_assert_eq(p.box_tx_bytes, r.box_tx, "it %d: box tx %u vs %" PRIu64, it, p.box_tx_bytes, r.box_tx);
        cr_assert_eq(p.box_smem_bytes, r.box_smem, "it %d: box smem", it);
        cr_assert_eq(p.box_stride, r.stride, "it %d: stride", it);
        cr_assert_eq(p.tx_bytes, r.count * r.box_tx, "it %d: total tx", it);
        cr_assert_eq(p.smem_bytes, r.count * r.stride, "it %d: total smem", it);
        cr_assert_eq(tma_box_tx_bytes(&p.box_desc), p.box_tx_bytes, "it %d: tx disagrees with the library's", it);
        /* the descriptor to encode: the tile's, box_dim aside */
        cr_assert(same_but_box(&p.box_desc, &d), "it %d: box_desc differs from the tile's beyond box_dim", it);
        cr_assert_eq(tma_check_tiled(&p.box_desc, &diag), TMA_OK, "it %d: box_desc: %s", it, diag.message);
        cr_assert_eq(tma_tile_plan_tx_bytes(&p, p.count), p.tx_bytes, "it %d", it);

        /* The order: dimension 1 fastest, then 2.., dimension 0 slowest, by an odometer. */
        uint32_t digit[5] = {0, 0, 0, 0, 0};
        uint32_t order[5], n = 0;
        for (uint32_t i = 1; i < d.rank; i++)
            order[n++] = i;
        order[n++] = 0;
        for (uint32_t i = 0; i < p.count; i++) {
            int32_t off[5], c[5];
            const int32_t origin[5] = {-16, 7, -3, 1000, 5};
            uint32_t sm = tma_tile_plan_box(&p, i, off);
            cr_assert_eq(sm, i * r.stride, "it %d box %u: smem offset %u", it, i, sm);
            for (uint32_t k = 0; k < 5; k++)
                cr_assert_eq(off[k], (int32_t)(k < d.rank ? digit[k] * r.box[k] : 0),
                             "it %d box %u: offset[%u] = %d", it, i, k, off[k]);
            cr_assert_eq(tma_tile_plan_coords(&p, i, origin, c), sm, "it %d", it);
            for (uint32_t k = 0; k < 5; k++)
                cr_assert_eq(c[k], origin[k] + off[k], "it %d box %u: coord[%u]", it, i, k);
            for (uint32_t k = 0; k < n; k++) { /* next */
                if (++digit[order[k]] < r.grid[order[k]])
                    break;
                digit[order[k]] = 0;
            }
        }
        /* Coverage: the sub-boxes cover each tile element exactly once (small tiles). */
        uint64_t elems = 1;
        for (uint32_t i = 0; i < d.rank; i++)
            elems *= d.box_dim[i];
        if (elems <= (1u << 16)) {
            uint8_t *hit = calloc(elems, 1);
            cr_assert(hit != NULL);
            const uint64_t box_elems =
                (uint64_t)p.box_dim[0] * p.box_dim[1] * p.box_dim[2] * p.box_dim[3] * p.box_dim[4];
            for (uint32_t i = 0; i < p.count; i++) {
                int32_t off[5];
                tma_tile_plan_box(&p, i, off);
                for (uint64_t e = 0; e < box_elems; e++) {
                    uint64_t rest = e, at = 0, scale = 1;
                    for (uint32_t k = 0; k < d.rank; k++) {
                        at += (off[k] + rest % p.box_dim[k]) * scale;
                        rest /= p.box_dim[k];
                        scale *= d.box_dim[k];
                    }
                    hit[at]++;
                }
            }
            for (uint64_t e = 0; e < elems; e++)
                cr_assert_eq(hit[e], 1, "it %d: tile element %" PRIu64 " covered %u times; %s", it, e, hit[e], what);
            free(hit);
            covered++;
        }
    }
    cr_log_info("tile plans: %d planned and matched brute force (%d with max_box, %d with outer dimensions shrunk "
                "to fit shared memory, %d checked for coverage), %d refused for too many sub-boxes",
                planned, limited, shrunk, covered, refused_many);
    cr_expect(shrunk > 0 && refused_many > 0 && covered > 0, "the random shapes must reach every branch");
}

Test(tile_plan_random, window_and_range) {
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_BF16, (void *)(uintptr_t)4096, 4096, 4096, 8192, 512, 512,
                                   TMA_SWIZZLE_128B);
    tma_tile_plan p;
    cr_assert_eq(tma_tile_plan_make(&d, NULL, &p, NULL), TMA_OK);
    cr_expect_eq(tma_tile_plan_window(&p, 200 * 1024), 6u, "200 KiB holds 6 sub-boxes of 32 KiB");
    cr_expect_eq(tma_tile_plan_window(&p, 1u << 30), 7u, "capped at 227 KiB: 7");
    cr_expect_eq(tma_tile_plan_window(&p, 1000), 0u, "not one fits");
    cr_expect_eq(tma_tile_plan_check_range(&p, 0, 7, NULL), TMA_OK);
    cr_expect_eq(tma_tile_plan_check_range(&p, 9, 7, NULL), TMA_OK);
    tma_tile_refusal w;
    char msg[TMA_DIAG_MESSAGE_BYTES];
    cr_expect_eq(tma_tile_plan_check_range(&p, 10, 7, &w), TMA_ERR_ARG);
    tma_tile_refusal_format(&w, msg, sizeof msg);
    cr_expect(strstr(msg, "sub-boxes [10, 10 + 7) of a plan of 16") && strstr(msg, "first + n <= plan.count"), "%s",
              msg);
    cr_expect_eq(tma_tile_plan_check_range(&p, 0, 0, &w), TMA_ERR_ARG, "n = 0");
    cr_expect_eq(tma_tile_plan_check_range(&p, 0, 8, &w), TMA_ERR_SMEM_BOUNDS);
    tma_tile_refusal_format(&w, msg, sizeof msg);
    cr_expect(strstr(msg, "8 sub-boxes of 32768 bytes need 262144 bytes") && strstr(msg, "the 232448 a Hopper block") &&
                  strstr(msg, "windows of at most 7 sub-boxes"),
              "%s", msg);
}

/* The checked-mode refusals of the issuer, formatted on the host as the device formats them. */
Test(tile_plan_random, issuer_messages) {
    tma_tile_refusal w;
    char msg[TMA_DIAG_MESSAGE_BYTES];
    memset(&w, 0, sizeof w);
    TMA_TILE_REFUSE_(&w, MAP_MISMATCH, tma_arg_u(1), tma_arg_u(512), tma_arg_u(65536), tma_arg_u(256),
                     tma_arg_u(32768));
    cr_expect_eq(tma_tile_refusal_status(&w), TMA_ERR_ARG);
    tma_tile_refusal_format(&w, msg, sizeof msg);
    cr_expect(strstr(msg, "box_dim[1] = 512, 65536 bytes") && strstr(msg, "box_dim[1] = 256, 32768 bytes") &&
                  strstr(msg, "encode plan.box_desc"),
              "%s", msg);
    TMA_TILE_REFUSE_(&w, RANK, tma_arg_u(3), tma_arg_u(2));
    cr_expect_eq(tma_tile_refusal_status(&w), TMA_ERR_RANK);
    tma_tile_refusal_format(&w, msg, sizeof msg);
    cr_expect_str_eq(msg, "tile load of rank 3 through a plan of rank 2: use tma_tile_load<2>");
    /* truncation: terminated, and the full length returned */
    char small[16];
    size_t n = tma_tile_refusal_format(&w, small, sizeof small);
    cr_expect_eq(n, strlen(msg));
    cr_expect_eq(small[15], '\0');
}

/* =============================================================================================
 * tile_plan_refuse: one row per refusal.
 * =========================================================================================== */
typedef enum change {
    C_NONE, C_NULL_TILE, C_NULL_PLAN, C_RANK, C_DTYPE, C_INTERLEAVE, C_DIM_ZERO, C_ESTRIDE, C_INNER, C_MAXBOX, C_MANY,
    C_ADDRESS, C_STRIDE, C_NAN_INT, C_SWIZZLE_SM100, C_ESTRIDE_BIG
} change;

/* Strings held in the row, not pointed to: Criterion runs each parameter in a new process, where the addresses of
 * string literals need not be the same. */
struct refuse_row {
    char name[32];
    int change;
    int status;
    char needle[4][96];
};

static struct refuse_row refuse_rows[] = {
    {"NULL tile", C_NULL_TILE, TMA_ERR_NULL_ARG, {"tile = NULL", "box_dim = the tile"}},
    {"NULL plan", C_NULL_PLAN, TMA_ERR_NULL_ARG, {"plan = NULL", "tma_tile_plan to fill"}},
    {"rank 0", C_RANK, TMA_ERR_RANK, {"tile plan: the tile's descriptor breaks a rule: ", "rank = 0", "outside 1..5"}},
    {"dtype 13", C_DTYPE, TMA_ERR_DTYPE, {"the tile's descriptor", "dtype = 13"}},
    {"interleave 16B", C_INTERLEAVE, TMA_ERR_UNSUPPORTED, {"interleave = TMA_INTERLEAVE_16B", "not done",
                                                            "use TMA_INTERLEAVE_NONE"}},
    {"tile dim 1 zero", C_DIM_ZERO, TMA_ERR_BOX_DIM, {"tile box_dim[1] = 0", "at least one element", "use 1"}},
    {"element stride 2", C_ESTRIDE, TMA_ERR_UNSUPPORTED, {"element_stride[1] = 2", "not done",
                                                          "use element_stride[1] = 1"}},
    {"element stride 9", C_ESTRIDE_BIG, TMA_ERR_UNSUPPORTED, {"element_stride[1] = 9", "not done"}},
    {"tile width 100 bf16", C_INNER, TMA_ERR_BOX_INNER_BYTES, {"tile box_dim[0] = 100 bf16 elements = 200 bytes",
                                                                "not a multiple of 16 bytes",
                                                                "multiple of 8 elements (e.g. 104)"}},
    {"max_box[0] 4 bf16", C_MAXBOX, TMA_ERR_ARG, {"max_box[0] = 4", "8 bf16 elements (16 bytes)", "max_box[0] >= 8"}},
    {"257 rows", C_MANY, TMA_ERR_ARG, {"tile box_dim[1] = 257 splits into 257 sub-boxes of 1",
                                       "limit of 256", "4112 sub-boxes, more than the 4096", "multiple of 64"}},
    {"NULL address", C_ADDRESS, TMA_ERR_GLOBAL_ADDRESS_NULL, {"box_dim = {64, 256} (the sub-box) breaks a rule: ",
                                                              "global_address = NULL"}},
    {"stride 1000", C_STRIDE, TMA_ERR_GLOBAL_STRIDE_ALIGN, {"box_dim = {64, 256}", "global_stride[0] = 1000",
                                                            "1008 bytes"}},
    {"NaN fill of u16", C_NAN_INT, TMA_ERR_OOB_FILL_NAN_INTEGER, {"box_dim = {64, 256}", "TMA_OOB_NAN",
                                                                  "dtype = u16"}},
    {"sm_100 swizzle", C_SWIZZLE_SM100, TMA_ERR_SWIZZLE_UNSUPPORTED, {"(the sub-box) breaks a rule",
                                                                      "TMA_SWIZZLE_128B_ATOM_64B", "Hopper"}},
};

ParameterizedTestParameters(tile_plan_refuse, rows) {
    return cr_make_param_array(struct refuse_row, refuse_rows, sizeof refuse_rows / sizeof refuse_rows[0]);
}

ParameterizedTest(struct refuse_row *r, tile_plan_refuse, rows) {
    /* the base: a 512 x 512 bf16 tile, 128B swizzle, of a 1024 x 1024 matrix; it plans */
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_BF16, (void *)(uintptr_t)4096, 1024, 1024, 2048, 512, 512,
                                   TMA_SWIZZLE_128B);
    tma_tile_plan p;
    tma_diag diag;
    cr_assert_eq(tma_tile_plan_make(&d, NULL, &p, &diag), TMA_OK, "[%s] base: %s", r->name, diag.message);
    const tma_tiled_desc *dp = &d;
    tma_tile_plan *pp = &p;
    const uint32_t *mb = NULL;
    uint32_t max_box[5] = {4, 0, 0, 0, 0};
    switch ((change)r->change) {
    case C_NULL_TILE: dp = NULL; break;
    case C_NULL_PLAN: pp = NULL; break;
    case C_RANK: d.rank = 0; break;
    case C_DTYPE: d.dtype = (tma_dtype)13; break;
    case C_INTERLEAVE:
        d.rank = 3, d.global_dim[2] = 1, d.global_stride[1] = 2048 * 1024, d.box_dim[2] = 1;
        d.interleave = TMA_INTERLEAVE_16B, d.swizzle = TMA_SWIZZLE_NONE;
        break;
    case C_DIM_ZERO: d.box_dim[1] = 0; break;
    case C_ESTRIDE: d.element_stride[1] = 2; break;
    case C_ESTRIDE_BIG: d.element_stride[1] = 9; break;
    case C_INNER: d.box_dim[0] = 100; break;
    case C_MAXBOX: mb = max_box; break;
    case C_MANY: d.box_dim[0] = 1024, d.box_dim[1] = 257; break;
    case C_ADDRESS: d.global_address = NULL; break;
    case C_STRIDE: d.global_stride[0] = 1000; break;
    case C_NAN_INT: d.dtype = TMA_DTYPE_U16, d.oob_fill = TMA_OOB_NAN; break;
    case C_SWIZZLE_SM100: d.swizzle = TMA_SWIZZLE_128B_ATOM_64B; break;
    default: break;
    }
    memset(&p, 0x5a, sizeof p);
    memset(&diag, 0x7f, sizeof diag);
    tma_status st = tma_tile_plan_make(dp, mb, pp, &diag);
    cr_expect_eq(st, (tma_status)r->status, "[%s] status %s, expected %s (\"%s\")", r->name, tma_status_name(st),
                 tma_status_name((tma_status)r->status), diag.message);
    cr_expect_eq(diag.status, st, "[%s] diag.status", r->name);
    cr_expect_eq(diag.message[sizeof diag.message - 1], '\0', "[%s] message not terminated", r->name);
    for (int i = 0; i < 4; i++)
        if (r->needle[i][0] != '\0')
            cr_expect(strstr(diag.message, r->needle[i]) != NULL, "[%s] message \"%s\" lacks \"%s\"", r->name,
                      diag.message, r->needle[i]);
    if (pp != NULL) {
        tma_tile_plan zero;
        memset(&zero, 0, sizeof zero);
        cr_expect(memcmp(&p, &zero, sizeof p) == 0, "[%s] a refused plan must be all zero", r->name);
    }
    /* the same refusal through the TMA_HD entry point, as the device sees it */
    tma_tile_refusal w;
    tma_tile_plan p2;
    cr_expect_eq(tma_tile_plan_compute(dp, mb, pp ? &p2 : NULL, &w), st, "[%s] compute disagrees", r->name);
    char msg[TMA_DIAG_MESSAGE_BYTES];
    tma_tile_refusal_format(&w, msg, sizeof msg);
    cr_expect_str_eq(msg, diag.message, "[%s]", r->name);
}

/* One vocabulary: a refusal is a violation of a TILE_ row of TMA_RULE_TABLE, and a refusal because a descriptor
 * breaks a rule carries that rule as its cause, whose status it reports and whose message follows its own. */
Test(tile_plan_refuse, refusals_are_rows_of_the_rule_table) {
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_BF16, NULL, 1024, 1024, 2048, 512, 512, TMA_SWIZZLE_128B);
    tma_tile_plan p;
    tma_tile_refusal w;
    cr_assert_eq(tma_tile_plan_compute(&d, NULL, &p, &w), TMA_ERR_GLOBAL_ADDRESS_NULL, "a NULL address");
    cr_expect_eq(w.why.rule, (uint32_t)TMA_RULE_TILE_BOX_DESC, "the sub-box descriptor's row");
    cr_expect(w.has_cause && w.cause.rule == (uint32_t)TMA_RULE_ADDRESS_NULL, "the descriptor rule as the cause");
    cr_expect_eq(tma_tile_refusal_status(&w), tma_violation_status(&w.cause), "the cause's status");
    char whole[TMA_DIAG_MESSAGE_BYTES], own[TMA_DIAG_MESSAGE_BYTES], cause[TMA_DIAG_MESSAGE_BYTES];
    const size_t n = tma_tile_refusal_format(&w, whole, sizeof whole);
    const size_t no = tma_violation_format(&w.why, own, sizeof own);
    tma_violation_format(&w.cause, cause, sizeof cause);
    cr_expect_eq(n, strlen(whole), "the length");
    cr_expect(strncmp(whole, own, no) == 0 && strcmp(whole + no, cause) == 0, "\"%s\" is not \"%s\" + \"%s\"", whole,
              own, cause);
    cr_expect_str_eq(own, "tile plan: the descriptor with box_dim = {64, 256} (the sub-box) breaks a rule: ", "its own");

    /* without a cause: the row's own status and message */
    d.global_address = (void *)(uintptr_t)4096;
    d.box_dim[1] = 0;
    cr_assert_eq(tma_tile_plan_compute(&d, NULL, &p, &w), TMA_ERR_BOX_DIM, "a zero tile dimension");
    cr_expect(w.why.rule == (uint32_t)TMA_RULE_TILE_DIM_ZERO && !w.has_cause, "row TILE_DIM_ZERO, no cause");
    cr_expect_eq(tma_tile_refusal_status(&w), tma_rule_status(TMA_RULE_TILE_DIM_ZERO), "the row's status");
    tma_tile_refusal_format(&w, whole, sizeof whole);
    tma_violation_format(&w.why, own, sizeof own);
    cr_expect_str_eq(whole, own, "its own message only");
}

/* =============================================================================================
 * tile_model: the model of a tile against a reference written element by element.
 * =========================================================================================== */

/* The reference image of sub-boxes [first, first + n) at dst: written[] marks the bytes it sets. */
static void ref_tile_image(const tma_tiled_desc *d, const tma_tile_plan *p, const int32_t origin[5], uint32_t first,
                           uint32_t n, uint64_t dst, uint8_t *img, uint8_t *written) {
    const uint32_t es = ref_es(d->dtype), span = ref_span(d->swizzle);
    const uint64_t pitch = (uint64_t)p->box_dim[0] * es > span ? (uint64_t)p->box_dim[0] * es : span;
    uint64_t rows = 1;
    for (uint32_t i = 1; i < d->rank; i++)
        rows *= p->box_dim[i];
    const uint64_t stride = (rows * pitch + 127) / 128 * 128;
    uint32_t t[5];
    const uint32_t dims[5] = {d->box_dim[0], d->rank > 1 ? d->box_dim[1] : 1, d->rank > 2 ? d->box_dim[2] : 1,
                              d->rank > 3 ? d->box_dim[3] : 1, d->rank > 4 ? d->box_dim[4] : 1};
    for (t[4] = 0; t[4] < dims[4]; t[4]++)
        for (t[3] = 0; t[3] < dims[3]; t[3]++)
            for (t[2] = 0; t[2] < dims[2]; t[2]++)
                for (t[1] = 0; t[1] < dims[1]; t[1]++)
                    for (t[0] = 0; t[0] < dims[0]; t[0]++) {
                        uint32_t k[5], l[5];
                        for (int i = 0; i < 5; i++)
                            k[i] = t[i] / p->box_dim[i], l[i] = t[i] % p->box_dim[i];
                        /* sub-box index: dimension 1 fastest, dimension 0 slowest */
                        uint64_t idx = k[0];
                        for (int i = (int)d->rank - 1; i >= 1; i--)
                            idx = idx * p->grid[i] + k[i];
                        if (idx < first || idx >= (uint64_t)first + n)
                            continue;
                        const uint64_t row =
                            l[1] + (uint64_t)p->box_dim[1] *
                                       (l[2] + (uint64_t)p->box_dim[2] * (l[3] + (uint64_t)p->box_dim[3] * l[4]));
                        const uint64_t logical = dst + (idx - first) * stride + row * pitch + (uint64_t)l[0] * es;
                        uint8_t v[8];
                        bool inside = true;
                        uint64_t goff = 0;
                        for (uint32_t i = 0; i < d->rank; i++) {
                            const int64_t x = (int64_t)origin[i] + t[i];
                            if (x < 0 || (uint64_t)x >= d->global_dim[i])
                                inside = false;
                            else
                                goff += (uint64_t)x * (i == 0 ? es : d->global_stride[i - 1]);
                        }
                        if (!inside) {
                            for (uint32_t b = 0; b < es; b++)
                                v[b] = d->oob_fill == TMA_OOB_NAN ? (b % 2 ? 0x7F : 0xF7) : 0;
                        } else {
                            memcpy(v, (const uint8_t *)d->global_address + goff, es);
                            if (d->dtype == TMA_DTYPE_TF32 || d->dtype == TMA_DTYPE_TF32_FTZ) {
                                uint32_t x;
                                memcpy(&x, v, 4);
                                if ((x & 0x7F800000u) == 0x7F800000u && (x & 0x7FFFFFu))
                                    x = 0x7FFFE000u;
                                else {
                                    uint32_t low = x & 0x1FFFu;
                                    x &= ~0x1FFFu;
                                    if (low > 0x1000u || (low == 0x1000u && (x & 0x2000u)))
                                        x += 0x2000u;
                                }
                                memcpy(v, &x, 4);
                            }
                        }
                        for (uint32_t b = 0; b < es; b++) {
                            const uint64_t at = ref_swizzle(span, logical + b);
                            cr_assert_eq(written[at], 0, "reference: byte %" PRIu64 " written twice", at);
                            img[at] = v[b];
                            written[at] = 1;
                        }
                    }
}

static int32_t unit_of(uint32_t dim, int32_t unit0) { return dim == 0 ? unit0 : 1; }

/* A tensor in host memory for d (random bytes); d->global_address set to it. */
static uint8_t *host_tensor(uint64_t *s, tma_tiled_desc *d) {
    size_t bytes = tma_global_extent_bytes(d);
    uint8_t *h = malloc(bytes + 16);
    cr_assert(h != NULL);
    fill_random(s, h, bytes + 16);
    d->global_address = h;
    return h;
}

Test(tile_model, whole_tile_matches_reference, .timeout = 120) {
    const uint64_t seed = the_seed("tile_model::whole_tile_matches_reference");
    int tiles = 0, oob = 0, windows = 0;
    uint64_t bytes = 0;
    for (int it = 0, attempt = 0; it < 600; attempt++) {
        uint64_t s = seed ^ ((uint64_t)attempt * 0xD1B54A32D192ED03ull);
        sm64(&s);
        tma_tiled_desc d = random_tile(&s, 1u << 15);
        tma_tile_plan p;
        tma_diag diag;
        if (tma_tile_plan_make(&d, NULL, &p, &diag) != TMA_OK || p.smem_bytes > (4u << 20))
            continue; /* too many sub-boxes: draw another */
        it++;
        uint8_t *h = host_tensor(&s, &d);
        p.box_desc.global_address = h;
        int32_t origin[5] = {0, 0, 0, 0, 0};
        const int32_t unit0 = 16 / (int32_t)ref_es(d.dtype);
        bool out = false, inside = below(&s, 2) == 0;
        for (uint32_t i = 0; i < d.rank; i++) {
            if (i == 0) /* on the 16-byte grid, the per-copy rule */
                origin[0] = unit0 * (int32_t)in_range(&s, -((int64_t)d.box_dim[0] + 2 + unit0 - 1) / unit0,
                                                      ((int64_t)d.global_dim[0] + 2) / unit0);
            else
                origin[i] = (int32_t)in_range(&s, -(int64_t)d.box_dim[i] - 2, (int64_t)d.global_dim[i] + 2);
            if (inside && d.global_dim[i] >= d.box_dim[i]) /* half the tiles inside where the tensor allows */
                origin[i] = (int32_t)(in_range(&s, 0, (int64_t)(d.global_dim[i] - d.box_dim[i]) / unit_of(i, unit0)) *
                                      unit_of(i, unit0));
            out |= origin[i] < 0 || (uint64_t)origin[i] + d.box_dim[i] > d.global_dim[i];
        }
        const uint32_t dst = (uint32_t)below(&s, 8) * 128;
        const size_t size = dst + (size_t)p.smem_bytes + 256;
        uint8_t *got = malloc(size), *want = malloc(size), *written = calloc(size, 1);
        cr_assert(got && want && written);
        fill_random(&s, got, size);
        memcpy(want, got, size);
        uint8_t *poison = malloc(size);
        cr_assert(poison != NULL);
        memcpy(poison, got, size);
        tma_status st = tma_model_load_tile(&p, origin, got, size, dst);
        char what[256];
        describe_tile(&d, what, sizeof what);
        cr_assert_eq(st, TMA_OK, "seed %" PRIu64 " it %d: model: %s; %s", seed, it, tma_status_name(st), what);
        ref_tile_image(&d, &p, origin, 0, p.count, dst, want, written);
        for (size_t b = 0; b < size; b++)
            if (got[b] != want[b])
                cr_assert_fail("seed %" PRIu64 " it %d: byte %zu: model 0x%02x, reference 0x%02x (%s by the "
                               "reference); origin {%d,%d,%d,%d,%d} dst %u; %s",
                               seed, it, b, got[b], want[b], written[b] ? "written" : "untouched", origin[0], origin[1],
                               origin[2], origin[3], origin[4], dst, what);
        /* Windows compose to the whole: each window, poisoned as its place in the whole was, at the same swizzle
         * phase, must come out as that place did. */
        const uint32_t w = (uint32_t)in_range(&s, 1, p.count);
        for (uint32_t first = 0; first < p.count; first += w) {
            const uint32_t n = p.count - first < w ? p.count - first : w;
            const size_t at = dst + (size_t)first * p.box_stride, len = (size_t)n * p.box_stride;
            const uint32_t wdst = (uint32_t)(at % 1024);
            uint8_t *win = malloc(wdst + len);
            cr_assert(win != NULL);
            memcpy(win + wdst, poison + at, len);
            cr_assert_eq(tma_model_load_tile_range(&p, origin, first, n, win, wdst + len, wdst), TMA_OK, "it %d", it);
            cr_assert(memcmp(win + wdst, got + at, len) == 0,
                      "seed %" PRIu64 " it %d: window [%u, %u + %u) differs from the whole tile's image", seed, it,
                      first, first, n);
            free(win);
            windows++;
        }
        tiles++;
        oob += out;
        bytes += p.smem_bytes;
        free(got);
        free(want);
        free(written);
        free(poison);
        free(h);
    }
    cr_log_info("tile model: %d tiles (%d reaching past the tensor), %" PRIu64 " image bytes and %d windows matched "
                "the reference byte for byte",
                tiles, oob, bytes, windows);
}

/* The required shape: 512 x 512 bf16, 128B swizzle = 16 sub-boxes of 64 x 256, 8 panels of 64 columns, each the
 * K-major image wgmma reads: element (r, c) at panel c / 64, row r at pitch 128, swizzled by address. */
Test(tile_model, bf16_512x512_128B_is_k_major_panels) {
    uint64_t s = 12345;
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_BF16, NULL, 600, 640, 640 * 2, 512, 512, TMA_SWIZZLE_128B);
    uint8_t *h = host_tensor(&s, &d);
    tma_tile_plan p;
    tma_diag diag;
    cr_assert_eq(tma_tile_plan_make(&d, NULL, &p, &diag), TMA_OK, "%s", diag.message);
    cr_expect_eq(p.box_dim[0], 64u);
    cr_expect_eq(p.box_dim[1], 256u);
    cr_expect_eq(p.grid[0], 8u);
    cr_expect_eq(p.grid[1], 2u);
    cr_expect_eq(p.count, 16u);
    cr_expect_eq(p.box_tx_bytes, 32768u);
    cr_expect_eq(p.box_stride, 32768u);
    cr_expect_eq(p.tx_bytes, 512u * 1024u, "one expect-tx for the whole tile: 512 KiB");
    cr_expect_eq(p.smem_bytes, 512u * 1024u);
    int32_t off[5];
    cr_expect_eq(tma_tile_plan_box(&p, 3, off), 3u * 32768u);
    cr_expect(off[0] == 64 && off[1] == 256, "sub-box 3 = panel 1, rows 256..511: {%d, %d}", off[0], off[1]);

    const int32_t origin[5] = {64, 96, 0, 0, 0}; /* rows 96..607 of 600: the last 8 rows are fill */
    const size_t size = p.smem_bytes;
    uint8_t *img = malloc(size);
    cr_assert(img != NULL);
    memset(img, 0xAB, size);
    cr_assert_eq(tma_model_load_tile(&p, origin, img, size, 0), TMA_OK);
    for (uint32_t r = 0; r < 512; r++)
        for (uint32_t c = 0; c < 512; c++) {
            const uint64_t logical = (uint64_t)(c / 64) * 65536 + (uint64_t)r * 128 + (c % 64) * 2;
            const uint64_t at = ref_swizzle(128, logical);
            const uint32_t gr = 96 + r, gc = 64 + c;
            uint8_t want[2] = {0, 0};
            if (gr < 600 && gc < 640)
                memcpy(want, h + (size_t)gr * 1280 + (size_t)gc * 2, 2);
            cr_assert(img[at] == want[0] && img[at + 1] == want[1], "element (%u, %u) at byte %" PRIu64, r, c, at);
        }
    free(img);
    free(h);
}

Test(tile_model, refusals_leave_smem_alone) {
    uint64_t s = 99;
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_F32, NULL, 40, 40, 160, 40, 64, TMA_SWIZZLE_64B);
    uint8_t *h = host_tensor(&s, &d);
    tma_tile_plan p;
    cr_assert_eq(tma_tile_plan_make(&d, NULL, &p, NULL), TMA_OK);
    cr_assert_eq(p.count, 4u * 1u, "64 f32 in 64B spans: 4 panels of 16 x 40");
    uint8_t buf[16384], before[16384];
    memset(buf, 0x5C, sizeof buf);
    memcpy(before, buf, sizeof buf);
    const int32_t ok[5] = {0, 0, 0, 0, 0}, misaligned[5] = {2, 0, 0, 0, 0}, huge[5] = {INT32_MAX - 3, 0, 0, 0, 0};
    cr_expect_eq(tma_model_load_tile(NULL, ok, buf, sizeof buf, 0), TMA_ERR_NULL_ARG);
    cr_expect_eq(tma_model_load_tile(&p, NULL, buf, sizeof buf, 0), TMA_ERR_NULL_ARG);
    cr_expect_eq(tma_model_load_tile(&p, ok, NULL, sizeof buf, 0), TMA_ERR_NULL_ARG);
    cr_expect_eq(tma_model_load_tile_range(&p, ok, 3, 2, buf, sizeof buf, 0), TMA_ERR_ARG, "past the plan");
    cr_expect_eq(tma_model_load_tile_range(&p, ok, 0, 0, buf, sizeof buf, 0), TMA_ERR_ARG, "n = 0");
    cr_expect_eq(tma_model_load_tile(&p, ok, buf, sizeof buf, 64), TMA_ERR_SMEM_ALIGN);
    cr_expect_eq(tma_model_load_tile(&p, ok, buf, p.smem_bytes - 1, 0), TMA_ERR_SMEM_BOUNDS);
    cr_expect_eq(tma_model_load_tile(&p, misaligned, buf, sizeof buf, 0), TMA_ERR_COORD_ALIGN);
    cr_expect_eq(tma_model_load_tile(&p, huge, buf, sizeof buf, 0), TMA_ERR_ARG, "a coordinate past int32");
    tma_tile_plan zero;
    memset(&zero, 0, sizeof zero);
    cr_expect_eq(tma_model_load_tile(&zero, ok, buf, sizeof buf, 0), TMA_ERR_ARG, "a refused plan");
    cr_expect(memcmp(buf, before, sizeof buf) == 0, "a refused load must leave smem as it was");
    free(h);
}
