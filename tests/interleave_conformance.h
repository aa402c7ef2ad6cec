/* Conformance kernel for interleaved maps (TMA_INTERLEAVE_16B / _32B): run tiled loads on the GPU and hand back
 * what they wrote, for tests/test_gpu_interleave.c to compare with the CPU model. Like conf_load (conformance.h),
 * but a load that does not complete is reported, never trapped on: each block waits a bounded time and says
 * whether its mbarrier phase completed. Built with TMA_CHECKED. */
#ifndef TESTS_INTERLEAVE_CONFORMANCE_H
#define TESTS_INTERLEAVE_CONFORMANCE_H

#include <stdint.h>

#include <cuda_runtime.h>

#include "tma/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Load `n` boxes of tensor t (rank 3..5), box b at coords[b] into a 1024-byte aligned shared arena of arena_bytes
 *  at offset offsets[b]. Each block fills its arena from `poison` (arena_bytes), arms its mbarrier with
 *  tma_mbar_expect_box (t->box.tx_bytes), issues the load, waits at most wait_us, writes done[b] = 1 if the phase
 *  completed (0 if not), and copies its arena to out + b * arena_bytes. All pointers are device memory.
 *  @return the first CUDA error of the launch and its completion */
cudaError_t conf_il_load(const tma_tensor *t, const int32_t (*coords)[5], const uint32_t *offsets, int n,
                         const uint8_t *poison, uint32_t arena_bytes, uint32_t wait_us, uint8_t *out, uint32_t *done);

#ifdef __cplusplus
}
#endif

#endif /* TESTS_INTERLEAVE_CONFORMANCE_H */
