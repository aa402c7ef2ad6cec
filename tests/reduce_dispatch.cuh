/* Reduce-stores chosen at run time, for the test kernels and the probe: the device API takes the reduction (and,
 * 1-D, the type) as template arguments, one instruction each; these switch over them. Not for kernels that know
 * their reduction: call tma_reduce_store / tma_bulk_reduce directly. */
#ifndef TESTS_REDUCE_DISPATCH_CUH
#define TESTS_REDUCE_DISPATCH_CUH

#include "tma/device.cuh"

/* A tiled reduce-store of reduction `op` (a tma_reduce) through t. */
template <int Rank>
static __device__ void rd_reduce_store(const tma_tensor *t, const void *src, const int32_t (&c)[5], int op) {
    switch (op) {
    case TMA_REDUCE_ADD: tma_reduce_store<Rank, TMA_REDUCE_ADD>(t, src, c); break;
    case TMA_REDUCE_MIN: tma_reduce_store<Rank, TMA_REDUCE_MIN>(t, src, c); break;
    case TMA_REDUCE_MAX: tma_reduce_store<Rank, TMA_REDUCE_MAX>(t, src, c); break;
    case TMA_REDUCE_INC: tma_reduce_store<Rank, TMA_REDUCE_INC>(t, src, c); break;
    case TMA_REDUCE_DEC: tma_reduce_store<Rank, TMA_REDUCE_DEC>(t, src, c); break;
    case TMA_REDUCE_AND: tma_reduce_store<Rank, TMA_REDUCE_AND>(t, src, c); break;
    case TMA_REDUCE_OR: tma_reduce_store<Rank, TMA_REDUCE_OR>(t, src, c); break;
    default: tma_reduce_store<Rank, TMA_REDUCE_XOR>(t, src, c); break;
    }
}

/* A 1-D bulk reduce of (type, op); false (nothing issued) for a pair TMA_REDUCE_FORMS gives no 1-D form. */
static __device__ bool rd_bulk_reduce(tma_dtype type, int op, void *global, const void *smem, uint32_t bytes) {
#define RD_BULK_REDUCE_(T, O, BULK, TILED, CLUSTER)                                                        \
    if constexpr (sizeof(BULK) > 1)                                                                 \
        if (type == TMA_DTYPE_##T && op == TMA_REDUCE_##O) {                                        \
            tma_bulk_reduce<TMA_DTYPE_##T, TMA_REDUCE_##O>(global, smem, bytes);                    \
            return true;                                                                            \
        }
    TMA_REDUCE_FORMS(RD_BULK_REDUCE_)
#undef RD_BULK_REDUCE_
    return false;
}

/* A 1-D reduce of (type, op) into cluster rank cta's shared memory; false for a pair without that form. */
static __device__ bool rd_cluster_reduce(tma_dtype type, int op, void *dst, const void *src, uint32_t bytes,
                                         uint64_t *bar, uint32_t cta) {
#define RD_CLUSTER_REDUCE_(T, O, BULK, TILED, CLUSTER)                                              \
    if constexpr (sizeof(CLUSTER) > 1)                                                              \
        if (type == TMA_DTYPE_##T && op == TMA_REDUCE_##O) {                                        \
            tma_bulk_reduce_cluster<TMA_DTYPE_##T, TMA_REDUCE_##O>(dst, src, bytes, bar, cta);      \
            return true;                                                                            \
        }
    TMA_REDUCE_FORMS(RD_CLUSTER_REDUCE_)
#undef RD_CLUSTER_REDUCE_
    return false;
}

#endif /* TESTS_REDUCE_DISPATCH_CUH */
