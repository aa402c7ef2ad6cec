/* Shared by the permute suites (test_permute.c on the CPU model, test_gpu_permute.c on the GPU, the fuzzer's strides
 * in test_gpu_fuzz.c): a plain CPU permutation written from the definition in tma/kernels.h (not from the plan), a
 * checker of every dst byte, guarded buffers, and a generator of random permutations with odd sizes, odd strides and
 * the aligned ones the TMA paths take. Header-only; every function is static. No CUDA header.
 *
 * The rule they check (tma_permute, issue 31): dst's elements equal src's bitwise and NO other byte is written, not
 * between rows, not in a row's tail, not before or after dst. A tensor is any rank 1-5 strided layout of 1-, 2-, 4-
 * or 8-byte elements: any sizes, strides any multiples of the element (0: dense), addresses aligned to the element;
 * dst's elements may not share bytes, src's may (it is only read). */
#ifndef TESTS_PERMUTE_REF_H
#define TESTS_PERMUTE_REF_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tma/kernels.h"

#define PR_POISON 0xEEu
enum {
    PR_GUARD = 64,    /* poisoned bytes before and after a tensor's span in a guarded buffer */
    PR_MAX_OFFSET = 64, /* tensors start at element-aligned offsets below this from a 64-byte boundary */
};

/* xorshift64* */
static inline uint64_t pr_next(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}
static inline uint64_t pr_in(uint64_t *s, uint64_t lo, uint64_t hi) { return lo + pr_next(s) % (hi - lo + 1u); }
static inline int pr_pct(uint64_t *s, unsigned pct) { return pr_next(s) % 100u < pct; }

/* The strides of a description in bytes, dimension 0 included (= elem_bytes), 0 resolved to dense; dst's dims. */
typedef struct pr_layout {
    uint64_t ss[5], ds[5], dd[5];
    size_t src_bytes, dst_bytes; /* each tensor's span: from its first element's first byte to its last element's
                                    last byte (every stride is positive, so element 0 is the lowest address) */
} pr_layout;

static inline void pr_strides(uint32_t e, uint32_t r, const uint64_t *dims, const uint64_t *given, uint64_t *out) {
    out[0] = e;
    for (uint32_t i = 1; i < r; i++)
        out[i] = given[i - 1] ? given[i - 1] : out[i - 1] * dims[i - 1];
}

static inline size_t pr_span(uint32_t e, uint32_t r, const uint64_t *dims, const uint64_t *strides) {
    size_t t = e;
    for (uint32_t i = 0; i < r; i++)
        t += (size_t)(dims[i] - 1) * strides[i];
    return t;
}

static inline pr_layout pr_layout_of(const tma_permute_desc *d) {
    pr_layout L;
    memset(&L, 0, sizeof L);
    for (uint32_t i = 0; i < d->rank; i++)
        L.dd[i] = d->src_dims[d->perm[i]];
    pr_strides(d->elem_bytes, d->rank, d->src_dims, d->src_strides, L.ss);
    pr_strides(d->elem_bytes, d->rank, L.dd, d->dst_strides, L.ds);
    L.src_bytes = pr_span(d->elem_bytes, d->rank, d->src_dims, L.ss);
    L.dst_bytes = pr_span(d->elem_bytes, d->rank, L.dd, L.ds);
    return L;
}

/* Runs BODY with SOFF, DOFF the byte offsets of one element in src and dst, for every element (src index order). */
#define PR_FOR_EACH(d, L, SOFF, DOFF, BODY)                                                                 \
    do {                                                                                                    \
        uint64_t idx_[5] = {0, 0, 0, 0, 0}, total_ = 1;                                                    \
        for (uint32_t i_ = 0; i_ < (d)->rank; i_++)                                                         \
            total_ *= (d)->src_dims[i_];                                                                    \
        for (uint64_t n_ = 0; n_ < total_; n_++) {                                                          \
            uint64_t r_ = n_;                                                                               \
            size_t SOFF = 0, DOFF = 0;                                                                      \
            for (uint32_t i_ = 0; i_ < (d)->rank; i_++) {                                                   \
                idx_[i_] = r_ % (d)->src_dims[i_];                                                          \
                r_ /= (d)->src_dims[i_];                                                                    \
                SOFF += idx_[i_] * (L).ss[i_];                                                              \
            }                                                                                               \
            for (uint32_t i_ = 0; i_ < (d)->rank; i_++)                                                     \
                DOFF += idx_[(d)->perm[i_]] * (L).ds[i_];                                                   \
            BODY;                                                                                           \
        }                                                                                                   \
    } while (0)

