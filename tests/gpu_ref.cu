/* The GPU references of tests/gpu_ref.h: each written from the definition in tma/kernels.h with plain loads and fp32
 * FMAs, nothing shared with the kernels under test. Slow by the kernels' standards (a few TFLOP/s) and simple on
 * purpose: a reference is only worth something if it is obviously right. */
#include "gpu_ref.h"

#include <string.h>

#include <cuda_bf16.h>

namespace {

__device__ __forceinline__ uint64_t ref_hash(uint64_t z) { /* splitmix64's finalizer */
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

__device__ __forceinline__ float bf16_bits_to_float(uint16_t h) { return __uint_as_float((uint32_t)h << 16); }

__global__ void fill_bf16_kernel(uint16_t *p, size_t n, uint64_t seed, int ints) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const uint64_t h = ref_hash(seed ^ (i * 0xD1B54A32D192ED03ull));
        const float v = ints ? (float)(int)(h % 7u) - 3.0f : (float)(h >> 40) * (1.0f / 8388608.0f) - 1.0f;
        const __nv_bfloat16 b = __float2bfloat16_rn(v);
        p[i] = *(const uint16_t *)&b;
    }
}

__global__ void fill_bytes_kernel(uint8_t *p, size_t n, uint64_t seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = (uint8_t)(ref_hash(seed ^ (i * 0xD1B54A32D192ED03ull)) >> 56);
}

/* C = A B^T: 64 x 64 outputs a block, 4 x 4 a thread, K in steps of 16 through shared memory (fp32). */
constexpr int GT = 64, GK = 16;
__global__ void __launch_bounds__(256) gemm_kernel(const uint16_t *a, const uint16_t *b, int m, int n, int k,
                                                   size_t lda, size_t ldb, float *c, float *cabs) {
    __shared__ float as[GK][GT + 1], bs[GK][GT + 1];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int i0 = blockIdx.y * GT, j0 = blockIdx.x * GT;
    float acc[4][4] = {}, mag[4][4] = {};
    for (int k0 = 0; k0 < k; k0 += GK) {
        for (int e = threadIdx.x; e < GT * GK; e += 256) {
            const int r = e / GK, kk = e % GK, gi = i0 + r, gj = j0 + r, gk = k0 + kk;
            as[kk][r] = gi < m && gk < k ? bf16_bits_to_float(a[(size_t)gi * lda + gk]) : 0.f;
            bs[kk][r] = gj < n && gk < k ? bf16_bits_to_float(b[(size_t)gj * ldb + gk]) : 0.f;
        }
        __syncthreads();
        for (int kk = 0; kk < GK; kk++)
            for (int u = 0; u < 4; u++)
                for (int v = 0; v < 4; v++) {
                    const float p = as[kk][ty + 16 * u] * bs[kk][tx + 16 * v];
                    acc[u][v] += p;
                    mag[u][v] += fabsf(p);
                }
        __syncthreads();
    }
    for (int u = 0; u < 4; u++)
        for (int v = 0; v < 4; v++) {
            const int i = i0 + ty + 16 * u, j = j0 + tx + 16 * v;
            if (i < m && j < n) {
                c[(size_t)i * n + j] = acc[u][v];
                if (cabs)
                    cabs[(size_t)i * n + j] = mag[u][v];
            }
        }
}

/* One thread per output (n, p, q, k), k fastest: the warp's x reads are one pixel's channels (a broadcast), its w
 * reads 32 filters' rows, each row's 32-byte sectors reused from L1 over the next channels. */
