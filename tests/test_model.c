/* Tests of the CPU model of the TMA copy engine: tma_model_load_tiled and tma_model_store_tiled.
 *
 * The model is checked against a reference written here, deliberately naive and sharing no code
 * with src/: it walks every element of the box by its full 5-D index, computes the logical
 * shared-memory address, swizzles it with the chunk-index formula written out below (not
 * tma_swizzle_addr), decides in/out of bounds, and applies the fill, TF32 rounding and the store's
 * 16-byte chunk rule itself. The rules are the ones measured on an H200 (docs/HARDWARE.md): smem
 * image and pitch, address swizzle, NaN fill pattern, stores through the same layout, TF32 rounding,
 * the store's chunk rule in dimension 0, and no negative store coordinates.
 *
 * Suites:
 *   model_random  - thousands of random loads and stores, every byte of shared and global memory
 *                   compared with the reference. Seed: env TMA_TEST_SEED, else from the clock;
 *                   printed with cr_log_info and in every failure message.
 *   model_golden  - hand-computed cases to check by eye (swizzle positions, padding, NaN fill,
 *                   TF32 rounding, the store's chunk rule).
 *   model_errors  - every error status, with the buffers unchanged afterwards.
 *   model_roundtrip - load then store at the same coordinates reproduces the in-bounds elements.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "tma/tma.h"
#include "test_seed.h"

/* =============================================================================================
 * Random numbers (splitmix64): one independent stream per (seed, test, iteration), so a failing
 * iteration can be replayed from the seed alone.
 * =========================================================================================== */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t rng_next(rng *r) {
    r->s += 0x9E3779B97F4A7C15ull;
    return mix64(r->s);
}

static uint32_t rng_below(rng *r, uint32_t n) { return (uint32_t)(rng_next(r) % n); }

static bool rng_chance(rng *r, uint32_t one_in) { return rng_below(r, one_in) == 0; }

static void rng_bytes(rng *r, uint8_t *p, size_t n) {
    while (n >= 8) {
        uint64_t v = rng_next(r);
        memcpy(p, &v, 8);
        p += 8;
        n -= 8;
    }
    if (n) {
        uint64_t v = rng_next(r);
        memcpy(p, &v, n);
    }
}

static rng rng_for(uint64_t seed, uint64_t salt, uint64_t iter) {
    rng r = {mix64(seed ^ mix64(salt * 0x100000001B3ull + iter))};
    return r;
}

/* =============================================================================================
 * The independent reference.
 * =========================================================================================== */

static uint32_t ref_esize(tma_dtype t) {
    static const uint32_t size[13] = {
        [TMA_DTYPE_U8] = 1,  [TMA_DTYPE_U16] = 2,      [TMA_DTYPE_U32] = 4,  [TMA_DTYPE_I32] = 4,
        [TMA_DTYPE_U64] = 8, [TMA_DTYPE_I64] = 8,      [TMA_DTYPE_F16] = 2,  [TMA_DTYPE_F32] = 4,
        [TMA_DTYPE_F64] = 8, [TMA_DTYPE_BF16] = 2,     [TMA_DTYPE_F32_FTZ] = 4,
        [TMA_DTYPE_TF32] = 4, [TMA_DTYPE_TF32_FTZ] = 4,
    };
    return size[t];
}

static bool ref_is_float(tma_dtype t) {
    return t == TMA_DTYPE_F16 || t == TMA_DTYPE_BF16 || t == TMA_DTYPE_F32 || t == TMA_DTYPE_F32_FTZ ||
           t == TMA_DTYPE_F64 || t == TMA_DTYPE_TF32 || t == TMA_DTYPE_TF32_FTZ;
}

static bool ref_is_tf32(tma_dtype t) { return t == TMA_DTYPE_TF32 || t == TMA_DTYPE_TF32_FTZ; }

static uint32_t ref_span(tma_swizzle s) {
    switch (s) {
    case TMA_SWIZZLE_32B:
        return 32;
    case TMA_SWIZZLE_64B:
        return 64;
    case TMA_SWIZZLE_128B:
        return 128;
    default:
        return 0;
    }
}

/* The chunk-index form of the swizzle: 16-byte chunk i = addr / 16, line = i / 8, col = i % 8,
 * physical col = col ^ (line % (span / 16)). span 0 (no swizzle): identity. */
static uint64_t ref_swizzle(uint32_t span, uint64_t addr) {
    if (span == 0)
        return addr;
    uint64_t i = addr / 16, line = i / 8, col = i % 8;
    uint64_t pcol = col ^ (line % (span / 16));
    return (line * 8 + pcol) * 16 + addr % 16;
}

static uint64_t ref_round16(uint64_t x) { return (x + 15) / 16 * 16; }

/* Element stride of dimension dim (>= 1 only; dimension 0 is never strided without interleave). */
static uint32_t ref_estride(const tma_tiled_desc *d, uint32_t dim) {
    if (dim == 0 || dim >= d->rank)
        return 1;
    return d->element_stride[dim] ? d->element_stride[dim] : 1;
}

static uint32_t ref_count(const tma_tiled_desc *d, uint32_t dim) {
    if (dim >= d->rank)
        return 1;
    uint32_t e = ref_estride(d, dim);
    return (d->box_dim[dim] + e - 1) / e;
}

static uint64_t ref_pitch(const tma_tiled_desc *d) {
    uint64_t inner = (uint64_t)d->box_dim[0] * ref_esize(d->dtype);
    uint64_t span = ref_span(d->swizzle);
    return span > inner ? span : inner;
}

static uint64_t ref_rows(const tma_tiled_desc *d) {
    return (uint64_t)ref_count(d, 1) * ref_count(d, 2) * ref_count(d, 3) * ref_count(d, 4);
}

static uint64_t ref_smem_bytes(const tma_tiled_desc *d) { return ref_rows(d) * ref_pitch(d); }

static uint64_t ref_extent(const tma_tiled_desc *d) {
    uint64_t last = 0;
    for (uint32_t i = 1; i < d->rank; i++)
        last += (d->global_dim[i] - 1) * d->global_stride[i - 1];
    return last + ref_round16(d->global_dim[0] * ref_esize(d->dtype));
}

/* TF32 on load: keep 19 bits, round to nearest even at bit 13; any NaN -> 0x7FFFE000. */
static uint32_t ref_tf32(uint32_t x) {
    uint32_t exponent = (x >> 23) & 0xFFu, mantissa = x & 0x7FFFFFu;
    if (exponent == 0xFFu && mantissa != 0)
        return 0x7FFFE000u;
    uint32_t low = x & 0x1FFFu, kept = x & ~0x1FFFu;
    if (low > 0x1000u || (low == 0x1000u && (kept & 0x2000u) != 0))
        kept += 0x2000u; /* may carry into the exponent: rounds up to the next binade or to infinity */
    return kept;
}

static void ref_fill(uint8_t v[8], uint32_t esize, tma_oob_fill fill) {
    for (uint32_t b = 0; b < esize; b++)
        v[b] = fill == TMA_OOB_NAN ? (b % 2 == 0 ? 0xF7 : 0x7F) : 0x00;
}

/* One element of a box. */
typedef struct ref_elem {
    uint64_t smem_logical; /* logical (unswizzled) shared-memory byte address */
    int64_t x[5];          /* global coordinates (0 past the rank) */
    bool inside_dims1;     /* dimensions 1..rank-1 inside the tensor */
    bool inside;           /* every dimension inside */
    uint64_t goff;         /* byte offset from global_address; valid when inside_dims1 and x[0] >= 0 */
} ref_elem;

typedef void (*ref_visit)(const tma_tiled_desc *d, const ref_elem *e, void *ctx);

/* Visit every element of the box at `coord` whose image starts at smem offset `off`. */
static void ref_walk(const tma_tiled_desc *d, const int32_t coord[5], uint64_t off, ref_visit visit, void *ctx) {
    const uint64_t esize = ref_esize(d->dtype), pitch = ref_pitch(d);
    uint32_t n[5], e[5];
    for (uint32_t k = 0; k < 5; k++) {
        n[k] = ref_count(d, k);
        e[k] = ref_estride(d, k);
    }
    for (uint32_t i4 = 0; i4 < n[4]; i4++)
        for (uint32_t i3 = 0; i3 < n[3]; i3++)
            for (uint32_t i2 = 0; i2 < n[2]; i2++)
                for (uint32_t i1 = 0; i1 < n[1]; i1++)
                    for (uint32_t i0 = 0; i0 < d->box_dim[0]; i0++) {
                        const uint32_t idx[5] = {i0, i1, i2, i3, i4};
                        const uint64_t row = (((uint64_t)i4 * n[3] + i3) * n[2] + i2) * n[1] + i1;
                        ref_elem el;
                        el.smem_logical = off + row * pitch + (uint64_t)i0 * esize;
                        for (uint32_t k = 0; k < 5; k++)
                            el.x[k] = k < d->rank ? (int64_t)coord[k] + (int64_t)idx[k] * e[k] : 0;
                        el.inside_dims1 = true;
                        for (uint32_t k = 1; k < d->rank; k++)
                            if (el.x[k] < 0 || (uint64_t)el.x[k] >= d->global_dim[k])
                                el.inside_dims1 = false;
                        el.inside = el.inside_dims1 && el.x[0] >= 0 && (uint64_t)el.x[0] < d->global_dim[0];
                        el.goff = 0;
                        if (el.inside_dims1 && el.x[0] >= 0) {
                            el.goff = (uint64_t)el.x[0] * esize;
                            for (uint32_t k = 1; k < d->rank; k++)
                                el.goff += (uint64_t)el.x[k] * d->global_stride[k - 1];
                        }
                        visit(d, &el, ctx);
                    }
}

/* Reference load: writes the expected smem image into `expect` and marks written bytes in `mask`. */
typedef struct load_ctx {
    uint8_t *expect, *mask;
    const uint8_t *global;
    uint64_t elems, inside, collisions;
} load_ctx;

static void ref_load_elem(const tma_tiled_desc *d, const ref_elem *el, void *vctx) {
    load_ctx *c = vctx;
    const uint32_t esize = ref_esize(d->dtype), span = ref_span(d->swizzle);
    uint8_t v[8];
    if (el->inside) {
        memcpy(v, c->global + el->goff, esize);
        if (ref_is_tf32(d->dtype)) {
            uint32_t w;
            memcpy(&w, v, 4);
            w = ref_tf32(w);
            memcpy(v, &w, 4);
        }
        c->inside++;
    } else {
        ref_fill(v, esize, d->oob_fill);
    }
    c->elems++;
    for (uint32_t b = 0; b < esize; b++) {
        uint64_t p = ref_swizzle(span, el->smem_logical + b);
        if (c->mask[p])
            c->collisions++;
        c->mask[p] = 1;
        c->expect[p] = v[b];
    }
}

/* Reference store: writes into `expect` (a copy of global memory) what the store writes. */
typedef struct store_ctx {
    uint8_t *expect, *mask;
    const uint8_t *smem;
    uint64_t elems, written, tail_written, collisions;
} store_ctx;

static void ref_store_elem(const tma_tiled_desc *d, const ref_elem *el, void *vctx) {
    store_ctx *c = vctx;
    const uint32_t esize = ref_esize(d->dtype), span = ref_span(d->swizzle);
    c->elems++;
    /* Dimension 0: whole 16-byte chunks; other dimensions clip at the element. */
    bool written = el->inside_dims1 && el->x[0] >= 0 &&
                   (uint64_t)el->x[0] * esize < ref_round16(d->global_dim[0] * esize);
    if (!written)
        return;
    c->written++;
    if ((uint64_t)el->x[0] >= d->global_dim[0])
        c->tail_written++;
    for (uint32_t b = 0; b < esize; b++) {
        if (c->mask[el->goff + b])
            c->collisions++;
        c->mask[el->goff + b] = 1;
        c->expect[el->goff + b] = c->smem[ref_swizzle(span, el->smem_logical + b)];
    }
}

/* =============================================================================================
 * Buffers and reporting
 * =========================================================================================== */

#define GUARD 64u /* bytes of guard before and after every global buffer */

typedef struct gbuf {
    uint8_t *block; /* GUARD + extent + GUARD bytes */
    uint8_t *base;  /* block + GUARD: the tensor's global_address (64-byte aligned) */
    size_t extent, total;
} gbuf;

static gbuf gbuf_new(size_t extent) {
    gbuf g;
    g.extent = extent;
    g.total = extent + 2 * GUARD;
    g.block = aligned_alloc(64, (g.total + 63) / 64 * 64);
    cr_assert_not_null(g.block, "out of memory (%zu bytes)", g.total);
    g.base = g.block + GUARD;
    return g;
}

static uint8_t *xmalloc(size_t n) {
    uint8_t *p = malloc(n ? n : 1);
    cr_assert_not_null(p, "out of memory (%zu bytes)", n);
    return p;
}

static uint8_t *xdup(const uint8_t *src, size_t n) {
    uint8_t *p = xmalloc(n);
    memcpy(p, src, n);
    return p;
}

static uint8_t *xzalloc(size_t n) {
    uint8_t *p = calloc(n ? n : 1, 1);
    cr_assert_not_null(p, "out of memory (%zu bytes)", n);
    return p;
}

