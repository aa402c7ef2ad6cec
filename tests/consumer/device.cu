/* A CUDA consumer of the installed headers: a kernel loads one box through the device API, and the host encodes
 * the map. Without a Hopper GPU it says so and exits 0 (the test is that it builds and links). */
#include <cstdio>

#include <cuda_runtime.h>

#include <tma/device.cuh>
#include <tma/tma.h>

__global__ void first_element(const __grid_constant__ tma_tensor t, float *out) {
    __shared__ alignas(128) uint8_t tile[32 * 8 * 4];
    __shared__ uint64_t bar;
    if (threadIdx.x == 0) {
        tma_mbar_init(&bar, 1);
        tma_fence_mbar_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        tma_mbar_expect_box(&bar, &t);
        tma_load_2d(tile, &t, &bar, 0, 0);
    }
    tma_mbar_wait(&bar, 0);
    if (threadIdx.x == 0)
        *out = *tma_box_elem<float>(&t, tile, 0, 0);
}

int main() {
    int n = 0;
    cudaDeviceProp p;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0 || cudaGetDeviceProperties(&p, 0) != cudaSuccess ||
        p.major != 9) {
        std::printf("consumer_cuda: built; no Hopper GPU to run on\n");
        return 0;
    }
    float *m = nullptr, *out = nullptr, host[8 * 32], got = 0;
    for (int i = 0; i < 8 * 32; i++)
        host[i] = 1.0f + i;
    if (cudaMalloc(&m, sizeof host) != cudaSuccess || cudaMalloc(&out, 4) != cudaSuccess ||
        cudaMemcpy(m, host, sizeof host, cudaMemcpyHostToDevice) != cudaSuccess)
        return 1;
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_F32, m, 8, 32, 128, 8, 32, TMA_SWIZZLE_128B);
    tma_tensor t;
    tma_diag diag;
    if (tma_tensor_make(&t, &d, &diag) != TMA_OK) {
        std::fprintf(stderr, "consumer_cuda: %s\n", diag.message);
        return 1;
    }
    first_element<<<1, 32>>>(t, out);
    if (cudaDeviceSynchronize() != cudaSuccess || cudaMemcpy(&got, out, 4, cudaMemcpyDeviceToHost) != cudaSuccess ||
        got != 1.0f) {
        std::fprintf(stderr, "consumer_cuda: the TMA load gave %g, want 1\n", got);
        return 1;
    }
    std::printf("consumer_cuda: ok\n");
    return 0;
}
