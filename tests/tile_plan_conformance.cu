/* Conformance kernel of tile plans (see tile_plan_conformance.h). 256 threads fill and drain each window; thread 0
 * issues it. The window is consumed (copied out) by every thread before the next window's load overwrites it. */
#include "tile_plan_conformance.h"

#include "tma/tile_plan.cuh"

#include "conformance_arena.cuh"

template <int Rank>
static __device__ void issue(uint8_t *win, const tma_tensor *t, const tma_tile_plan *p, uint64_t *bar,
                             const int32_t (&origin)[5], uint32_t first, uint32_t n) {
    if (n == p->count)
        tma_tile_load<Rank>(win, t, p, bar, origin); /* the whole tile, one expect-tx */
    else
        tma_tile_load_range<Rank>(win, t, p, bar, origin, first, n);
}

__global__ void conf_tile_load_kernel(const __grid_constant__ tma_tensor t, const __grid_constant__ tma_tile_plan p,
                                      const int32_t (*origins)[5], uint32_t window, uint32_t offset,
                                      const uint8_t *poison, uint8_t *out) {
    extern __shared__ uint8_t dyn[];
    __shared__ uint64_t bar;
    uint8_t *win = conf_arena(dyn) + offset;
    const int b = blockIdx.x;
    const int32_t origin[5] = {origins[b][0], origins[b][1], origins[b][2], origins[b][3], origins[b][4]};
    uint8_t *image = out + (size_t)b * p.smem_bytes;
    if (threadIdx.x == 0) {
        tma_mbar_init(&bar, 1);
        tma_fence_mbar_init();
    }
    uint32_t phase = 0;
    for (uint32_t first = 0; first < p.count; first += window, phase ^= 1u) {
        const uint32_t n = p.count - first < window ? p.count - first : window;
        const uint32_t bytes = n * p.box_stride, from = first * p.box_stride;
        for (uint32_t i = threadIdx.x; i < bytes; i += blockDim.x)
            win[i] = poison[from + i];
        tma_fence_proxy_async(); /* the poison (generic proxy) before the copies' writes (async proxy) */
        __syncthreads();         /* ... and the barrier's init, on the first pass */
        if (threadIdx.x == 0) {
            switch (p.rank) {
            case 1: issue<1>(win, &t, &p, &bar, origin, first, n); break;
            case 2: issue<2>(win, &t, &p, &bar, origin, first, n); break;
            case 3: issue<3>(win, &t, &p, &bar, origin, first, n); break;
            case 4: issue<4>(win, &t, &p, &bar, origin, first, n); break;
            default: issue<5>(win, &t, &p, &bar, origin, first, n); break;
            }
        }
        tma_mbar_wait(&bar, phase);
        for (uint32_t i = threadIdx.x; i < bytes; i += blockDim.x)
            image[from + i] = win[i];
        __syncthreads(); /* every read of this window done before the next poison fill */
    }
}

extern "C" cudaError_t conf_tile_load(const tma_tensor *t, const tma_tile_plan *p, const int32_t (*origins)[5],
                                      int blocks, uint32_t window, uint32_t offset, const uint8_t *poison,
                                      uint8_t *out) {
    if (window == 0u || offset % 128u != 0u)
        return cudaErrorInvalidValue;
    const uint32_t n = window < p->count ? window : p->count;
    const size_t smem = 1024u + offset + (size_t)n * p->box_stride; /* alignment slack + offset + the window */
    cudaError_t e = cudaFuncSetAttribute((const void *)conf_tile_load_kernel,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess)
        return e;
    conf_tile_load_kernel<<<blocks, 256, smem>>>(*t, *p, origins, n, offset, poison, out);
    e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    return cudaDeviceSynchronize();
}
