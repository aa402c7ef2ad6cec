/* Whether two tiled descriptors hold the same value in every field, arrays whole (past the rank too). Field by
 * field, because memcmp would also compare the struct's padding, whose bytes C leaves unspecified: a copy or a
 * compound literal may leave them different (clang's Debug + ASan build did). Header-only, for the tests. */
#ifndef TESTS_DESC_EQUAL_H
#define TESTS_DESC_EQUAL_H

#include <string.h>

#include "tma/types.h"

static inline int desc_equal(const tma_tiled_desc *a, const tma_tiled_desc *b) {
    return a->dtype == b->dtype && a->rank == b->rank && a->global_address == b->global_address &&
           memcmp(a->global_dim, b->global_dim, sizeof a->global_dim) == 0 &&
           memcmp(a->global_stride, b->global_stride, sizeof a->global_stride) == 0 &&
           memcmp(a->box_dim, b->box_dim, sizeof a->box_dim) == 0 &&
           memcmp(a->element_stride, b->element_stride, sizeof a->element_stride) == 0 &&
           a->interleave == b->interleave && a->swizzle == b->swizzle && a->l2_promotion == b->l2_promotion &&
           a->oob_fill == b->oob_fill && a->flags == b->flags;
}

#endif /* TESTS_DESC_EQUAL_H */
