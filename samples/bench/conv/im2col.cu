/* The explicit im2col of the convolution sample (im2col.h): one 16-byte vector per thread, read from x or zero. */
#include "im2col.h"

#include <stdint.h>

struct im2col_args {
    const uint4 *x;
    uint4 *a;
    int n, h, w, c8; /* c8: vectors per pixel */
    int r, s, p, q;
    int stride_h, stride_w, pad_h, pad_w, dil_h, dil_w;
};

__global__ void explicit_im2col_kernel(const im2col_args g, unsigned long long vectors) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < vectors;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        unsigned long long t = i;
        const int cv = (int)(t % (unsigned)g.c8);
        t /= (unsigned)g.c8;
        const int s = (int)(t % (unsigned)g.s);
        t /= (unsigned)g.s;
        const int r = (int)(t % (unsigned)g.r);
        t /= (unsigned)g.r;
        const int q = (int)(t % (unsigned)g.q);
        t /= (unsigned)g.q;
        const int p = (int)(t % (unsigned)g.p);
        const int n = (int)(t / (unsigned)g.p);
        const int hh = p * g.stride_h - g.pad_h + r * g.dil_h, ww = q * g.stride_w - g.pad_w + s * g.dil_w;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (hh >= 0 && hh < g.h && ww >= 0 && ww < g.w)
            v = g.x[(((size_t)n * g.h + hh) * g.w + ww) * g.c8 + cv];
        g.a[i] = v;
    }
}

/* Channels not a multiple of 8: one thread per element of a's rows of kgp >= R S C columns (zeros past R S C). */
__global__ void explicit_im2col_elems_kernel(const uint16_t *x, uint16_t *a, const im2col_args g, int c, int kgp,
                                             unsigned long long elems) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < elems;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        const int col = (int)(i % (unsigned)kgp);
        unsigned long long t = i / (unsigned)kgp;
        const int q = (int)(t % (unsigned)g.q);
        t /= (unsigned)g.q;
        const int p = (int)(t % (unsigned)g.p);
        const int n = (int)(t / (unsigned)g.p);
        uint16_t v = 0;
        if (col < g.r * g.s * c) {
            const int ch = col % c, s = col / c % g.s, r = col / c / g.s;
            const int hh = p * g.stride_h - g.pad_h + r * g.dil_h, ww = q * g.stride_w - g.pad_w + s * g.dil_w;
            if (hh >= 0 && hh < g.h && ww >= 0 && ww < g.w)
                v = x[(((size_t)n * g.h + hh) * g.w + ww) * c + ch];
        }
        a[i] = v;
    }
}

extern "C" int explicit_im2col_cols(const tma_conv2d_shape *sh) { return (sh->r * sh->s * sh->c + 7) / 8 * 8; }

extern "C" cudaError_t explicit_im2col(const void *x, void *a, const tma_conv2d_shape *sh, int p, int q,
                                       cudaStream_t stream) {
    if (sh->c % 8 != 0) {
        const im2col_args g = {NULL, NULL, sh->n, sh->h, sh->w, 0, sh->r, sh->s, p, q,
                               sh->stride_h, sh->stride_w, sh->pad_h, sh->pad_w, sh->dilation_h, sh->dilation_w};
        const int kgp = explicit_im2col_cols(sh);
        const unsigned long long elems = (unsigned long long)sh->n * p * q * (unsigned long long)kgp;
        const unsigned long long blocks = (elems + 255) / 256;
        explicit_im2col_elems_kernel<<<(unsigned)(blocks < 132 * 64 ? blocks : 132 * 64), 256, 0, stream>>>(
            (const uint16_t *)x, (uint16_t *)a, g, sh->c, kgp, elems);
        return cudaGetLastError();
    }
    const im2col_args g = {(const uint4 *)x, (uint4 *)a, sh->n, sh->h, sh->w, sh->c / 8, sh->r, sh->s, p, q,
                           sh->stride_h, sh->stride_w, sh->pad_h, sh->pad_w, sh->dilation_h, sh->dilation_w};
    const unsigned long long vectors =
        (unsigned long long)sh->n * p * q * sh->r * sh->s * (unsigned long long)(sh->c / 8);
    if (vectors == 0)
        return cudaSuccess;
    const unsigned long long blocks = (vectors + 255) / 256;
    explicit_im2col_kernel<<<(unsigned)(blocks < 132 * 64 ? blocks : 132 * 64), 256, 0, stream>>>(g, vectors);
    return cudaGetLastError();
}
