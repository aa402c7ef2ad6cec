/* Private to libtma_kernels: the register transposes of one V x V block of E-byte elements (V = 16 / E rows of one
 * 16-byte chunk each), for the tile transpose of tma_permute (permute.cu): tr_regs<E>::run(a, o) leaves column j
 * of a in o[j]. CUDA; not installed. */
#ifndef KERNELS_TRANSPOSE_REGS_CUH
#define KERNELS_TRANSPOSE_REGS_CUH

#include <stdint.h>

template <int E>
struct tr_regs;

template <>
struct tr_regs<8> { /* 2 x 2 of 64-bit: a renaming */
    static __device__ __forceinline__ void run(const uint4 (&a)[2], uint4 (&o)[2]) {
        o[0] = make_uint4(a[0].x, a[0].y, a[1].x, a[1].y);
        o[1] = make_uint4(a[0].z, a[0].w, a[1].z, a[1].w);
    }
};

template <>
struct tr_regs<4> { /* 4 x 4 of 32-bit: a renaming */
    static __device__ __forceinline__ void run(const uint4 (&a)[4], uint4 (&o)[4]) {
        o[0] = make_uint4(a[0].x, a[1].x, a[2].x, a[3].x);
        o[1] = make_uint4(a[0].y, a[1].y, a[2].y, a[3].y);
        o[2] = make_uint4(a[0].z, a[1].z, a[2].z, a[3].z);
        o[3] = make_uint4(a[0].w, a[1].w, a[2].w, a[3].w);
    }
};

static __device__ __forceinline__ uint32_t tr_word(const uint4 &a, int w) {
    return w == 0 ? a.x : w == 1 ? a.y : w == 2 ? a.z : a.w;
}

template <>
struct tr_regs<2> { /* 8 x 8 of 16-bit: output j word w = element j of rows 2w (low half) and 2w+1 (high half);
                       __byte_perm selector 0x5410 takes both low halves, 0x7632 both high halves */
    static __device__ __forceinline__ void run(const uint4 (&a)[8], uint4 (&o)[8]) {
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const uint32_t sel = (j & 1) ? 0x7632u : 0x5410u;
            uint32_t w[4];
#pragma unroll
            for (int q = 0; q < 4; q++)
                w[q] = __byte_perm(tr_word(a[2 * q], j >> 1), tr_word(a[2 * q + 1], j >> 1), sel);
            o[j] = make_uint4(w[0], w[1], w[2], w[3]);
        }
    }
};

template <>
struct tr_regs<1> { /* 16 x 16 bytes as 4 x 4 blocks of 4 x 4 bytes: the blocks move by renaming (block (R, C) of
                       the input is block (C, R) of the output), each block's bytes by 8 __byte_perm: rows m0..m3
                       -> pairs interleaved (0x5140: m0.b0 m1.b0 m0.b1 m1.b1; 0x7362 the same for bytes 2, 3),
                       then halves (0x5410 / 0x7632). */
    static __device__ __forceinline__ void run(const uint4 (&a)[16], uint4 (&o)[16]) {
        uint32_t t[16][4];
#pragma unroll
        for (int R = 0; R < 4; R++)      /* input rows 4R..4R+3 */
#pragma unroll
            for (int C = 0; C < 4; C++) { /* word C of those rows: bytes 4C..4C+3 = output rows 4C..4C+3 */
                const uint32_t m0 = tr_word(a[4 * R], C), m1 = tr_word(a[4 * R + 1], C);
                const uint32_t m2 = tr_word(a[4 * R + 2], C), m3 = tr_word(a[4 * R + 3], C);
                const uint32_t x0 = __byte_perm(m0, m1, 0x5140u), x1 = __byte_perm(m0, m1, 0x7362u);
                const uint32_t y0 = __byte_perm(m2, m3, 0x5140u), y1 = __byte_perm(m2, m3, 0x7362u);
                t[4 * C + 0][R] = __byte_perm(x0, y0, 0x5410u);
                t[4 * C + 1][R] = __byte_perm(x0, y0, 0x7632u);
                t[4 * C + 2][R] = __byte_perm(x1, y1, 0x5410u);
                t[4 * C + 3][R] = __byte_perm(x1, y1, 0x7632u);
            }
#pragma unroll
        for (int j = 0; j < 16; j++)
            o[j] = make_uint4(t[j][0], t[j][1], t[j][2], t[j][3]);
    }
};

#endif /* KERNELS_TRANSPOSE_REGS_CUH */
