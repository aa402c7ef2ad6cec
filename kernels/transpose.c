/* tma_transpose_desc and tma_transpose (tma/kernels.h): a 2-D transpose as the permute it is. The plan, the
 * kernel, the tuning and the CPU model are tma_permute's (permute_plan.c, permute.cu); nothing here checks, so that
 * every rule is stated and enforced once, by the permute, and a refusal is only renamed into the transpose's terms.
 * Plain C: in libtma_kernels and in the cpu tests. */
#include <string.h>

#include "kernel_diag.h"
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

/* What the permute calls the transpose's arguments: its refusals name its own fields (permute_plan.c); in the 2-D
 * case src is in ({cols, rows}, its row stride in_pitch) and dst is out ({rows, cols}, out_pitch). Hard to learn: a
 * message that names src_dims[1] and dst_strides[0] is correct and useless to someone who passed rows and out_pitch. */
static const kd_term argument_terms[] = {
    {"tma_permute", "tma_transpose"},
    {"src_dims[0]", "cols"},
    {"src_dims[1]", "rows"},
    {"src = NULL", "in = NULL"},
    {"dst = NULL", "out = NULL"},
    {"addresses of src and dst", "addresses of in and out"},
    {"src = ", "in = "},
    {"dst = ", "out = "},
    {"src_strides[0]", "in_pitch"},
    {"dst_strides[0]", "out_pitch"},
    {"dst dimension 1 steps", "out_pitch ="},
    {"bytes of dst dimension 0 inside it, so two dst elements share bytes",
     "bytes of an out row (rows elements), so consecutive rows of out overlap"},
    {"give dst strides that do not overlap (0: dense)", "give an out_pitch of at least a row (0: dense)"},
};

#define KD_COUNT(a) (sizeof(a) / sizeof((a)[0]))

tma_status kd_transpose_restate(tma_status st, tma_diag *diag) {
    if (st == TMA_OK || diag == NULL)
        return st;
    kd_rename(diag, argument_terms, KD_COUNT(argument_terms));
    return st;
}
