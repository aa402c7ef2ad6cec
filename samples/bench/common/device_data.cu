/* Data for the GEMM samples on the GPU (device_data.h). Random bf16: a splitmix64 hash of the index and the seed,
 * 24 bits of it scaled to [-1, 1), rounded to bf16. */
#include "device_data.h"

#include <string.h>

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

struct compare_totals {
    unsigned long long bad, first;
    unsigned int max_abs_bits; /* a non-negative float's bits order as the float */
};

__global__ void compare_bf16_kernel(const __nv_bfloat16 *got, const __nv_bfloat16 *ref, size_t n, float rel,
                                    float abs, compare_totals *t) {
    unsigned long long bad = 0, first = n;
    float max_abs = 0.f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const float x = __bfloat162float(got[i]), y = __bfloat162float(ref[i]), d = fabsf(x - y);
        const bool finite = isfinite(x) && isfinite(y);
        if (!finite || d > rel * fabsf(y) + abs) {
            bad++;
            first = i < first ? i : first;
        }
        if (finite)
            max_abs = fmaxf(max_abs, d);
    }
    if (bad) {
        atomicAdd(&t->bad, bad);
        atomicMin(&t->first, first);
    }
    atomicMax(&t->max_abs_bits, __float_as_uint(max_abs));
}

extern "C" cudaError_t compare_bf16(const void *got, const void *ref, size_t n, float rel, float abs,
                                    compare_result *r) {
    compare_totals *t = nullptr, h = {0, n, 0};
    cudaError_t e = cudaMalloc(&t, sizeof *t);
    if (e == cudaSuccess)
        e = cudaMemcpy(t, &h, sizeof h, cudaMemcpyHostToDevice);
    if (e == cudaSuccess && n > 0) {
        compare_bf16_kernel<<<1024, 256>>>((const __nv_bfloat16 *)got, (const __nv_bfloat16 *)ref, n, rel, abs, t);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaMemcpy(&h, t, sizeof h, cudaMemcpyDeviceToHost);
    if (t)
        cudaFree(t);
    r->bad = h.bad;
    r->first = h.first;
    unsigned int bits = h.max_abs_bits;
    memcpy(&r->max_abs_diff, &bits, sizeof bits);
    return e;
}