static void describe(char *buf, size_t n, const char *kind, uint64_t seed, long iter, const tma_tiled_desc *d,
                     const int32_t c[5], uint32_t off, size_t smem_bytes) {
    snprintf(buf, n,
             "[%s seed=%" PRIu64 " iter=%ld] rank=%u dtype=%s swizzle=%s oob_fill=%s flags=%u "
             "global_dim={%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "} "
             "global_stride={%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "} box_dim={%u,%u,%u,%u,%u} "
             "element_stride={%u,%u,%u,%u,%u} coord={%d,%d,%d,%d,%d} offset=%u smem_bytes=%zu",
             kind, seed, iter, d->rank, tma_dtype_name(d->dtype), tma_swizzle_name(d->swizzle),
             d->oob_fill == TMA_OOB_NAN ? "nan" : "zero", d->flags, d->global_dim[0], d->global_dim[1],
             d->global_dim[2], d->global_dim[3], d->global_dim[4], d->global_stride[0], d->global_stride[1],
             d->global_stride[2], d->global_stride[3], d->box_dim[0], d->box_dim[1], d->box_dim[2], d->box_dim[3],
             d->box_dim[4], d->element_stride[0], d->element_stride[1], d->element_stride[2], d->element_stride[3],
             d->element_stride[4], c[0], c[1], c[2], c[3], c[4], off, smem_bytes);
}

/* memcmp over the whole buffer; on a mismatch, report the first differing byte. `base` is added to
 * the index in the message (so global bytes are reported relative to global_address). */
static void assert_same_bytes(const uint8_t *got, const uint8_t *want, const uint8_t *mask, size_t n, long base,
                              const char *where, const char *cfg) {
    if (memcmp(got, want, n) == 0)
        return;
    size_t first = 0, ndiff = 0;
    while (got[first] == want[first])
        first++;
    for (size_t i = first; i < n; i++)
        ndiff += got[i] != want[i];
    cr_assert_fail("%s: %zu byte(s) differ; first at byte %ld: got 0x%02x, want 0x%02x (%s)\n  %s", where, ndiff,
                   (long)first + base, got[first], want[first],
                   mask == NULL ? "must be unchanged" : mask[first] ? "written by the copy" : "must be untouched",
                   cfg);
}

/* =============================================================================================
 * Random configurations
 * =========================================================================================== */

enum { MAX_EXTENT = 256 * 1024, MAX_BOX_SMEM = 64 * 1024 };

/* A descriptor tma_check_tiled accepts. dtype, swizzle and rank cycle with `iter` so that every
 * combination is covered; the rest is random. */
static void gen_desc(rng *r, tma_tiled_desc *d, long iter, bool store) {
    static const uint32_t small_cap[6] = {0, 0, 40, 10, 5, 4}, big_cap[6] = {0, 0, 256, 48, 12, 7};
    const bool big = rng_chance(r, 4); /* a quarter of the boxes are tens of KiB */
    const uint32_t *row_cap = big ? big_cap : small_cap;
    for (int attempt = 0;; attempt++) {
        cr_assert_lt(attempt, 1000, "descriptor generator stuck (iter %ld)", iter);
        memset(d, 0, sizeof *d);
        d->dtype = (tma_dtype)(iter % 13);
        d->swizzle = (tma_swizzle)((iter / 13) % 4);
        d->rank = 1 + (uint32_t)((iter / 52) % 5);
        const uint32_t esize = ref_esize(d->dtype), span = ref_span(d->swizzle);

        /* Box row: 1..span/16 chunks with a swizzle (narrower than the span most of the time). */
        uint32_t max_chunks = span ? span / 16 : (rng_chance(r, 8) ? 16 * esize : 16);
        d->box_dim[0] = (1 + rng_below(r, max_chunks)) * 16 / esize;
        d->element_stride[0] = rng_below(r, 2); /* 0 or 1: both mean 1 */
        for (uint32_t i = 1; i < d->rank; i++) {
            uint32_t cap = (d->rank == 2 && rng_chance(r, 10)) ? 256 : row_cap[d->rank];
            d->box_dim[i] = 1 + rng_below(r, cap);
            d->element_stride[i] = rng_below(r, 9); /* 0..8, 0 means 1 */
        }

        d->global_dim[0] = 1 + rng_below(r, (big ? 4 : 2) * d->box_dim[0] + 8);
        for (uint32_t i = 1; i < d->rank; i++)
            d->global_dim[i] = 1 + rng_below(r, big || rng_chance(r, 4) ? 2 * d->box_dim[i] + 8 : d->box_dim[i] + 3);

        bool overlap = !store && rng_chance(r, 16);
        /* The outer dimensions nest in a random order a third of the time (strides need not grow with the
         * dimension index): dimension order[k] steps over dimension 0 and order[0..k-1]. */
        uint32_t order[4] = {1, 2, 3, 4};
        if (rng_chance(r, 3))
            for (uint32_t k = d->rank - 1; k > 1; k--) {
                uint32_t j = rng_below(r, k), t = order[k - 1];
                order[k - 1] = order[j], order[j] = t;
            }
        uint64_t tight = ref_round16(d->global_dim[0] * esize);
        for (uint32_t k = 0; k + 1 < d->rank; k++) {
            const uint32_t i = overlap ? k + 1 : order[k];
            if (overlap)
                d->global_stride[i - 1] = 16 * (uint64_t)rng_below(r, (uint32_t)(tight / 16) + 1);
            else
                d->global_stride[i - 1] = tight + 16 * (uint64_t)rng_below(r, 3);
            tight = d->global_stride[i - 1] * d->global_dim[i];
        }
        if (store && rng_chance(r, 4))
            d->flags = TMA_DESC_STORE; /* the store-side rules find nothing: these strides nest */
        d->oob_fill = ref_is_float(d->dtype) && rng_chance(r, 2) ? TMA_OOB_NAN : TMA_OOB_ZERO;
        d->l2_promotion = (tma_l2_promotion)rng_below(r, 4);
        d->global_address = (void *)(uintptr_t)4096; /* placeholder; the caller sets the real buffer */
        if (rng_chance(r, 8)) /* fields past the rank are ignored: fill them with garbage */
            for (uint32_t i = d->rank; i < 5; i++) {
                d->global_dim[i] = rng_next(r);
                d->box_dim[i] = (uint32_t)rng_next(r);
                d->element_stride[i] = (uint32_t)rng_next(r);
                if (i >= 1)
                    d->global_stride[i - 1] = rng_next(r);
            }

        if (ref_smem_bytes(d) > MAX_BOX_SMEM || ref_extent(d) > MAX_EXTENT)
            continue;
        tma_diag diag;
        tma_status st = tma_check_tiled(d, &diag);
        cr_assert_eq(st, TMA_OK, "generated descriptor rejected (iter %ld): %s", iter, diag.message);
        cr_assert_eq(tma_global_extent_bytes(d), ref_extent(d), "tma_global_extent_bytes disagrees (iter %ld)",
                     iter);
        return;
    }
}

static int32_t align_down(int64_t x, int64_t a) {
    int64_t q = x / a;
    if (x % a != 0 && x < 0)
        q--;
    return (int32_t)(q * a);
}

/* Coordinates that tma_check_coords (load) or tma_check_store_coords (store) accept. */
static void gen_coords(rng *r, const tma_tiled_desc *d, bool store, int32_t c[5]) {
    const int64_t per16 = 16 / ref_esize(d->dtype);
    const bool want_inside = rng_chance(r, 3);
    for (uint32_t i = 0; i < 5; i++) {
        if (i >= d->rank) {
            c[i] = (int32_t)(uint32_t)rng_next(r); /* ignored past the rank: garbage, negative included */
            continue;
        }
        const int64_t gd = (int64_t)d->global_dim[i];
        const int64_t reach = i == 0 ? (int64_t)d->box_dim[0] : (int64_t)(ref_count(d, i) - 1) * ref_estride(d, i) + 1;
        const int64_t lo = store ? 0 : -(reach + 1);
        int64_t x;
        uint32_t kind = rng_below(r, 32);
        if (want_inside && gd >= reach)
            x = rng_below(r, (uint32_t)(gd - reach + 1)); /* whole box inside this dimension */
        else if (kind == 0)
            x = (store || rng_chance(r, 2)) ? INT32_MAX : INT32_MIN;
        else if (kind < 4)
            x = (store || rng_chance(r, 2)) ? gd + rng_below(r, 5) : -(reach + rng_below(r, 5));
        else
            x = lo + (int64_t)rng_below(r, (uint32_t)(gd - lo + 1));
        c[i] = i == 0 ? align_down(x, per16) : (int32_t)x;
    }
}

/* 128-byte aligned destination: every phase of a 1 KiB block, and beyond it. */
static uint32_t gen_offset(rng *r) {
    if (rng_chance(r, 4))
        return 1024u * (1 + rng_below(r, 7)) + 128u * rng_below(r, 8);
    return 128u * rng_below(r, 8);
}

/* fp32 bit patterns that exercise TF32 rounding: NaNs, infinities, denormals, exact ties. */
static uint32_t special_f32(rng *r) {
    static const uint32_t list[] = {
        0x7F800001u, 0x7FC00000u, 0xFFC00001u, 0x7FFFFFFFu, 0xFFFFFFFFu, 0x7FBFFFFFu, 0x7FFFE000u,
        0x7F800000u, 0xFF800000u, 0x7F7FF000u, 0x7F7FFFFFu, 0xFF7FF000u, 0x00000001u, 0x00001000u,
        0x00003000u, 0x807FFFFFu, 0x00402000u, 0x80001000u, 0x3F800FFFu, 0x3F801000u, 0x3F803000u,
        0x00000000u, 0x80000000u, 0x7FF77FF7u,
    };
    switch (rng_below(r, 4)) {
    case 0:
        return list[rng_below(r, sizeof list / sizeof list[0])];
    case 1:
        return (uint32_t)rng_next(r) & 0x807FFFFFu; /* denormal or zero */
    case 2:
        return ((uint32_t)rng_next(r) & ~0x1FFFu) | 0x1000u; /* exact tie */
    default:
        return (uint32_t)rng_next(r) | 0x7F800000u; /* NaN or infinity */
    }
}

/* Random bytes everywhere (guards included); for 4-byte float types a third of the elements get a
 * special fp32 pattern. */
static void fill_global(rng *r, const tma_tiled_desc *d, gbuf *g) {
    rng_bytes(r, g->block, g->total);
    if (ref_esize(d->dtype) == 4 && ref_is_float(d->dtype))
        for (size_t w = 0; w + 4 <= g->extent; w += 4)
            if (rng_chance(r, 3)) {
                uint32_t v = special_f32(r);
                memcpy(g->base + w, &v, 4);
            }
}

typedef struct coverage {
    unsigned ranks[6], dtypes[13], swizzles[4], phases[8], estrides[9];
    unsigned beyond_1k, narrow, all_inside, partly, none_inside, negative, nan_fill, overlap, exact_fit, tail;
    uint64_t copies, elements, global_bytes, smem_bytes; /* totals, for the log */
} coverage;

static void cover_common(coverage *cov, const tma_tiled_desc *d, const int32_t c[5], uint32_t off,
                         size_t smem_bytes) {
    cov->copies++;
    cov->elements += ref_rows(d) * d->box_dim[0];
    cov->global_bytes += ref_extent(d);
    cov->smem_bytes += smem_bytes;
    cov->ranks[d->rank]++;
    cov->dtypes[d->dtype]++;
    cov->swizzles[d->swizzle]++;
    if (off < 1024)
        cov->phases[off / 128]++;
    else
        cov->beyond_1k++;
    if (ref_span(d->swizzle) > d->box_dim[0] * ref_esize(d->dtype))
        cov->narrow++;
    for (uint32_t i = 1; i < d->rank; i++)
        cov->estrides[ref_estride(d, i)]++;
    for (uint32_t i = 0; i < d->rank; i++)
        if (c[i] < 0)
            cov->negative++;
    if (d->oob_fill == TMA_OOB_NAN)
        cov->nan_fill++;
    tma_overlap o;
    if (!tma_rule_one_to_one(d, &o))
        cov->overlap++;
    if (smem_bytes == off + ref_smem_bytes(d))
        cov->exact_fit++;
}

static void check_coverage(const coverage *cov, bool store) {
    cr_log_info("%" PRIu64 " random %s: %" PRIu64 " box elements, %" PRIu64 " global bytes, %" PRIu64
                " shared bytes checked",
                cov->copies, store ? "stores" : "loads", cov->elements, cov->global_bytes, cov->smem_bytes);
    for (int i = 1; i <= 5; i++)
        cr_assert_gt(cov->ranks[i], 0, "coverage: rank %d never generated", i);
    for (int i = 0; i < 13; i++)
        cr_assert_gt(cov->dtypes[i], 0, "coverage: dtype %s never generated", tma_dtype_name((tma_dtype)i));
    for (int i = 0; i < 4; i++)
        cr_assert_gt(cov->swizzles[i], 0, "coverage: swizzle %d never generated", i);
    for (int i = 0; i < 8; i++)
        cr_assert_gt(cov->phases[i], 0, "coverage: offset %d never generated", i * 128);
    for (int i = 1; i <= 8; i++)
        cr_assert_gt(cov->estrides[i], 0, "coverage: element stride %d never generated", i);
    cr_assert_gt(cov->beyond_1k, 0, "coverage: no offset beyond 1 KiB");
    cr_assert_gt(cov->narrow, 0, "coverage: no box narrower than its swizzle span");
    cr_assert_gt(cov->all_inside, 0, "coverage: no box wholly inside");
    cr_assert_gt(cov->partly, 0, "coverage: no box partly outside");
    cr_assert_gt(cov->none_inside, 0, "coverage: no box wholly outside");
    cr_assert_gt(cov->exact_fit, 0, "coverage: no exactly sized shared-memory buffer");
    if (store) {
        cr_assert_gt(cov->tail, 0, "coverage: no store wrote past global_dim[0] inside its last chunk");
    } else {
        cr_assert_gt(cov->negative, 0, "coverage: no negative coordinate");
        cr_assert_gt(cov->nan_fill, 0, "coverage: no NaN fill");
        cr_assert_gt(cov->overlap, 0, "coverage: no view in which two coordinates reach the same bytes");
    }
}