__global__ void conv_kernel(tma_conv2d_shape sh, int P, int Q, const uint16_t *x, const uint16_t *w, float *y,
                            float *yabs) {
    const size_t total = (size_t)sh.n * P * Q * sh.k;
    for (size_t o = blockIdx.x * (size_t)blockDim.x + threadIdx.x; o < total; o += (size_t)gridDim.x * blockDim.x) {
        const int k = (int)(o % sh.k);
        const size_t pix = o / sh.k;
        const int q = (int)(pix % Q), p = (int)(pix / Q % P), nn = (int)(pix / ((size_t)P * Q));
        float acc = 0.f, mag = 0.f;
        for (int r = 0; r < sh.r; r++) {
            const int h = p * sh.stride_h - sh.pad_h + r * sh.dilation_h;
            if (h < 0 || h >= sh.h)
                continue;
            for (int s = 0; s < sh.s; s++) {
                const int ww = q * sh.stride_w - sh.pad_w + s * sh.dilation_w;
                if (ww < 0 || ww >= sh.w)
                    continue;
                const uint16_t *xp = x + (((size_t)nn * sh.h + h) * sh.w + ww) * sh.c;
                const uint16_t *wp = w + (((size_t)k * sh.r + r) * sh.s + s) * sh.c;
                for (int c = 0; c < sh.c; c++) {
                    const float v = bf16_bits_to_float(xp[c]) * bf16_bits_to_float(wp[c]);
                    acc += v;
                    mag += fabsf(v);
                }
            }
        }
        y[o] = acc;
        if (yabs)
            yabs[o] = mag;
    }
}

struct counters {
    unsigned long long bad, nonfinite, first;
};
__device__ counters ref_counters;

__device__ __forceinline__ void count_bad(unsigned long long local_bad, unsigned long long local_nonfinite,
                                          unsigned long long local_first) {
    if (local_bad) {
        atomicAdd(&ref_counters.bad, local_bad);
        atomicAdd(&ref_counters.nonfinite, local_nonfinite);
        atomicMin(&ref_counters.first, local_first);
    }
}

__global__ void compare_kernel(const void *out, int out_f32, const float *ref, const float *refabs, size_t n,
                               float rel, float abs_coef) {
    unsigned long long bad = 0, nonfinite = 0, first = ~0ull;
    const bool exact = rel == 0.f && abs_coef == 0.f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const float got = out_f32 ? ((const float *)out)[i] : bf16_bits_to_float(((const uint16_t *)out)[i]);
        const float want = ref[i];
        bool ok;
        if (!isfinite(got))
            ok = false, nonfinite++;
        else if (exact)
            ok = got == (out_f32 ? want : __bfloat162float(__float2bfloat16_rn(want)));
        else
            ok = fabsf(got - want) <= rel * fabsf(want) + abs_coef * (refabs ? refabs[i] : 0.f);
        if (!ok) {
            bad++;
            first = first < i ? first : i;
        }
    }
    count_bad(bad, nonfinite, first);
}

__global__ void count_not_kernel(const uint8_t *p, size_t n, uint8_t v) {
    unsigned long long bad = 0, first = ~0ull;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        if (p[i] != v) {
            bad++;
            first = first < i ? first : i;
        }
    count_bad(bad, 0, first);
}

__global__ void count_diff_kernel(const uint8_t *a, const uint8_t *b, size_t n) {
    unsigned long long bad = 0, first = ~0ull;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        if (a[i] != b[i]) {
            bad++;
            first = first < i ? first : i;
        }
    count_bad(bad, 0, first);
}

/* A permutation's layout in bytes, strides resolved (0: dense): src's dims and strides, dst's strides. */
struct perm_layout {
    uint32_t rank, e;
    uint32_t perm[5];
    uint64_t sd[5], ss[5], ds[5];
    uint64_t elems;
};

/* One thread per element, in src index order: its bytes into want, role 1. */
__global__ void permute_elems_kernel(perm_layout L, const uint8_t *src, uint8_t *want, uint8_t *role) {
    for (uint64_t n = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; n < L.elems;
         n += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t idx[5] = {0, 0, 0, 0, 0}, r = n, so = 0, dof = 0;
        for (uint32_t i = 0; i < L.rank; i++) {
            idx[i] = r % L.sd[i];
            r /= L.sd[i];
            so += idx[i] * L.ss[i];
        }
        for (uint32_t i = 0; i < L.rank; i++)
            dof += idx[L.perm[i]] * L.ds[i];
        for (uint32_t b = 0; b < L.e; b++) {
            want[dof + b] = src[so + b];
            role[dof + b] = 1;
        }
    }
}

