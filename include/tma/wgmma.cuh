/* libtma device API for the tensor cores (CUDA, sm_90a): one small named function per wgmma / setmaxnreg
 * instruction, so kernels contain no raw asm. Descriptors come from include/tma/wgmma.h
 * (tma_wgmma_desc_box: built from the same box facts as the TMA copy that fills the tile).
 *
 * Order of use in a consumer warpgroup, per stage:
 *     tma_wgmma_fence();                        // accumulators written by ordinary code are visible to wgmma
 *     tma_wgmma_m64n256k16_bf16(acc, da, db);   // one or more, asynchronous
 *     tma_wgmma_commit();                       // close the group
 *     tma_wgmma_wait<0>();                      // wait until at most 0 groups are pending
 * Accumulators must not be read or written between the issue and the wait. */
#ifndef TMA_WGMMA_CUH
#define TMA_WGMMA_CUH

#include <stdint.h>

#include "tma/device.cuh"
#include "tma/wgmma.h"

/* Said at compile time (as device.cuh does below sm_90): wgmma and setmaxnreg exist only in the arch-specific
 * sm_90a target, and in a device pass for sm_90 or newer without it (-arch=sm_90, compute capability 10.x) they
 * compile to traps. -DTMA_NO_ARCH_WARNING silences it, for a kernel that takes this path only where
 * __CUDA_ARCH_FEAT_SM90_ALL is defined. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(__CUDA_ARCH_FEAT_SM90_ALL) && \
    !defined(TMA_NO_ARCH_WARNING)
#warning "libtma: tma/wgmma.cuh is compiled for sm_90 or newer without the arch-specific sm_90a target, so wgmma \
and setmaxnreg compile to traps (\"illegal instruction\" at run time). Compile with -arch=sm_90a \
(-gencode=arch=compute_90a,code=sm_90a; CMake: CUDA_ARCHITECTURES 90a); -DTMA_NO_ARCH_WARNING silences this."
#endif

/* wgmma and setmaxnreg exist only in the arch-specific sm_90a target: TMA_PTX_SM90A (device.cuh) traps elsewhere. */

/** wgmma.fence.sync.aligned: order prior register/shared accesses before the next wgmma.mma_async. */
TMA_DEV void tma_wgmma_fence(void) { TMA_PTX_SM90A("wgmma.fence.sync.aligned;" ::: "memory"); }

/** wgmma.commit_group.sync.aligned: close the group of wgmma.mma_async issued so far. */
TMA_DEV void tma_wgmma_commit(void) { TMA_PTX_SM90A("wgmma.commit_group.sync.aligned;" ::: "memory"); }

