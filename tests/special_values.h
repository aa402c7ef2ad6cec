/* Operands rich in special values, for the reduce-store measurements and suites: signed zeros, denormals
 * (smallest, largest, in between), the smallest normals, the largest finite values, infinities, quiet and
 * signalling NaNs of both signs with payloads, 1 and its neighbours, half-ulp ties, and for integers the wrap
 * points. Header-only, plain C (the probe, a .cu file, includes it too); the caller brings its random source. */
#ifndef TESTS_SPECIAL_VALUES_H
#define TESTS_SPECIAL_VALUES_H

#include <stdint.h>
#include <string.h>

#include "tma/rules.h"

typedef uint64_t (*sv_rng)(void);

/* The special values of type t as bit patterns into v (room for 64); returns how many. */
static inline int sv_specials(tma_dtype t, uint64_t *v) {
    static const uint64_t f32[] = {0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00400000,
                                   0x80400003, 0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F000000, 0x7F800000,
                                   0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FC12345, 0xFFD54321, 0x7F800001, 0x7FA00000,
                                   0xFF800123, 0x3F800000, 0xBF800000, 0x3F800001, 0x33800000, 0x33800001, 0xB3800000,
                                   0x3FFFFFFF, 0x4B000001, 0xCB000000, 0x00000003, 0x80000002, 0x0000FFFF};
    static const uint64_t f16[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x83FF, 0x0200, 0x8203, 0x0400, 0x8400,
                                   0x7BFF, 0xFBFF, 0x7800, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7E55, 0xFF21, 0x7C01,
                                   0x7D00, 0xFC33, 0x3C00, 0xBC00, 0x3C01, 0x1000, 0x1001, 0x9000, 0x3FFF, 0x6401,
                                   0xE400, 0x0003, 0x8002, 0x00FF};
    static const uint64_t bf16[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x807F, 0x0040, 0x8043, 0x0080, 0x8080,
                                    0x7F7F, 0xFF7F, 0x7F00, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7FC5, 0xFFD3, 0x7F81,
                                    0x7FA0, 0xFF83, 0x3F80, 0xBF80, 0x3F81, 0x3B80, 0x3B81, 0xBB80, 0x3FFF, 0x4301,
                                    0xC300, 0x0003, 0x8002, 0x000F};
    static const uint64_t f64[] = {0, 0x8000000000000000ull, 1, 0x8000000000000001ull, 0x000FFFFFFFFFFFFFull,
                                   0x800FFFFFFFFFFFFFull, 0x0010000000000000ull, 0x8010000000000000ull,
                                   0x7FEFFFFFFFFFFFFFull, 0xFFEFFFFFFFFFFFFFull, 0x7FE0000000000000ull,
                                   0x7FF0000000000000ull, 0xFFF0000000000000ull, 0x7FF8000000000000ull,
                                   0xFFF8000000000000ull, 0x7FF8000012345678ull, 0xFFFC000000054321ull,
                                   0x7FF0000000000001ull, 0x7FF4000000000000ull, 0x3FF0000000000000ull,
                                   0xBFF0000000000000ull, 0x3FF0000000000001ull, 0x3CA0000000000000ull,
                                   0x3CA0000000000001ull, 0x0000000000000003ull, 0x8000000000000002ull};
    static const uint64_t i32[] = {0, 1, 2, 3, 10, 0x7FFFFFFF, 0x7FFFFFFE, 0x80000000, 0x80000001, 0xFFFFFFFF,
                                   0xFFFFFFFE, 0x0000FFFF, 0x00010000, 0x55555555, 0xAAAAAAAA};
    static const uint64_t i64[] = {0, 1, 2, 3, 10, 0x7FFFFFFFFFFFFFFFull, 0x8000000000000000ull, 0xFFFFFFFFFFFFFFFFull,
                                   0xFFFFFFFFull, 0x100000000ull, 0x5555555555555555ull, 0xAAAAAAAAAAAAAAAAull};
    const uint64_t *src;
    size_t bytes;
    switch (t) {
    case TMA_DTYPE_F32: case TMA_DTYPE_F32_FTZ: case TMA_DTYPE_TF32: case TMA_DTYPE_TF32_FTZ:
        src = f32, bytes = sizeof f32; break;
    case TMA_DTYPE_F16: src = f16, bytes = sizeof f16; break;
    case TMA_DTYPE_BF16: src = bf16, bytes = sizeof bf16; break;
    case TMA_DTYPE_F64: src = f64, bytes = sizeof f64; break;
    case TMA_DTYPE_U64: case TMA_DTYPE_I64: src = i64, bytes = sizeof i64; break;
    default: src = i32, bytes = sizeof i32; break;
    }
    memcpy(v, src, bytes);
    return (int)(bytes / 8);
}