/* want[dst element] = src[src element], from the definition (src and want: the tensors' first bytes). */
static inline void pr_reference(const tma_permute_desc *d, const uint8_t *src, uint8_t *want) {
    const pr_layout L = pr_layout_of(d);
    const uint32_t e = d->elem_bytes;
    PR_FOR_EACH(d, L, so, dof, memcpy(want + dof, src + so, e));
}

/* Every byte of dst's span (got and want: its first byte): an element's equals want bitwise; every other byte (between
 * rows, in a padded row's tail, in a gap of any stride) is still PR_POISON. Returns the number of bad bytes, the first
 * described in `where`; (size_t)-1 when out of memory. */
static inline size_t pr_check(const tma_permute_desc *d, const uint8_t *got, const uint8_t *want, char *where,
                              size_t where_n) {
    const pr_layout L = pr_layout_of(d);
    const uint32_t e = d->elem_bytes;
    uint8_t *elem = calloc(L.dst_bytes, 1);
    if (!elem)
        return (size_t)-1;
    PR_FOR_EACH(d, L, so, dof, memset(elem + dof, 1, e); (void)so);
    size_t bad = 0;
    for (size_t b = 0; b < L.dst_bytes; b++) {
        const uint8_t expect = elem[b] ? want[b] : (uint8_t)PR_POISON;
        if (got[b] != expect && bad++ == 0)
            snprintf(where, where_n, "dst byte %zu (%s): got 0x%02x, want 0x%02x", b,
                     elem[b] ? "an element's" : "no element's: never to be written", got[b], expect);
    }
    free(elem);
    return bad;
}

/* ---- guarded buffers: [PR_GUARD poison][off bytes of poison][the tensor's span][PR_GUARD poison], the buffer
 *      64-byte aligned, so the tensor's address is off modulo 64 ---- */

static inline size_t pr_buf_bytes(size_t span, size_t off) {
    return ((size_t)PR_GUARD + off + span + (size_t)PR_GUARD + 63u) / 64u * 64u; /* aligned_alloc: a multiple */
}

/* A host buffer for a tensor of `span` bytes at `off`, all poisoned; *at the tensor's address. NULL if out of
 * memory. */
static inline uint8_t *pr_buf_alloc(size_t span, size_t off, uint8_t **at) {
    const size_t n = pr_buf_bytes(span, off);
    uint8_t *b = aligned_alloc(64, n);
    *at = NULL;
    if (b) {
        memset(b, PR_POISON, n);
        *at = b + PR_GUARD + off;
    }
    return b;
}

/* Bytes of a guarded buffer (as pr_buf_alloc made it) outside the tensor's span that are not PR_POISON: before it
 * (*before) and after it (*after). */
static inline size_t pr_buf_outside(const uint8_t *buf, size_t span, size_t off, size_t *before, size_t *after) {
    const size_t n = pr_buf_bytes(span, off), lo = (size_t)PR_GUARD + off, hi = lo + span;
    *before = *after = 0;
    for (size_t b = 0; b < lo; b++)
        *before += buf[b] != PR_POISON;
    for (size_t b = hi; b < n; b++)
        *after += buf[b] != PR_POISON;
    return *before + *after;
}

/* A tensor's offset from a 64-byte boundary: a multiple of the element below PR_MAX_OFFSET; a multiple of 16 (where
 * TMA maps may start) 40% of the time, 0 another 20%. */
static inline size_t pr_offset(uint64_t *rng, uint32_t e) {
    const uint64_t pick = pr_next(rng) % 10u;
    if (pick < 2u)
        return 0;
    if (pick < 6u)
        return 16u * (size_t)pr_in(rng, 0, PR_MAX_OFFSET / 16 - 1);
    return (size_t)e * (size_t)pr_in(rng, 1, PR_MAX_OFFSET / e - 1);
}

/* ---- random strides ---- */

typedef enum pr_style {
    PR_DENSE = 0,   /* every stride 0 */
    PR_ALIGNED = 1, /* in dimension order, each stride the span inside it rounded up to 16 bytes, sometimes 16-48
                       more: what TMA maps describe (0 where that is the dense stride) */
    PR_ODD = 2,     /* any multiple of the element: dense (0, or the same value given), a few elements of padding,
                       16-byte multiples, 16-byte multiples plus an element; dimensions 1.. in a random order in
                       memory half the time (a dst or src that is itself a permuted view) */
    PR_ANY = 3,     /* one of the three */
} pr_style;

/* Strides (bytes, st[i - 1] for dimension i) of a tensor of dims, nested so that no two elements share a byte:
 * dimension 0 innermost (stride e), then each other dimension in the layout's order at a stride no smaller than the
 * span of those inside it. Returns the style drawn. */
