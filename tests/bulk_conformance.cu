/* Conformance kernels for 1-D bulk copies and multicast loads (see bulk_conformance.h). 128 threads fill and drain
 * the arena; thread 0 issues the copy. */
#include "bulk_conformance.h"

#include "tma/device.cuh"

#include "conformance_arena.cuh"
#include "reduce_dispatch.cuh"

__global__ void bconf_load_kernel(const uint8_t *global, const bulk_job *jobs, const uint8_t *poison,
                                  uint32_t arena_bytes, uint8_t *out) {
    extern __shared__ uint8_t dyn[];
    __shared__ uint64_t bar;
    uint8_t *arena = conf_arena(dyn);
    const bulk_job j = jobs[blockIdx.x];
    conf_fill_arena_and_barrier(arena, poison, arena_bytes, &bar);
    if (threadIdx.x == 0) {
        if (blockIdx.x % 2 == 1)
            tma_bulk_prefetch_l2(global + j.global_offset, j.bytes);
        tma_mbar_arrive_expect_tx(&bar, j.bytes);
        tma_bulk_load(arena + j.smem_offset, global + j.global_offset, j.bytes, &bar);
    }
    tma_mbar_wait(&bar, 0);
    for (uint32_t i = threadIdx.x; i < arena_bytes; i += blockDim.x)
        out[(size_t)blockIdx.x * arena_bytes + i] = arena[i];
}

__global__ void bconf_store_kernel(uint8_t *global, const bulk_job *jobs, const uint8_t *images, uint32_t arena_bytes,
                                   tma_dtype dtype, int reduce) {
    extern __shared__ uint8_t dyn[];
    uint8_t *arena = conf_arena(dyn);
    const bulk_job j = jobs[blockIdx.x];
    conf_fill_arena(arena, images + (size_t)blockIdx.x * arena_bytes, arena_bytes);
    __syncthreads();
    if (threadIdx.x == 0) {
        if (reduce < 0)
            tma_bulk_store(global + j.global_offset, arena + j.smem_offset, j.bytes);
        else
            if (!rd_bulk_reduce(dtype, reduce, global + j.global_offset, arena + j.smem_offset, j.bytes))
                __trap(); /* the host asked for a pair that does not exist */
        tma_store_commit();
        tma_store_wait<0>();
    }
    __syncthreads(); /* the arena outlives the copy's reads */
}

struct mc_args {
    int32_t masks[8];
    int32_t coords[8][5];
};

template <int Rank>
static __device__ void multicast_box(uint8_t *dst, const tma_tensor *t, uint64_t *bar, const int32_t (&c)[5],
                                     uint16_t mask) {
    tma_load_multicast<Rank>(dst, t, bar, c, mask);
}

__global__ void bconf_multicast_kernel(const __grid_constant__ tma_tensor t, const __grid_constant__ mc_args a, int tiled,
                                       const uint8_t *global, uint32_t bytes_each, uint32_t slot_bytes,
                                       const uint8_t *poison, uint32_t arena_bytes, uint8_t *out) {
    extern __shared__ uint8_t dyn[];
    __shared__ uint64_t bar;
    uint8_t *arena = conf_arena(dyn);
    const uint32_t rank = tma_cluster_ctarank(), blocks = tma_cluster_blocks();
    conf_fill_arena_and_barrier(arena, poison, arena_bytes, &bar);
    tma_cluster_arrive(); /* every block's barrier is initialised before any copy can reach it */
    tma_cluster_wait();
    if (threadIdx.x == 0) {
        uint16_t masks[8];
        for (uint32_t r = 0; r < blocks; r++)
            masks[r] = a.masks[r] >= 0 ? (uint16_t)a.masks[r] : (uint16_t)0u; /* a block that issues nothing */
        const uint32_t each = tiled ? t.box.tx_bytes : bytes_each;
        tma_mbar_arrive_expect_tx(&bar, tma_multicast_rx_bytes(masks, blocks, rank, each));
        if (a.masks[rank] >= 0) {
            uint8_t *dst = arena + rank * slot_bytes;
            if (!tiled) {
                tma_bulk_load_multicast(dst, global + (size_t)rank * bytes_each, bytes_each, &bar, masks[rank]);
            } else {
                const int32_t c[5] = {a.coords[rank][0], a.coords[rank][1], a.coords[rank][2], a.coords[rank][3],
                                      a.coords[rank][4]};
                switch (t.box.rank) {
                case 1: multicast_box<1>(dst, &t, &bar, c, masks[rank]); break;
                case 2: multicast_box<2>(dst, &t, &bar, c, masks[rank]); break;
                case 3: multicast_box<3>(dst, &t, &bar, c, masks[rank]); break;
                case 4: multicast_box<4>(dst, &t, &bar, c, masks[rank]); break;
                default: multicast_box<5>(dst, &t, &bar, c, masks[rank]); break;
                }
            }
        }
    }
    tma_mbar_wait(&bar, 0);
    for (uint32_t i = threadIdx.x; i < arena_bytes; i += blockDim.x)
        out[(size_t)rank * arena_bytes + i] = arena[i];
    tma_cluster_arrive(); /* no block leaves while a peer's copy may still target it */
    tma_cluster_wait();
}

