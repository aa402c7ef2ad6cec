/* Random bf16 data on the GPU (fill.h): a splitmix64 hash of the index and the seed, 24 bits of it scaled to
 * [-1, 1), rounded to bf16. */
#include "fill.h"

#include <cuda_bf16.h>

__global__ void fill_random_bf16_kernel(__nv_bfloat16 *p, size_t n, uint64_t seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
        x ^= x >> 31;
        x *= 0xBF58476D1CE4E5B9ull;
        x ^= x >> 29;
        x *= 0x94D049BB133111EBull;
        x ^= x >> 32;
        p[i] = __float2bfloat16_rn((float)(x >> 40) * (2.0f / 16777216.0f) - 1.0f);
    }
}

extern "C" cudaError_t fill_random_bf16(void *p, size_t n, uint64_t seed, cudaStream_t stream) {
    if (n == 0)
        return cudaSuccess;
    size_t blocks = (n + 255) / 256;
    fill_random_bf16_kernel<<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>((__nv_bfloat16 *)p, n,
                                                                                            seed);
    return cudaGetLastError();
}
