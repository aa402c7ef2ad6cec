/* Conformance kernels: run TMA copies on the GPU and hand back what they wrote, for the gpu tests to
 * compare with the CPU model. C linkage, so the Criterion tests (C) call them directly.
 * Built with TMA_CHECKED: every copy goes through the device API's checked mode. */
#ifndef TESTS_CONFORMANCE_H
#define TESTS_CONFORMANCE_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "tma/tensor.h"
#include "tma/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Load `n` boxes of tensor t, box b at coords[b] into a shared-memory arena of arena_bytes (1024-byte
 *  aligned) at offset offsets[b]. Each block first fills its arena with the device buffer `poison`
 *  (arena_bytes long), and afterwards copies the whole arena to out + b * arena_bytes (device memory).
 *  @return the first CUDA error of the launch and its completion */
cudaError_t conf_load(const tma_tensor *t, const int32_t (*coords)[5], const uint32_t *offsets, int n,
                          const uint8_t *poison, uint32_t arena_bytes, uint8_t *out);

/** conf_store's `reduce` for a store with an L2 evict_first hint (tma_store_hint): the bytes must be tma_store's. */
#define CONF_STORE_HINT (-2)

/** Store one box: copy `image` (device memory, arena_bytes) into a 1024-byte aligned shared arena, then
 *  TMA-store (reduce == -1), TMA-store with an L2 hint (CONF_STORE_HINT) or reduce-store (a tma_reduce) the box at
 *  arena offset `offset` to `coord`.
 *  @return the first CUDA error of the launch and its completion */
cudaError_t conf_store(const tma_tensor *t, const int32_t coord[5], uint32_t offset, const uint8_t *image,
                           uint32_t arena_bytes, int reduce);

#ifdef __cplusplus
}
#endif

#endif /* TESTS_CONFORMANCE_H */
