/* Host helpers the samples share: an allocation that exits on failure (samples are programs; libtma itself never
 * exits), bf16 to and from the host's types, and small test values. Header-only. */
#ifndef SAMPLES_COMMON_HOST_H
#define SAMPLES_COMMON_HOST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** malloc(bytes), at least one byte; prints the size and exits when the host is out of memory. */
static inline void *host_alloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

/** A bf16 bit pattern as a double (every bf16 is exact in a double). */
static inline double bf16_to_double(uint16_t h) {
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/** fp32 to bf16, rounded to nearest even (finite values; the samples' data). */
static inline uint16_t bf16_from_float(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

/** A small value for element i of a test tensor: one of -1, -7/8, ..., 7/8, exact in bf16, so that sums of a few
 *  thousand products are exact in fp32 and a GPU result can be compared with a CPU one up to the output's rounding. */
static inline float sample_value(uint64_t i, uint32_t seed) {
    const uint32_t h = (uint32_t)((i + 1u) * 0x9E3779B97F4A7C15ull >> 32) ^ seed * 0x85EBCA6Bu;
    return (float)((int)((h * 0xC2B2AE35u) >> 28) - 8) / 8.0f;
}

#endif /* SAMPLES_COMMON_HOST_H */
