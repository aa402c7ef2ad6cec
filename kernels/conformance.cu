/* Conformance kernels (see conformance.h). One block per box; 128 threads fill and drain the arena,
 * thread 0 issues the copy. */
#include "conformance.h"

#include "tma/device.cuh"

/* The arena starts at the first 1024-byte aligned shared address of the dynamic allocation, so an
 * arena offset has the same swizzle phase as the CPU model's offset into its 1024-aligned buffer. */
static __device__ uint8_t *aligned_arena(uint8_t *dyn) {
    uint32_t a = tma_smem_addr(dyn);
    return dyn + ((1024u - a % 1024u) % 1024u);
}

template <int Rank>
static __device__ void load_box(uint8_t *dst, const tma_tensor *t, uint64_t *bar, const int32_t (&c)[5]) {
    tma_mbar_expect_box(bar, t);
    tma_load<Rank>(dst, t, bar, c);
}

__global__ void conf_load_kernel(const __grid_constant__ tma_tensor t, const int32_t (*coords)[5],
                                 const uint32_t *offsets, const uint8_t *poison, uint32_t arena_bytes, uint8_t *out) {
    extern __shared__ uint8_t dyn[];
    __shared__ uint64_t bar;
    uint8_t *arena = aligned_arena(dyn);
    const int b = blockIdx.x;

    for (uint32_t i = threadIdx.x; i < arena_bytes; i += blockDim.x)
        arena[i] = poison[i];
    tma_fence_proxy_async(); /* the poison (generic proxy) is ordered before the copy's writes */
    if (threadIdx.x == 0) {
        tma_mbar_init(&bar, 1);
        tma_fence_mbar_init();
    }
    __syncthreads();

    if (threadIdx.x == 0) {
        int32_t c[5] = {coords[b][0], coords[b][1], coords[b][2], coords[b][3], coords[b][4]};
        uint8_t *dst = arena + offsets[b];
        switch (t.box.rank) {
        case 1: load_box<1>(dst, &t, &bar, c); break;
        case 2: load_box<2>(dst, &t, &bar, c); break;
        case 3: load_box<3>(dst, &t, &bar, c); break;
        case 4: load_box<4>(dst, &t, &bar, c); break;
        default: load_box<5>(dst, &t, &bar, c); break;
        }
    }
    tma_mbar_wait(&bar, 0);

    for (uint32_t i = threadIdx.x; i < arena_bytes; i += blockDim.x)
        out[(size_t)b * arena_bytes + i] = arena[i];
}

template <int Rank>
static __device__ void store_box(const tma_tensor *t, const uint8_t *src, const int32_t (&c)[5], int reduce) {
    switch (reduce) {
    case TMA_REDUCE_ADD: tma_reduce_store<Rank, TMA_REDUCE_ADD>(t, src, c); break;
    case TMA_REDUCE_MIN: tma_reduce_store<Rank, TMA_REDUCE_MIN>(t, src, c); break;
    case TMA_REDUCE_MAX: tma_reduce_store<Rank, TMA_REDUCE_MAX>(t, src, c); break;
    default: tma_store<Rank>(t, src, c); break;
    }
}

__global__ void conf_store_kernel(const __grid_constant__ tma_tensor t, int32_t c0, int32_t c1, int32_t c2,
                                  int32_t c3, int32_t c4, uint32_t offset, const uint8_t *image, uint32_t arena_bytes,
                                  int reduce) {
    extern __shared__ uint8_t dyn[];
    uint8_t *arena = aligned_arena(dyn);
    for (uint32_t i = threadIdx.x; i < arena_bytes; i += blockDim.x)
        arena[i] = image[i];
    tma_fence_proxy_async(); /* ordinary shared writes -> visible to the copy engine's reads */
    __syncthreads();
    if (threadIdx.x == 0) {
        int32_t c[5] = {c0, c1, c2, c3, c4};
        switch (t.box.rank) {
        case 1: store_box<1>(&t, arena + offset, c, reduce); break;
        case 2: store_box<2>(&t, arena + offset, c, reduce); break;
        case 3: store_box<3>(&t, arena + offset, c, reduce); break;
        case 4: store_box<4>(&t, arena + offset, c, reduce); break;
        default: store_box<5>(&t, arena + offset, c, reduce); break;
        }
        tma_store_commit();
        tma_store_wait<0>();
    }
    __syncthreads(); /* the arena must outlive the copy's reads */
}

static cudaError_t launch_and_wait(void) {
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    return cudaDeviceSynchronize();
}

static cudaError_t allow_smem(const void *kernel, size_t bytes) {
    return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
}

extern "C" cudaError_t tma_conf_load(const tma_tensor *t, const int32_t (*coords)[5], const uint32_t *offsets, int n,
                                     const uint8_t *poison, uint32_t arena_bytes, uint8_t *out) {
    size_t smem = arena_bytes + 1024;
    cudaError_t e = allow_smem((const void *)conf_load_kernel, smem);
    if (e != cudaSuccess)
        return e;
    conf_load_kernel<<<n, 128, smem>>>(*t, coords, offsets, poison, arena_bytes, out);
    return launch_and_wait();
}

extern "C" cudaError_t tma_conf_store(const tma_tensor *t, const int32_t coord[5], uint32_t offset,
                                      const uint8_t *image, uint32_t arena_bytes, int reduce) {
    size_t smem = arena_bytes + 1024;
    cudaError_t e = allow_smem((const void *)conf_store_kernel, smem);
    if (e != cudaSuccess)
        return e;
    conf_store_kernel<<<1, 128, smem>>>(*t, coord[0], coord[1], coord[2], coord[3], coord[4], offset, image,
                                        arena_bytes, reduce);
    return launch_and_wait();
}