static void random_load(uint64_t seed, long iter, coverage *cov) {
    rng r = rng_for(seed, 1, (uint64_t)iter);
    tma_tiled_desc d;
    gen_desc(&r, &d, iter, false);
    gbuf g = gbuf_new(tma_global_extent_bytes(&d));
    d.global_address = g.base;
    fill_global(&r, &d, &g);
    int32_t c[5];
    gen_coords(&r, &d, false, c);
    const uint32_t off = gen_offset(&r);
    const size_t smem_bytes = off + ref_smem_bytes(&d) + (rng_chance(&r, 4) ? 0 : rng_below(&r, 512));

    char cfg[1024];
    describe(cfg, sizeof cfg, "load", seed, iter, &d, c, off, smem_bytes);
    cr_assert_eq(tma_check_coords(&d, c, NULL), TMA_OK, "generated coordinates rejected\n  %s", cfg);

    uint8_t *sm = xmalloc(smem_bytes);
    rng_bytes(&r, sm, smem_bytes); /* poison */
    uint8_t *expect = xdup(sm, smem_bytes), *mask = xzalloc(smem_bytes), *gsnap = xdup(g.block, g.total);
    load_ctx ctx = {expect, mask, g.base, 0, 0, 0};
    ref_walk(&d, c, off, ref_load_elem, &ctx);
    cr_assert_eq(ctx.collisions, 0, "reference: two elements share a smem byte\n  %s", cfg);

    tma_status st = tma_model_load_tiled(&d, c, sm, smem_bytes, off);
    cr_assert_eq(st, TMA_OK, "load returned %s\n  %s", tma_status_name(st), cfg);
    assert_same_bytes(sm, expect, mask, smem_bytes, 0, "load: shared memory", cfg);
    assert_same_bytes(g.block, gsnap, NULL, g.total, -(long)GUARD, "load: global memory (must not change)", cfg);

    cover_common(cov, &d, c, off, smem_bytes);
    if (ctx.inside == ctx.elems)
        cov->all_inside++;
    else if (ctx.inside == 0)
        cov->none_inside++;
    else
        cov->partly++;
    free(sm);
    free(expect);
    free(mask);
    free(gsnap);
    free(g.block);
}

static void random_store(uint64_t seed, long iter, coverage *cov) {
    rng r = rng_for(seed, 2, (uint64_t)iter);
    tma_tiled_desc d;
    gen_desc(&r, &d, iter, true);
    gbuf g = gbuf_new(tma_global_extent_bytes(&d));
    d.global_address = g.base;
    rng_bytes(&r, g.block, g.total);
    int32_t c[5];
    gen_coords(&r, &d, true, c);
    const uint32_t off = gen_offset(&r);
    const size_t smem_bytes = off + ref_smem_bytes(&d) + (rng_chance(&r, 4) ? 0 : rng_below(&r, 512));

    char cfg[1024];
    describe(cfg, sizeof cfg, "store", seed, iter, &d, c, off, smem_bytes);
    cr_assert_eq(tma_check_store_coords(&d, c, NULL), TMA_OK, "generated coordinates rejected\n  %s", cfg);

    uint8_t *sm = xmalloc(smem_bytes);
    rng_bytes(&r, sm, smem_bytes);
    uint8_t *smsnap = xdup(sm, smem_bytes), *expect = xdup(g.block, g.total), *mask = xzalloc(g.total);
    store_ctx ctx = {expect + GUARD, mask + GUARD, sm, 0, 0, 0, 0};
    ref_walk(&d, c, off, ref_store_elem, &ctx);
    cr_assert_eq(ctx.collisions, 0, "reference: two elements share a global byte\n  %s", cfg);

    tma_status st = tma_model_store_tiled(&d, c, sm, smem_bytes, off);
    cr_assert_eq(st, TMA_OK, "store returned %s\n  %s", tma_status_name(st), cfg);
    assert_same_bytes(g.block, expect, mask, g.total, -(long)GUARD, "store: global memory", cfg);
    assert_same_bytes(sm, smsnap, NULL, smem_bytes, 0, "store: shared memory (must not change)", cfg);

    cover_common(cov, &d, c, off, smem_bytes);
    if (ctx.written == ctx.elems)
        cov->all_inside++;
    else if (ctx.written == 0)
        cov->none_inside++;
    else
        cov->partly++;
    if (ctx.tail_written)
        cov->tail++;
    free(sm);
    free(smsnap);
    free(expect);
    free(mask);
    free(g.block);
}

/* Iterations are split over several tests so that Criterion's jobs run them in parallel. */
#define LOAD_ITERS 800  /* x 4 tests = 3200 loads */
#define STORE_ITERS 600 /* x 2 tests = 1200 stores */

static void run_loads(const char *name, long first, long count) {
    uint64_t seed = test_seed(name);
    coverage cov;
    memset(&cov, 0, sizeof cov);
    for (long it = first; it < first + count; it++)
        random_load(seed, it, &cov);
    check_coverage(&cov, false);
}

static void run_stores(const char *name, long first, long count) {
    uint64_t seed = test_seed(name);
    coverage cov;
    memset(&cov, 0, sizeof cov);
    for (long it = first; it < first + count; it++)
        random_store(seed, it, &cov);
    check_coverage(&cov, true);
}

Test(model_random, loads_a) { run_loads("model_random::loads_a", 0 * LOAD_ITERS, LOAD_ITERS); }
Test(model_random, loads_b) { run_loads("model_random::loads_b", 1 * LOAD_ITERS, LOAD_ITERS); }
Test(model_random, loads_c) { run_loads("model_random::loads_c", 2 * LOAD_ITERS, LOAD_ITERS); }
Test(model_random, loads_d) { run_loads("model_random::loads_d", 3 * LOAD_ITERS, LOAD_ITERS); }
Test(model_random, stores_a) { run_stores("model_random::stores_a", 0 * STORE_ITERS, STORE_ITERS); }
Test(model_random, stores_b) { run_stores("model_random::stores_b", 1 * STORE_ITERS, STORE_ITERS); }

/* =============================================================================================
 * Golden cases, computed by hand
 * =========================================================================================== */

#define POISON 0xCDu

static void put_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

static uint32_t get_u32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* An 8 x 32 f32 tensor (row stride 128 bytes); element (r, c) holds 0x4000rrcc, no byte 0xCD. */
static uint32_t gval(uint32_t r, uint32_t c) { return 0x40000000u | (r << 8) | c; }

static tma_tiled_desc golden_f32_desc(void *base, uint32_t box_cols, tma_swizzle swizzle) {
    tma_tiled_desc d = {
        .dtype = TMA_DTYPE_F32,
        .rank = 2,
        .global_address = base,
        .global_dim = {32, 8},
        .global_stride = {128},
        .box_dim = {box_cols, 8},
        .swizzle = swizzle,
    };
    return d;
}

typedef struct golden_pos {
    uint32_t row, col, byte;
} golden_pos;

typedef struct golden_range {
    uint32_t first, last; /* inclusive */
} golden_range;

static uint8_t *golden_load(uint32_t box_cols, uint32_t off, size_t smem_bytes, uint8_t *g) {
    for (uint32_t r = 0; r < 8; r++)
        for (uint32_t c = 0; c < 32; c++)
            put_u32(g + r * 128 + c * 4, gval(r, c));
    tma_tiled_desc d = golden_f32_desc(g, box_cols, TMA_SWIZZLE_128B);
    uint8_t *sm = xmalloc(smem_bytes);
    memset(sm, POISON, smem_bytes);
    const int32_t coord[5] = {0, 0, 0, 0, 0};
    tma_status st = tma_model_load_tiled(&d, coord, sm, smem_bytes, off);
    cr_assert_eq(st, TMA_OK, "golden load returned %s", tma_status_name(st));
    return sm;
}

static void check_positions(const uint8_t *sm, const golden_pos *p, size_t n, const char *what) {
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(get_u32(sm + p[i].byte), gval(p[i].row, p[i].col),
                     "%s: element (row %u, col %u) expected at byte %u: read 0x%08x, want 0x%08x", what, p[i].row,
                     p[i].col, p[i].byte, get_u32(sm + p[i].byte), gval(p[i].row, p[i].col));
}

/* Bytes inside the ranges must differ from the poison (the values have no 0xCD byte), all others
 * must be poison. */
static void check_ranges(const uint8_t *sm, size_t n, const golden_range *rg, size_t nr, const char *what) {
    for (size_t b = 0; b < n; b++) {
        bool in = false;
        for (size_t i = 0; i < nr; i++)
            in = in || (b >= rg[i].first && b <= rg[i].last);
        if (in)
            cr_assert_neq(sm[b], POISON, "%s: byte %zu should have been written", what, b);
        else
            cr_assert_eq(sm[b], POISON, "%s: byte %zu should be untouched, is 0x%02x", what, b, sm[b]);
    }
}

/* 8 x 8 f32 box (32-byte rows) with SWIZZLE_128B at offset 0: each row occupies a 128-byte line,
 * its two 16-byte chunks at column (c/4) ^ row; the other 96 bytes of the line are untouched. */
Test(model_golden, swizzle128_f32_8x8_offset0) {
    uint8_t g[8 * 128];
    uint8_t *sm = golden_load(8, 0, 2048, g);
    static const golden_pos pos[] = {
        {0, 0, 0},   {0, 7, 28},  {1, 0, 144}, {1, 4, 128},  {1, 7, 140},
        {3, 5, 420}, {6, 2, 872}, {7, 7, 1004}, {7, 0, 1008},
    };
    check_positions(sm, pos, sizeof pos / sizeof pos[0], "8x8 @0");
    static const golden_range rg[] = {
        {0, 31}, {128, 159}, {288, 319}, {416, 447}, {576, 607}, {704, 735}, {864, 895}, {992, 1023},
    };
    check_ranges(sm, 2048, rg, sizeof rg / sizeof rg[0], "8x8 @0");
    free(sm);
}

/* The same box at offset 384: row r lies in 128-byte line 3 + r, so the pattern starts mid-phase and
 * wraps at line 8 (row 5). */
Test(model_golden, swizzle128_f32_8x8_offset384) {
    uint8_t g[8 * 128];
    uint8_t *sm = golden_load(8, 384, 2048, g);
    static const golden_pos pos[] = {
        {0, 0, 432}, {0, 4, 416}, {4, 0, 1008}, {5, 0, 1024}, {6, 3, 1180}, {7, 7, 1340},
    };
    check_positions(sm, pos, sizeof pos / sizeof pos[0], "8x8 @384");
    static const golden_range rg[] = {
        {416, 447}, {576, 607}, {704, 735}, {864, 895}, {992, 1023}, {1024, 1055}, {1152, 1183}, {1312, 1343},
    };
    check_ranges(sm, 2048, rg, sizeof rg / sizeof rg[0], "8x8 @384");
    free(sm);
}

/* A full-span 8 x 32 f32 box (128-byte rows): the tile covers [off, off + 1024) exactly. */
Test(model_golden, swizzle128_f32_8x32) {
    uint8_t g[8 * 128];
    uint8_t *sm = golden_load(32, 0, 2048, g);
    static const golden_pos pos0[] = {
        {0, 0, 0}, {0, 5, 20}, {1, 4, 128}, {2, 31, 348}, {3, 5, 420}, {7, 28, 896}, {7, 0, 1008},
    };
    check_positions(sm, pos0, sizeof pos0 / sizeof pos0[0], "8x32 @0");
    static const golden_range rg0[] = {{0, 1023}};
    check_ranges(sm, 2048, rg0, 1, "8x32 @0");
    free(sm);

    sm = golden_load(32, 384, 2048, g);
    static const golden_pos pos384[] = {
        {0, 0, 432}, {2, 0, 720}, {4, 0, 1008}, {5, 13, 1076}, {7, 31, 1372},
    };
    check_positions(sm, pos384, sizeof pos384 / sizeof pos384[0], "8x32 @384");
    static const golden_range rg384[] = {{384, 1407}};
    check_ranges(sm, 2048, rg384, 1, "8x32 @384");
    free(sm);
}

/* 32B and 64B: the XOR source is the 128-byte line, not the 32- or 64-byte box row. u8 boxes of
 * 4 rows; byte (r, c) of the tensor holds r * 64 + c + 1. */
