/* The baseline the convolution sample compares with: the im2col matrix written out by a simple kernel (im2col.cu),
 * for a cuBLAS GEMM to multiply. */
#ifndef SAMPLES_CONV_IM2COL_H
#define SAMPLES_CONV_IM2COL_H

#include <cuda_runtime.h>

#include <tma/kernels.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Write a = im2col(x): (N P Q) rows of explicit_im2col_cols bf16, row (n, p, q), column (r, s, c) = x[n, p *
 *  stride_h - pad_h + r * dilation_h, q * stride_w - pad_w + s * dilation_w, c], 0 outside the image and past R S C.
 *  One thread per 16 bytes (8 channels) where C is a multiple of 8, else one per element. @return the launch error */
cudaError_t explicit_im2col(const void *x, void *a, const tma_conv2d_shape *shape, int p, int q, cudaStream_t stream);

/** Columns of the im2col matrix: R S C rounded up to a multiple of 8 (rows of 16-byte multiples, as cuBLAS's fast
 *  paths want; the padding columns are zeros). */
int explicit_im2col_cols(const tma_conv2d_shape *shape);

#ifdef __cplusplus
}
#endif

#endif /* SAMPLES_CONV_IM2COL_H */