__global__ void bconf_cluster_kernel(const bulk_job *jobs, const uint8_t *images, uint32_t arena_bytes, tma_dtype dtype,
                                     int reduce, uint8_t *out) {
    extern __shared__ uint8_t dyn[];
    __shared__ uint64_t bar;
    uint8_t *arena = conf_arena(dyn);
    const uint32_t rank = tma_cluster_ctarank(), blocks = tma_cluster_blocks();
    const uint32_t first = blockIdx.x - rank, to = (rank + 1u) % blocks, from = (rank + blocks - 1u) % blocks;
    conf_fill_arena_and_barrier(arena, images + (size_t)blockIdx.x * arena_bytes, arena_bytes, &bar);
    tma_cluster_arrive(); /* every barrier initialised, every arena filled, before any copy reaches it */
    tma_cluster_wait();
    if (threadIdx.x == 0) {
        const bulk_job j = jobs[blockIdx.x];
        tma_mbar_arrive_expect_tx(&bar, jobs[first + from].bytes);
        uint8_t *dst = arena + j.global_offset; /* the receiver's offset, named by this block's address */
        const uint8_t *src = arena + j.smem_offset;
        if (reduce < 0)
            tma_bulk_copy_cluster(dst, src, j.bytes, &bar, to);
        else if (!rd_cluster_reduce(dtype, reduce, dst, src, j.bytes, &bar, to))
            __trap(); /* the host asked for a pair that does not exist */
    }
    tma_mbar_wait(&bar, 0);
    for (uint32_t i = threadIdx.x; i < arena_bytes; i += blockDim.x)
        out[(size_t)blockIdx.x * arena_bytes + i] = arena[i];
    tma_cluster_arrive(); /* the sources stay until every receiver has its bytes */
    tma_cluster_wait();
}

__global__ void bconf_checked_kernel(int which, uint8_t *global, const __grid_constant__ tma_tensor t) {
    __shared__ alignas(128) uint8_t buf[1024];
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        tma_mbar_init(&bar, 1);
        tma_fence_mbar_init();
    }
    __syncthreads();
    if (which >= 4) {
        tma_cluster_arrive();
        tma_cluster_wait();
    }
    if (threadIdx.x == 0) {
        const int32_t c[5] = {0, 0, 0, 0, 0};
        switch (which) {
        case 0: tma_bulk_load(buf, global, 24, &bar); break;
        case 1: tma_bulk_store(global + 8, buf, 64); break;
        case 2: tma_bulk_reduce<TMA_DTYPE_F32, TMA_REDUCE_ADD>(global, buf + 8, 64); break;
        case 3: tma_reduce_store<1, TMA_REDUCE_MIN>(&t, buf, c); break;
        case 4: tma_bulk_load_multicast(buf, global, 64, &bar, 0x4); break;
        default: tma_bulk_copy_cluster(buf, buf + 512, 64, &bar, 2); break;
        }
        tma_store_commit();
        tma_store_wait<0>();
    }
    __syncthreads();
}

static cudaError_t finish(void) {
    cudaError_t e = cudaGetLastError();
    return e != cudaSuccess ? e : cudaDeviceSynchronize();
}