Test(model_golden, swizzle32_64_line_not_row) {
    uint8_t g[4 * 64];
    for (uint32_t r = 0; r < 4; r++)
        for (uint32_t c = 0; c < 64; c++)
            g[r * 64 + c] = (uint8_t)(r * 64 + c + 1);
    static const struct {
        tma_swizzle swz;
        uint32_t cols, off, row, col, byte;
    } cases[] = {
        /* 32B, offset 0: rows 0..3 share line 0, so nothing moves (a per-row XOR would move row 1). */
        {TMA_SWIZZLE_32B, 32, 0, 1, 0, 32},
        {TMA_SWIZZLE_32B, 32, 0, 3, 16, 112},
        /* 32B, offset 128: line 1 swaps the two chunks of every row. */
        {TMA_SWIZZLE_32B, 32, 128, 0, 0, 144},
        {TMA_SWIZZLE_32B, 32, 128, 0, 16, 128},
        {TMA_SWIZZLE_32B, 32, 128, 1, 0, 176},
        /* 64B, offset 128: rows 0, 1 in line 1 (chunk ^ 1), rows 2, 3 in line 2 (chunk ^ 2). */
        {TMA_SWIZZLE_64B, 64, 128, 0, 0, 144},
        {TMA_SWIZZLE_64B, 64, 128, 1, 0, 208},
        {TMA_SWIZZLE_64B, 64, 128, 2, 0, 288},
        {TMA_SWIZZLE_64B, 64, 128, 3, 0, 352},
        {TMA_SWIZZLE_64B, 64, 128, 3, 63, 351},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tma_tiled_desc d = {
            .dtype = TMA_DTYPE_U8,
            .rank = 2,
            .global_address = g,
            .global_dim = {64, 4},
            .global_stride = {64},
            .box_dim = {cases[i].cols, 4},
            .swizzle = cases[i].swz,
        };
        uint8_t sm[1024];
        memset(sm, POISON, sizeof sm);
        const int32_t coord[5] = {0};
        cr_assert_eq(tma_model_load_tiled(&d, coord, sm, sizeof sm, cases[i].off), TMA_OK, "case %zu", i);
        uint8_t want = (uint8_t)(cases[i].row * 64 + cases[i].col + 1);
        cr_assert_eq(sm[cases[i].byte], want, "case %zu (%s, offset %u): byte (row %u, col %u) at %u is %u, want %u",
                     i, tma_swizzle_name(cases[i].swz), cases[i].off, cases[i].row, cases[i].col, cases[i].byte,
                     sm[cases[i].byte], want);
    }
}

/* NaN fill is the 16-bit pattern 0x7FF7 repeated, whatever the float type (TF32 included: the fill
 * is not rounded). Zero fill is zero. One chunk + 1 element of data, the box two chunks wide. */
Test(model_golden, oob_fill_patterns) {
    static const struct {
        tma_dtype t;
        uint64_t nan;
    } types[] = {
        {TMA_DTYPE_F16, 0x7FF7u},        {TMA_DTYPE_BF16, 0x7FF7u},         {TMA_DTYPE_F32, 0x7FF77FF7u},
        {TMA_DTYPE_F32_FTZ, 0x7FF77FF7u}, {TMA_DTYPE_TF32, 0x7FF77FF7u},     {TMA_DTYPE_TF32_FTZ, 0x7FF77FF7u},
        {TMA_DTYPE_F64, 0x7FF77FF77FF77FF7ull},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        const uint32_t es = ref_esize(types[i].t), n = 32 / es, valid = 16 / es + 1;
        uint8_t g[64];
        for (uint32_t k = 0; k < 16; k++)
            put_u32(g + 4 * k, 0x40000000u + (k << 13)); /* TF32-exact: low 13 bits of each word zero */
        for (int fill = 0; fill < 2; fill++)
            for (int whole = 0; whole < 2; whole++) {
                tma_tiled_desc d = {
                    .dtype = types[i].t,
                    .rank = 1,
                    .global_address = g,
                    .global_dim = {valid},
                    .box_dim = {n},
                    .oob_fill = fill ? TMA_OOB_NAN : TMA_OOB_ZERO,
                };
                const int32_t coord[5] = {whole ? -(int32_t)n : 0};
                uint8_t sm[256];
                memset(sm, POISON, sizeof sm);
                cr_assert_eq(tma_model_load_tiled(&d, coord, sm, sizeof sm, 128), TMA_OK, "%s",
                             tma_dtype_name(types[i].t));
                for (uint32_t e = 0; e < n; e++) {
                    uint64_t got = 0;
                    memcpy(&got, sm + 128 + e * es, es);
                    if (!whole && e < valid) {
                        uint64_t want = 0;
                        memcpy(&want, g + e * es, es);
                        cr_assert_eq(got, want, "%s element %u: data 0x%" PRIx64 ", want 0x%" PRIx64,
                                     tma_dtype_name(types[i].t), e, got, want);
                    } else {
                        uint64_t want = fill ? types[i].nan : 0;
                        cr_assert_eq(got, want, "%s %s fill, element %u: 0x%" PRIx64 ", want 0x%" PRIx64,
                                     tma_dtype_name(types[i].t), fill ? "NaN" : "zero", e, got, want);
                    }
                }
                for (uint32_t b = 0; b < sizeof sm; b++)
                    if (b < 128 || b >= 160)
                        cr_assert_eq(sm[b], POISON, "%s: byte %u outside the box written",
                                     tma_dtype_name(types[i].t), b);
            }
    }
}

/* TF32 rounding, worked out by hand. Round to nearest even at bit 13: a tie goes to the value whose
 * bit 13 is 0. (0x3F801000 is a tie whose kept part 0x3F800000 is already even, so it stays
 * 0x3F800000; 0x3F803000 is a tie with bit 13 set and rounds up to 0x3F804000.) */
Test(model_golden, tf32_rounding) {
    static const uint32_t in_out[][2] = {
        {0x3F800FFFu, 0x3F800000u}, /* below half: truncate */
        {0x3F801000u, 0x3F800000u}, /* tie, kept part even: stays */
        {0x3F803000u, 0x3F804000u}, /* tie, kept part odd: up to even */
        {0x3F801001u, 0x3F802000u}, /* above half: up */
        {0xFFC00001u, 0x7FFFE000u}, /* NaN (negative, quiet) */
        {0x7F800001u, 0x7FFFE000u}, /* NaN (signalling) */
        {0x7FC00000u, 0x7FFFE000u}, /* canonical NaN is remapped too */
        {0x7F800000u, 0x7F800000u}, /* +inf kept */
        {0xFF800000u, 0xFF800000u}, /* -inf kept */
        {0x7F7FF000u, 0x7F800000u}, /* tie, odd: rounds up to infinity */
        {0x7F7FEFFFu, 0x7F7FE000u}, /* largest finite region, truncates */
        {0x00402000u, 0x00402000u}, /* denormal kept (no flush, FTZ or not) */
        {0x80001000u, 0x80000000u}, /* negative denormal tie, even: -0 */
        {0x00003000u, 0x00004000u}, /* denormal tie, odd: up */
        {0x00000001u, 0x00000000u}, /* tiny denormal: rounds to zero */
        {0xBF801800u, 0xBF802000u}, /* negative, above half: magnitude up */
    };
    enum { N = sizeof in_out / sizeof in_out[0] };
    uint8_t g[N * 4];
    for (uint32_t i = 0; i < N; i++)
        put_u32(g + 4 * i, in_out[i][0]);
    static const tma_dtype types[] = {TMA_DTYPE_TF32, TMA_DTYPE_TF32_FTZ, TMA_DTYPE_F32, TMA_DTYPE_F32_FTZ};
    for (size_t t = 0; t < 4; t++) {
        tma_tiled_desc d = {
            .dtype = types[t], .rank = 1, .global_address = g, .global_dim = {N}, .box_dim = {N},
        };
        uint8_t sm[N * 4];
        const int32_t coord[5] = {0};
        cr_assert_eq(tma_model_load_tiled(&d, coord, sm, sizeof sm, 0), TMA_OK, "%s", tma_dtype_name(types[t]));
        for (uint32_t i = 0; i < N; i++) {
            uint32_t want = ref_is_tf32(types[t]) ? in_out[i][1] : in_out[i][0]; /* f32: bit for bit */
            cr_assert_eq(get_u32(sm + 4 * i), want, "%s: 0x%08x loaded as 0x%08x, want 0x%08x",
                         tma_dtype_name(types[t]), in_out[i][0], get_u32(sm + 4 * i), want);
        }
    }
    /* The reference agrees with the table (it is what the random tests use). */
    for (uint32_t i = 0; i < N; i++)
        cr_assert_eq(ref_tf32(in_out[i][0]), in_out[i][1], "reference tf32 of 0x%08x", in_out[i][0]);
}

/* Stores write whole 16-byte chunks in dimension 0. u8 tensor: global_dim = {20, 3}, row stride 48;
 * box {48, 4} at {0, 0}: in each of rows 0..2, bytes 0..31 are written (20..31 past the end of the
 * row, inside its chunk), bytes 32..47 are not; box row 3 is past global_dim[1] and not written. */
Test(model_golden, store_chunk_rule_u8) {
    gbuf g = gbuf_new(2 * 48 + 32);
    cr_assert_eq(g.extent, 128);
    tma_tiled_desc d = {
        .dtype = TMA_DTYPE_U8,
        .rank = 2,
        .global_address = g.base,
        .global_dim = {20, 3},
        .global_stride = {48},
        .box_dim = {48, 4},
    };
    cr_assert_eq(tma_global_extent_bytes(&d), 128);
    uint8_t sm[4 * 48];
    for (uint32_t r = 0; r < 4; r++)
        for (uint32_t c = 0; c < 48; c++)
            sm[r * 48 + c] = (uint8_t)(r * 64 + c + 1); /* 1..240, never 0xFF */

    memset(g.block, 0xFF, g.total);
    int32_t coord[5] = {0, 0};
    cr_assert_eq(tma_model_store_tiled(&d, coord, sm, sizeof sm, 0), TMA_OK);
    cr_assert_eq(g.base[0], 1);
    cr_assert_eq(g.base[19], 20, "last element of row 0");
    cr_assert_eq(g.base[20], 21, "byte 20 of row 0 (past global_dim[0], same chunk) is written");
    cr_assert_eq(g.base[31], 32, "byte 31 of row 0 (end of the chunk) is written");
    for (uint32_t b = 32; b < 48; b++)
        cr_assert_eq(g.base[b], 0xFF, "byte %u of row 0 (next chunk) must not be written", b);
    cr_assert_eq(g.base[48 + 25], 64 + 25 + 1, "row 1 byte 25");
    cr_assert_eq(g.base[96 + 31], 128 + 31 + 1, "row 2 byte 31");
    for (uint32_t b = 0; b < GUARD; b++) {
        cr_assert_eq(g.block[b], 0xFF, "guard before the tensor written at %u", b);
        cr_assert_eq(g.base[128 + b], 0xFF, "byte %u past the extent written (box row 3 is out of bounds)", 128 + b);
    }

    /* At {16, 1}: only elements 16..31 of the box rows that land on tensor rows 1 and 2. */
    memset(g.block, 0xFF, g.total);
    coord[0] = 16;
    coord[1] = 1;
    cr_assert_eq(tma_model_store_tiled(&d, coord, sm, sizeof sm, 0), TMA_OK);
    for (uint32_t b = 0; b < 48; b++)
        cr_assert_eq(g.base[b], 0xFF, "row 0 byte %u written by a box starting at row 1", b);
    for (uint32_t b = 0; b < 48; b++) {
        uint8_t want = b >= 16 && b < 32 ? (uint8_t)(b - 16 + 1) : 0xFF;
        cr_assert_eq(g.base[48 + b], want, "row 1 byte %u: %u, want %u", b, g.base[48 + b], want);
        want = b >= 16 && b < 32 ? (uint8_t)(64 + b - 16 + 1) : 0xFF;
        cr_assert_eq(g.base[96 + b], want, "row 2 byte %u: %u, want %u", b, g.base[96 + b], want);
    }

    /* At {32, 0}: the whole box lies past the last chunk of each row: nothing is written. */
    memset(g.block, 0xFF, g.total);
    coord[0] = 32;
    coord[1] = 0;
    cr_assert_eq(tma_model_store_tiled(&d, coord, sm, sizeof sm, 0), TMA_OK);
    for (size_t b = 0; b < g.total; b++)
        cr_assert_eq(g.block[b], 0xFF, "store past the last chunk wrote byte %ld", (long)b - (long)GUARD);
    free(g.block);
}

/* The same rule with stride 32: the chunk tail is the end of the row, and box elements 32..47 of
 * row 0 do not spill into row 1. */
Test(model_golden, store_chunk_rule_u8_stride32) {
    gbuf g = gbuf_new(32 + 32);
    tma_tiled_desc d = {
        .dtype = TMA_DTYPE_U8,
        .rank = 2,
        .global_address = g.base,
        .global_dim = {20, 2},
        .global_stride = {32},
        .box_dim = {48, 1},
    };
    cr_assert_eq(tma_global_extent_bytes(&d), 64);
    uint8_t sm[48];
    for (uint32_t c = 0; c < 48; c++)
        sm[c] = (uint8_t)(c + 1);
    memset(g.block, 0xFF, g.total);
    const int32_t coord[5] = {0, 0};
    cr_assert_eq(tma_model_store_tiled(&d, coord, sm, sizeof sm, 0), TMA_OK);
    for (uint32_t b = 0; b < 32; b++)
        cr_assert_eq(g.base[b], b + 1, "row 0 byte %u: %u, want %u", b, g.base[b], b + 1);
    for (uint32_t b = 32; b < 64 + GUARD; b++)
        cr_assert_eq(g.base[b], 0xFF, "byte %u (row 1 or past the extent) written", b);
    free(g.block);
}

