/* bf16 on the host for the tests' references: from float (round to nearest even) and to double (exact). NaN inputs
 * are not expected (the tests make finite data). Header-only. */
#ifndef TESTS_BF16_H
#define TESTS_BF16_H

#include <stdint.h>
#include <string.h>

static inline uint16_t to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

static inline double bf16d(uint16_t h) {
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

#endif /* TESTS_BF16_H */
