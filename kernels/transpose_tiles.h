/* Private to libtma_kernels (and its tests): the geometry of a tile transpose in shared memory, shared by the
 * permute's kernel (permute.cu) and its CPU-model pipeline (permute_plan.c). Not installed.
 *
 * THE LANE MAP. A 128B-swizzled box row is one 128-byte line of eight 16-byte chunks; the copy engine
 * stores logical chunk c of line r at physical chunk c ^ (r % 8) (for a 1024-byte aligned tile). A sub-tile
 * of 8 x 8 chunks holds 8V x 8V elements, V = 16 / elem_bytes elements per chunk (fp32: 32 x 32, bf16:
 * 64 x 64), i.e. 64 blocks of V x V elements: block (k, c) = rows kV..kV+V-1, chunk c. One thread takes
 * one block: V 16-byte reads (line kV+i, chunk c), a V x V transpose in registers, V 16-byte writes into
 * the output sub-tile (line cV+j, chunk k). A 16-byte shared access is served a quarter-warp (8 lanes) at
 * a time, and the 8 lanes are conflict-free iff they hit 8 distinct physical chunks (chunk p = banks
 * 4p..4p+3). Lane index lb (0..63) takes
 *
 *     c = lb % 8,   k = (lb % 8) ^ (lb / 8)          (tr_lane_block)
 *
 * Proof, quarter-warp s = lb / 8 fixed, t = lb % 8 running over 0..7:
 *   read i:  physical chunk = c ^ ((kV + i) % 8).
 *            fp32 (V = 4): t ^ 4((t ^ s) & 1) ^ i. For fixed s this is t XOR a function of t & 1 with
 *            values in {0, 4}; it flips bit 2 only, so it keeps t & 3 and maps {t, t ^ 4} onto itself
 *            bijectively -> 8 distinct chunks.
 *            bf16 (V = 8): (8k + i) % 8 = i, so the chunk is t ^ i -> distinct.
 *   write j: physical chunk = k ^ ((cV + j) % 8) = t ^ s ^ (fp32: 4(t & 1) ^ j; bf16: j) -> distinct the
 *            same way.
 *   And (k, c) = (t ^ s, t) runs over all 64 blocks exactly once as (s, t) does.
 * The same map serves 1- and 8-byte elements:
 *   1 byte (V = 16, sub-tile 128 x 128): read i is line 16k + i, chunk c ^ (i % 8) = t ^ (i % 8); write j is line
 *            16c + j, chunk k ^ (j % 8) = t ^ s ^ (j % 8) -> distinct.
 *   8 bytes (V = 2, sub-tile 16 x 16): read i: chunk t ^ ((2(t ^ s) + i) % 8) = t ^ i ^ ((t ^ s) << 1 & 6); write
 *            j: chunk t ^ s ^ j ^ (t << 1 & 6). In both, output bit 0 is t0 (^ constants), bit 1 is t1 ^ (a function
 *            of t0), bit 2 is t2 ^ (a function of t1): triangular in the bits of t, so a bijection -> distinct.
 * tests/test_transpose.c checks this with the swizzle helper for every instruction and every 1024-aligned
 * tile placement, and shows the row-major map (k = lb / 8, c = lb % 8) is not conflict-free; tests/test_permute.c
 * does the same for 1- and 8-byte elements. */
#ifndef KERNELS_TRANSPOSE_TILES_H
#define KERNELS_TRANSPOSE_TILES_H

#include <stdint.h>

#include "tma/hd.h"
#include "tma/rules.h"

/** Input box width in elements: one 128-byte swizzle span, the widest box row of the 128B mode. */
TMA_HD uint32_t tr_box_cols(uint32_t elem_bytes) { return tma_box_dim_max(elem_bytes, TMA_SWIZZLE_128B, 0); }

/** Block (k = row group, c = chunk) of a sub-tile that lane index lb (0..63) handles; see THE LANE MAP. */
TMA_HD void tr_lane_block(uint32_t lb, uint32_t *k, uint32_t *c) {
    *c = lb % 8u;
    *k = (lb % 8u) ^ (lb / 8u);
}

/** Tile order: tiles are taken in bands of `group` tile columns (the last band may be narrower), row by row
 *  inside a band, so the blocks in flight read `group` neighbouring 128-byte segments of each input row and
 *  write a run of group * box_rows elements of each output row. group >= tiles_x is plain row-major order. */
TMA_HD void tr_tile_xy(uint32_t t, uint32_t tiles_x, uint32_t tiles_y, uint32_t group, uint32_t *tx, uint32_t *ty) {
    uint32_t band = t / (group * tiles_y), idx = t - band * group * tiles_y;
    uint32_t w = tiles_x - band * group < group ? tiles_x - band * group : group;
    *ty = idx / w;
    *tx = band * group + idx % w;
}

#endif /* KERNELS_TRANSPOSE_TILES_H */
