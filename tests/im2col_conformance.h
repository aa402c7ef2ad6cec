/* im2col conformance kernels: run im2col loads on the GPU and hand back the whole shared-memory arena, for the gpu
 * suite test_gpu_im2col to compare with tma_model_load_im2col. C linkage; built with TMA_CHECKED. */
#ifndef TESTS_IM2COL_CONFORMANCE_H
#define TESTS_IM2COL_CONFORMANCE_H

#include <stdint.h>

#include <cuda_runtime.h>

#include "tma/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Run n im2col loads of t (made by tma_tensor_make_im2col), one block each: block b fills its 1024-byte aligned
 *  arena (arena_bytes) with `poison` (device memory), loads at coords[b] with im2col offsets offs[b] into arena
 *  offset dst[b], waits, and copies the whole arena to out + b * arena_bytes (device memory). Odd blocks use the
 *  L2-hinted form. tiled != 0 issues a tiled-mode load instead (tma_load<Rank>: a mistake checked mode refuses).
 *  @return the first CUDA error of the launch and its completion */
cudaError_t i2c_load(const tma_tensor *t, const int32_t (*coords)[5], const uint16_t (*offs)[3], const uint32_t *dst,
                     int n, const uint8_t *poison, uint32_t arena_bytes, uint8_t *out, int tiled);

/** Two im2col loads of t multicast in a cluster of two blocks: block r loads at coords[r] / offs[r] into arena
 *  offset r * slot_bytes of both blocks (mask 0b11). Each block fills its arena (arena_bytes, at least 2 *
 *  slot_bytes) with `poison`, waits for both copies and copies the arena to out + r * arena_bytes (device memory).
 *  @return the first CUDA error of the launch and its completion */
cudaError_t i2c_load_multicast(const tma_tensor *t, const int32_t (*coords)[5], const uint16_t (*offs)[3],
                               uint32_t slot_bytes, const uint8_t *poison, uint32_t arena_bytes, uint8_t *out);

#ifdef __cplusplus
}
#endif

#endif /* TESTS_IM2COL_CONFORMANCE_H */