static cudaError_t allow_smem(const void *kernel, size_t bytes) {
    return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
}

extern "C" cudaError_t bconf_load(const uint8_t *global, const bulk_job *jobs, int n, const uint8_t *poison,
                                  uint32_t arena_bytes, uint8_t *out) {
    const size_t smem = arena_bytes + 1024;
    cudaError_t e = allow_smem((const void *)bconf_load_kernel, smem);
    if (e != cudaSuccess)
        return e;
    bconf_load_kernel<<<n, 128, smem>>>(global, jobs, poison, arena_bytes, out);
    return finish();
}

extern "C" cudaError_t bconf_store(uint8_t *global, const bulk_job *jobs, int n, const uint8_t *images,
                                   uint32_t arena_bytes, tma_dtype dtype, int reduce) {
    const size_t smem = arena_bytes + 1024;
    cudaError_t e = allow_smem((const void *)bconf_store_kernel, smem);
    if (e != cudaSuccess)
        return e;
    bconf_store_kernel<<<n, 128, smem>>>(global, jobs, images, arena_bytes, dtype, reduce);
    return finish();
}

static cudaError_t launch_clusters(const void *kernel, int cluster, int clusters, size_t smem, void **args) {
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    cfg.gridDim = dim3((unsigned)(cluster * clusters));
    cfg.blockDim = dim3(128);
    cfg.dynamicSmemBytes = smem;
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = (unsigned)cluster;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    cudaError_t e = cudaLaunchKernelExC(&cfg, kernel, args);
    return e != cudaSuccess ? e : finish();
}

static cudaError_t launch_cluster(const void *kernel, int cluster, size_t smem, void **args) {
    return launch_clusters(kernel, cluster, 1, smem, args);
}

extern "C" cudaError_t bconf_cluster(int cluster, int clusters, const bulk_job *jobs, const uint8_t *images,
                                     uint32_t arena_bytes, tma_dtype dtype, int reduce, uint8_t *out) {
    if (cluster < 2 || cluster > 8 || clusters < 1)
        return cudaErrorInvalidValue;
    const size_t smem = arena_bytes + 1024;
    cudaError_t e = allow_smem((const void *)bconf_cluster_kernel, smem);
    if (e != cudaSuccess)
        return e;
    void *args[] = {&jobs, &images, &arena_bytes, &dtype, &reduce, &out};
    return launch_clusters((const void *)bconf_cluster_kernel, cluster, clusters, smem, args);
}

extern "C" cudaError_t bconf_multicast(int cluster, const int32_t *masks, int tiled, const tma_tensor *t,
                                       const int32_t (*coords)[5], const uint8_t *global, uint32_t bytes_each,
                                       uint32_t slot_bytes, const uint8_t *poison, uint32_t arena_bytes, uint8_t *out) {
    if (cluster < 1 || cluster > 8)
        return cudaErrorInvalidValue;
    mc_args a = {};
    tma_tensor none = {};
    for (int r = 0; r < 8; r++) {
        a.masks[r] = r < cluster ? masks[r] : -1;
        for (int i = 0; i < 5; i++)
            a.coords[r][i] = (r < cluster && coords) ? coords[r][i] : 0;
    }
    const tma_tensor *map = t ? t : &none;
    const size_t smem = arena_bytes + 1024;
    cudaError_t e = allow_smem((const void *)bconf_multicast_kernel, smem);
    if (e != cudaSuccess)
        return e;
    void *args[] = {(void *)map, &a, &tiled, &global, &bytes_each, &slot_bytes, &poison, &arena_bytes, &out};
    return launch_cluster((const void *)bconf_multicast_kernel, cluster, smem, args);
}

extern "C" cudaError_t bconf_checked(int which, uint8_t *global, const tma_tensor *t) {
    tma_tensor none = {};
    const tma_tensor *map = t ? t : &none;
    void *args[] = {&which, &global, (void *)map};
    if (which >= 4)
        return launch_cluster((const void *)bconf_checked_kernel, 2, 0, args);
    bconf_checked_kernel<<<1, 32>>>(which, global, *map);
    return finish();
}
