/* im2col conformance kernels (see im2col_conformance.h). One block per load; 128 threads fill and drain the arena,
 * thread 0 issues the copy. */
#include "im2col_conformance.h"

#include "tma/device.cuh"

#include "conformance_arena.cuh"

template <int Rank>
static __device__ void i2c_issue(uint8_t *dst, const tma_tensor *t, uint64_t *bar, const int32_t (&c)[5],
                                 const uint16_t (&o)[3], int tiled) {
    tma_mbar_expect_box(bar, t); /* the box facts of the im2col descriptor */
    if (tiled)
        tma_load<Rank>(dst, t, bar, c); /* the wrong mode: checked mode refuses it */
    else if (blockIdx.x % 2 == 0)
        tma_load_im2col<Rank>(dst, t, bar, c, o);
    else
        tma_load_im2col_hint<Rank>(dst, t, bar, c, o, tma_l2_policy_evict_first());
}

__global__ void i2c_load_kernel(const __grid_constant__ tma_tensor t, const int32_t (*coords)[5],
                                const uint16_t (*offs)[3], const uint32_t *dst, const uint8_t *poison,
                                uint32_t arena_bytes, uint8_t *out, int tiled) {
    extern __shared__ uint8_t dyn[];
    __shared__ uint64_t bar;
    uint8_t *arena = conf_arena(dyn);
    const int b = blockIdx.x;
    conf_fill_arena_and_barrier(arena, poison, arena_bytes, &bar);
    if (threadIdx.x == 0) {
        const int32_t c[5] = {coords[b][0], coords[b][1], coords[b][2], coords[b][3], coords[b][4]};
        const uint16_t o[3] = {offs[b][0], offs[b][1], offs[b][2]};
        switch (t.box.rank) {
        case 3: i2c_issue<3>(arena + dst[b], &t, &bar, c, o, tiled); break;
        case 4: i2c_issue<4>(arena + dst[b], &t, &bar, c, o, tiled); break;
        default: i2c_issue<5>(arena + dst[b], &t, &bar, c, o, tiled); break;
        }
    }
    tma_mbar_wait(&bar, 0);
    for (uint32_t i = threadIdx.x; i < arena_bytes; i += blockDim.x)
        out[(size_t)b * arena_bytes + i] = arena[i];
}

/* Never launched: makes ptxas assemble the multicast and rank-named forms of every rank. */
__global__ void i2c_instantiate_all(const __grid_constant__ tma_tensor t) {
    __shared__ alignas(1024) uint8_t smem[1024];
    __shared__ uint64_t bar;
    const int32_t c[5] = {0, 0, 0, 0, 0};
    const uint16_t o[3] = {0, 0, 0};
    tma_load_im2col_multicast<3>(smem, &t, &bar, c, o, (uint16_t)0x3);
    tma_load_im2col_multicast<4>(smem, &t, &bar, c, o, (uint16_t)0x3);
    tma_load_im2col_multicast<5>(smem, &t, &bar, c, o, (uint16_t)0x3);
    tma_load_im2col_3d(smem, &t, &bar, 0, 0, 0, 1);
    tma_load_im2col_4d(smem, &t, &bar, 0, 0, 0, 0, 1, 1);
    tma_load_im2col_5d(smem, &t, &bar, 0, 0, 0, 0, 0, 1, 1, 1);
}

extern "C" cudaError_t i2c_load(const tma_tensor *t, const int32_t (*coords)[5], const uint16_t (*offs)[3],
                                const uint32_t *dst, int n, const uint8_t *poison, uint32_t arena_bytes,
                                uint8_t *out, int tiled) {
    const size_t smem = arena_bytes + 1024;
    cudaError_t e = cudaFuncSetAttribute((const void *)i2c_load_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)smem);
    if (e != cudaSuccess)
        return e;
    i2c_load_kernel<<<n, 128, smem>>>(*t, coords, offs, dst, poison, arena_bytes, out, tiled);
    e = cudaGetLastError();
    return e != cudaSuccess ? e : cudaDeviceSynchronize();
}
