/* Private to libtma_kernels: how the kernels' host code reports a refused argument or a failed CUDA call
 * (a tma_status and, when the caller gave one, a tma_diag message), and the device check they share.
 * kd_fail and kd_ok (kernel_diag.c) need no CUDA library and serve the CPU-model pipelines too; kd_cuda and
 * kd_require_sm90 (kernel_cuda.c) call the CUDA runtime. */
#ifndef KERNELS_KERNEL_DIAG_H
#define KERNELS_KERNEL_DIAG_H

#include <cuda_runtime.h>

#include "tma/tma.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Fill diag (optional) with status and a printf-style message; return status. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
tma_status kd_fail(tma_diag *diag, tma_status status, const char *fmt, ...);

/** TMA_OK for cudaSuccess; otherwise TMA_ERR_CUDA with "<what> failed: <CUDA error name>: <string>". */
tma_status kd_cuda(tma_diag *diag, cudaError_t e, const char *what);

/** TMA_OK when the current device is compute capability 9.x (Hopper), with its multiprocessor count in *sms;
 *  TMA_ERR_DEVICE (no device, another architecture) or TMA_ERR_CUDA otherwise. `who` names the caller. */
tma_status kd_require_sm90(tma_diag *diag, const char *who, int *sms);

/** TMA's stride rule for a GEMM argument: rows of `count` bf16 elements (the size named `name`) must be a multiple
 *  of TMA_GLOBAL_ALIGN bytes. `rows_of` names the matrices, `pad` how to pad them. TMA_OK or TMA_ERR_ARG. */
tma_status kd_check_bf16_rows(tma_diag *diag, const char *name, int count, const char *rows_of, const char *pad);

/** Clear diag (optional) and return TMA_OK. */
tma_status kd_ok(tma_diag *diag);

#ifdef __cplusplus
}
#endif

#endif /* KERNELS_KERNEL_DIAG_H */
