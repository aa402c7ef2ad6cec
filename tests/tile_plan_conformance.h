/* Conformance kernel of tile plans: load a planned tile on the GPU, window by window, and hand back the shared-
 * memory image of each window, for tests/test_gpu_tile_plan.c to compare with the model of the whole tile.
 * C linkage; built with TMA_CHECKED, so every copy and every issued range goes through checked mode. */
#ifndef TESTS_TILE_PLAN_CONFORMANCE_H
#define TESTS_TILE_PLAN_CONFORMANCE_H

#include <stdint.h>

#include <cuda_runtime.h>

#include "tma/tensor.h"
#include "tma/tile_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One block per origin: block b loads the tile of plan p at origins[b] (device memory) through tensor t (encoded
 *  from p->box_desc) in windows of `window` sub-boxes (window >= p->count: the whole tile with one tma_tile_load,
 *  else tma_tile_load_range per window). Each window sits at `offset` (a multiple of 128) past a 1024-byte aligned
 *  shared address; before its load it is filled with poison[first * box_stride ...] (device, p->smem_bytes long),
 *  and after it its bytes go to out + b * p->smem_bytes + first * box_stride (device).
 *  @return the first CUDA error of the launch and its completion */
cudaError_t conf_tile_load(const tma_tensor *t, const tma_tile_plan *p, const int32_t (*origins)[5], int blocks,
                           uint32_t window, uint32_t offset, const uint8_t *poison, uint8_t *out);

#ifdef __cplusplus
}
#endif

#endif /* TESTS_TILE_PLAN_CONFORMANCE_H */