/* 32-bit coordinate arithmetic: a zero stride (a broadcast, valid for loads) makes global_dim[1] = 2^32
 * cost one row of memory. Box rows at INT32_MAX - 3 + 8k are inside (below 2^32) and all read
 * row 0; at INT32_MIN they are all outside. */
Test(model_golden, huge_dimension_zero_stride) {
    uint8_t g[64];
    for (uint32_t k = 0; k < 16; k++)
        put_u32(g + 4 * k, 0x3F800000u + (k << 13));
    tma_tiled_desc d = {
        .dtype = TMA_DTYPE_F32,
        .rank = 3,
        .global_address = g,
        .global_dim = {16, 1ull << 32, 1},
        .global_stride = {0, 0},
        .box_dim = {16, 64, 1},
        .element_stride = {1, 8, 1},
    };
    tma_diag diag;
    cr_assert_eq(tma_check_tiled(&d, &diag), TMA_OK, "%s", diag.message);
    uint8_t sm[8 * 64];
    int32_t coord[5] = {0, INT32_MAX - 3, 0};
    cr_assert_eq(tma_model_load_tiled(&d, coord, sm, sizeof sm, 0), TMA_OK);
    for (uint32_t row = 0; row < 8; row++)
        cr_assert(memcmp(sm + 64 * row, g, 64) == 0, "row %u (dimension-1 index %" PRId64 ") differs", row,
                  (int64_t)INT32_MAX - 3 + 8 * (int64_t)row);
    coord[1] = INT32_MIN;
    cr_assert_eq(tma_model_load_tiled(&d, coord, sm, sizeof sm, 0), TMA_OK);
    for (uint32_t b = 0; b < sizeof sm; b++)
        cr_assert_eq(sm[b], 0, "byte %u of a box at dimension-1 index INT32_MIN is not zero fill", b);
}

/* f32 with global_dim[0] = 5 (20 bytes): the chunk rule writes elements 5, 6, 7 too, not 8. */
Test(model_golden, store_chunk_rule_f32) {
    gbuf g = gbuf_new(32);
    tma_tiled_desc d = {
        .dtype = TMA_DTYPE_F32, .rank = 1, .global_address = g.base, .global_dim = {5}, .box_dim = {12},
    };
    cr_assert_eq(tma_global_extent_bytes(&d), 32);
    uint8_t sm[48];
    for (uint32_t e = 0; e < 12; e++)
        put_u32(sm + 4 * e, 0x3F800000u + e);
    memset(g.block, 0xEE, g.total);
    const int32_t coord[5] = {0};
    cr_assert_eq(tma_model_store_tiled(&d, coord, sm, sizeof sm, 0), TMA_OK);
    for (uint32_t e = 0; e < 8; e++)
        cr_assert_eq(get_u32(g.base + 4 * e), 0x3F800000u + e, "element %u", e);
    for (uint32_t b = 32; b < 32 + GUARD; b++)
        cr_assert_eq(g.base[b], 0xEE, "byte %u past the last chunk written", b);
    free(g.block);
}

/* =============================================================================================
 * Errors: each status, and the buffers unchanged afterwards
 * =========================================================================================== */

/* Run one copy; check its status and, for an error, that neither buffer changed. */
static void expect_status(const char *what, bool store, const tma_tiled_desc *d, const int32_t c[5], uint8_t *sm,
                          size_t sm_alloc, size_t smem_bytes, uint32_t off, tma_status want, const gbuf *g) {
    uint8_t *sm_snap = sm ? xdup(sm, sm_alloc) : NULL;
    uint8_t *g_snap = xdup(g->block, g->total);
    tma_status st = store ? tma_model_store_tiled(d, c, sm, smem_bytes, off)
                          : tma_model_load_tiled(d, c, sm, smem_bytes, off);
    cr_assert_eq(st, want, "%s (%s): returned %s, want %s", what, store ? "store" : "load", tma_status_name(st),
                 tma_status_name(want));
    if (want != TMA_OK) {
        if (sm)
            cr_assert(memcmp(sm, sm_snap, sm_alloc) == 0, "%s (%s): failed copy changed shared memory", what,
                      store ? "store" : "load");
        cr_assert(memcmp(g->block, g_snap, g->total) == 0, "%s (%s): failed copy changed global memory", what,
                  store ? "store" : "load");
    }
    free(sm_snap);
    free(g_snap);
}

/* f32, 6 rows of 24 (row stride 112), box 8 x 4 with SWIZZLE_64B: 4 rows of 64 bytes = 256 bytes. */
typedef struct fixture {
    tma_tiled_desc d;
    gbuf g;
    uint8_t *sm;
} fixture;

enum { FIX_SMEM = 2048, FIX_NEED = 256 };

static fixture fixture_new(void) {
    fixture f;
    f.g = gbuf_new(5 * 112 + 96);
    rng r = {12345};
    rng_bytes(&r, f.g.block, f.g.total);
    f.sm = xmalloc(FIX_SMEM);
    rng_bytes(&r, f.sm, FIX_SMEM);
    tma_tiled_desc d = {
        .dtype = TMA_DTYPE_F32,
        .rank = 2,
        .global_address = f.g.base,
        .global_dim = {24, 6},
        .global_stride = {112},
        .box_dim = {8, 4},
        .swizzle = TMA_SWIZZLE_64B,
    };
    f.d = d;
    cr_assert_eq(tma_check_tiled(&f.d, NULL), TMA_OK);
    cr_assert_eq(ref_smem_bytes(&f.d), FIX_NEED);
    cr_assert_eq(tma_global_extent_bytes(&f.d), f.g.extent);
    return f;
}

static void fixture_free(fixture *f) {
    free(f->sm);
    free(f->g.block);
}

/* A row-major matrix described as a 3-D view {64, rows, cols / 64} with strides {pitch, 128} (dimension 2 steps
 * by less than dimension 1: a public Hopper GEMM's maps). A box {64, R, 1} at (0, r, j) of the view is the box
 * {64, R} at (64 j, r) of the plain 2-D map: the same shared-memory bytes on loads, the same global bytes on
 * stores, both swizzled. */
Test(model_golden, three_d_view_equals_the_two_d_map) {
    enum { ROWS = 100, COLS = 512, BOX_ROWS = 32, SMEM_BYTES = BOX_ROWS * 128 + 1024 };
    static uint16_t a[ROWS * COLS], g2[ROWS * COLS], g3[ROWS * COLS];
    static _Alignas(1024) uint8_t s2[SMEM_BYTES], s3[SMEM_BYTES];
    rng r = {12345};
    rng_bytes(&r, (uint8_t *)a, sizeof a);
    tma_tiled_desc d2 = tma_desc_2d(TMA_DTYPE_BF16, a, ROWS, COLS, COLS * 2, BOX_ROWS, 64, TMA_SWIZZLE_128B);
    tma_tiled_desc d3 = {.dtype = TMA_DTYPE_BF16, .rank = 3, .global_address = a,
                         .global_dim = {64, ROWS, COLS / 64}, .global_stride = {COLS * 2, 128},
                         .box_dim = {64, BOX_ROWS, 1}, .swizzle = TMA_SWIZZLE_128B};
    tma_diag diag;
    cr_assert_eq(tma_check_tiled(&d3, &diag), TMA_OK, "the 3-D view: %s", diag.message);
    for (int32_t j = 0; j < COLS / 64; j++)
        for (int32_t row = -8; row < ROWS; row += 28) { /* partly outside, at the top and the bottom */
            const int32_t c2[5] = {64 * j, row}, c3[5] = {0, row, j};
            memset(s2, 0xA5, sizeof s2), memset(s3, 0xA5, sizeof s3);
            cr_assert_eq(tma_model_load_tiled(&d2, c2, s2, sizeof s2, 384), TMA_OK, "2-D load");
            cr_assert_eq(tma_model_load_tiled(&d3, c3, s3, sizeof s3, 384), TMA_OK, "3-D load");
            cr_assert(memcmp(s2, s3, sizeof s2) == 0, "load (%d, %d): the views differ in shared memory", j, row);
            if (row < 0)
                continue; /* stores take no negative coordinate */
            memset(g2, 0x5A, sizeof g2), memset(g3, 0x5A, sizeof g3);
            d2.global_address = g2, d3.global_address = g3;
            cr_assert_eq(tma_model_store_tiled(&d2, c2, s2, sizeof s2, 384), TMA_OK, "2-D store");
            cr_assert_eq(tma_model_store_tiled(&d3, c3, s3, sizeof s3, 384), TMA_OK, "3-D store");
            cr_assert(memcmp(g2, g3, sizeof g2) == 0, "store (%d, %d): the views wrote different bytes", j, row);
            d2.global_address = a, d3.global_address = a;
        }
}

Test(model_errors, smem_align) {
    fixture f = fixture_new();
    const int32_t c[5] = {0};
    static const uint32_t bad[] = {1, 16, 64, 127, 129, 192, 1088};
    for (int store = 0; store < 2; store++) {
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            char what[64];
            snprintf(what, sizeof what, "dst_offset %u", bad[i]);
            expect_status(what, store, &f.d, c, f.sm, FIX_SMEM, FIX_SMEM, bad[i], TMA_ERR_SMEM_ALIGN, &f.g);
        }
        expect_status("dst_offset 1152", store, &f.d, c, f.sm, FIX_SMEM, FIX_SMEM, 1152, TMA_OK, &f.g);
    }
    fixture_free(&f);
}

Test(model_errors, smem_bounds) {
    fixture f = fixture_new();
    const int32_t c[5] = {0};
    for (int store = 0; store < 2; store++) {
        expect_status("0 bytes", store, &f.d, c, f.sm, FIX_SMEM, 0, 0, TMA_ERR_SMEM_BOUNDS, &f.g);
        expect_status("one byte short", store, &f.d, c, f.sm, FIX_SMEM, FIX_NEED - 1, 0, TMA_ERR_SMEM_BOUNDS, &f.g);
        expect_status("one byte short at 128", store, &f.d, c, f.sm, FIX_SMEM, 128 + FIX_NEED - 1, 128,
                      TMA_ERR_SMEM_BOUNDS, &f.g);
        expect_status("offset past the buffer", store, &f.d, c, f.sm, FIX_SMEM, 512, 1024, TMA_ERR_SMEM_BOUNDS,
                      &f.g);
        expect_status("offset at the end", store, &f.d, c, f.sm, FIX_SMEM, 1024, 1024, TMA_ERR_SMEM_BOUNDS, &f.g);
        expect_status("last box does not fit", store, &f.d, c, f.sm, FIX_SMEM, FIX_SMEM - 1, FIX_SMEM - FIX_NEED,
                      TMA_ERR_SMEM_BOUNDS, &f.g);
        expect_status("exact fit", store, &f.d, c, f.sm, FIX_SMEM, FIX_NEED, 0, TMA_OK, &f.g);
        /* Shared addresses are 32-bit: a box that would end past 4 GiB is refused even when the caller
         * claims a larger buffer (nothing may be written, so the small buffer is safe). */
        expect_status("box past 4 GiB", store, &f.d, c, f.sm, FIX_SMEM, SIZE_MAX, 0xFFFFFF80u, TMA_ERR_SMEM_BOUNDS,
                      &f.g);
        expect_status("exact fit at the end", store, &f.d, c, f.sm, FIX_SMEM, FIX_SMEM, FIX_SMEM - FIX_NEED, TMA_OK,
                      &f.g);
    }
    fixture_free(&f);
}

Test(model_errors, coord_align) {
    fixture f = fixture_new();
    static const int32_t bad[] = {1, 2, 3, -3, -1, 6, 21};
    for (int store = 0; store < 2; store++)
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            if (store && bad[i] < 0)
                continue;
            const int32_t c[5] = {bad[i], 1};
            char what[64];
            snprintf(what, sizeof what, "f32 coord[0] = %d", bad[i]);
            expect_status(what, store, &f.d, c, f.sm, FIX_SMEM, FIX_SMEM, 0, TMA_ERR_COORD_ALIGN, &f.g);
        }
    const int32_t c4[5] = {-4, 1};
    expect_status("f32 coord[0] = -4 (16 bytes)", false, &f.d, c4, f.sm, FIX_SMEM, FIX_SMEM, 0, TMA_OK, &f.g);

    /* u8: coord 114 misaligned, 112 fine (the measured case). */
    tma_tiled_desc d = f.d;
    d.dtype = TMA_DTYPE_U8;
    d.global_dim[0] = 96;
    d.box_dim[0] = 32;
    cr_assert_eq(tma_check_tiled(&d, NULL), TMA_OK);
    const int32_t c114[5] = {114, 0}, c112[5] = {112, 0};
    for (int store = 0; store < 2; store++) {
        expect_status("u8 coord[0] = 114", store, &d, c114, f.sm, FIX_SMEM, FIX_SMEM, 0, TMA_ERR_COORD_ALIGN, &f.g);
        expect_status("u8 coord[0] = 112", store, &d, c112, f.sm, FIX_SMEM, FIX_SMEM, 0, TMA_OK, &f.g);
    }
    fixture_free(&f);
}

