/* tma_transpose_desc (tma/kernels.h): a 2-D transpose as the permute it is. The plan, the kernel, the tuning and
 * the CPU model are tma_permute's (permute_plan.c, permute.cu); nothing here checks, so that every rule is stated
 * and enforced once, by the permute. Plain C: in libtma_kernels and in the cpu tests. */
#include "tma/kernels.h"

tma_permute_desc tma_transpose_desc(uint32_t elem_bytes, const void *in, void *out, uint32_t rows, uint32_t cols,
                                    size_t in_pitch, size_t out_pitch) {
    /* in is src {cols, rows} (dimension 0 innermost); out = dst {rows, cols} is src dimensions {1, 0}. A pitch
     * of 0 stays 0: the permute's "dense". */
    const tma_permute_desc d = {.elem_bytes = elem_bytes,
                                .rank = 2,
                                .src = in,
                                .dst = out,
                                .src_dims = {cols, rows},
                                .src_strides = {in_pitch},
                                .perm = {1, 0},
                                .dst_strides = {out_pitch}};
    return d;
}
