/* Private to libtma_kernels: the convolution's argument rules and descriptors (conv_plan.c, plain C), used by the
 * kernel's host code (conv.cu), the CPU-model pipeline and the tests. Not installed.
 *
 * Each rule is checked once per plan: the shape's (conv_shape_check: the sizes, the output size, the pointers, y's
 * map), the tile's arguments (conv_tile_check), and each map a tile needs, built and checked once through the rules
 * of tma/detail/rules.h (conv_x_map, conv_w_maps), which the plan then encodes without checking again. */
#ifndef KERNELS_CONV_PLAN_H
#define KERNELS_CONV_PLAN_H

#include "conv_tiles.h"

#include "tma/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The maps a tile needs: x (im2col, block_m pixels a load), w (tiled, whole and half filter tiles); the halo tile's
 *  x and y instead (tiled, conv_tiles.h: THE HALO TILE). */
typedef struct conv_descs {
    tma_im2col_desc x;
    tma_tiled_desc w, w_half;
    tma_tiled_desc halo_x, halo_y;
} conv_descs;

/** What a checked shape fixes, whatever the tile: the output size, the copies' integers, and y's map. */
typedef struct conv_shape_facts {
    int p, q;         /**< output rows and columns */
    conv_geom g;      /**< the copies' integers */
    tma_tiled_desc y; /**< y as an (N P Q) x K matrix in the TMA-store epilogue's boxes (meaningful where y_tma) */
    int y_tma;        /**< 1 where TMA can describe y: K * 2 and y's address multiples of 16, and y's map passes */
    int packed;       /**< 1: x and w are packed before each run (conv_tiles.h, PACKED INPUTS) */
    tma_conv2d_shape run; /**< the convolution the kernel runs: the shape, or its packed form */
    conv_pack xp, wp; /**< where packed: the packings of x and w */
    size_t x_bytes, w_bytes; /**< where packed: their sizes in the workspace, bytes (256-byte multiples) */
} conv_shape_facts;

/** The packing of a shape (checked sizes; f->p, f->q its output size) for x and w at these addresses (NULL: aligned):
 *  f's packed, run, xp, wp, x_bytes and w_bytes. */
void conv_pack_plan(const tma_conv2d_shape *shape, const void *x, const void *w, conv_shape_facts *f);

/** The shape's rules and the pointers' (tma_conv2d_check's, but for the tile's maps): the sizes, the output size (P
 *  and Q, computed once here), the output pixels, x's and w's alignment and y's, then y's map (checked once; where it
 *  fails, y_tma is 0: the epilogue stores from registers). NULL pointers become stand-in addresses. */
tma_status conv_shape_check(const tma_conv2d_shape *shape, const void *x, const void *w, const void *y,
                            conv_shape_facts *f, tma_diag *diag);

/** y as an (N P Q) x K matrix in the TMA-store epilogue's boxes (every tile's but the halo's; conv_shape_facts.y). */
tma_tiled_desc conv_y_desc(const tma_conv2d_shape *shape, const conv_geom *g, const void *y);

/** A tile's arguments: block_m output pixels (CONV_BM, or CONV_FM_PIXELS: the filter-major tile, or TMA_CONV2D_HALO)
 *  by *block_n output channels (64, 128 or 256; CONV_FM_FILTERS with the filter-major tile, CONV_HALO_FILTERS with
 *  the halo tile; 0: the width that pads k the least, or the fixed tile's, written back). */
tma_status conv_tile_check(int block_m, int *block_n, int k, tma_diag *diag);

/** x's im2col map for loads of `pixels` output pixels, built and checked once (the bounding box, the traversal
 *  strides, the last filter tap's offsets), with the rule's message in the convolution's terms. */
tma_status conv_x_map(const tma_conv2d_shape *shape, const void *x, uint32_t pixels, tma_im2col_desc *d,
                      tma_diag *diag);

/** The halo tile's maps of x (tiled {C, W, H, N}) and y ({K, Q, P, N}, stored through) for a checked shape (f: the
 *  convolution it runs, f->run, and its copies' integers, f->g, have a halo tile where g.halo_wp), built and checked
 *  once; the halo tile needs y stored through a map (f->y_tma). x: f->run's (NULL: a stand-in). */
tma_status conv_halo_maps(const conv_shape_facts *f, const void *x, const void *y, tma_tiled_desc *xd,
                          tma_tiled_desc *yd, tma_diag *diag);

/** w's tiled maps for tiles of `filters` filters (and the half tile a block of a cluster loads), built and checked
 *  once. */
tma_status conv_w_maps(const tma_conv2d_shape *shape, const void *w, uint32_t filters, tma_tiled_desc *whole,
                       tma_tiled_desc *half, tma_diag *diag);

/** All of the above for one tile (tma_conv2d_check's rules; the CPU model's maps): *block_n as conv_tile_check. */
tma_status conv_prepare(const tma_conv2d_shape *shape, const void *x, const void *w, const void *y, conv_descs *d,
                        conv_shape_facts *f, int block_m, int *block_n, tma_diag *diag);

/** tma_conv2d_model on tiles of block_m x block_n (conv_prepare's; block_n 0: its choice): the same loads of the same
 *  maps as the kernel with that tile, so the CPU tests prove each tile's maps and coordinates. The result does not
 *  depend on the tile (every element is summed in stage order either way). */
tma_status conv_model_tiles(const tma_conv2d_shape *shape, const void *x, const void *w, void *y, int block_m,
                            int block_n, tma_diag *diag);

/** The copies' integers of a shape conv_shape_check accepted for x and w (those of the convolution the kernel runs,
 *  conv_pack_plan), its output size computed again (for a plan whose shape was changed by hand since:
 *  conv_shape_check's facts are the ones to use otherwise). */
conv_geom conv_geom_of(const tma_conv2d_shape *shape, const void *x, const void *w);

#ifdef __cplusplus
}
#endif

#endif /* KERNELS_CONV_PLAN_H */
