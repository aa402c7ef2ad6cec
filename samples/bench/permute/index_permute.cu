/* The index kernel of the permute benchmark (index_permute.h): what a permute is without tiles or TMA. One thread per
 * dst element, dst walked in order (grid-stride), each thread dividing its dst index by dst's dimensions to find its
 * coordinates and from them its src offset: dst's writes coalesce, src's reads are as scattered as the permutation
 * makes them. Offsets are counted in elements, in 32-bit arithmetic where they fit (as PyTorch's copy kernels do),
 * else 64-bit. */
#include "index_permute.h"

/* ------------------------------------------------------------------------------------------------
 * The kernel
 * ---------------------------------------------------------------------------------------------- */
enum { IX_THREADS = 256 }; /* a block */

template <typename I> struct ix_geometry {
    const char *src;
    char *dst;
    I n;                 /* elements */
    int rank;
    I dims[5];           /* dst's dimensions, innermost first */
    I sst[5], dst_st[5]; /* src's and dst's strides of each dst dimension, in elements */
};

template <typename T, typename I>
__global__ void __launch_bounds__(IX_THREADS) index_permute_kernel(const ix_geometry<I> g) {
    const T *src = reinterpret_cast<const T *>(g.src);
    T *dst = reinterpret_cast<T *>(g.dst);
    const I step = (I)gridDim.x * (I)blockDim.x;
    for (I i = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; i < g.n; i += step) {
        I x = i, so = 0, doff = 0;
#pragma unroll
        for (int d = 0; d < 5; d++)
            if (d < g.rank) {
                const I k = x % g.dims[d];
                x /= g.dims[d];
                so += k * g.sst[d], doff += k * g.dst_st[d];
            }
        dst[doff] = src[so];
    }
}

/* ------------------------------------------------------------------------------------------------
 * The launcher
 * ---------------------------------------------------------------------------------------------- */
template <typename T, typename I> static cudaError_t launch_as(const index_permute_args *a, cudaStream_t stream) {
    const uint64_t e = a->elem_bytes;
    ix_geometry<I> g;
    g.src = (const char *)a->src, g.dst = (char *)a->dst, g.rank = (int)a->rank;
    uint64_t n = 1;
    for (uint32_t d = 0; d < 5; d++) {
        const int in = d < a->rank;
        g.dims[d] = in ? (I)a->dims[d] : (I)1;
        g.sst[d] = in ? (I)(a->src_strides[d] / e) : (I)0;
        g.dst_st[d] = in ? (I)(a->dst_strides[d] / e) : (I)0;
        n *= in ? a->dims[d] : 1u;
    }
    g.n = (I)n;
    int device = 0, sms = 0, per_sm = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (err == cudaSuccess)
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, index_permute_kernel<T, I>, IX_THREADS, 0);
    if (err != cudaSuccess)
        return err;
    const uint64_t resident = (uint64_t)sms * (uint64_t)(per_sm > 0 ? per_sm : 1);
    const uint64_t needed = (n + IX_THREADS - 1) / IX_THREADS;
    index_permute_kernel<T, I><<<(unsigned)(needed < resident ? needed : resident), IX_THREADS, 0, stream>>>(g);
    return cudaGetLastError();
}

template <typename T> static cudaError_t launch_typed(const index_permute_args *a, cudaStream_t stream) {
    /* 32-bit when every element offset of both tensors, the element count and the last grid-stride step fit */
    uint64_t n = 1, src_end = 1, dst_end = 1;
    for (uint32_t d = 0; d < a->rank; d++) {
        n *= a->dims[d];
        src_end += (a->dims[d] - 1) * (a->src_strides[d] / a->elem_bytes);
        dst_end += (a->dims[d] - 1) * (a->dst_strides[d] / a->elem_bytes);
    }
    const uint64_t limit = (1ull << 32) - (1ull << 26); /* room for one grid's step past n */
    if (n < limit && src_end < limit && dst_end < limit)
        return launch_as<T, uint32_t>(a, stream);
    return launch_as<T, uint64_t>(a, stream);
}

extern "C" cudaError_t index_permute(const index_permute_args *a, cudaStream_t stream) {
    const uint32_t e = a ? a->elem_bytes : 0u;
    if (!a || !a->src || !a->dst || a->rank < 1 || a->rank > 5 || (e != 1 && e != 2 && e != 4 && e != 8))
        return cudaErrorInvalidValue;
    for (uint32_t d = 0; d < a->rank; d++)
        if (a->dims[d] == 0 || a->src_strides[d] % e || a->dst_strides[d] % e)
            return cudaErrorInvalidValue;
    switch (e) {
    case 1: return launch_typed<unsigned char>(a, stream);
    case 2: return launch_typed<unsigned short>(a, stream);
    case 4: return launch_typed<unsigned int>(a, stream);
    default: return launch_typed<unsigned long long>(a, stream);
    }
}
