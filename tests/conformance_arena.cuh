/* What every conformance kernel does before its copy: find its shared-memory arena and fill it. */
#ifndef TESTS_CONFORMANCE_ARENA_CUH
#define TESTS_CONFORMANCE_ARENA_CUH

#include "tma/device.cuh"

/* The arena starts at the first 1024-byte aligned shared address of the dynamic allocation (launch with 1024 bytes
 * to spare): an arena offset then has the swizzle phase of the same offset into the CPU model's 1024-aligned buffer,
 * and the arena sits at the same offset in every block of a launch, as multicast needs. */
static __device__ uint8_t *conf_arena(uint8_t *dyn) {
    const uint32_t a = tma_smem_addr(dyn);
    return dyn + ((1024u - a % 1024u) % 1024u);
}

/* All threads fill the arena from src (device memory: the poison, or an image to store), ordered before the copy
 * engine's accesses (the fill is the generic proxy, the copy the async one). */
static __device__ void conf_fill_arena(uint8_t *arena, const uint8_t *src, uint32_t bytes) {
    for (uint32_t i = threadIdx.x; i < bytes; i += blockDim.x)
        arena[i] = src[i];
    tma_fence_proxy_async();
}

/* conf_fill_arena, then one thread initialises the block's barrier (one arrival); all threads leave synchronised. */
static __device__ void conf_fill_arena_and_barrier(uint8_t *arena, const uint8_t *src, uint32_t bytes, uint64_t *bar) {
    conf_fill_arena(arena, src, bytes);
    if (threadIdx.x == 0) {
        tma_mbar_init(bar, 1);
        tma_fence_mbar_init();
    }
    __syncthreads();
}

#endif /* TESTS_CONFORMANCE_ARENA_CUH */
