/* Shared by the permute suites (test_permute.c on the CPU model, test_gpu_permute.c on the GPU): a plain CPU
 * permutation written from the definition in tma/kernels.h (not from the plan), a checker of every dst byte, and a
 * generator of random permutations with ragged sizes and padded strides. Header-only; every function is static.
 * No CUDA header. */
#ifndef TESTS_PERMUTE_REF_H
#define TESTS_PERMUTE_REF_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tma/kernels.h"

#define PR_POISON 0xEEu

/* xorshift64* */
static inline uint64_t pr_next(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}
static inline uint64_t pr_in(uint64_t *s, uint64_t lo, uint64_t hi) { return lo + pr_next(s) % (hi - lo + 1u); }

/* The strides of a description in bytes, dimension 0 included (= elem_bytes), 0 resolved to dense; dst's dims. */
typedef struct pr_layout {
    uint64_t ss[5], ds[5], dd[5];
    size_t src_bytes, dst_bytes; /* allocation sizes: the last element, plus a 16-byte chunk of slack for dst */
} pr_layout;

static inline void pr_strides(uint32_t e, uint32_t r, const uint64_t *dims, const uint64_t *given, uint64_t *out) {
    out[0] = e;
    for (uint32_t i = 1; i < r; i++)
        out[i] = given[i - 1] ? given[i - 1] : out[i - 1] * dims[i - 1];
}

static inline pr_layout pr_layout_of(const tma_permute_desc *d) {
    pr_layout L;
    memset(&L, 0, sizeof L);
    for (uint32_t i = 0; i < d->rank; i++)
        L.dd[i] = d->src_dims[d->perm[i]];
    pr_strides(d->elem_bytes, d->rank, d->src_dims, d->src_strides, L.ss);
    pr_strides(d->elem_bytes, d->rank, L.dd, d->dst_strides, L.ds);
    size_t s = d->elem_bytes, t = d->elem_bytes;
    for (uint32_t i = 0; i < d->rank; i++) {
        s += (size_t)(d->src_dims[i] - 1) * L.ss[i];
        t += (size_t)(L.dd[i] - 1) * L.ds[i];
    }
    L.src_bytes = (s + 15) / 16 * 16;
    L.dst_bytes = (t + 15) / 16 * 16 + 16;
    return L;
}

/* Calls fn(src offset, dst offset) for every element (src index order). */
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

/* want[dst element] = src[src element], from the definition. */
static inline void pr_reference(const tma_permute_desc *d, const uint8_t *src, uint8_t *want) {
    const pr_layout L = pr_layout_of(d);
    const uint32_t e = d->elem_bytes;
    PR_FOR_EACH(d, L, so, dof, memcpy(want + dof, src + so, e));
}

/* Every byte of got: an element equals want bitwise; a byte in the 16-byte chunk after an innermost dst row may be
 * the poison or 0 (a TMA store writes whole chunks, zeros past the row); any other byte is still the poison.
 * Returns the number of bad bytes, the first described in `where`. */
static inline size_t pr_check(const tma_permute_desc *d, const uint8_t *got, const uint8_t *want, char *where,
                              size_t where_n) {
    const pr_layout L = pr_layout_of(d);
    const uint32_t e = d->elem_bytes;
    uint8_t *role = calloc(L.dst_bytes, 1);
    if (!role)
        return (size_t)-1;
    /* slack after each innermost row (dst index order), then the elements over it */
    uint64_t rows = 1;
    for (uint32_t i = 1; i < d->rank; i++)
        rows *= L.dd[i];
    for (uint64_t n = 0; n < rows; n++) {
        uint64_t r = n, off = 0;
        for (uint32_t i = 1; i < d->rank; i++) {
            off += (r % L.dd[i]) * L.ds[i];
            r /= L.dd[i];
        }
        const uint64_t end = off + L.dd[0] * e, cend = (end + 15) / 16 * 16;
        for (uint64_t b = end; b < cend && b < L.dst_bytes; b++)
            role[b] = 2;
    }
    PR_FOR_EACH(d, L, so, dof, memset(role + dof, 1, e); (void)so);
    size_t bad = 0;
    for (size_t b = 0; b < L.dst_bytes; b++) {
        const int ok = role[b] == 1 ? got[b] == want[b] : role[b] == 2 ? (got[b] == PR_POISON || got[b] == 0)
                                                                         : got[b] == PR_POISON;
        if (!ok && bad++ == 0)
            snprintf(where, where_n, "dst byte %zu (%s): got 0x%02x, want 0x%02x", b,
                     role[b] == 1 ? "element" : role[b] == 2 ? "row's last chunk" : "not to be written", got[b],
                     role[b] == 1 ? want[b] : PR_POISON);
    }
    free(role);
    return bad;
}

