/* The device-side map update, timed (map_update_bench.cu): for tma-grouped-gemm. */
#ifndef SAMPLES_GROUPED_GEMM_MAP_UPDATE_BENCH_H
#define SAMPLES_GROUPED_GEMM_MAP_UPDATE_BENCH_H

#include <cuda_runtime.h>

#include <tma/tma.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One warp, `rounds` times: map tmpl (descriptor desc, 2-D) copied into a builder, its address set to base plus a
 *  multiple of 16 and its rows changed, released to global memory and acquired; then the rules check of the result
 *  `rounds` times. Synchronous. *update_ns and *check_ns: nanoseconds per round (%globaltimer); *refused: how many
 *  checks refused (0 expected). @return the first CUDA error */
cudaError_t map_update_bench(const tma_tensor *tmpl, const tma_tiled_desc *desc, const void *base, int rounds,
                             double *update_ns, double *check_ns, int *refused);

#ifdef __cplusplus
}
#endif

#endif /* SAMPLES_GROUPED_GEMM_MAP_UPDATE_BENCH_H */