static inline int sv_max_exponent(tma_dtype t) { return t == TMA_DTYPE_F16 ? 15 : t == TMA_DTYPE_F64 ? 1023 : 127; }

/* A value of type t with unbiased exponent e (wrapped into the format's range), random sign and fraction. */
static inline uint64_t sv_with_exponent(tma_dtype t, int e, sv_rng rng) {
    uint64_t m = rng(), sign = rng() & 1u;
    switch (t) {
    case TMA_DTYPE_F16: return sign << 15 | (uint64_t)((e + 15) & 0x1F) << 10 | (m & 0x3FF);
    case TMA_DTYPE_BF16: return sign << 15 | (uint64_t)((e + 127) & 0xFF) << 7 | (m & 0x7F);
    case TMA_DTYPE_F64: return sign << 63 | (uint64_t)((e + 1023) & 0x7FF) << 52 | (m & 0xFFFFFFFFFFFFFull);
    default: return sign << 31 | (uint64_t)((e + 127) & 0xFF) << 23 | (m & 0x7FFFFF);
    }
}

/* Pairs (g[i], s[i]), n of them, of element size esize: first every pair of the special values (as many as fit),
 * then a mix of a special against random bits, close magnitudes (rounding, carries, cancellation) or, for
 * integers, small values (inc/dec wrap points), and random bits. */
static inline void sv_fill_pairs(tma_dtype t, uint8_t *g, uint8_t *s, size_t n, sv_rng rng) {
    const size_t esize = tma_rule_dtype_bytes(t);
    uint64_t sp[64];
    const int ns = sv_specials(t, sp);
    const int fl = tma_rule_dtype_is_float(t);
    size_t i = 0;
    for (int a = 0; a < ns && i < n; a++)
        for (int b = 0; b < ns && i < n; b++, i++) {
            memcpy(g + i * esize, &sp[a], esize);
            memcpy(s + i * esize, &sp[b], esize);
        }
    for (; i < n; i++) {
        const int kind = (int)(rng() % 4u);
        uint64_t a = rng(), b = rng();
        if (kind == 1 && fl) {
            const int top = sv_max_exponent(t);
            const int e = (int)(rng() % (uint64_t)(2 * top)) - top + 1, d = (int)(rng() % 24u) - 12;
            a = sv_with_exponent(t, e, rng), b = sv_with_exponent(t, e + d, rng);
        } else if (kind == 1) {
            a = rng() % 12u, b = rng() % 12u;
        } else if (kind == 2) {
            a = sp[rng() % (uint64_t)ns];
        }
        memcpy(g + i * esize, &a, esize);
        memcpy(s + i * esize, &b, esize);
    }
}

/* An array of n elements where the elements of two such arrays, met at random positions, often make special
 * pairs: 40% special values, 30% values near one magnitude (drawn once per call), 30% random bits. */
static inline void sv_fill_mixed(tma_dtype t, uint8_t *p, size_t n, int magnitude, sv_rng rng) {
    const size_t esize = tma_rule_dtype_bytes(t);
    uint64_t sp[64];
    const int ns = sv_specials(t, sp);
    const int fl = tma_rule_dtype_is_float(t);
    for (size_t i = 0; i < n; i++) {
        const uint64_t r = rng() % 10u;
        uint64_t v = rng();
        if (r < 4u)
            v = sp[rng() % (uint64_t)ns];
        else if (r < 7u)
            v = fl ? sv_with_exponent(t, magnitude + (int)(rng() % 8u) - 4, rng) : rng() % 12u;
        memcpy(p + i * esize, &v, esize);
    }
}

#endif /* TESTS_SPECIAL_VALUES_H */