/* A random permutation of at most max_elems elements: rank 1..5, ragged sizes, a random perm; strides dense where
 * that keeps them multiples of 16 bytes, else rows padded to 16 bytes (sometimes 16-48 more). The addresses are
 * left NULL. */
static inline tma_permute_desc pr_random(uint64_t *rng, uint32_t e, uint64_t max_elems) {
    tma_permute_desc d;
    memset(&d, 0, sizeof d);
    d.elem_bytes = e;
    d.rank = (uint32_t)pr_in(rng, 1, 5);
    uint64_t total = 1;
    for (uint32_t i = 0; i < d.rank; i++) {
        const uint64_t room = max_elems / total;
        uint64_t cap = room < 1 ? 1 : room;
        /* the first dimensions may be long (several boxes), the outer ones short */
        const uint64_t lim = i == 0 ? 700 : i == 1 ? 300 : 9;
        cap = cap < lim ? cap : lim;
        d.src_dims[i] = pr_in(rng, 1, cap);
        if (pr_next(rng) % 4 == 0 && cap >= 16u / e * 2)
            d.src_dims[i] = (d.src_dims[i] + 16u / e - 1) / (16u / e) * (16u / e); /* dense rows stay aligned */
        total *= d.src_dims[i];
    }
    for (uint32_t i = 0; i < d.rank; i++)
        d.perm[i] = i;
    for (uint32_t i = d.rank; i-- > 1;) {
        uint32_t j = (uint32_t)pr_in(rng, 0, i), t = d.perm[i];
        d.perm[i] = d.perm[j], d.perm[j] = t;
    }
    uint64_t dd[5];
    for (uint32_t i = 0; i < d.rank; i++)
        dd[i] = d.src_dims[d.perm[i]];
    for (int side = 0; side < 2; side++) {
        const uint64_t *dims = side ? dd : d.src_dims;
        uint64_t *st = side ? d.dst_strides : d.src_strides;
        uint64_t prev = e;
        for (uint32_t i = 1; i < d.rank; i++) {
            const uint64_t dense = prev * dims[i - 1];
            const uint64_t pick = pr_next(rng) % 3;
            if (dense % 16 == 0 && pick == 0)
                st[i - 1] = 0, prev = dense; /* dense (0) */
            else
                st[i - 1] = prev = (dense + 15) / 16 * 16 + 16 * (pick == 2 ? pr_in(rng, 1, 3) : 0);
        }
    }
    return d;
}

static inline void pr_describe(const tma_permute_desc *d, char *out, size_t n) {
    snprintf(out, n,
             "elem %u rank %u src_dims {%llu,%llu,%llu,%llu,%llu} perm {%u,%u,%u,%u,%u} src_strides "
             "{%llu,%llu,%llu,%llu} dst_strides {%llu,%llu,%llu,%llu}",
             d->elem_bytes, d->rank, (unsigned long long)d->src_dims[0], (unsigned long long)d->src_dims[1],
             (unsigned long long)d->src_dims[2], (unsigned long long)d->src_dims[3],
             (unsigned long long)d->src_dims[4], d->perm[0], d->perm[1], d->perm[2], d->perm[3], d->perm[4],
             (unsigned long long)d->src_strides[0], (unsigned long long)d->src_strides[1],
             (unsigned long long)d->src_strides[2], (unsigned long long)d->src_strides[3],
             (unsigned long long)d->dst_strides[0], (unsigned long long)d->dst_strides[1],
             (unsigned long long)d->dst_strides[2], (unsigned long long)d->dst_strides[3]);
}

#endif /* TESTS_PERMUTE_REF_H */
