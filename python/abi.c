/* The C half of the Python package (python/libtma): what ctypes cannot learn from the library by itself.
 *
 *   - Struct layouts. ctypes mirrors of tma_tiled_desc, tma_diag, ... must have the C layout byte for byte, and a
 *     mirror that drifts from its header reads garbage without a word. libtma/_structs.py compares every mirrored
 *     field's offset and size, and each struct's size and alignment, with this table when the package loads, and
 *     refuses to load on any difference. The plans (tma_gemm_plan, ...) are not mirrored: Python keeps them as
 *     aligned bytes of the size given here and reads the few fields it reports through the offsets given here.
 *   - The swizzle helpers of tma/swizzle.h, which are static inline in the header (no symbol in libtma): exported
 *     here so that the package's vectorized spelling of the rule is tested against the C one.
 *
 * Built into libtma_python.so with the objects of libtma and libtma_kernels (python/CMakeLists.txt). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tma/kernels.h"
#include "tma/tma.h"

/* ---------------------------------------------------------------------------------------------
 * Layouts
 * ------------------------------------------------------------------------------------------- */

typedef struct layout_row {
    const char *type;  /* the C struct */
    const char *field; /* NULL: the struct itself (offset = alignment, size = sizeof) */
    size_t offset, size;
} layout_row;

#define STRUCT_ROW(T) {#T, NULL, _Alignof(T), sizeof(T)}
#define FIELD_ROW(T, f) {#T, #f, offsetof(T, f), sizeof(((T *)0)->f)}