__global__ void permute_check_kernel(const uint8_t *got, const uint8_t *want, const uint8_t *role, size_t n,
                                     uint8_t poison) {
    unsigned long long bad = 0, first = ~0ull;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        if (got[i] != (role[i] ? want[i] : poison)) {
            bad++;
            first = first < i ? first : i;
        }
    }
    count_bad(bad, 0, first);
}

/* A grid for n items of a grid-stride loop: enough blocks to fill the device, no more than needed. */
unsigned grid_for(size_t n, unsigned threads) {
    const size_t blocks = (n + threads - 1) / threads;
    return (unsigned)(blocks < 8192 ? (blocks > 0 ? blocks : 1) : 8192);
}

cudaError_t finish() {
    cudaError_t e = cudaGetLastError();
    return e != cudaSuccess ? e : cudaDeviceSynchronize();
}

cudaError_t counters_reset() {
    const counters zero = {0ull, 0ull, ~0ull};
    return cudaMemcpyToSymbol(ref_counters, &zero, sizeof zero);
}

cudaError_t counters_read(counters *c) {
    cudaError_t e = finish();
    return e != cudaSuccess ? e : cudaMemcpyFromSymbol(c, ref_counters, sizeof *c);
}

} // namespace

extern "C" cudaError_t ref_fill_bf16(uint16_t *p, size_t n, uint64_t seed, ref_data kind) {
    fill_bf16_kernel<<<grid_for(n, 256), 256>>>(p, n, seed, kind == REF_DATA_INTS);
    return finish();
}

extern "C" cudaError_t ref_fill_bytes(void *p, size_t n, uint64_t seed) {
    fill_bytes_kernel<<<grid_for(n, 256), 256>>>((uint8_t *)p, n, seed);
    return finish();
}

extern "C" cudaError_t ref_gemm(const uint16_t *a, const uint16_t *b, int m, int n, int k, size_t lda, size_t ldb,
                                float *c, float *cabs) {
    if (m <= 0 || n <= 0)
        return cudaSuccess;
    const dim3 grid((unsigned)((n + GT - 1) / GT), (unsigned)((m + GT - 1) / GT));
    gemm_kernel<<<grid, 256>>>(a, b, m, n, k, lda, ldb, c, cabs);
    return finish();
}

extern "C" cudaError_t ref_conv2d(const tma_conv2d_shape *sh, const uint16_t *x, const uint16_t *w, float *y,
                                  float *yabs) {
    /* P and Q from the definition in tma/kernels.h (not tma_conv2d_out_size: the reference shares nothing) */
    const int p = (sh->h + 2 * sh->pad_h - sh->dilation_h * (sh->r - 1) - 1) / sh->stride_h + 1;
    const int q = (sh->w + 2 * sh->pad_w - sh->dilation_w * (sh->s - 1) - 1) / sh->stride_w + 1;
    if (p < 1 || q < 1)
        return cudaSuccess;
    const size_t total = (size_t)sh->n * p * q * sh->k;
    if (total == 0)
        return cudaSuccess;
    conv_kernel<<<grid_for(total, 256) * 4u, 256>>>(*sh, p, q, x, w, y, yabs);
    return finish();
}

