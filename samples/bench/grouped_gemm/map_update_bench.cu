/* What one map update costs on the device (map_update_bench.h): the microbenchmark behind the "maps" column of
 * tma-grouped-gemm. One warp, as the grouped GEMM's build does it: the template copied into a shared-memory
 * builder, the address and the rows replaced (tensormap.replace), the release copy to global memory
 * (tensormap.cp_fenceproxy) and the acquire fence; then, apart, the rules check of the built descriptor. */
#include "map_update_bench.h"

#include <tma/tensormap.cuh>

static __device__ __forceinline__ unsigned long long now_ns(void) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); /* a sample's timer, not a TMA instruction */
    return t;
}

__global__ void map_update_bench_kernel(const __grid_constant__ tma_tensor tmpl, const tma_tiled_desc desc,
                                        tma_tensor *dst, const uint8_t *base, int rounds, unsigned long long *ns,
                                        int *status) {
    __shared__ tma_map_builder b;
    const uint32_t lane = threadIdx.x % 32u;
    const unsigned long long t0 = now_ns();
    for (int i = 0; i < rounds; i++) {
        if (lane == 0) {
            tma_builder_from_template(&b, &tmpl, &desc);
            tma_builder_edit(&b, tma_edit(TMA_FIELD_GLOBAL_ADDRESS, 0, (uint64_t)(uintptr_t)(base + 16u * (i % 64))));
            tma_builder_edit(&b, tma_edit(TMA_FIELD_GLOBAL_DIM, 1, (uint64_t)(1 + i % 1000)));
        }
        __syncwarp();
        tma_map_publish(&dst->map, &b.map);
        if (lane == 0)
            tma_map_acquire(&dst->map);
        __syncwarp();
    }
    const unsigned long long t1 = now_ns();
    int bad = 0;
    for (int i = 0; i < rounds; i++)
        if (lane == 0)
            bad += tma_builder_check(&b, nullptr) != TMA_OK;
    __syncwarp();
    const unsigned long long t2 = now_ns();
    if (lane == 0) {
        ns[0] = t1 - t0;
        ns[1] = t2 - t1;
        *status = bad;
    }
}

extern "C" cudaError_t map_update_bench(const tma_tensor *tmpl, const tma_tiled_desc *desc, const void *base,
                                        int rounds, double *update_ns, double *check_ns, int *refused) {
    tma_tensor *dst = nullptr;
    unsigned long long *ns = nullptr;
    int *status = nullptr;
    cudaError_t e = cudaMalloc(&dst, sizeof *dst);
    if (e == cudaSuccess)
        e = cudaMalloc(&ns, 2 * sizeof *ns);
    if (e == cudaSuccess)
        e = cudaMalloc(&status, sizeof *status);
    unsigned long long h[2] = {0, 0};
    if (e == cudaSuccess) {
        map_update_bench_kernel<<<1, 32>>>(*tmpl, *desc, dst, (const uint8_t *)base, 1, ns, status); /* warm-up */
        map_update_bench_kernel<<<1, 32>>>(*tmpl, *desc, dst, (const uint8_t *)base, rounds, ns, status);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaMemcpy(h, ns, sizeof h, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess)
        e = cudaMemcpy(refused, status, sizeof *refused, cudaMemcpyDeviceToHost);
    cudaFree(dst);
    cudaFree(ns);
    cudaFree(status);
    *update_ns = (double)h[0] / rounds;
    *check_ns = (double)h[1] / rounds;
    return e;
}
