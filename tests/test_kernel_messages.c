/* The kernels' messages in their callers' terms, on the CPU: the table of the kernels' refusals (kernel_rules.h: every
 * row well formed, formatted as libtma formats its own, a cause's status and text after it), why there is no GPU
 * (kd_no_gpu_reason, the words of kd_require_sm90 and kd_cuda on a machine without a driver, with an old one, without
 * a device), and the transpose's refusals restated from the permute's (kd_transpose_restate over tma_permute_model of
 * a tma_transpose_desc: rows, cols, in, out, pitches; never src_dims, dst or tma_permute). */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_diag.h"
#include "kernel_maps.h"
#include "tma/kernels.h"

/* The library-internal encoder the kernels call is declared twice, in src/internal.h for libtma and in
 * kernels/kernel_maps.h for the kernels (which may not include src/): both in this translation unit, so the two
 * declarations cannot differ without this file failing to compile. */
#include "../src/internal.h"

/* ---------------------------------------------------------------------------------------------
 * The kernels' rows
 * ------------------------------------------------------------------------------------------- */

typedef struct kd_row_info {
    uint32_t id;
    tma_status status;
    const char *name, *text;
} kd_row_info;

#define KD_ROW_INFO_(id, status, text) {id, TMA_##status, #id, text},
static const kd_row_info kd_rows[] = {TMA_KERNEL_RULE_TABLE(KD_ROW_INFO_)};
#undef KD_ROW_INFO_
#define KD_ROWS (sizeof kd_rows / sizeof kd_rows[0])

Test(kernel_rules, every_row_is_well_formed) {
    cr_assert_eq(KD_ROWS, (size_t)(KD_RULE_END_ - TMA_RULE_TABLE_BASE(1)), "every row has its enumerator");
    for (size_t i = 0; i < KD_ROWS; i++) {
        const kd_row_info *r = &kd_rows[i];
        cr_assert_eq(r->id, TMA_RULE_TABLE_BASE(1) + (uint32_t)i, "%s: numbered in table order", r->name);
        cr_assert_neq(r->status, TMA_OK, "%s refuses with a status", r->name);
        cr_assert_eq(kd_rule_status(r->id), r->status, "%s", r->name);
        cr_assert_str_eq(kd_rule_text(r->id), r->text, "%s", r->name);
        /* the placeholders {0}..{k} it quotes: each one up to the highest, so no value is passed and not shown */
        unsigned seen = 0, top = 0;
        for (const char *t = r->text; *t; t++)
            if (t[0] == '{' && t[1] >= '0' && t[1] <= '9' && t[2] == '}') {
                seen |= 1u << (t[1] - '0');
                top = (unsigned)(t[1] - '0') + 1u > top ? (unsigned)(t[1] - '0') + 1u : top;
            }
        cr_assert_eq(seen, (1u << top) - 1u, "%s: placeholders {0}..{%u} without a gap: %s", r->name, top, r->text);
        for (size_t j = 0; j < i; j++)
            cr_assert_str_neq(kd_rows[j].text, r->text, "%s and %s say the same", kd_rows[j].name, r->name);
    }
    /* a libtma rule is found through the kernels' lookups too (a violation of a map the kernel built) */
    cr_assert_str_eq(kd_rule_text(TMA_RULE_GLOBAL_DIM), tma_rule_text(TMA_RULE_GLOBAL_DIM));
    cr_assert_eq(kd_rule_status(TMA_RULE_GLOBAL_DIM), tma_rule_status(TMA_RULE_GLOBAL_DIM));
}

Test(kernel_rules, refusals_format_as_the_rows_say) {
    tma_diag d;
    cr_assert_eq(KD_FAIL(&d, GEMM_SIZES, tma_arg_i(-1), tma_arg_i(64), tma_arg_i(128)), TMA_ERR_ARG);
    cr_assert_eq(d.status, TMA_ERR_ARG);
    cr_assert_str_eq(d.message, "M = -1, N = 64, K = 128: sizes must be >= 0");
    cr_assert_eq(KD_FAIL(NULL, PLAN_NULL, tma_arg_s("x")), TMA_ERR_NULL_ARG, "diag is optional");
    /* with a cause: the row, then the rule beneath it, with the rule's status */
    const tma_violation cause = tma_violation_of(TMA_RULE_GLOBAL_DIM, TMA_RULE_ARGS(tma_arg_u(1), tma_arg_u(0)));
    char rule[TMA_DIAG_MESSAGE_BYTES], want[2 * TMA_DIAG_MESSAGE_BYTES];
    tma_violation_format(&cause, rule, sizeof rule);
    cr_assert_eq(KD_FAIL_CAUSE(&d, &cause, MAP_REFUSED, tma_arg_s("A's map"), tma_arg_s("A, M and K")),
                 tma_violation_status(&cause));
    snprintf(want, sizeof want, "A's map (made from A, M and K) is refused: %s", rule);
    cr_assert_str_eq(d.message, want);
    /* a status passed on from a call that reports only one */
    cr_assert_eq(KD_FAIL_STATUS(&d, TMA_ERR_SMEM_BOUNDS, PM_MODEL_COPY, tma_arg_s("why")), TMA_ERR_SMEM_BOUNDS);
    cr_assert_eq(d.status, TMA_ERR_SMEM_BOUNDS);
    cr_assert_str_eq(d.message, "tma_permute_model: a model copy of the pipeline failed: why");
    /* a message relayed as it is */
    cr_assert_eq(kd_relay(&d, TMA_ERR_GLOBAL_ADDRESS_NULL, "group 2: as the device said"), TMA_ERR_GLOBAL_ADDRESS_NULL);
    cr_assert_str_eq(d.message, "group 2: as the device said");
}

