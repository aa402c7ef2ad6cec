/* Conformance kernels (see conformance.h). One block per box; 128 threads fill and drain the arena,
 * thread 0 issues the copy. */
#include "conformance.h"

#include "tma/device.cuh"

#include "conformance_arena.cuh"
#include "reduce_dispatch.cuh"

/* Odd blocks take the other load path: descriptor and tile prefetch, then the L2-hinted load. The bytes
 * that land must be the same. */
template <int Rank>
static __device__ void load_box(uint8_t *dst, const tma_tensor *t, uint64_t *bar, const int32_t (&c)[5]) {
    tma_mbar_expect_box(bar, t);
    if (blockIdx.x % 2 == 0) {
        tma_load<Rank>(dst, t, bar, c);
    } else {
        tma_prefetch_desc(t);
        tma_prefetch<Rank>(t, c);
        tma_load_hint<Rank>(dst, t, bar, c, tma_l2_policy_evict_first());
    }
}

__global__ void conf_load_kernel(const __grid_constant__ tma_tensor t, const int32_t (*coords)[5],
                                 const uint32_t *offsets, const uint8_t *poison, uint32_t arena_bytes, uint8_t *out) {
    extern __shared__ uint8_t dyn[];
    __shared__ uint64_t bar;
    uint8_t *arena = conf_arena(dyn);
    const int b = blockIdx.x;

    conf_fill_arena_and_barrier(arena, poison, arena_bytes, &bar);

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
    if (reduce >= 0)
        rd_reduce_store<Rank>(t, src, c, reduce);
    else if (reduce == CONF_STORE_HINT)
        tma_store_hint<Rank>(t, src, c, tma_l2_policy_evict_first());
    else
        tma_store<Rank>(t, src, c);
}

__global__ void conf_store_kernel(const __grid_constant__ tma_tensor t, int32_t c0, int32_t c1, int32_t c2,
                                  int32_t c3, int32_t c4, uint32_t offset, const uint8_t *image, uint32_t arena_bytes,
                                  int reduce) {
    extern __shared__ uint8_t dyn[];
    uint8_t *arena = conf_arena(dyn);
    conf_fill_arena(arena, image, arena_bytes);
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

/* Never launched: makes ptxas assemble every remaining device-API form for every rank (multicast needs a
 * cluster launch, which the tests do not do yet; wait_read is exercised here only). */
template <int Rank>
static __device__ void instantiate_rank(const tma_tensor *t, uint8_t *smem, uint64_t *bar) {
    int32_t c[5] = {0, 0, 0, 0, 0};
    tma_load_multicast<Rank>(smem, t, bar, c, (uint16_t)0x3);
    tma_store<Rank>(t, smem, c);
    tma_store_hint<Rank>(t, smem, c, tma_l2_policy_evict_last());
    tma_store_commit();
    tma_store_wait_read<0>();
    tma_store_wait<1>();
}

__global__ void conf_instantiate_all(const __grid_constant__ tma_tensor t) {
    __shared__ alignas(1024) uint8_t smem[1024];
    __shared__ uint64_t bar;
    instantiate_rank<1>(&t, smem, &bar);
    instantiate_rank<2>(&t, smem, &bar);
    instantiate_rank<3>(&t, smem, &bar);
    instantiate_rank<4>(&t, smem, &bar);
    instantiate_rank<5>(&t, smem, &bar);
    tma_load_1d(smem, &t, &bar, 0);
    tma_load_3d(smem, &t, &bar, 0, 0, 0);
    tma_store_1d(&t, smem, 0);
    tma_store_3d(&t, smem, 0, 0, 0);
    tma_mbar_arrive(&bar);
    *tma_box_elem<float>(&t, smem, 1, 1) = 0.0f;
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

extern "C" cudaError_t conf_load(const tma_tensor *t, const int32_t (*coords)[5], const uint32_t *offsets, int n,
                                     const uint8_t *poison, uint32_t arena_bytes, uint8_t *out) {
    size_t smem = arena_bytes + 1024;
    cudaError_t e = allow_smem((const void *)conf_load_kernel, smem);
    if (e != cudaSuccess)
        return e;
    conf_load_kernel<<<n, 128, smem>>>(*t, coords, offsets, poison, arena_bytes, out);
    return launch_and_wait();
}

extern "C" cudaError_t conf_store(const tma_tensor *t, const int32_t coord[5], uint32_t offset,
                                      const uint8_t *image, uint32_t arena_bytes, int reduce) {
    size_t smem = arena_bytes + 1024;
    cudaError_t e = allow_smem((const void *)conf_store_kernel, smem);
    if (e != cudaSuccess)
        return e;
    conf_store_kernel<<<1, 128, smem>>>(*t, coord[0], coord[1], coord[2], coord[3], coord[4], offset, image,
                                        arena_bytes, reduce);
    return launch_and_wait();
}