Test(model_errors, negative_store_coord) {
    fixture f = fixture_new();
    static const int32_t bad[][5] = {{0, -1}, {-4, 0}, {-16, 2}, {INT32_MIN, INT32_MIN}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "coord {%d, %d}", bad[i][0], bad[i][1]);
        expect_status(what, true, &f.d, bad[i], f.sm, FIX_SMEM, FIX_SMEM, 0, TMA_ERR_COORD_NEGATIVE_STORE, &f.g);
        expect_status(what, false, &f.d, bad[i], f.sm, FIX_SMEM, FIX_SMEM, 0, TMA_OK, &f.g); /* loads fill */
    }
    /* Coordinates past the rank are ignored, negative ones included. */
    const int32_t past[5] = {0, 1, -7, -1, INT32_MIN};
    expect_status("negative coord past the rank", true, &f.d, past, f.sm, FIX_SMEM, FIX_SMEM, 0, TMA_OK, &f.g);
    fixture_free(&f);
}

Test(model_errors, invalid_descriptor) {
    fixture f = fixture_new();
    const int32_t c[5] = {0};
    for (int k = 0;; k++) {
        tma_tiled_desc d = f.d;
        tma_status want;
        const char *what;
        switch (k) {
        case 0: d.rank = 0; want = TMA_ERR_RANK; what = "rank 0"; break;
        case 1: d.rank = 6; want = TMA_ERR_RANK; what = "rank 6"; break;
        case 2: d.dtype = (tma_dtype)13; want = TMA_ERR_DTYPE; what = "dtype 13"; break;
        case 3: d.global_address = NULL; want = TMA_ERR_GLOBAL_ADDRESS_NULL; what = "NULL address"; break;
        case 4: d.global_address = f.g.base + 4; want = TMA_ERR_GLOBAL_ADDRESS_ALIGN; what = "address + 4"; break;
        case 5: d.global_dim[1] = 0; want = TMA_ERR_GLOBAL_DIM; what = "global_dim[1] 0"; break;
        case 6: d.global_stride[0] = 120; want = TMA_ERR_GLOBAL_STRIDE_ALIGN; what = "stride 120"; break;
        case 7: /* a store map whose rows overlap (a load map may: model_errors, overlapping_views_load_only) */
            d.global_stride[0] = 80;
            d.flags = TMA_DESC_STORE;
            want = TMA_ERR_GLOBAL_STRIDE_OVERLAP;
            what = "store map, stride 80 < row";
            break;
        case 8: d.box_dim[0] = 6; want = TMA_ERR_BOX_INNER_BYTES; what = "box_dim[0] 6 (24 bytes)"; break;
        case 9: d.box_dim[0] = 32; want = TMA_ERR_BOX_SWIZZLE_SPAN; what = "128-byte row, 64B span"; break;
        case 10: d.box_dim[1] = 0; want = TMA_ERR_BOX_DIM; what = "box_dim[1] 0"; break;
        case 11: d.box_dim[1] = 257; want = TMA_ERR_BOX_DIM; what = "box_dim[1] 257"; break;
        case 12: d.element_stride[1] = 9; want = TMA_ERR_ELEMENT_STRIDE; what = "element_stride[1] 9"; break;
        case 13: d.element_stride[0] = 2; want = TMA_ERR_ELEMENT_STRIDE; what = "element_stride[0] 2"; break;
        case 14: d.swizzle = TMA_SWIZZLE_128B_ATOM_32B; want = TMA_ERR_SWIZZLE_UNSUPPORTED; what = "ATOM"; break;
        case 15: d.swizzle = (tma_swizzle)9; want = TMA_ERR_SWIZZLE; what = "swizzle 9"; break;
        case 16:
            d.dtype = TMA_DTYPE_U32;
            d.oob_fill = TMA_OOB_NAN;
            want = TMA_ERR_OOB_FILL_NAN_INTEGER;
            what = "NaN fill on u32";
            break;
        case 17: d.oob_fill = (tma_oob_fill)2; want = TMA_ERR_OOB_FILL; what = "oob_fill 2"; break;
        case 18: d.l2_promotion = (tma_l2_promotion)4; want = TMA_ERR_L2_PROMOTION; what = "l2 4"; break;
        case 19: d.interleave = (tma_interleave)3; want = TMA_ERR_INTERLEAVE; what = "interleave 3"; break;
        case 20:
            d.rank = 3;
            d.global_dim[2] = 1;
            d.global_stride[1] = 6 * 112;
            d.box_dim[0] = 64;
            d.box_dim[1] = 256;
            d.box_dim[2] = 4;
            d.swizzle = TMA_SWIZZLE_NONE;
            want = TMA_ERR_BOX_SMEM;
            what = "256 KiB box";
            break;
        case 21: d.interleave = TMA_INTERLEAVE_16B; want = TMA_ERR_INTERLEAVE_RANK; what = "interleave, rank 2"; break;
        default: want = TMA_OK; what = NULL; break;
        }
        if (what == NULL)
            break;
        tma_diag diag;
        cr_assert_eq(tma_check_tiled(&d, &diag), want, "%s: checker says %s (%s)", what,
                     tma_status_name(tma_check_tiled(&d, NULL)), diag.message);
        for (int store = 0; store < 2; store++)
            expect_status(what, store, &d, c, f.sm, FIX_SMEM, FIX_SMEM, 0, want, &f.g);
    }
    fixture_free(&f);
}

/* A view whose rows overlap (stride 80 < the 96-byte row) is a valid map to load from, and every load reads the
 * shared bytes once per row that covers them; a store through it would write them twice: refused, nothing written. */
Test(model_errors, overlapping_views_load_only) {
    fixture f = fixture_new();
    tma_tiled_desc d = f.d;
    d.global_stride[0] = 80;
    const int32_t c[5] = {8, 1};
    cr_assert_eq(tma_check_tiled(&d, NULL), TMA_OK, "a load map");
    expect_status("overlapping rows", false, &d, c, f.sm, FIX_SMEM, FIX_SMEM, 0, TMA_OK, &f.g);
    /* box row r is tensor row 1 + r, which starts 80 * (1 + r) bytes in (rows 2..4 begin inside the row before) */
    for (uint32_t r = 0; r < 4; r++)
        cr_assert(memcmp(f.sm + tma_swizzle_addr(TMA_SWIZZLE_64B, r * 64u), f.g.base + 80u * (1u + r) + 32u, 16) == 0,
                  "box row %u's first chunk is tensor row %u's elements 8..11", r, 1u + r);
    expect_status("overlapping rows", true, &d, c, f.sm, FIX_SMEM, FIX_SMEM, 0, TMA_ERR_GLOBAL_STRIDE_OVERLAP, &f.g);
    d.flags = TMA_DESC_ALLOW_OVERLAP; /* accepted for compatibility: no effect either way */
    expect_status("overlapping rows, old flag", false, &d, c, f.sm, FIX_SMEM, FIX_SMEM, 0, TMA_OK, &f.g);
    expect_status("overlapping rows, old flag", true, &d, c, f.sm, FIX_SMEM, FIX_SMEM, 0, TMA_ERR_GLOBAL_STRIDE_OVERLAP,
                  &f.g);
    fixture_free(&f);
}

/* A template's address and strides are placeholders: no copy goes through it, loads or stores, and its NULL address
 * is never read. The map built from it (its flag dropped, its fields replaced) copies as any other. */
Test(model_errors, template_maps_take_no_copy) {
    fixture f = fixture_new();
    tma_tiled_desc t = f.d;
    t.flags = TMA_DESC_TEMPLATE;
    t.global_address = NULL;
    t.global_stride[0] = 0;
    const int32_t c[5] = {0, 0};
    cr_assert_eq(tma_check_tiled(&t, NULL), TMA_OK, "a template");
    for (int store = 0; store < 2; store++)
        expect_status("template", store, &t, c, f.sm, FIX_SMEM, FIX_SMEM, 0, TMA_ERR_ARG, &f.g);
    tma_tiled_desc built = t;
    tma_desc_apply_edit(&built, tma_edit(TMA_FIELD_GLOBAL_ADDRESS, 0, (uint64_t)(uintptr_t)f.g.base));
    tma_desc_apply_edit(&built, tma_edit(TMA_FIELD_GLOBAL_STRIDE, 1, f.d.global_stride[0]));
    cr_assert_eq(built.flags & TMA_DESC_TEMPLATE, 0u, "an edited template is a map being built");
    for (int store = 0; store < 2; store++)
        expect_status("the map built from the template", store, &built, c, f.sm, FIX_SMEM, FIX_SMEM, 0, TMA_OK, &f.g);
    fixture_free(&f);
}

/* Interleaved maps: loads are modelled (model_interleave below); stores and reduce-stores through them are not
 * measured, so the model refuses them. */
Test(model_errors, interleave_stores_unsupported) {
    fixture f = fixture_new();
    const int32_t c[5] = {0};
    for (int il = TMA_INTERLEAVE_16B; il <= TMA_INTERLEAVE_32B; il++) {
        tma_tiled_desc d = f.d;
        d.rank = 3;
        d.global_dim[2] = 1;
        d.global_stride[0] = 128;
        d.global_stride[1] = 6 * 128;
        d.box_dim[2] = 1;
        d.interleave = (tma_interleave)il;
        d.swizzle = il == TMA_INTERLEAVE_32B ? TMA_SWIZZLE_32B : TMA_SWIZZLE_NONE;
        gbuf g = gbuf_new(tma_global_extent_bytes(&d)); /* rows of global_dim[0] whole chunks */
        memset(g.block, 0x5A, g.total);
        d.global_address = g.base;
        tma_diag diag;
        const char *what = il == TMA_INTERLEAVE_16B ? "INTERLEAVE_16B" : "INTERLEAVE_32B";
        cr_assert_eq(tma_check_tiled(&d, &diag), TMA_OK, "%s: %s", what, diag.message);
        expect_status(what, false, &d, c, f.sm, FIX_SMEM, FIX_SMEM, 0, TMA_OK, &g);
        expect_status(what, true, &d, c, f.sm, FIX_SMEM, FIX_SMEM, 0, TMA_ERR_UNSUPPORTED, &g);
        cr_assert_eq(tma_model_reduce_tiled(&d, c, f.sm, FIX_SMEM, 0, TMA_REDUCE_ADD), TMA_ERR_UNSUPPORTED,
                     "%s: reduce-store", what);
        free(g.block);
    }
    fixture_free(&f);
}

Test(model_errors, null_arguments) {
    fixture f = fixture_new();
    const int32_t c[5] = {0};
    for (int store = 0; store < 2; store++) {
        expect_status("NULL smem", store, &f.d, c, NULL, 0, FIX_SMEM, 0, TMA_ERR_NULL_ARG, &f.g);
        expect_status("NULL descriptor", store, NULL, c, f.sm, FIX_SMEM, FIX_SMEM, 0, TMA_ERR_NULL_ARG, &f.g);
        expect_status("NULL coord", store, &f.d, NULL, f.sm, FIX_SMEM, FIX_SMEM, 0, TMA_ERR_NULL_ARG, &f.g);
    }
    fixture_free(&f);
}

/* =============================================================================================
 * Round trip: load a box, store it at the same coordinates into a fresh tensor of the same shape.
 * In-bounds elements come back bit for bit; in the last 16-byte chunk of a row, the elements past
 * global_dim[0] receive the load's fill; every other byte keeps the fresh tensor's contents.
 * =========================================================================================== */

typedef struct trip_ctx {
    const uint8_t *orig;
    uint8_t *fresh, *mask;
    const char *cfg;
} trip_ctx;

static void trip_elem(const tma_tiled_desc *d, const ref_elem *el, void *vctx) {
    trip_ctx *c = vctx;
    const uint32_t esize = ref_esize(d->dtype);
    if (!el->inside_dims1 || el->x[0] < 0)
        return;
    const uint64_t x0 = (uint64_t)el->x[0];
    uint8_t want[8];
    if (x0 < d->global_dim[0])
        memcpy(want, c->orig + el->goff, esize);
    else if (x0 * esize < ref_round16(d->global_dim[0] * esize))
        ref_fill(want, esize, d->oob_fill);
    else
        return;
    if (memcmp(c->fresh + el->goff, want, esize) != 0)
        cr_assert_fail("round trip: element at global byte %" PRIu64 " (x0 = %" PRIu64 ") not reproduced\n  %s",
                       el->goff, x0, c->cfg);
    memset(c->mask + el->goff, 1, esize);
}

