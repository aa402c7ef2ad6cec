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

struct i2c_mc_args {
    int32_t coords[2][5];
    uint16_t offs[2][3];
};

/* A cluster of two blocks: block r loads at coords[r] / offs[r] into arena offset r * slot_bytes of both blocks
 * (mask 0b11), so each block's barrier receives both copies. */
__global__ void i2c_multicast_kernel(const __grid_constant__ tma_tensor t, const __grid_constant__ i2c_mc_args a,
                                     uint32_t slot_bytes, const uint8_t *poison, uint32_t arena_bytes, uint8_t *out) {
    extern __shared__ uint8_t dyn[];
    __shared__ uint64_t bar;
    uint8_t *arena = conf_arena(dyn);
    const uint32_t rank = tma_cluster_ctarank(), blocks = tma_cluster_blocks();
    conf_fill_arena_and_barrier(arena, poison, arena_bytes, &bar);
    tma_cluster_arrive(); /* both barriers initialised, both arenas filled, before either copy can reach them */
    tma_cluster_wait();
    if (threadIdx.x == 0) {
        const uint16_t masks[2] = {0x3, 0x3};
        tma_mbar_arrive_expect_tx(&bar, tma_multicast_rx_bytes(masks, blocks, rank, t.box.tx_bytes));
        const int32_t c[5] = {a.coords[rank][0], a.coords[rank][1], a.coords[rank][2], a.coords[rank][3],
                              a.coords[rank][4]};
        const uint16_t o[3] = {a.offs[rank][0], a.offs[rank][1], a.offs[rank][2]};
        uint8_t *dst = arena + rank * slot_bytes;
        switch (t.box.rank) {
        case 3: tma_load_im2col_multicast<3>(dst, &t, &bar, c, o, masks[rank]); break;
        case 4: tma_load_im2col_multicast<4>(dst, &t, &bar, c, o, masks[rank]); break;
        default: tma_load_im2col_multicast<5>(dst, &t, &bar, c, o, masks[rank]); break;
        }
    }
    tma_mbar_wait(&bar, 0);
    for (uint32_t i = threadIdx.x; i < arena_bytes; i += blockDim.x)
        out[(size_t)rank * arena_bytes + i] = arena[i];
    tma_cluster_arrive(); /* no block leaves while its peer's copy may still target it */
    tma_cluster_wait();
}

/* Never launched: makes ptxas assemble the rank-named forms of every rank. */
__global__ void i2c_instantiate_all(const __grid_constant__ tma_tensor t) {
    __shared__ alignas(1024) uint8_t smem[1024];
    __shared__ uint64_t bar;
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

extern "C" cudaError_t i2c_load_multicast(const tma_tensor *t, const int32_t (*coords)[5], const uint16_t (*offs)[3],
                                          uint32_t slot_bytes, const uint8_t *poison, uint32_t arena_bytes,
                                          uint8_t *out) {
    i2c_mc_args a;
    for (int r = 0; r < 2; r++) {
        for (int i = 0; i < 5; i++)
            a.coords[r][i] = coords[r][i];
        for (int i = 0; i < 3; i++)
            a.offs[r][i] = offs[r][i];
    }
    const size_t smem = arena_bytes + 1024;
    cudaError_t e = cudaFuncSetAttribute((const void *)i2c_multicast_kernel,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess)
        return e;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    cfg.gridDim = dim3(2);
    cfg.blockDim = dim3(128);
    cfg.dynamicSmemBytes = smem;
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 2;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    void *args[] = {(void *)t, &a, &slot_bytes, &poison, &arena_bytes, &out};
    e = cudaLaunchKernelExC(&cfg, (const void *)i2c_multicast_kernel, args);
    if (e == cudaSuccess)
        e = cudaGetLastError();
    return e != cudaSuccess ? e : cudaDeviceSynchronize();
}
