/* The baseline the convolution sample compares with: the im2col matrix written out by a simple kernel (im2col.cu),
 * for a cuBLAS GEMM to multiply. */
#ifndef SAMPLES_CONV_IM2COL_H
#define SAMPLES_CONV_IM2COL_H

#include <cuda_runtime.h>

#include <tma/kernels.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Write a = im2col(x): (N P Q) rows of R * S * C bf16, row (n, p, q), column (r, s, c) = x[n, p * stride_h -
 *  pad_h + r * dilation_h, q * stride_w - pad_w + s * dilation_w, c], 0 outside the image. One thread per 16 bytes
 *  (8 channels; C is a multiple of 8). @return the launch error */
cudaError_t explicit_im2col(const void *x, void *a, const tma_conv2d_shape *shape, int p, int q, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* SAMPLES_CONV_IM2COL_H */