/* ---------------------------------------------------------------------------------------------
 * No GPU
 * ------------------------------------------------------------------------------------------- */

static const char *reason(cudaError_t e, int driver, int runtime) {
    static char out[TMA_DIAG_MESSAGE_BYTES];
    out[0] = '\0';
    cr_assert(kd_no_gpu_reason(e, driver, runtime, out, sizeof out), "error %d is one of no GPU", (int)e);
    return out;
}

Test(no_gpu, without_a_driver_it_does_not_say_upgrade) {
    /* the runtime's own words for this case are "CUDA driver version is insufficient for CUDA runtime version" */
    const char *r = reason(cudaErrorInsufficientDriver, 0, 13000);
    cr_assert_not_null(strstr(r, "no NVIDIA driver found"), "%s", r);
    cr_assert_not_null(strstr(r, "libcuda.so.1"), "%s", r);
    cr_assert_null(strstr(r, "insufficient"), "%s", r);
    cr_assert_null(strstr(r, "update"), "%s", r);
}

Test(no_gpu, an_old_driver_names_both_versions) {
    const char *r = reason(cudaErrorInsufficientDriver, 12020, 13000);
    cr_assert_not_null(strstr(r, "supports CUDA up to 12.2, older than the CUDA 13.0 runtime"), "%s", r);
    cr_assert_not_null(strstr(r, "update the driver to one for CUDA 13.0 or newer"), "%s", r);
}

Test(no_gpu, no_device_names_cuda_visible_devices_when_set) {
    cr_assert_eq(unsetenv("CUDA_VISIBLE_DEVICES"), 0);
    const char *r = reason(cudaErrorNoDevice, 12080, 13000);
    cr_assert_not_null(strstr(r, "no CUDA GPU found: the NVIDIA driver (CUDA 12.8) is installed but sees no device"),
                       "%s", r);
    cr_assert_eq(setenv("CUDA_VISIBLE_DEVICES", "7", 1), 0);
    r = reason(cudaErrorNoDevice, 12080, 13000);
    cr_assert_not_null(strstr(r, "CUDA_VISIBLE_DEVICES=\"7\""), "%s", r);
}

Test(no_gpu, the_other_ways_and_only_those) {
    cr_assert_not_null(strstr(reason(cudaErrorDevicesUnavailable, 13000, 13000), "busy or unavailable"));
    cr_assert_not_null(strstr(reason(cudaErrorSystemDriverMismatch, 13000, 13000), "reboot"));
    cr_assert_not_null(strstr(reason(cudaErrorCompatNotSupportedOnDevice, 13000, 13000), "forward-compatibility"));
    char out[64] = "untouched";
    cr_assert(!kd_no_gpu_reason(cudaErrorInvalidValue, 13000, 13000, out, sizeof out),
              "an invalid argument is not a missing GPU");
    cr_assert_str_eq(out, "untouched");
    cr_assert(!kd_no_gpu_reason(cudaErrorMemoryAllocation, 13000, 13000, out, sizeof out));
}

/* ---------------------------------------------------------------------------------------------
 * kd_rename
 * ------------------------------------------------------------------------------------------- */

Test(kd_rename, whole_words_in_order_and_cut_at_the_size) {
    tma_diag d = {TMA_ERR_ARG, "tma_permute: tma_permute_plan_make said src_dims[1] = 0 (xsrc_dims[1])"};
    const kd_term terms[] = {{"tma_permute", "tma_transpose"}, {"src_dims[1]", "rows"}};
    kd_rename(&d, terms, 2);
    cr_assert_str_eq(d.message, "tma_transpose: tma_permute_plan_make said rows = 0 (xsrc_dims[1])");
    memset(d.message, 'a', sizeof d.message - 1);
    d.message[sizeof d.message - 1] = '\0';
    const kd_term grow[] = {{"a", "bb"}};
    kd_rename(&d, grow, 1);
    cr_assert_eq(strlen(d.message), sizeof d.message - 1, "cut at the message size");
    kd_rename(NULL, grow, 1); /* diag is optional */
}

/* ---------------------------------------------------------------------------------------------
 * The transpose's refusals
 * ------------------------------------------------------------------------------------------- */

static _Alignas(1024) unsigned char in_buf[1 << 16], out_buf[1 << 16];

