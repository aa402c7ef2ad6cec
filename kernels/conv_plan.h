/* Private to libtma_kernels: the convolution's argument rules and descriptors (conv_plan.c, plain C), used by the
 * kernel's host code (conv.cu), the CPU-model pipeline and the tests. Not installed. */
#ifndef KERNELS_CONV_PLAN_H
#define KERNELS_CONV_PLAN_H

#include "conv_tiles.h"

#include "tma/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The maps a convolution needs: x (im2col), w (tiled, whole and half filter tiles), y (tiled, the TMA-store
 *  epilogue's boxes; only meaningful where y_tma is set). */
typedef struct conv_descs {
    tma_im2col_desc x;
    tma_tiled_desc w, w_half, y;
    int y_tma; /* 1 where TMA can describe y (K * 2 and y's address multiples of 16) */
} conv_descs;

/** Check `shape` and the pointers (tma_conv2d_check's rules) and, when they pass, fill the descriptors and the
 *  geometry for tiles of block_m output pixels (CONV_BM, or CONV_FM_PIXELS: the filter-major tile, whose x map
 *  gathers that many) by *block_n output channels (64, 128 or 256, CONV_FM_FILTERS with the filter-major tile; 0:
 *  the width that pads K the least, or the filter-major tile's, written back). NULL pointers become stand-in
 *  addresses. */
tma_status conv_prepare(const tma_conv2d_shape *shape, const void *x, const void *w, const void *y, conv_descs *d,
                        conv_geom *g, int block_m, int *block_n, tma_diag *diag);

/** tma_conv2d_model on tiles of block_m x block_n (conv_prepare's; block_n 0: its choice): the same loads of the same
 *  maps as the kernel with that tile, so the CPU tests prove each tile's maps and coordinates. The result does not
 *  depend on the tile (every element is summed in stage order either way). */
tma_status conv_model_tiles(const tma_conv2d_shape *shape, const void *x, const void *w, void *y, int block_m,
                            int block_n, tma_diag *diag);

/** The copies' integers of a shape that conv_prepare accepted (pure arithmetic: no rule is checked again). */
conv_geom conv_geom_of(const tma_conv2d_shape *shape);

#ifdef __cplusplus
}
#endif

#endif /* KERNELS_CONV_PLAN_H */