static const layout_row layout_rows[] = {
    STRUCT_ROW(tma_tiled_desc),
    FIELD_ROW(tma_tiled_desc, dtype),
    FIELD_ROW(tma_tiled_desc, rank),
    FIELD_ROW(tma_tiled_desc, global_address),
    FIELD_ROW(tma_tiled_desc, global_dim),
    FIELD_ROW(tma_tiled_desc, global_stride),
    FIELD_ROW(tma_tiled_desc, box_dim),
    FIELD_ROW(tma_tiled_desc, element_stride),
    FIELD_ROW(tma_tiled_desc, interleave),
    FIELD_ROW(tma_tiled_desc, swizzle),
    FIELD_ROW(tma_tiled_desc, l2_promotion),
    FIELD_ROW(tma_tiled_desc, oob_fill),
    FIELD_ROW(tma_tiled_desc, flags),

    STRUCT_ROW(tma_im2col_desc),
    FIELD_ROW(tma_im2col_desc, dtype),
    FIELD_ROW(tma_im2col_desc, rank),
    FIELD_ROW(tma_im2col_desc, global_address),
    FIELD_ROW(tma_im2col_desc, global_dim),
    FIELD_ROW(tma_im2col_desc, global_stride),
    FIELD_ROW(tma_im2col_desc, pixel_box_lower),
    FIELD_ROW(tma_im2col_desc, pixel_box_upper),
    FIELD_ROW(tma_im2col_desc, channels_per_pixel),
    FIELD_ROW(tma_im2col_desc, pixels_per_column),
    FIELD_ROW(tma_im2col_desc, element_stride),
    FIELD_ROW(tma_im2col_desc, interleave),
    FIELD_ROW(tma_im2col_desc, swizzle),
    FIELD_ROW(tma_im2col_desc, l2_promotion),
    FIELD_ROW(tma_im2col_desc, oob_fill),

    STRUCT_ROW(tma_diag),
    FIELD_ROW(tma_diag, status),
    FIELD_ROW(tma_diag, message),

    STRUCT_ROW(tma_box_info),
    FIELD_ROW(tma_box_info, rank),
    FIELD_ROW(tma_box_info, elem_bytes),
    FIELD_ROW(tma_box_info, swizzle),
    FIELD_ROW(tma_box_info, tx_bytes),
    FIELD_ROW(tma_box_info, smem_bytes),
    FIELD_ROW(tma_box_info, row_pitch),
    FIELD_ROW(tma_box_info, rows),
    FIELD_ROW(tma_box_info, box_dim),
    FIELD_ROW(tma_box_info, flags),
    FIELD_ROW(tma_box_info, dtype),
    FIELD_ROW(tma_box_info, im2col_lo),
    FIELD_ROW(tma_box_info, im2col_hi),

    STRUCT_ROW(tma_tensor),
    FIELD_ROW(tma_tensor, map),
    FIELD_ROW(tma_tensor, box),

#if TMA_PYTHON_KERNELS
    STRUCT_ROW(tma_gemm_plan),
    FIELD_ROW(tma_gemm_plan, cluster),
    FIELD_ROW(tma_gemm_plan, group_m),
    FIELD_ROW(tma_gemm_plan, grid_blocks),
    FIELD_ROW(tma_gemm_plan, epilogue),
    FIELD_ROW(tma_gemm_plan, split_parts),
    FIELD_ROW(tma_gemm_plan, block_n),
    FIELD_ROW(tma_gemm_plan, packed),

    STRUCT_ROW(tma_grouped_gemm_plan),
    FIELD_ROW(tma_grouped_gemm_plan, grid_blocks),
    FIELD_ROW(tma_grouped_gemm_plan, group_m),
    FIELD_ROW(tma_grouped_gemm_plan, thread_loads),

    STRUCT_ROW(tma_conv2d_plan),
    FIELD_ROW(tma_conv2d_plan, block_m),
    FIELD_ROW(tma_conv2d_plan, block_n),
    FIELD_ROW(tma_conv2d_plan, cluster),
    FIELD_ROW(tma_conv2d_plan, epilogue),
    FIELD_ROW(tma_conv2d_plan, schedule),
    FIELD_ROW(tma_conv2d_plan, split_parts),
    FIELD_ROW(tma_conv2d_plan, packed),

    STRUCT_ROW(tma_permute_plan),
    FIELD_ROW(tma_permute_plan, transpose),
    FIELD_ROW(tma_permute_plan, threads),
    FIELD_ROW(tma_permute_plan, rank),
    FIELD_ROW(tma_permute_plan, tiles),
    FIELD_ROW(tma_permute_plan, grid),
    FIELD_ROW(tma_permute_plan, block),
#endif
    /* kernels.h's structs of the CPU models: there with or without the kernels */
    STRUCT_ROW(tma_permute_desc),
    FIELD_ROW(tma_permute_desc, elem_bytes),
    FIELD_ROW(tma_permute_desc, rank),
    FIELD_ROW(tma_permute_desc, src),
    FIELD_ROW(tma_permute_desc, dst),
    FIELD_ROW(tma_permute_desc, src_dims),
    FIELD_ROW(tma_permute_desc, src_strides),
    FIELD_ROW(tma_permute_desc, perm),
    FIELD_ROW(tma_permute_desc, dst_strides),

    STRUCT_ROW(tma_permute_model_facts),
    FIELD_ROW(tma_permute_model_facts, load_desc),
    FIELD_ROW(tma_permute_model_facts, store_desc),
    FIELD_ROW(tma_permute_model_facts, transpose),
    FIELD_ROW(tma_permute_model_facts, threads),
    FIELD_ROW(tma_permute_model_facts, load_tx_bytes),
    FIELD_ROW(tma_permute_model_facts, load_smem_bytes),
    FIELD_ROW(tma_permute_model_facts, store_smem_bytes),
    FIELD_ROW(tma_permute_model_facts, tiles),
    FIELD_ROW(tma_permute_model_facts, stores),

    STRUCT_ROW(tma_conv2d_shape),
    FIELD_ROW(tma_conv2d_shape, n),
    FIELD_ROW(tma_conv2d_shape, h),
    FIELD_ROW(tma_conv2d_shape, w),
    FIELD_ROW(tma_conv2d_shape, c),
    FIELD_ROW(tma_conv2d_shape, k),
    FIELD_ROW(tma_conv2d_shape, r),
    FIELD_ROW(tma_conv2d_shape, s),
    FIELD_ROW(tma_conv2d_shape, stride_h),
    FIELD_ROW(tma_conv2d_shape, stride_w),
    FIELD_ROW(tma_conv2d_shape, pad_h),
    FIELD_ROW(tma_conv2d_shape, pad_w),
    FIELD_ROW(tma_conv2d_shape, dilation_h),
    FIELD_ROW(tma_conv2d_shape, dilation_w),
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/** Rows of the layout table. */
size_t tma_python_layout_count(void);
size_t tma_python_layout_count(void) { return COUNT(layout_rows); }

/** Row i of the layout table: the struct's name, the field's (NULL for the struct's own row, whose offset is its
 *  alignment and size its sizeof), the offset and the size. @return 1, or 0 past the last row */
int tma_python_layout_row(size_t i, const char **type, const char **field, size_t *offset, size_t *size);
int tma_python_layout_row(size_t i, const char **type, const char **field, size_t *offset, size_t *size) {
    if (i >= COUNT(layout_rows))
        return 0;
    const layout_row *row = &layout_rows[i];
    *type = row->type;
    *field = row->field;
    *offset = row->offset;
    *size = row->size;
    return 1;
}

/** 1 where this library has the CUDA kernels (libtma was built with nvcc), else 0 (the CPU models only). */
int tma_python_has_kernels(void);
int tma_python_has_kernels(void) { return TMA_PYTHON_KERNELS; }

/* ---------------------------------------------------------------------------------------------
 * The swizzle helpers of tma/swizzle.h, as symbols
 * ------------------------------------------------------------------------------------------- */

uint32_t tma_python_swizzle_addr(uint32_t mode, uint32_t addr);
uint32_t tma_python_swizzle_addr(uint32_t mode, uint32_t addr) { return tma_swizzle_addr((tma_swizzle)mode, addr); }

uint32_t tma_python_cute_swizzle(uint32_t b, uint32_t m, uint32_t s, uint32_t offset);
uint32_t tma_python_cute_swizzle(uint32_t b, uint32_t m, uint32_t s, uint32_t offset) {
    return tma_cute_swizzle(b, m, s, offset);
}

uint32_t tma_python_swizzle_chunk(uint32_t span_bytes, uint32_t i);
uint32_t tma_python_swizzle_chunk(uint32_t span_bytes, uint32_t i) { return tma_swizzle_chunk(span_bytes, i); }

uint32_t tma_python_swizzle_span(uint32_t mode);
uint32_t tma_python_swizzle_span(uint32_t mode) { return tma_swizzle_span((tma_swizzle)mode); }

uint32_t tma_python_swizzle_period(uint32_t mode);
uint32_t tma_python_swizzle_period(uint32_t mode) { return tma_swizzle_period((tma_swizzle)mode); }