/* The model's refusal of tma_transpose_desc(...), restated; status checked. */
static const char *refusal(tma_status want, uint32_t e, const void *in, void *out, uint32_t rows, uint32_t cols,
                           size_t in_pitch, size_t out_pitch) {
    static tma_diag diag;
    const tma_permute_desc d = tma_transpose_desc(e, in, out, rows, cols, in_pitch, out_pitch);
    const tma_status st = kd_transpose_restate(tma_permute_model(&d, NULL, &diag), &diag);
    cr_assert_eq(st, want, "%u-byte %u x %u, pitches %zu / %zu: %s, want %s (%s)", e, rows, cols, in_pitch,
                 out_pitch, tma_status_name(st), tma_status_name(want), diag.message);
    /* never the permute's names */
    static const char *const permute_words[] = {"src", "dst", "tma_permute", "global_stride", "global_address",
                                                "map dimensions"};
    for (size_t i = 0; i < sizeof permute_words / sizeof permute_words[0]; i++)
        cr_assert_null(strstr(diag.message, permute_words[i]), "'%s' in: %s", permute_words[i], diag.message);
    return diag.message;
}

Test(transpose_messages, arguments_by_their_names) {
    cr_assert_str_eq(refusal(TMA_ERR_ARG, 3, in_buf, out_buf, 64, 64, 0, 0),
                     "elem_bytes = 3: tma_transpose moves 1-, 2-, 4- or 8-byte elements");
    cr_assert_str_eq(refusal(TMA_ERR_NULL_ARG, 4, NULL, out_buf, 64, 64, 0, 0),
                     "in = NULL: pass the addresses of in and out");
    cr_assert_str_eq(refusal(TMA_ERR_NULL_ARG, 4, in_buf, NULL, 64, 64, 0, 0),
                     "out = NULL: pass the addresses of in and out");
    cr_assert_str_eq(refusal(TMA_ERR_ARG, 4, in_buf, out_buf, 0, 64, 0, 0),
                     "rows = 0: every dimension needs at least one element");
    cr_assert_str_eq(refusal(TMA_ERR_ARG, 4, in_buf, out_buf, 64, 0, 0, 0),
                     "cols = 0: every dimension needs at least one element");
    cr_assert_not_null(strstr(refusal(TMA_ERR_ARG, 4, in_buf, out_buf, 3000000000u, 64, 0, 0),
                              "rows = 3000000000 exceeds 2^31"));
}

Test(transpose_messages, pitches_and_addresses) {
    /* any pitch of whole elements is taken (the thread kernel where TMA cannot describe it) */
    tma_diag diag;
    const tma_permute_desc odd = tma_transpose_desc(4, in_buf, out_buf, 64, 50, 200, 0);
    cr_assert_eq(kd_transpose_restate(tma_permute_model(&odd, NULL, &diag), &diag), TMA_OK, "%s", diag.message);
    cr_assert_str_eq(refusal(TMA_ERR_ARG, 4, in_buf, out_buf, 64, 50, 202, 0),
                     "in_pitch = 202 bytes is not a multiple of elem_bytes = 4: strides are in bytes and step whole "
                     "elements");
    cr_assert_str_eq(refusal(TMA_ERR_ARG, 4, in_buf, out_buf, 50, 64, 0, 202),
                     "out_pitch = 202 bytes is not a multiple of elem_bytes = 4: strides are in bytes and step whole "
                     "elements");
    cr_assert_str_eq(refusal(TMA_ERR_GLOBAL_STRIDE_OVERLAP, 4, in_buf, out_buf, 64, 64, 0, 128),
                     "out_pitch = 128 bytes, less than the 256 bytes of an out row (rows elements), so consecutive rows "
                     "of out overlap and the permute would race with itself: give an out_pitch of at least a row (0: "
                     "dense)");
    const char *m = refusal(TMA_ERR_ARG, 4, in_buf + 2, out_buf, 64, 64, 0, 0);
    cr_assert(strncmp(m, "in = 0x", 7) == 0 && strstr(m, "is not a multiple of elem_bytes = 4") != NULL, "%s", m);
    m = refusal(TMA_ERR_ARG, 4, in_buf, out_buf + 6, 64, 64, 0, 0);
    cr_assert(strncmp(m, "out = 0x", 8) == 0, "%s", m);
}

Test(transpose_messages, ok_stays_ok) {
    tma_diag diag = {TMA_OK, ""};
    cr_assert_eq(kd_transpose_restate(TMA_OK, &diag), TMA_OK);
    cr_assert_str_eq(diag.message, "");
    cr_assert_eq(kd_transpose_restate(TMA_ERR_ARG, NULL), TMA_ERR_ARG, "diag is optional");
    const tma_permute_desc d = tma_transpose_desc(4, in_buf, out_buf, 64, 64, 0, 0);
    cr_assert_eq(kd_transpose_restate(tma_permute_model(&d, NULL, &diag), &diag), TMA_OK, "%s", diag.message);
}
