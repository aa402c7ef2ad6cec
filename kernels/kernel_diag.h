/* Private to libtma_kernels: how the kernels' host code reports a refused argument or a failed CUDA call
 * (a tma_status and, when the caller gave one, a tma_diag message), and the device check they share. Every message is
 * a row of kernel_rules.h, formatted by libtma's formatter: KD_FAIL and its kin (kernel_diag.c) need no CUDA library
 * and serve the CPU-model pipelines and the cpu tests too; kd_cuda and kd_require_sm90 (kernel_cuda.c) call the CUDA
 * runtime. */
#ifndef KERNELS_KERNEL_DIAG_H
#define KERNELS_KERNEL_DIAG_H

#include <stdbool.h>
#include <stddef.h>

#include <cuda_runtime.h>

#include "kernel_rules.h"

#include "tma/tma.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Fill diag (optional) with row v of kernel_rules.h and, with a cause (a libtma rule that a map the kernel built
 *  breaks), the cause's message after it; return the status: `status` where it is not TMA_OK (a refusal passed on
 *  from a call that reports only a status), else the cause's, else the row's. The KD_FAIL macros call it. */
tma_status kd_fail_rule(tma_diag *diag, tma_status status, tma_violation v, const tma_violation *cause);

/** Refuse with row ID of TMA_KERNEL_RULE_TABLE and the values that follow: return KD_FAIL(diag, GEMM_SIZES, ...). */
#define KD_FAIL(diag, ID, ...) kd_fail_rule((diag), TMA_OK, KD_VIOLATION(ID, __VA_ARGS__), NULL)
/** Refuse because a map breaks a libtma rule (cause: the tma_violation tma_rule_check_tiled / _im2col gave): row ID,
 *  whose text ends with ": ", then the rule's message; the rule's status. */
#define KD_FAIL_CAUSE(diag, cause, ID, ...) kd_fail_rule((diag), TMA_OK, KD_VIOLATION(ID, __VA_ARGS__), (cause))
/** Refuse with row ID and the status of the call that refused (a CPU-model copy, the encoder: they report a status,
 *  or a finished message the row quotes). */
#define KD_FAIL_STATUS(diag, status, ID, ...) kd_fail_rule((diag), (status), KD_VIOLATION(ID, __VA_ARGS__), NULL)

/** Fill diag (optional) with a message formatted elsewhere by these rows (the grouped GEMM's device record) and its
 *  status; return the status. */
tma_status kd_relay(tma_diag *diag, tma_status status, const char *message);

/** TMA_OK for cudaSuccess; otherwise TMA_ERR_CUDA with "<what> failed: <CUDA error name>: <string>", or, for an
 *  error that means there is no GPU to run on (kd_no_gpu_reason), "<what> failed: <that reason>". */
tma_status kd_cuda(tma_diag *diag, cudaError_t e, const char *what);

/** A plan's device memory (packed inputs): cudaMalloc where stream is NULL (a plan's, made once, synchronous), else
 *  cudaMallocAsync on stream (a one-call function's, freed there after its launch). kd_free_on releases *p the same
 *  way (nothing for NULL) and sets it to NULL. */
cudaError_t kd_malloc_on(void **p, size_t bytes, cudaStream_t stream);
cudaError_t kd_free_on(void **p, cudaStream_t stream);

/** TMA_OK when the current device is compute capability 9.x (Hopper), with its multiprocessor count in *sms;
 *  TMA_ERR_DEVICE (no GPU or no driver, in kd_no_gpu_reason's words; another architecture) or TMA_ERR_CUDA
 *  otherwise. `who` names the caller. */
tma_status kd_require_sm90(tma_diag *diag, const char *who, int *sms);

/** Why the CUDA runtime found no GPU to run on, into out[0..cap), for the errors that mean that: no NVIDIA driver
 *  (cudaErrorInsufficientDriver with driver = 0), a driver older than the runtime (the same error, driver > 0), no
 *  device (cudaErrorNoDevice, naming CUDA_VISIBLE_DEVICES when it is set), every device busy, a driver half updated,
 *  ... `driver` and `runtime` are cudaDriverGetVersion's and cudaRuntimeGetVersion's (1000 * major + 10 * minor).
 *  Plain C and no CUDA call, so the CPU tests can check every wording. False (out untouched) for any other error.
 *  Hard to learn: without a driver the runtime says cudaErrorInsufficientDriver, "CUDA driver version is
 *  insufficient for CUDA runtime version", which reads as "upgrade your driver" on a machine that has none; only
 *  cudaDriverGetVersion's 0 tells the two apart. */
bool kd_no_gpu_reason(cudaError_t e, int driver, int runtime, char *out, size_t cap);


/** A renaming of a message: every `from` becomes `to` (kd_rename). */
typedef struct kd_term {
    const char *from, *to;
} kd_term;

/** Rename, in diag->message (diag optional), every `from` of terms[0..n) to its `to`, one term after the other. A
 *  `from` that begins or ends with a letter, digit or '_' matches only there as a whole word ("tma_permute" is not
 *  the start of "tma_permute_plan_make"). A longer message is cut at the tma_diag's size. How a kernel that is a
 *  special case of another speaks in its own terms without checking anything twice (tma_transpose_restate). */
void kd_rename(tma_diag *diag, const kd_term *terms, size_t n);

/** A refusal of the permute of a tma_transpose_desc(...) in the transpose's terms (tma_transpose's): rows, cols, in,
 *  out, in_pitch and out_pitch for the permute's src_dims, src, dst and its maps' fields. Only names change: the rule,
 *  the value, the limit and the fix are the permute's (transpose.c). @return st */
tma_status kd_transpose_restate(tma_status st, tma_diag *diag);

/** Clear diag (optional) and return TMA_OK. */
tma_status kd_ok(tma_diag *diag);

#ifdef __cplusplus
}
#endif

#endif /* KERNELS_KERNEL_DIAG_H */