static inline pr_style pr_draw_strides(uint64_t *rng, uint32_t e, uint32_t rank, const uint64_t *dims, uint64_t *st,
                                       pr_style style) {
    for (uint32_t i = 0; i < 4; i++)
        st[i] = 0;
    if (style == PR_ANY)
        style = (pr_style)(pr_next(rng) % 3u);
    if (style == PR_DENSE || rank < 2)
        return style;
    uint32_t order[5] = {0, 1, 2, 3, 4}; /* order[1..rank-1]: dimensions 1.. from the innermost outwards */
    const int shuffled = style == PR_ODD && rank > 2 && pr_pct(rng, 50);
    if (shuffled)
        for (uint32_t i = rank - 1; i > 1; i--) {
            const uint32_t j = (uint32_t)pr_in(rng, 1, i), t = order[i];
            order[i] = order[j], order[j] = t;
        }
    uint64_t res[5] = {e, 0, 0, 0, 0}; /* resolved strides */
    uint64_t span = (uint64_t)e * dims[0]; /* bytes from the first element to the end of the last placed so far */
    for (uint32_t k = 1; k < rank; k++) {
        const uint32_t i = order[k];
        /* the dense stride 0 stands for res[i - 1] dims[i - 1]: nested where the layout is in dimension order */
        const uint64_t dense0 = res[i - 1] * dims[i - 1];
        uint64_t s;
        int zero = 0;
        if (style == PR_ALIGNED) {
            s = (span + 15u) / 16u * 16u + (pr_pct(rng, 30) ? 16u * pr_in(rng, 1, 3) : 0u);
            zero = !shuffled && s == dense0;
        } else {
            switch (pr_next(rng) % 6u) {
            case 0: /* dense, as 0 where the layout is in dimension order */
                s = span, zero = !shuffled && dense0 == span;
                break;
            case 1: /* the same value given */
                s = span;
                break;
            case 2: /* a few elements of padding */
                s = span + e * pr_in(rng, 1, 3);
                break;
            case 3: /* a 16-byte multiple */
                s = (span + 15u) / 16u * 16u + (pr_pct(rng, 30) ? 16u : 0u);
                break;
            case 4: /* a 16-byte multiple plus an element */
                s = (span + 15u) / 16u * 16u + e;
                break;
            default: /* a larger gap */
                s = span + e * pr_in(rng, 1, 40);
                break;
            }
        }
        res[i] = s;
        st[i - 1] = zero ? 0 : s;
        span = s * (dims[i] - 1) + span;
    }
    return style;
}

/* Dimensions of one element: their stride says nothing about the layout, and PyTorch gives such dimensions any
 * stride. With probability pct each such dimension i >= 1 whose next stride is given (or that is outermost) gets an
 * odd stride: e, a few elements, or 2^40 and more (the refusal of huge strides is for dimensions of more than one
 * element). Returns how many it changed. */
static inline int pr_unit_strides(uint64_t *rng, uint32_t e, uint32_t rank, const uint64_t *dims, uint64_t *st,
                                  unsigned pct) {
    int n = 0;
    for (uint32_t i = 1; i < rank; i++) {
        if (dims[i] != 1 || (i + 1 < rank && st[i] == 0) || !pr_pct(rng, pct))
            continue;
        const uint64_t pick = pr_next(rng) % 3u;
        st[i - 1] = pick == 0 ? e : pick == 1 ? e * pr_in(rng, 2, 1000) : (1ull << 40) + e * pr_in(rng, 0, 1000);
        n++;
    }
    return n;
}

/* src only (it is only read): one dimension i >= 1 of more than one element steps less than the span inside it, so
 * its rows overlap (a sliding-window view). Returns 1 if it made one. */
static inline int pr_overlap_src(uint64_t *rng, uint32_t e, uint32_t rank, const uint64_t *dims, uint64_t *st) {
    uint32_t cand[4], n = 0;
    for (uint32_t i = 1; i < rank; i++)
        if (dims[i] > 1 && (i + 1 == rank || st[i] != 0) && dims[i - 1] > 1)
            cand[n++] = i;
    if (n == 0)
        return 0;
    const uint32_t i = cand[pr_next(rng) % n];
    uint64_t res[5];
    pr_strides(e, rank, dims, st, res);
    const uint64_t inner = res[i - 1] * (dims[i - 1] - 1) + e; /* at least the span of dimension i - 1 */
    st[i - 1] = e * pr_in(rng, 1, inner / e > 1 ? inner / e - 1 : 1);
    return 1;
}

/* A random permutation of about max_elems elements at most: rank 1..5, odd sizes (a quarter of the time dimension
 * 0 a multiple of 16 bytes), a random perm, strides of any style for each side (pr_draw_strides), now and then odd
 * strides on dimensions of one element and src rows that overlap. tma: in the TMA kernels' domain instead: src's and
 * dst's rows multiples of 16 bytes, strides dense or PR_ALIGNED (give such a tensor 16-byte aligned addresses). The
 * addresses are left NULL: pr_offset draws element-aligned ones. */
