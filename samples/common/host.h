/* Host helpers the samples share: an allocation that exits on failure (samples are programs; libtma itself never
 * exits), and bf16 read as a double (exact). Header-only. */
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

#endif /* SAMPLES_COMMON_HOST_H */
