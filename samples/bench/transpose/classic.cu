/* The classic shared-memory transposes (classic.h): one 32 x 32 tile per block of 32 x 8 threads.
 * T is a same-size bit container.
 * MODE 0: tile[32][32]; the column read tile[tx][j] has a 32-element (128-byte for fp32) stride, so all 32
 *         lanes of a warp hit the same bank: 32-way conflict (fp32).
 * MODE 1: tile[32][33]; the odd pitch spreads a column over all banks.
 * MODE 2: tile[r][c ^ r]; the XOR permutes each row so a column touches every bank once. */
#include "classic.h"

template <typename T, int MODE>
__global__ void __launch_bounds__(256) classic_kernel(const T *__restrict__ in, T *__restrict__ out, uint32_t rows,
                                                      uint32_t cols, size_t ip, size_t op) {
    __shared__ T tile[32][MODE == 1 ? 33 : 32];
    const uint32_t tx = threadIdx.x, x = blockIdx.x * 32u + tx, y0 = blockIdx.y * 32u;
    for (uint32_t j = threadIdx.y; j < 32u; j += 8u) {
        uint32_t y = y0 + j;
        if (x < cols && y < rows)
            tile[j][MODE == 2 ? (tx ^ j) : tx] = in[(size_t)y * ip + x];
    }
    __syncthreads();
    const uint32_t ox = y0 + tx; /* output column = input row */
    for (uint32_t j = threadIdx.y; j < 32u; j += 8u) {
        uint32_t oy = blockIdx.x * 32u + j; /* output row = input column */
        if (ox < rows && oy < cols)
            out[(size_t)oy * op + ox] = tile[tx][MODE == 2 ? (j ^ tx) : j];
    }
}

extern "C" const char *classic_name(classic_kind k) {
    switch (k) {
    case CLASSIC_NAIVE: return "naive";
    case CLASSIC_PADDED: return "padded";
    case CLASSIC_XOR: return "xor-swizzled";
    default: return "?";
    }
}

template <typename T>
static void launch(classic_kind k, const void *in, void *out, uint32_t rows, uint32_t cols, size_t ip, size_t op,
                   cudaStream_t st) {
    const dim3 grid((cols + 31) / 32, (rows + 31) / 32), block(32, 8);
    const T *i = (const T *)in;
    T *o = (T *)out;
    ip /= sizeof(T), op /= sizeof(T);
    if (k == CLASSIC_NAIVE)
        classic_kernel<T, 0><<<grid, block, 0, st>>>(i, o, rows, cols, ip, op);
    else if (k == CLASSIC_PADDED)
        classic_kernel<T, 1><<<grid, block, 0, st>>>(i, o, rows, cols, ip, op);
    else
        classic_kernel<T, 2><<<grid, block, 0, st>>>(i, o, rows, cols, ip, op);
}

extern "C" cudaError_t classic_transpose(classic_kind k, uint32_t elem_bytes, const void *in, void *out,
                                         uint32_t rows, uint32_t cols, size_t in_pitch, size_t out_pitch,
                                         cudaStream_t stream) {
    if ((elem_bytes != 2 && elem_bytes != 4) || (unsigned)k >= CLASSIC_KIND_COUNT || (rows + 31) / 32 > 65535 ||
        in_pitch % elem_bytes || out_pitch % elem_bytes)
        return cudaErrorInvalidValue;
    if (elem_bytes == 4)
        launch<uint32_t>(k, in, out, rows, cols, in_pitch, out_pitch, stream);
    else
        launch<uint16_t>(k, in, out, rows, cols, in_pitch, out_pitch, stream);
    return cudaGetLastError();
}