/** wgmma.wait_group.sync.aligned N: wait until at most N wgmma groups of this warp are pending. */
template <int N>
TMA_DEV void tma_wgmma_wait(void) {
    TMA_PTX_SM90A("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

/** Compiler-only fence on an accumulator array: keeps reads and writes of acc from moving across it
 *  (use around tma_wgmma_wait before touching the accumulators). Emits no instruction. */
template <int R>
TMA_DEV void tma_wgmma_fence_regs(float (&acc)[R]) {
#pragma unroll
    for (int i = 0; i < R; i++)
        asm volatile("" : "+f"(acc[i])::"memory");
}

/** wgmma.mma_async m64n256k16 f32 += bf16 * bf16, A and B from shared memory through descriptors
 *  (both K-major: no transpose). d: this thread's 128 accumulators (fragment: row = 16 * warp + lane / 4
 *  + 8 * ((i / 2) % 2), column = 8 * (i / 4) + 2 * (lane % 4) + i % 2). scale_d = 0: d = A * B
 *  (the old d ignored); 1: d += A * B. */
TMA_DEV void tma_wgmma_m64n256k16_bf16(float (&d)[128], uint64_t desc_a, uint64_t desc_b, int scale_d = 1) {
    TMA_PTX_SM90A("{\n .reg .pred p;\n setp.ne.b32 p, %130, 0;\n"
                 " wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, %128, %129, p, 1, 1, 0, 0;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

/** The same for m64n192k16: d holds 96 accumulators (same fragment, column = 8 * (i / 4) + 2 * (lane % 4) + i % 2). */
TMA_DEV void tma_wgmma_m64n192k16_bf16(float (&d)[96], uint64_t desc_a, uint64_t desc_b, int scale_d = 1) {
    TMA_PTX_SM90A("{\n .reg .pred p;\n setp.ne.b32 p, %98, 0;\n"
                 " wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95}, %96, %97, p, 1, 1, 0, 0;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

/** The same for m64n128k16: d holds 64 accumulators (same fragment, column = 8 * (i / 4) + 2 * (lane % 4) + i % 2). */
TMA_DEV void tma_wgmma_m64n128k16_bf16(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int scale_d = 1) {
    TMA_PTX_SM90A("{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"
                 " wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, 1, 0, 0;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

/** The same for m64n64k16: d holds 32 accumulators (same fragment, column = 8 * (i / 4) + 2 * (lane % 4) + i % 2). */
TMA_DEV void tma_wgmma_m64n64k16_bf16(float (&d)[32], uint64_t desc_a, uint64_t desc_b, int scale_d = 1) {
    TMA_PTX_SM90A("{\n .reg .pred p;\n setp.ne.b32 p, %34, 0;\n"
                 " wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, 0;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

/** wgmma m64nNk16 for N = 256, 192, 128 or 64 (the tile width of a kernel template): d holds N / 2 accumulators. */
template <uint32_t N>
TMA_DEV void tma_wgmma_m64nk16_bf16(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b) {
    static_assert(N == 256 || N == 192 || N == 128 || N == 64,
                  "libtma has the m64n256k16, m64n192k16, m64n128k16 and m64n64k16 forms");
    if constexpr (N == 256)
        tma_wgmma_m64n256k16_bf16(d, desc_a, desc_b);
    else if constexpr (N == 192)
        tma_wgmma_m64n192k16_bf16(d, desc_a, desc_b);
    else if constexpr (N == 128)
        tma_wgmma_m64n128k16_bf16(d, desc_a, desc_b);
    else
        tma_wgmma_m64n64k16_bf16(d, desc_a, desc_b);
}

/** stmatrix.sync.aligned.m8n8.x4.trans.shared.b16: the warp stores four 8 x 8 matrices of 16-bit elements,
 *  each transposed. r[i] is this thread's fragment of matrix i in the wgmma accumulator layout (row lane / 4,
 *  columns 2 (lane % 4) and + 1, the lower column in the low half); lane 8 i + j gives in `row_addr` the
 *  shared-memory address of the 16 contiguous bytes that receive COLUMN j of matrix i. So a warp's 64-row x 8-column
 *  accumulator pairs land as rows of a row-major tile whose rows are the accumulators' columns: how an epilogue
 *  writes C^T from the fragment. Each matrix's 8 rows of 16 bytes are one shared-memory wavefront where they fall in
 *  8 different 16-byte bank groups (a 128B-swizzled box's 8 consecutive rows do). sm_90. */
TMA_DEV void tma_stmatrix_x4_trans(uint32_t row_addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
    TMA_PTX("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(row_addr), "r"(r0),
            "r"(r1), "r"(r2), "r"(r3)
            : "memory");
}

/** setmaxnreg.inc.sync.aligned.u32 R: raise this warpgroup's register budget to R (a multiple of 8, 24..256).
 *  Takes effect only in kernels with a register cap at entry (__launch_bounds__(threads, 1)). */
template <int R>
TMA_DEV void tma_setmaxnreg_inc(void) {
    static_assert(R % 8 == 0 && R >= 24 && R <= 256, "setmaxnreg takes 24..256 in steps of 8");
    TMA_PTX_SM90A("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(R));
}

/** setmaxnreg.dec.sync.aligned.u32 R: lower this warpgroup's register budget to R, freeing registers for
 *  the warpgroups that raise theirs. */
template <int R>
TMA_DEV void tma_setmaxnreg_dec(void) {
    static_assert(R % 8 == 0 && R >= 24 && R <= 256, "setmaxnreg takes 24..256 in steps of 8");
    TMA_PTX_SM90A("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(R));
}

#endif /* TMA_WGMMA_CUH */
