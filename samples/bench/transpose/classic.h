/* The classic shared-memory transposes tma-transpose compares libtma with (classic.cu). Not library code. */
#ifndef SAMPLES_TRANSPOSE_CLASSIC_H
#define SAMPLES_TRANSPOSE_CLASSIC_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum classic_kind {
    CLASSIC_NAIVE = 0, /* 32x32 shared tile, 32x8 threads; the column read is a 32-way bank conflict (fp32) */
    CLASSIC_PADDED,    /* the same tile with a 33-element pitch */
    CLASSIC_XOR,       /* the same tile addressed tile[r][c ^ r] */
    CLASSIC_KIND_COUNT
} classic_kind;

/** "naive", "padded", "xor-swizzled". */
const char *classic_name(classic_kind k);

/** Launch out (cols x rows) = in (rows x cols)^T with elements of 2 or 4 bytes (pitches in bytes, multiples of
 *  the element); asynchronous on `stream`. @return the launch's error (cudaErrorInvalidValue for bad sizes) */
cudaError_t classic_transpose(classic_kind k, uint32_t elem_bytes, const void *in, void *out, uint32_t rows,
                              uint32_t cols, size_t in_pitch, size_t out_pitch, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* SAMPLES_TRANSPOSE_CLASSIC_H */