static inline tma_permute_desc pr_random(uint64_t *rng, uint32_t e, uint64_t max_elems, int tma) {
    tma_permute_desc d;
    memset(&d, 0, sizeof d);
    d.elem_bytes = e;
    d.rank = (uint32_t)pr_in(rng, 1, 5);
    const uint64_t v = 16u / e; /* elements of a 16-byte chunk */
    uint64_t total = 1;
    for (uint32_t i = 0; i < d.rank; i++) {
        const uint64_t room = max_elems / total;
        uint64_t cap = room < 1 ? 1 : room;
        /* the first dimensions may be long (several tiles), the outer ones short */
        const uint64_t lim = i == 0 ? 700 : i == 1 ? 300 : 9;
        cap = cap < lim ? cap : lim;
        d.src_dims[i] = pr_in(rng, 1, cap);
        if (pr_pct(rng, 25) && cap >= v * 2)
            d.src_dims[i] = (d.src_dims[i] + v - 1) / v * v; /* dense rows stay aligned */
        total *= d.src_dims[i];
    }
    for (uint32_t i = 0; i < d.rank; i++)
        d.perm[i] = i;
    for (uint32_t i = d.rank; i-- > 1;) {
        uint32_t j = (uint32_t)pr_in(rng, 0, i), t = d.perm[i];
        d.perm[i] = d.perm[j], d.perm[j] = t;
    }
    if (tma) { /* both innermost dimensions whole chunks, then back within max_elems: halve the largest dimension
                  that can be (the innermost ones down to a chunk) */
        d.src_dims[0] = (d.src_dims[0] + v - 1) / v * v;
        d.src_dims[d.perm[0]] = (d.src_dims[d.perm[0]] + v - 1) / v * v;
        for (;;) {
            uint64_t n = 1, most = 0;
            uint32_t big = 5;
            for (uint32_t i = 0; i < d.rank; i++) {
                n *= d.src_dims[i];
                const int chunked = i == 0 || i == d.perm[0];
                if ((chunked ? d.src_dims[i] > v : d.src_dims[i] > 1) && d.src_dims[i] > most)
                    most = d.src_dims[i], big = i;
            }
            if (n <= max_elems || big == 5)
                break;
            const uint64_t half = (d.src_dims[big] + 1) / 2;
            d.src_dims[big] = big == 0 || big == d.perm[0] ? (half + v - 1) / v * v : half;
        }
    }
    uint64_t dd[5];
    for (uint32_t i = 0; i < d.rank; i++)
        dd[i] = d.src_dims[d.perm[i]];
    const pr_style style = tma ? (pr_pct(rng, 50) ? PR_DENSE : PR_ALIGNED) : PR_ANY;
    pr_draw_strides(rng, e, d.rank, d.src_dims, d.src_strides, style);
    pr_draw_strides(rng, e, d.rank, dd, d.dst_strides, style);
    pr_unit_strides(rng, e, d.rank, d.src_dims, d.src_strides, 10);
    pr_unit_strides(rng, e, d.rank, dd, d.dst_strides, 10);
    if (!tma && pr_pct(rng, 5))
        pr_overlap_src(rng, e, d.rank, d.src_dims, d.src_strides);
    return d;
}

static inline void pr_describe(const tma_permute_desc *d, char *out, size_t n) {
    snprintf(out, n,
             "elem %u rank %u src_dims {%llu,%llu,%llu,%llu,%llu} perm {%u,%u,%u,%u,%u} src_strides "
             "{%llu,%llu,%llu,%llu} dst_strides {%llu,%llu,%llu,%llu}; src %% 16 = %u, dst %% 16 = %u",
             d->elem_bytes, d->rank, (unsigned long long)d->src_dims[0], (unsigned long long)d->src_dims[1],
             (unsigned long long)d->src_dims[2], (unsigned long long)d->src_dims[3],
             (unsigned long long)d->src_dims[4], d->perm[0], d->perm[1], d->perm[2], d->perm[3], d->perm[4],
             (unsigned long long)d->src_strides[0], (unsigned long long)d->src_strides[1],
             (unsigned long long)d->src_strides[2], (unsigned long long)d->src_strides[3],
             (unsigned long long)d->dst_strides[0], (unsigned long long)d->dst_strides[1],
             (unsigned long long)d->dst_strides[2], (unsigned long long)d->dst_strides[3],
             (unsigned)((uintptr_t)d->src % 16u), (unsigned)((uintptr_t)d->dst % 16u));
}

#endif /* TESTS_PERMUTE_REF_H */
