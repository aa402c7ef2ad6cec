/* The tests' own transpose oracle (independent of the library): a plain element-by-element transpose and a
 * bitwise comparison of every element. Header-only; shared by test_transpose.c and test_gpu_transpose.c. */
#ifndef TESTS_TRANSPOSE_REF_H
#define TESTS_TRANSPOSE_REF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* out (cols x rows, out_pitch bytes per row) = in (rows x cols, in_pitch)^T, element bits copied. */
static inline void ref_transpose(uint32_t e, const void *in, void *out, uint32_t rows, uint32_t cols, size_t in_pitch,
                                 size_t out_pitch) {
    const uint8_t *src = (const uint8_t *)in;
    uint8_t *dst = (uint8_t *)out;
    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t c = 0; c < cols; c++)
            memcpy(dst + (size_t)c * out_pitch + (size_t)r * e, src + (size_t)r * in_pitch + (size_t)c * e, e);
}

/* Elements of an out_rows x out_cols output that differ from `want` (padding ignored); the first is described in
 * `where`. */
static inline size_t ref_compare(uint32_t e, const void *got, const void *want, uint32_t out_rows, uint32_t out_cols,
                                 size_t out_pitch, char *where, size_t wherelen) {
    const uint8_t *g = (const uint8_t *)got, *w = (const uint8_t *)want;
    size_t bad = 0;
    for (uint32_t r = 0; r < out_rows; r++)
        for (uint32_t c = 0; c < out_cols; c++) {
            const size_t at = (size_t)r * out_pitch + (size_t)c * e;
            if (memcmp(g + at, w + at, e) == 0)
                continue;
            if (bad++ == 0 && where) {
                unsigned long long gv = 0, wv = 0; /* elements of up to 8 bytes (little-endian) */
                memcpy(&gv, g + at, e < sizeof gv ? e : sizeof gv);
                memcpy(&wv, w + at, e < sizeof wv ? e : sizeof wv);
                snprintf(where, wherelen, "output (%u, %u): got 0x%0*llx, want 0x%0*llx", r, c, (int)e * 2, gv,
                         (int)e * 2, wv);
            }
        }
    return bad;
}

#endif /* TESTS_TRANSPOSE_REF_H */