Test(model_roundtrip, load_then_store) {
    const uint64_t seed = test_seed("model_roundtrip::load_then_store");
    for (long iter = 0; iter < 600; iter++) {
        rng r = rng_for(seed, 3, (uint64_t)iter);
        tma_tiled_desc d;
        gen_desc(&r, &d, iter, true);
        if (ref_is_tf32(d.dtype))
            continue; /* TF32 rounds on load */
        gbuf orig = gbuf_new(tma_global_extent_bytes(&d)), fresh = gbuf_new(orig.extent);
        rng_bytes(&r, orig.block, orig.total);
        rng_bytes(&r, fresh.block, fresh.total);
        uint8_t *fresh_snap = xdup(fresh.base, fresh.extent), *mask = xzalloc(fresh.extent);
        int32_t c[5];
        gen_coords(&r, &d, true, c);
        const uint32_t off = gen_offset(&r);
        const size_t smem_bytes = off + ref_smem_bytes(&d);
        uint8_t *sm = xmalloc(smem_bytes);
        rng_bytes(&r, sm, smem_bytes);
        char cfg[1024];
        describe(cfg, sizeof cfg, "roundtrip", seed, iter, &d, c, off, smem_bytes);

        d.global_address = orig.base;
        tma_status st = tma_model_load_tiled(&d, c, sm, smem_bytes, off);
        cr_assert_eq(st, TMA_OK, "load returned %s\n  %s", tma_status_name(st), cfg);
        d.global_address = fresh.base;
        st = tma_model_store_tiled(&d, c, sm, smem_bytes, off);
        cr_assert_eq(st, TMA_OK, "store returned %s\n  %s", tma_status_name(st), cfg);

        trip_ctx ctx = {orig.base, fresh.base, mask, cfg};
        ref_walk(&d, c, off, trip_elem, &ctx);
        for (size_t b = 0; b < fresh.extent; b++)
            if (!mask[b] && fresh.base[b] != fresh_snap[b])
                cr_assert_fail("round trip: byte %zu outside the box changed\n  %s", b, cfg);
        free(sm);
        free(mask);
        free(fresh_snap);
        free(orig.block);
        free(fresh.block);
    }
}

/* ---------------------------------------------------------------------------------------------
 * Reduce-stores: hand-computed results (the GPU suite checks the same model against the silicon)
 * ------------------------------------------------------------------------------------------- */

/* A 1-D tensor of 8 elements of `type`, one box of 8 at coordinate 0; global and smem hold the given
 * element bytes; returns the model's status and leaves the result in global. */
static tma_status reduce_1d(tma_dtype type, void *global, const void *smem_elems, tma_reduce op) {
    static _Alignas(1024) uint8_t smem[1024];
    size_t esize = tma_dtype_size(type);
    memset(smem, 0xEE, sizeof smem);
    memcpy(smem, smem_elems, 8 * esize);
    tma_tiled_desc d = {.dtype = type, .rank = 1, .global_address = global, .global_dim = {8}, .box_dim = {8}};
    int32_t c[5] = {0};
    return tma_model_reduce_tiled(&d, c, smem, sizeof smem, 0, op);
}

Test(model_reduce, integer_add_wraps_and_min_max_follow_the_sign) {
    _Alignas(16) uint32_t g[8] = {0xFFFFFFFFu, 1, 2, 3, 0x80000000u, 5, 6, 7};
    const uint32_t v[8] = {2, 1, 1, 1, 0x80000000u, 0, 0, 0};
    cr_assert_eq(reduce_1d(TMA_DTYPE_U32, g, v, TMA_REDUCE_ADD), TMA_OK, "u32 add");
    cr_assert(g[0] == 1 && g[1] == 2 && g[4] == 0 && g[5] == 5, "u32 add wraps: got %u %u %u %u", g[0], g[1], g[4],
              g[5]);

    _Alignas(16) int32_t gi[8] = {-5, 7, 0, 0, 0, 0, 0, 0};
    const int32_t vi[8] = {3, -9, 0, 0, 0, 0, 0, 0};
    cr_assert_eq(reduce_1d(TMA_DTYPE_I32, gi, vi, TMA_REDUCE_MIN), TMA_OK, "i32 min");
    cr_assert(gi[0] == -5 && gi[1] == -9, "i32 min is signed: got %d %d", gi[0], gi[1]);
    _Alignas(16) uint32_t gu[8] = {0xFFFFFFFBu, 7, 0, 0, 0, 0, 0, 0}; /* -5 and 7 as bits */
    const uint32_t vu[8] = {3, 0xFFFFFFF7u, 0, 0, 0, 0, 0, 0};
    cr_assert_eq(reduce_1d(TMA_DTYPE_U32, gu, vu, TMA_REDUCE_MAX), TMA_OK, "u32 max");
    cr_assert(gu[0] == 0xFFFFFFFBu && gu[1] == 0xFFFFFFF7u, "u32 max is unsigned: got %x %x", gu[0], gu[1]);

    _Alignas(16) uint64_t g64[8] = {UINT64_MAX, 0, 0, 0, 0, 0, 0, 0};
    const uint64_t v64[8] = {2, 0, 0, 0, 0, 0, 0, 0};
    cr_assert_eq(reduce_1d(TMA_DTYPE_U64, g64, v64, TMA_REDUCE_ADD), TMA_OK, "u64 add");
    cr_assert(g64[0] == 1, "u64 add wraps: got %llu", (unsigned long long)g64[0]);
}

Test(model_reduce, f32_add_rounds_to_nearest_even_and_missing_pairs_are_refused) {
    _Alignas(16) float g[8] = {1.0f, 16777216.0f, -2.5f, 0, 0, 0, 0, 0};
    const float v[8] = {0.5f, 1.0f, 2.5f, 0, 0, 0, 0, 0};
    cr_assert_eq(reduce_1d(TMA_DTYPE_F32, g, v, TMA_REDUCE_ADD), TMA_OK, "f32 add");
    cr_assert(g[0] == 1.5f && g[1] == 16777216.0f && g[2] == 0.0f, "f32 add: got %a %a %a", (double)g[0],
              (double)g[1], (double)g[2]); /* 2^24 + 1 is a tie: even keeps 2^24 */
    _Alignas(16) float before[8] = {1, 2, 3, 4, 5, 6, 7, 8}, after[8];
    memcpy(after, before, sizeof after);
    /* measured: f32 min/max through a map raise "illegal instruction" (TMA-FACTS rule 12, reduce_probe) */
    cr_assert_eq(reduce_1d(TMA_DTYPE_F32, after, v, TMA_REDUCE_MIN), TMA_ERR_REDUCE_TYPE, "f32 min does not exist");
    cr_assert(memcmp(after, before, sizeof after) == 0, "a refused reduce writes nothing");
    _Alignas(16) uint16_t h[8] = {0};
    const uint16_t hv[8] = {0};
    cr_assert_eq(reduce_1d(TMA_DTYPE_BF16, h, hv, TMA_REDUCE_XOR), TMA_ERR_REDUCE_TYPE, "bf16 xor does not exist");
    cr_assert_eq(reduce_1d(TMA_DTYPE_U16, h, hv, TMA_REDUCE_ADD), TMA_ERR_REDUCE_TYPE, "u16 maps reduce nothing");
    cr_assert_eq(reduce_1d(TMA_DTYPE_BF16, h, hv, (tma_reduce)8), TMA_ERR_ARG, "8 is not a reduction");
}

/* Every (type, reduction) pair: the model refuses exactly the pairs the table lacks, and its message names them. */
Test(model_reduce, the_checker_refuses_exactly_the_missing_pairs) {
    int pairs[3] = {0, 0, 0};
    static const char *const form_name[3] = {"1-D", "tiled", "cluster"};
    for (int t = 0; t < TMA_DTYPE_COUNT_; t++)
        for (int op = 0; op < TMA_REDUCE_COUNT_; op++)
            for (int form = 0; form < 3; form++) {
                tma_diag diag;
                const int exists = tma_rule_reduce_exists((tma_dtype)t, (tma_reduce)op, form);
                const tma_status st = tma_check_reduce((tma_dtype)t, (tma_reduce)op, form, &diag);
                cr_assert_eq(st, exists ? TMA_OK : TMA_ERR_REDUCE_TYPE, "%s %s %s", form_name[form],
                             tma_dtype_name((tma_dtype)t), tma_rule_reduce_name((tma_reduce)op));
                if (!exists) {
                    char want[64];
                    snprintf(want, sizeof want, "%s for %s", tma_rule_reduce_name((tma_reduce)op),
                             tma_dtype_name((tma_dtype)t));
                    cr_assert(strstr(diag.message, want) != NULL, "message names the pair: %s", diag.message);
                }
                pairs[form] += exists;
            }
    /* measured on an H200: 33 of the 104 tiled pairs complete (tests/reduce_probe.cu); ptxas has 34 1-D forms into
     * global memory and 16 into a cluster peer's shared memory for these types */
    cr_assert_eq(pairs[TMA_REDUCE_FORM_TILED], 33, "tiled pairs: %d", pairs[TMA_REDUCE_FORM_TILED]);
    cr_assert_eq(pairs[TMA_REDUCE_FORM_BULK], 34, "1-D pairs: %d", pairs[TMA_REDUCE_FORM_BULK]);
    cr_assert_eq(pairs[TMA_REDUCE_FORM_CLUSTER], 16, "cluster pairs: %d", pairs[TMA_REDUCE_FORM_CLUSTER]);
    tma_diag diag;
    tma_check_reduce(TMA_DTYPE_F32, TMA_REDUCE_MAX, 1, &diag);
    cr_assert_str_eq(diag.message,
                     "TMA reduce-store .max through a map of f32 elements: the copy engine has no max for f32 (it raises "
                     "\"illegal instruction\"); f32 maps take: add only. Reduce in registers and store, or use a map of "
                     "a type that has max");
}

static void expect_halves(const uint16_t got[8], const uint16_t want[8], const char *what) {
    for (int i = 0; i < 8; i++)
        cr_assert_eq(got[i], want[i], "%s [%d]: 0x%04x, want 0x%04x", what, i, got[i], want[i]);
}

/* Hand-computed float cases: the rules of docs/HARDWARE.md "Reduce-stores", one by one. */
Test(model_reduce, float_rules_by_hand) {
    /* f16: 1 + 2^-11 is a tie (even keeps 1); 65504 + 8 rounds to 65504, + 16 is a tie that overflows; denormals kept;
     * NaN in, NaN out as 0x7FFF; inf + -inf = 0x7FFF. */
    _Alignas(16) uint16_t h[8] = {0x3C00, 0x7BFF, 0x7BFF, 0x0001, 0x7E55, 0x7C00, 0x8000, 0x0000};
    const uint16_t hv[8] = {0x1000, 0x4800, 0x4C00, 0x0001, 0x3C00, 0xFC00, 0x8000, 0x8000};
    cr_assert_eq(reduce_1d(TMA_DTYPE_F16, h, hv, TMA_REDUCE_ADD), TMA_OK, "f16 add");
    const uint16_t h_want[8] = {0x3C00, 0x7BFF, 0x7C00, 0x0002, 0x7FFF, 0x7FFF, 0x8000, 0x0000};
    expect_halves(h, h_want, "f16 add");
    /* bf16 min: a NaN operand loses to a number; two NaNs give 0x7FFF; -0 < +0 */
    _Alignas(16) uint16_t b[8] = {0x7FC5, 0x3F80, 0x7FC0, 0x0000, 0x8000, 0xBF80, 0xFF80, 0x0001};
    const uint16_t bv[8] = {0x3F80, 0xFFD3, 0xFF81, 0x8000, 0x0000, 0x3F80, 0x7F7F, 0x0000};
    cr_assert_eq(reduce_1d(TMA_DTYPE_BF16, b, bv, TMA_REDUCE_MIN), TMA_OK, "bf16 min");
    const uint16_t b_want[8] = {0x3F80, 0x3F80, 0x7FFF, 0x8000, 0x8000, 0xBF80, 0xFF80, 0x0000};
    expect_halves(b, b_want, "bf16 min");
    /* f32_ftz: denormal operands and results are zeros of their sign */
    _Alignas(16) uint32_t f[8] = {0x00000001, 0x80400003, 0x00800000, 0x00800001, 0, 0, 0, 0};
    const uint32_t fv[8] = {0x00000000, 0x80000001, 0x80000001, 0x80800000, 0, 0, 0, 0};
    cr_assert_eq(reduce_1d(TMA_DTYPE_F32_FTZ, f, fv, TMA_REDUCE_ADD), TMA_OK, "f32_ftz add");
    cr_assert(f[0] == 0 && f[1] == 0x80000000u && f[2] == 0x00800000u && f[3] == 0u,
              "f32_ftz add: %08x %08x %08x %08x", f[0], f[1], f[2], f[3]);
    /* f64: a NaN operand passes bit for bit (the shared one when both are), inf + -inf = 0xFFF8000000000000 */
    _Alignas(16) uint64_t d[8] = {0x7FF0000000000001ull, 0x7FF8000000000000ull, 0x7FF0000000000000ull, 0, 0, 0, 0, 0};
    const uint64_t dv[8] = {0x3FF0000000000000ull, 0xFFFC000000054321ull, 0xFFF0000000000000ull, 0, 0, 0, 0, 0};
    cr_assert_eq(reduce_1d(TMA_DTYPE_F64, d, dv, TMA_REDUCE_ADD), TMA_OK, "f64 add");
    cr_assert(d[0] == 0x7FF0000000000001ull && d[1] == 0xFFFC000000054321ull && d[2] == 0xFFF8000000000000ull,
              "f64 add NaNs: %016llx %016llx %016llx", (unsigned long long)d[0], (unsigned long long)d[1],
              (unsigned long long)d[2]);
    /* u32 inc/dec wrap at the shared value */
    _Alignas(16) uint32_t u[8] = {5, 4, 0, 9, 5, 4, 0, 9};
    const uint32_t uv[8] = {5, 5, 5, 5, 5, 5, 5, 5};
    cr_assert_eq(reduce_1d(TMA_DTYPE_U32, u, uv, TMA_REDUCE_INC), TMA_OK, "u32 inc");
    cr_assert(u[0] == 0 && u[1] == 5 && u[2] == 1 && u[3] == 0, "inc: %u %u %u %u", u[0], u[1], u[2], u[3]);
    _Alignas(16) uint32_t w[8] = {5, 4, 0, 9, 0, 0, 0, 0};
    cr_assert_eq(reduce_1d(TMA_DTYPE_U32, w, uv, TMA_REDUCE_DEC), TMA_OK, "u32 dec");
    cr_assert(w[0] == 4 && w[1] == 3 && w[2] == 5 && w[3] == 5, "dec: %u %u %u %u", w[0], w[1], w[2], w[3]);
}

