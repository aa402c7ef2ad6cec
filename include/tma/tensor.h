/* libtma: a tensor map together with the facts a kernel must keep in step with it.
 *
 * tma_tensor_make (tma.h) fills one from a tma_tiled_desc: the encoded map and, derived from the same
 * descriptor, the bytes each copy delivers, what the box occupies in shared memory and the swizzle.
 * Pass it to a kernel by value as a `const __grid_constant__ tma_tensor`; the device API (device.cuh)
 * takes its address. Nobody types a byte count twice.
 *
 * Plain C with no CUDA header: the map is held as tma_map, 128 opaque bytes with the alignment of CUDA 13's
 * CUtensorMap (CUDA 12 declared 64; 128 satisfies both. Measured on an H200: a copy through a map in global
 * memory needs 64, and faults with "misaligned address" at 16 or 32, prefetch or not). So sizeof and
 * alignof(tma_tensor) are 256 and 128 whatever CUDA headers a program is built with. A CUtensorMap is the
 * same 128 bytes: tma_tensor_cu_map() gives the address as one. */
#ifndef TMA_TENSOR_H
#define TMA_TENSOR_H

#include <stdint.h>

#include "tma/hd.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The encoded tensor map: the 128 bytes cuTensorMapEncodeTiled writes, 128-byte aligned. */
typedef struct tma_map {
    TMA_ALIGNAS(128) uint64_t opaque[16]; /**< the driver's encoding; read only by the copy engine */
} tma_map;

/** Set in tma_box_info.flags for a map in which two coordinates reach the same bytes (a broadcast or a sliding window,
 *  say): loads through it are fine, and the device checked mode refuses stores through it (they would race). */
#define TMA_BOX_LOAD_ONLY 1u
/** Set in tma_box_info.flags for an interleaved map (coord[0] counts 16/32-byte chunks: no alignment rule; rules.h). */
#define TMA_BOX_INTERLEAVED 2u

/** Set in tma_box_info.flags for an im2col map (tma_tensor_make_im2col): rows are pixels, box_dim = {channels,
 *  pixels}, and im2col_lo / im2col_hi hold the bounding box the checked mode tests each start against. */
#define TMA_BOX_IM2COL 4u

/** Set in tma_box_info.flags for a template map (TMA_DESC_TEMPLATE): its address and strides are placeholders, so the
 *  device checked mode refuses every copy through it. A map built from it on the device and published with
 *  tma_builder_publish or tma_map_publish_in_place gets box facts of its own, without the flag; a kernel that copies
 *  a template's box facts to the map it builds must clear it. */
#define TMA_BOX_TEMPLATE 8u

/** What one box copy of a map delivers and occupies. Read-only: derived from the descriptor. */
typedef struct tma_box_info {
    uint32_t rank;          /**< the map's rank, 1..5 */
    uint32_t elem_bytes;    /**< bytes per element */
    uint32_t swizzle;       /**< a tma_swizzle value */
    uint32_t tx_bytes;      /**< bytes each box copy delivers: what the mbarrier must expect */
    uint32_t smem_bytes;    /**< bytes the box occupies in shared memory, swizzle padding included */
    uint32_t row_pitch;     /**< bytes between box rows in shared memory */
    uint32_t rows;          /**< box rows (dimensions 1..rank-1 flattened) */
    uint32_t box_dim[5];    /**< the descriptor's box, in elements */
    uint32_t flags;         /**< TMA_BOX_* bits */
    uint32_t dtype;         /**< the map's element type (a tma_dtype): checked mode refuses reductions it lacks */
    int64_t im2col_lo[3];   /**< im2col maps: the lowest start of each spatial dimension (pixel_box_lower); 64-bit so
                                 the struct has no padding bytes (the box facts are compared with memcmp) */
    int64_t im2col_hi[3];   /**< im2col maps: the highest (global_dim + pixel_box_upper - 1) */
} tma_box_info;

/** An encoded tensor map and its box facts: 256 bytes, 128-byte aligned, with any CUDA headers. */
typedef struct tma_tensor {
    tma_map map;            /**< the encoded map (the address the copy instructions take) */
    tma_box_info box;       /**< what each box copy of this map delivers and occupies */
} tma_tensor;

struct CUtensorMap_st; /* cuda.h's CUtensorMap, for callers that have it; never dereferenced here */

/** The map of t as the driver API's type (CUtensorMap *), for code that passes it on as one. */
TMA_HD const struct CUtensorMap_st *tma_tensor_cu_map(const tma_tensor *t) {
    return (const struct CUtensorMap_st *)(const void *)&t->map;
}

#ifdef __cplusplus
}
#endif

#endif /* TMA_TENSOR_H */
