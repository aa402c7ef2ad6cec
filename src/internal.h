/* libtma private helpers shared by the library's translation units. Never installed. */
#ifndef TMA_INTERNAL_H
#define TMA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tma/tma.h"

/* Element stride of dimension i as the copy engine uses it: 0 means 1, and without interleave
 * dimension 0 has none. */
static inline uint32_t tma_estride_(const tma_tiled_desc *d, uint32_t i) {
    if (i == 0 && d->interleave == TMA_INTERLEAVE_NONE)
        return 1;
    return d->element_stride[i] ? d->element_stride[i] : 1;
}

/* Elements a box holds along dimension i: ceil(box_dim[i] / element stride), 1 past the rank. */
static inline uint32_t tma_box_count_(const tma_tiled_desc *d, uint32_t i) {
    if (i >= d->rank)
        return 1;
    uint32_t e = tma_estride_(d, i);
    return (d->box_dim[i] + e - 1) / e;
}

/* Byte stride of dimension i (dimension 0: the element size). */
static inline uint64_t tma_gstride_(const tma_tiled_desc *d, uint32_t i) {
    return i == 0 ? (uint64_t)tma_dtype_size(d->dtype) : d->global_stride[i - 1];
}

/* Overflow-checked a * b + c on uint64; false on overflow. */
static inline bool tma_muladd_u64_(uint64_t a, uint64_t b, uint64_t c, uint64_t *out) {
    if (a != 0 && b > UINT64_MAX / a)
        return false;
    uint64_t p = a * b;
    if (p > UINT64_MAX - c)
        return false;
    *out = p + c;
    return true;
}

static inline uint64_t tma_round_up_u64_(uint64_t x, uint64_t to) { return (x + to - 1) / to * to; }

#endif /* TMA_INTERNAL_H */