/* The silicon's own bytes: tests/golden/reduce_h200.bin holds reduce-stores captured on an H200 (tests/reduce_probe.cu,
 * seed 20261122, 2026-11-22): for every float pair and u32 inc/dec, tiled and 1-D, every pair of the special values
 * then 256 random pairs, with what the GPU wrote. The model must write the same bits, element by element.
 * Record: int32 form (0 tiled, 1 1-D), dtype, op, status, n, esize; then g0, s, g1, n * esize bytes each. */
#ifndef TMA_TEST_GOLDEN_DIR
#define TMA_TEST_GOLDEN_DIR "tests/golden"
#endif

Test(model_reduce, replays_the_h200_capture_bit_for_bit) {
    FILE *f = fopen(TMA_TEST_GOLDEN_DIR "/reduce_h200.bin", "rb");
    cr_assert(f != NULL, "cannot open %s", TMA_TEST_GOLDEN_DIR "/reduce_h200.bin");
    static _Alignas(1024) uint8_t g0[4096 * 8], sm[4096 * 8], g1[4096 * 8], model[4096 * 8];
    int records = 0, tiled = 0;
    long elements = 0;
    int32_t h[6];
    while (fread(h, sizeof h, 1, f) == 1) {
        const int form = h[0], n = h[4], esize = h[5];
        const tma_dtype t = (tma_dtype)h[1];
        const tma_reduce op = (tma_reduce)h[2];
        cr_assert(n > 0 && n <= 4096 && esize == (int)tma_dtype_size(t), "record %d is malformed", records);
        const size_t bytes = (size_t)n * (size_t)esize;
        cr_assert(fread(g0, 1, bytes, f) == bytes && fread(sm, 1, bytes, f) == bytes && fread(g1, 1, bytes, f) == bytes,
                  "record %d is truncated", records);
        memcpy(model, g0, bytes);
        tma_status st;
        if (form == 1) {
            cr_assert(bytes % 16 == 0, "record %d: %zu bytes (records hold whole 16-byte chunks)", records, bytes);
            st = tma_model_bulk_reduce(model, sm, sizeof sm, 0, bytes, t, op);
        } else {
            tma_tiled_desc d = {.dtype = t, .rank = 1, .global_address = model, .global_dim = {(uint64_t)n}, .box_dim = {16}};
            st = TMA_OK;
            for (int x = 0; x < n && st == TMA_OK; x += 16) { /* 1-D boxes of 16 elements over the whole row */
                int32_t c[5] = {x, 0, 0, 0, 0};
                st = tma_model_reduce_tiled(&d, c, sm + (size_t)x * esize, 1024, 0, op);
            }
            tiled++;
        }
        cr_assert_eq(st, TMA_OK, "record %d (%s %s): the model refused it: %s", records, tma_dtype_name(t),
                     tma_rule_reduce_name(op), tma_status_name(st));
        for (int i = 0; i < n; i++) {
            uint64_t a = 0, v = 0, hw = 0, mo = 0;
            memcpy(&a, g0 + (size_t)i * esize, esize);
            memcpy(&v, sm + (size_t)i * esize, esize);
            memcpy(&hw, g1 + (size_t)i * esize, esize);
            memcpy(&mo, model + (size_t)i * esize, esize);
            cr_assert_eq(mo, hw, "%s %s %s element %d: %#llx op %#llx: H200 wrote %#llx, the model %#llx",
                         form ? "1-D" : "tiled", tma_dtype_name(t), tma_rule_reduce_name(op), i, (unsigned long long)a,
                         (unsigned long long)v, (unsigned long long)hw, (unsigned long long)mo);
        }
        records++;
        elements += n;
    }
    fclose(f);
    cr_assert_eq(records, 23, "records: %d", records);
    cr_log_info("replayed %d H200 reduce captures (%d tiled), %ld elements: the model wrote every bit the GPU wrote",
                records, tiled, elements);
}

Test(model_reduce, store_through_an_overlapping_load_only_map_is_refused) {
    _Alignas(16) uint8_t g[256] = {0};
    static _Alignas(1024) uint8_t smem[1024];
    /* rows of 64 bytes, 32 bytes apart: overlapping, a valid map for loads only */
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_U32, g, 4, 16, 32, 4, 16, TMA_SWIZZLE_NONE);
    int32_t c[5] = {0};
    cr_assert_eq(tma_model_load_tiled(&d, c, smem, sizeof smem, 0), TMA_OK, "loads through the view are fine");
    for (int op = -1; op <= (int)TMA_REDUCE_ADD; op++) { /* a store, then a reduce-store */
        const tma_status st = op < 0 ? tma_model_store_tiled(&d, c, smem, sizeof smem, 0)
                                     : tma_model_reduce_tiled(&d, c, smem, sizeof smem, 0, (tma_reduce)op);
        cr_assert_eq(st, TMA_ERR_GLOBAL_STRIDE_OVERLAP, "a %s through overlapping rows races with itself: %s",
                     op < 0 ? "store" : "reduce-store", tma_status_name(st));
    }
    for (size_t i = 0; i < sizeof g; i++)
        cr_assert_eq(g[i], 0, "the refused stores wrote byte %zu", i);
    tma_diag diag;
    cr_assert_eq(tma_check_store_coords(&d, c, &diag), TMA_ERR_GLOBAL_STRIDE_OVERLAP, "the per-copy check agrees");
    cr_assert(strstr(diag.message, "race with itself") != NULL, "and why: %s", diag.message);
}

/* ---- Interleaved maps (measured on an H200: docs/HARDWARE.md "Interleaved layouts"). Dimension 0 counts whole
 * 16/32-byte chunks, dimension rank-2 is the slice index (never spanned), rows are packed. The expected images
 * below are written out by hand from those three rules. ---- */

/* Logical shared-memory byte l of a 1024-aligned buffer, as SWIZZLE_32B places it. */
static uint32_t swz32(uint32_t l) { return l ^ ((l >> 7) & 1u) << 4; }

/* f16, INTERLEAVE_32B + SWIZZLE_32B, rank 3: 6 chunks a row, slice index 0..2 (dimension 1), 4 images. The box
 * {8, 3, 2} at (-1, 1, 2): 8 chunks of slice 1 of images 2 and 3; chunks -1 and 6 lie outside and are zero. */
Test(model_interleave, chunks_slice_and_packed_rows) {
    gbuf g = gbuf_new(3 * 576 + 2 * 192 + 192);
    rng r = {77};
    rng_bytes(&r, g.block, g.total);
    tma_tiled_desc d = {.dtype = TMA_DTYPE_F16, .rank = 3, .global_address = g.base, .global_dim = {6, 3, 4},
                        .global_stride = {192, 576}, .box_dim = {8, 3, 2}, .interleave = TMA_INTERLEAVE_32B,
                        .swizzle = TMA_SWIZZLE_32B};
    tma_diag diag;
    cr_assert_eq(tma_check_tiled(&d, &diag), TMA_OK, "%s", diag.message);
    cr_assert_eq(tma_box_tx_bytes(&d), 512u, "8 chunks of 32 bytes x 2 images; the slice dimension adds nothing");
    cr_assert_eq(tma_box_rows(&d), 2u, "rows over dimension 2 only");
    cr_assert_eq(tma_box_row_pitch(&d), 256u, "8 chunks of 32 bytes, not padded");
    cr_assert_eq(tma_box_smem_bytes(&d), 512u);
    cr_assert_eq(tma_global_extent_bytes(&d), g.extent, "the last row is 6 chunks of 32 bytes");
    const int32_t c[5] = {-1, 1, 2, 0, 0};
    static _Alignas(1024) uint8_t got[2048], want[2048];
    memset(got, POISON, sizeof got);
    memset(want, POISON, sizeof want);
    cr_assert_eq(tma_model_load_tiled(&d, c, got, sizeof got, 1024), TMA_OK);
    for (uint32_t row = 0; row < 2; row++)
        for (int32_t j = 0; j < 8; j++)
            for (uint32_t b = 0; b < 32; b++) {
                const int32_t x0 = -1 + j;
                const uint32_t l = 1024 + row * 256 + (uint32_t)j * 32 + b;
                want[swz32(l)] = x0 < 0 || x0 >= 6 ? 0 : g.base[(2 + row) * 576 + 1 * 192 + (uint32_t)x0 * 32 + b];
            }
    assert_same_bytes(got, want, NULL, sizeof got, 0, "interleave 32B", "by hand");
    free(g.block);
}

/* f32, INTERLEAVE_16B, rank 4, NaN fill: element_stride[0] = 3 steps whole chunks (x0 = -1, 2, 5 of 5), the slice
 * dimension 2 takes coord[2] only, and a row past global_dim[1] is all fill. */
Test(model_interleave, chunk_stride_and_nan_fill) {
    gbuf g = gbuf_new(480 + 2 * 160 + 80 + 80);
    rng r = {78};
    rng_bytes(&r, g.block, g.total);
    tma_tiled_desc d = {.dtype = TMA_DTYPE_F32, .rank = 4, .global_address = g.base, .global_dim = {5, 2, 3, 2},
                        .global_stride = {80, 160, 480}, .box_dim = {8, 2, 2, 1}, .element_stride = {3, 1, 1, 1},
                        .interleave = TMA_INTERLEAVE_16B, .oob_fill = TMA_OOB_NAN};
    tma_diag diag;
    cr_assert_eq(tma_check_tiled(&d, &diag), TMA_OK, "%s", diag.message);
    cr_assert_eq(tma_box_tx_bytes(&d), 96u, "3 chunks of 16 bytes x 2 rows");
    cr_assert_eq(tma_box_row_pitch(&d), 48u);
    const int32_t c[5] = {-1, 1, 2, 1, 0};
    static _Alignas(1024) uint8_t got[1024], want[1024];
    memset(got, POISON, sizeof got);
    memset(want, POISON, sizeof want);
    cr_assert_eq(tma_model_load_tiled(&d, c, got, sizeof got, 128), TMA_OK);
    for (uint32_t i = 0; i < 96; i += 2) { /* everything 0x7FF7 ... */
        want[128 + i] = 0xF7;
        want[128 + i + 1] = 0x7F;
    }
    memcpy(want + 128 + 16, g.base + 2 * 16 + 80 + 2 * 160 + 480, 16); /* ... but chunk 2 of row y = 1 */
    assert_same_bytes(got, want, NULL, sizeof got, 0, "interleave 16B, NaN fill", "by hand");
    free(g.block);
}

/* u64, INTERLEAVE_16B + SWIZZLE_128B: a row of 2 chunks is 32 bytes, not padded to the 128-byte span; the swizzle
 * still permutes 16-byte units by address. */
Test(model_interleave, rows_narrower_than_the_span_are_packed) {
    gbuf g = gbuf_new(2 * 64 + 32);
    rng r = {79};
    rng_bytes(&r, g.block, g.total);
    tma_tiled_desc d = {.dtype = TMA_DTYPE_U64, .rank = 3, .global_address = g.base, .global_dim = {2, 1, 3},
                        .global_stride = {32, 64}, .box_dim = {2, 1, 3}, .interleave = TMA_INTERLEAVE_16B,
                        .swizzle = TMA_SWIZZLE_128B};
    tma_diag diag;
    cr_assert_eq(tma_check_tiled(&d, &diag), TMA_OK, "%s", diag.message);
    cr_assert_eq(tma_box_row_pitch(&d), 32u);
    cr_assert_eq(tma_box_smem_bytes(&d), 96u);
    const int32_t c[5] = {0};
    static _Alignas(1024) uint8_t got[2048], want[2048];
    memset(got, POISON, sizeof got);
    memset(want, POISON, sizeof want);
    cr_assert_eq(tma_model_load_tiled(&d, c, got, sizeof got, 384), TMA_OK);
    for (uint32_t l = 0; l < 96; l += 16) /* rows z = 0..2 back to back: global bytes z * 64 .. z * 64 + 31 */
        memcpy(want + tma_swizzle_addr(TMA_SWIZZLE_128B, 384 + l), g.base + l / 32 * 64 + l % 32, 16);
    assert_same_bytes(got, want, NULL, sizeof got, 0, "interleave 16B, swizzle 128B", "by hand");
    free(g.block);
}