extern "C" cudaError_t ref_compare(const void *out, int out_f32, const float *ref, const float *refabs, size_t n,
                                   float rel, float abs_coef, ref_diff *d) {
    memset(d, 0, sizeof *d);
    d->first = ~0ull;
    cudaError_t e = counters_reset();
    if (e != cudaSuccess || n == 0)
        return e;
    compare_kernel<<<grid_for(n, 256), 256>>>(out, out_f32, ref, refabs, n, rel, abs_coef);
    counters c;
    if ((e = counters_read(&c)) != cudaSuccess)
        return e;
    d->bad = c.bad, d->nonfinite = c.nonfinite, d->first = c.first;
    if (c.bad == 0)
        return cudaSuccess;
    uint32_t bits = 0;
    e = cudaMemcpy(&bits, (const uint8_t *)out + c.first * (out_f32 ? 4u : 2u), out_f32 ? 4u : 2u,
                   cudaMemcpyDeviceToHost);
    if (!out_f32)
        bits <<= 16;
    memcpy(&d->got, &bits, sizeof d->got);
    return e != cudaSuccess ? e : cudaMemcpy(&d->want, ref + c.first, sizeof d->want, cudaMemcpyDeviceToHost);
}

extern "C" cudaError_t ref_count_not(const void *p, size_t n, uint8_t v, unsigned long long *count) {
    *count = 0;
    cudaError_t e = counters_reset();
    if (e != cudaSuccess || n == 0)
        return e;
    count_not_kernel<<<grid_for(n, 256), 256>>>((const uint8_t *)p, n, v);
    counters c;
    e = counters_read(&c);
    *count = c.bad;
    return e;
}

extern "C" cudaError_t ref_count_diff(const void *a, const void *b, size_t n, unsigned long long *count,
                                      unsigned long long *first) {
    *count = 0, *first = ~0ull;
    cudaError_t e = counters_reset();
    if (e != cudaSuccess || n == 0)
        return e;
    count_diff_kernel<<<grid_for(n, 256), 256>>>((const uint8_t *)a, (const uint8_t *)b, n);
    counters c;
    e = counters_read(&c);
    *count = c.bad, *first = c.first;
    return e;
}

extern "C" cudaError_t ref_permute(const tma_permute_desc *d, uint8_t *want, uint8_t *role, size_t dst_bytes) {
    perm_layout L;
    memset(&L, 0, sizeof L);
    L.rank = d->rank, L.e = d->elem_bytes;
    L.elems = 1;
    for (uint32_t i = 0; i < d->rank; i++) {
        L.perm[i] = d->perm[i];
        L.sd[i] = d->src_dims[i];
        L.elems *= L.sd[i];
    }
    L.ss[0] = L.ds[0] = d->elem_bytes;
    for (uint32_t i = 1; i < d->rank; i++) {
        L.ss[i] = d->src_strides[i - 1] ? d->src_strides[i - 1] : L.ss[i - 1] * L.sd[i - 1];
        L.ds[i] = d->dst_strides[i - 1] ? d->dst_strides[i - 1] : L.ds[i - 1] * L.sd[L.perm[i - 1]];
    }
    cudaError_t e = cudaMemset(role, 0, dst_bytes);
    if (e == cudaSuccess)
        e = cudaMemset(want, 0, dst_bytes);
    if (e != cudaSuccess)
        return e;
    permute_elems_kernel<<<grid_for(L.elems, 256), 256>>>(L, (const uint8_t *)d->src, want, role);
    return finish();
}

extern "C" cudaError_t ref_permute_check(const uint8_t *got, const uint8_t *want, const uint8_t *role, size_t n,
                                         uint8_t poison, ref_diff *d) {
    memset(d, 0, sizeof *d);
    d->first = ~0ull;
    cudaError_t e = counters_reset();
    if (e != cudaSuccess || n == 0)
        return e;
    permute_check_kernel<<<grid_for(n, 256), 256>>>(got, want, role, n, poison);
    counters c;
    if ((e = counters_read(&c)) != cudaSuccess)
        return e;
    d->bad = c.bad, d->first = c.first;
    if (c.bad == 0)
        return cudaSuccess;
    uint8_t g = 0, w = 0;
    e = cudaMemcpy(&g, got + c.first, 1, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess)
        e = cudaMemcpy(&w, want + c.first, 1, cudaMemcpyDeviceToHost);
    d->got = (float)g, d->want = (float)w;
    return e;
}
