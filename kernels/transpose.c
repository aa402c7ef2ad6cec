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

/* What the permute calls the transpose's arguments. Its refusals name its own fields (permute_plan.c), and its map
 * refusals name a tensor map's fields prefixed with the map (rules.h's messages): in the 2-D case the load map is in
 * ({cols, rows}, its row stride in_pitch) and the store map is out ({rows, cols}, out_pitch; checked as a store map).
 * The legend of merged dimensions says nothing for two dimensions that never merge. Hard to learn: a message that
 * names src_dims[1] and "dst (store) map: global_stride[0]" is correct and useless to someone who passed rows and
 * out_pitch. */
static const kd_term in_map_terms[] = {
    {"src (load) map: ", ""},
    {"global_address", "in"},
    {"global_stride[0]", "in_pitch"},
    {"global_dim[0]", "cols"},
    {"global_dim[1]", "rows"},
    {"so the stride is", "so that in_pitch is"},
    {"pad the rows", "pad the rows of in"},
    {" (offset the coordinates instead of the address)", ""},
};
static const kd_term out_map_terms[] = {
    {"dst (store) map: ", ""},
    {"global_address", "out"},
    {"global_stride[0]", "out_pitch"},
    {"global_dim[0]", "rows"},
    {"global_dim[1]", "cols"},
    {"so the stride is", "so that out_pitch is"},
    {"pad the rows", "pad the rows of out"},
    {" (offset the coordinates instead of the address)", ""},
    {"of dimension 0 it steps over, so dimension 1 overlaps dimension 0",
     "of an out row (rows elements) it steps over, so consecutive rows of out overlap"},
};
static const kd_term argument_terms[] = {
    {" (map dimensions are src dimensions 0:{0}, 1:{1})", ""},
    {"tma_permute", "tma_transpose"},
    {"src_dims[0]", "cols"},
    {"src_dims[1]", "rows"},
    {"src dimensions 0 and 1", "cols and rows"},
    {"src = NULL", "in = NULL"},
    {"dst = NULL", "out = NULL"},
    {"addresses of src and dst", "addresses of in and out"},
};

#define KD_COUNT(a) (sizeof(a) / sizeof((a)[0]))

tma_status kd_transpose_restate(tma_status st, tma_diag *diag) {
    if (st == TMA_OK || diag == NULL)
        return st;
    if (strncmp(diag->message, in_map_terms[0].from, strlen(in_map_terms[0].from)) == 0)
        kd_rename(diag, in_map_terms, KD_COUNT(in_map_terms));
    else if (strncmp(diag->message, out_map_terms[0].from, strlen(out_map_terms[0].from)) == 0)
        kd_rename(diag, out_map_terms, KD_COUNT(out_map_terms));
    kd_rename(diag, argument_terms, KD_COUNT(argument_terms));
    return st;
}
