/* libtma: a tensor map together with the facts a kernel must keep in step with it.
 *
 * tma_tensor_make (tma.h) fills one from a tma_tiled_desc: the encoded CUtensorMap and, derived from the
 * same descriptor, the bytes each copy delivers, what the box occupies in shared memory and the swizzle.
 * Pass it to a kernel by value as a `const __grid_constant__ tma_tensor`; the device API (device.cuh)
 * takes its address. Nobody types a byte count twice. Plain C, so host code and CUDA share it. */
#ifndef TMA_TENSOR_H
#define TMA_TENSOR_H

#include <stdint.h>

#include <cuda.h> /* CUtensorMap */

/** What one box copy of a map delivers and occupies. Read-only: derived from the descriptor. */
typedef struct tma_box_info {
    uint32_t rank;          /* the map's rank, 1..5 */
    uint32_t elem_bytes;    /* bytes per element */
    uint32_t swizzle;       /* a tma_swizzle value */
    uint32_t tx_bytes;      /* bytes each box copy delivers: what the mbarrier must expect */
    uint32_t smem_bytes;    /* bytes the box occupies in shared memory, swizzle padding included */
    uint32_t row_pitch;     /* bytes between box rows in shared memory */
    uint32_t rows;          /* box rows (dimensions 1..rank-1 flattened) */
    uint32_t box_dim[5];    /* the descriptor's box, in elements */
} tma_box_info;

/** An encoded tensor map and its box facts. 128-byte aligned (CUtensorMap is), 256 bytes in all. */
typedef struct tma_tensor {
    CUtensorMap map;
    tma_box_info box;
} tma_tensor;

#endif /* TMA_TENSOR_H */
