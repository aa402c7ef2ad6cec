/* The convolution tests' reference (test_conv.c, test_gpu_conv.c): a seeded generator, random bf16 tensors, the fp64
 * direct convolution and the element-by-element comparison. Header-only; every function is static. */
#ifndef TESTS_CONV_REF_H
#define TESTS_CONV_REF_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bf16.h"
#include "tma/kernels.h"
#include "test_seed.h"

static inline uint64_t conv_rnd(uint64_t *s) { /* splitmix64 */
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static inline int conv_rnd_in(uint64_t *s, int lo, int hi) { return lo + (int)(conv_rnd(s) % (uint64_t)(hi - lo + 1)); }

/* n random bf16 in [-1, 1) into a 1024-byte aligned host buffer (free with free()). */
static inline uint16_t *conv_random_bf16(uint64_t *s, size_t n) {
    uint16_t *p = aligned_alloc(1024, (n * 2 + 1023) / 1024 * 1024 + 1024);
    if (p)
        for (size_t i = 0; i < n; i++)
            p[i] = to_bf16((float)(conv_rnd(s) >> 40) * (2.0f / 16777216.0f) - 1.0f);
    return p;
}

static inline size_t conv_x_elems(const tma_conv2d_shape *sh) { return (size_t)sh->n * sh->h * sh->w * sh->c; }
static inline size_t conv_w_elems(const tma_conv2d_shape *sh) { return (size_t)sh->k * sh->r * sh->s * sh->c; }
static inline size_t conv_y_elems(const tma_conv2d_shape *sh) {
    int p, q;
    tma_conv2d_out_size(sh, &p, &q);
    return (size_t)sh->n * p * q * sh->k;
}

/* y's element (n, p, q, k) in fp64 from host x, w. */
static inline double conv_direct(const tma_conv2d_shape *sh, const uint16_t *x, const uint16_t *w, int n, int p, int q,
                                 int k) {
    double acc = 0;
    for (int r = 0; r < sh->r; r++)
        for (int s = 0; s < sh->s; s++) {
            const int h = p * sh->stride_h - sh->pad_h + r * sh->dilation_h;
            const int ww = q * sh->stride_w - sh->pad_w + s * sh->dilation_w;
            if (h < 0 || h >= sh->h || ww < 0 || ww >= sh->w)
                continue;
            const uint16_t *xp = x + (((size_t)n * sh->h + h) * sh->w + ww) * sh->c;
            const uint16_t *wp = w + (((size_t)k * sh->r + r) * sh->s + s) * sh->c;
            for (int c = 0; c < sh->c; c++)
                acc += bf16d(xp[c]) * bf16d(wp[c]);
        }
    return acc;
}

/* Every element of y (bf16, host) against the fp64 direct convolution: bad unless finite and within
 * 1e-2 |ref| + 1e-2 (bf16 rounding of the output is 2^-9 relative). @return the bad elements; *first the first */
static inline size_t conv_count_bad(const tma_conv2d_shape *sh, const uint16_t *x, const uint16_t *w,
                                    const uint16_t *y, size_t *first) {
    int P, Q;
    tma_conv2d_out_size(sh, &P, &Q);
    size_t bad = 0, i = 0;
    *first = (size_t)-1;
    for (int n = 0; n < sh->n; n++)
        for (int p = 0; p < P; p++)
            for (int q = 0; q < Q; q++)
                for (int k = 0; k < sh->k; k++, i++) {
                    const double ref = conv_direct(sh, x, w, n, p, q, k), d = fabs(bf16d(y[i]) - ref);
                    if (!(d <= 1e-2 * fabs(ref) + 1e-2)) { /* NaN fails */
                        if (bad++ == 0)
                            *first = i;
                    }
                }
    return bad;
}

/* A random shape, small enough for the fp64 reference: C a multiple of 8 (read through TMA as it is) or, one time in
 * three, any C from 1 to 100 (packed first: folded taps or padded channels, conv_tiles.h), any K, R, S, stride, padding
 * and dilation with an output of at least one pixel. */
static inline tma_conv2d_shape conv_random_shape(uint64_t *s) {
    for (;;) {
        tma_conv2d_shape sh;
        sh.n = conv_rnd_in(s, 1, 3);
        sh.h = conv_rnd_in(s, 1, 14);
        sh.w = conv_rnd_in(s, 1, 14);
        sh.c = conv_rnd_in(s, 0, 2) == 0 ? conv_rnd_in(s, 1, 100) : 8 * conv_rnd_in(s, 1, 20);
        sh.k = conv_rnd_in(s, 1, 300);
        sh.r = conv_rnd_in(s, 1, 5);
        sh.s = conv_rnd_in(s, 1, 5);
        sh.stride_h = conv_rnd_in(s, 1, 3);
        sh.stride_w = conv_rnd_in(s, 1, 3);
        sh.pad_h = conv_rnd_in(s, -1, 3);
        sh.pad_w = conv_rnd_in(s, -1, 3);
        sh.dilation_h = conv_rnd_in(s, 1, 3);
        sh.dilation_w = conv_rnd_in(s, 1, 3);
        int p, q;
        tma_conv2d_out_size(&sh, &p, &q);
        if (p >= 1 && q >= 1)
            return sh;
    }
}

#endif /* TESTS_CONV_REF_H */
