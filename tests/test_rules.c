/* tma/rules.h and tma/detail/rules.h: the rule table, the message formatter, the injectivity rule (strides in any
 * order), the per-copy rules, the independence of the checker's rules, the geometry helpers, and the public layout
 * facts (version, tma_tensor).
 *
 *   rule_table  - every rule has a status and a message, and its message fits a tma_diag with the longest
 *                 values it can quote (so no message is ever cut); the public violation API says the same.
 *   format      - placeholders, signed and hexadecimal values, dimension sets, boxes, truncation, a cause after
 *                 a message, and a table of another layer's rules formatted by the same formatter.
 *   geometry    - the box caps (tma_box_dim0_unit, tma_box_dim_max) and cluster masks (tma_cluster_mask_all)
 *                 agree with the checkers they name.
 *   nesting     - the 3-D view of a row-major matrix {64, rows, cols / 64} with strides {pitch, 128} is accepted
 *                 and stored through; every order of a dense tensor's strides is; real overlaps are refused with
 *                 the two dimensions named and the likely mistake (a stride in elements, swapped dimensions);
 *                 against a brute-force oracle on random small tensors.
 *   copy_rules  - each per-copy rule, with the message the device checked mode prints too.
 *   check_all_independent - k independent mistakes give k reports.
 *   layout      - tma_version(), sizeof / alignof tma_tensor.
 *   templates   - template maps (NULL address, placeholder strides), no copy through them, the maps built from them
 *                 checked as real ones, and the tensor rules alone saying what the whole check says of a map built
 *                 by edits of the address, dimensions and strides. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "desc_equal.h"
#include "tma/detail/rules.h"
#include "tma/tma.h"
#include "test_seed.h"

#define FAKE_ADDR ((void *)(uintptr_t)0x100000)

static uint64_t rng_state;
static uint64_t rnd(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}
static uint64_t seed_rng(const char *suite) { return rng_state = test_seed(suite); }

/* ---------------------------------------------------------------------------------------------
 * rule_table
 * ------------------------------------------------------------------------------------------- */

/* Which placeholders of a rule's message are strings, dimension sets, boxes, or dimension indices (0..4) as the
 * checkers and the tile planner fill them; the rest are numbers. */
static const struct {
    tma_rule rule;
    uint32_t strings, dims, indices, boxes; /* bit k: placeholder {k} */
} arg_kinds[] = {
    {TMA_RULE_SWIZZLE_SM100, 1u << 0, 0, 0},
    {TMA_RULE_OOB_NAN_INTEGER, 1u << 0, 0, 0},
    {TMA_RULE_INTERLEAVE_RANK, 1u << 1, 0, 0},
    {TMA_RULE_ADDRESS_ALIGN, 1u << 2, 0, 0},
    {TMA_RULE_GLOBAL_DIM, 0, 0, 1u << 0},
    {TMA_RULE_STRIDE_ALIGN, 1u << 3, 0, 1u << 0},
    {TMA_RULE_STRIDE_RANGE, 0, 0, 1u << 0},
    {TMA_RULE_OVERLAP, 0, 1u << 3, 1u << 0 | 1u << 4 | 1u << 5},
    {TMA_RULE_OVERLAP_ELEMENTS, 1u << 7, 1u << 3, 1u << 0 | 1u << 4 | 1u << 5},
    {TMA_RULE_OVERLAP_SWAPPED, 0, 1u << 3, 1u << 0 | 1u << 4 | 1u << 5},
    {TMA_RULE_OVERLAP_UNPROVEN, 0, 1u << 3, 1u << 0},
    {TMA_RULE_OVERLAP_HUGE, 0, 1u << 2, 1u << 0},
    {TMA_RULE_BOX_DIM, 0, 0, 1u << 0},
    {TMA_RULE_ELEMENT_STRIDE, 0, 0, 1u << 0},
    {TMA_RULE_BOX_INNER_BYTES, 1u << 1, 0, 0},
    {TMA_RULE_BOX_SWIZZLE_SPAN, 1u << 1 | 1u << 4 | 1u << 6, 0, 0},
    {TMA_RULE_COORD_ALIGN, 1u << 0, 0, 0},
    {TMA_RULE_COORD_NEGATIVE_STORE, 0, 0, 1u << 0},
    {TMA_RULE_SMEM_ALIGN, 1u << 1, 0, 0},
    {TMA_RULE_COPY_RANK, 1u << 0, 0, 1u << 1 | 1u << 2},
    {TMA_RULE_ADDRESS_NULL, 1u << 0, 0, 0},
    {TMA_RULE_STORE_OVERLAP, 1u << 0, 0, 0},
    {TMA_RULE_COPY_TEMPLATE, 1u << 0, 0, 0},
    {TMA_RULE_TILE_INTERLEAVE, 1u << 0, 0, 0},
    {TMA_RULE_TILE_DIM_ZERO, 0, 0, 1u << 0},
    {TMA_RULE_TILE_ELEMENT_STRIDE, 0, 0, 1u << 0},
    {TMA_RULE_TILE_INNER_BYTES, 1u << 1, 0, 0},
    {TMA_RULE_TILE_MAX_BOX_INNER, 1u << 2, 0, 0},
    {TMA_RULE_TILE_TOO_MANY, 0, 0, 1u << 0},
    {TMA_RULE_TILE_BOX_DESC, 0, 0, 0, 1u << 0},
    {TMA_RULE_TILE_MAP_MISMATCH, 0, 0, 1u << 0},
};

/* Rule r with the longest value of each kind in every placeholder: 20-character numbers, the longest string the
 * checkers pass, the longest set of dimensions, the widest box, one-digit indices. */
static tma_violation worst_case(tma_rule r) {
    static const uint32_t widest_box[5] = {4094, 4094, 4094, 4094, 4094};
    tma_violation v = {.rule = (uint32_t)r};
    uint32_t strings = 0, dims = 0, indices = 0, boxes = 0;
    for (size_t i = 0; i < sizeof arg_kinds / sizeof arg_kinds[0]; i++)
        if (arg_kinds[i].rule == r)
            strings = arg_kinds[i].strings, dims = arg_kinds[i].dims, indices = arg_kinds[i].indices,
            boxes = arg_kinds[i].boxes;
    for (int k = 0; k < TMA_RULE_MAX_ARGS; k++)
        v.arg[k] = strings >> k & 1u   ? tma_arg_s(", a wider swizzle (TMA_SWIZZLE_128B),")
                   : dims >> k & 1u    ? tma_arg_dims(0x15)
                   : boxes >> k & 1u   ? tma_arg_box(widest_box, 5)
                   : indices >> k & 1u ? tma_arg_u(4)
                                       : tma_arg_i(INT64_MIN);
    return v;
}

Test(rule_table, every_rule_has_a_status_and_a_message_that_fits) {
    for (int r = 0; r < TMA_RULE_COUNT_; r++) {
        const tma_status st = tma_rule_status((tma_rule)r);
        cr_expect_neq(st, TMA_OK, "rule %d reports TMA_OK", r);
        cr_expect_str_neq(tma_rule_status_name(st), "TMA_UNKNOWN_STATUS", "rule %d: status %d not in the table", r,
                          (int)st);
        const char *text = tma_rule_text((tma_rule)r);
        cr_expect(strlen(text) > 20, "rule %d: message \"%s\" too short to name field, value, limit and fix", r, text);
        const tma_violation v = worst_case((tma_rule)r);
        char msg[TMA_DIAG_MESSAGE_BYTES];
        const size_t n = tma_rule_format(&v, msg, sizeof msg);
        cr_expect_lt(n, sizeof msg, "rule %d (%s): the longest message is %zu characters, more than a tma_diag holds: %s",
                     r, tma_rule_status_name(st), n, msg);
        /* the public names say the same */
        char pub[TMA_DIAG_MESSAGE_BYTES];
        cr_expect_eq(tma_violation_format(&v, pub, sizeof pub), n, "rule %d: tma_violation_format's length", r);
        cr_expect_str_eq(pub, msg, "rule %d: tma_violation_format", r);
        cr_expect_eq(tma_violation_status(&v), st, "rule %d: tma_violation_status", r);
    }
    cr_expect_lt((uint32_t)TMA_RULE_COUNT_, TMA_RULE_TABLE_BASE(1), "libtma's rows below the other tables' base");
}

Test(rule_table, statuses_names_and_texts_come_from_one_table) {
#define CHECK_STATUS_(name, value, text)                                                                      \
    cr_expect_str_eq(tma_status_name(TMA_##name), "TMA_" #name, "name of %d", value);                          \
    cr_expect_str_eq(tma_strerror(TMA_##name), text, "text of %d", value);                                      \
    cr_expect_eq((int)TMA_##name, value, "value of TMA_" #name);
    TMA_STATUS_MAP(CHECK_STATUS_)
#undef CHECK_STATUS_
    cr_expect_str_eq(tma_status_name((tma_status)999), "TMA_UNKNOWN_STATUS", "unknown status name");
    cr_expect_str_eq(tma_strerror((tma_status)999), "unknown status", "unknown status text");
}

/* ---------------------------------------------------------------------------------------------
 * format
 * ------------------------------------------------------------------------------------------- */

static const char *fmt(tma_rule r, tma_rule_arg a0, tma_rule_arg a1, tma_rule_arg a2) {
    static char out[TMA_DIAG_MESSAGE_BYTES];
    tma_violation v = {.rule = (uint32_t)r, .arg = {a0, a1, a2}};
    tma_rule_format(&v, out, sizeof out);
    return out;
}

Test(format, values_of_every_kind) {
    cr_expect_str_eq(fmt(TMA_RULE_GLOBAL_DIM, tma_arg_u(3), tma_arg_u(UINT64_MAX), tma_arg_u(0)),
                     "global_dim[3] = 18446744073709551615 is outside 1..2^32: every dimension needs at least one "
                     "element and at most 4294967296; split a larger dimension in two",
                     "unsigned");
    cr_expect(strstr(fmt(TMA_RULE_DTYPE_UNKNOWN, tma_arg_i(-1), tma_arg_u(0), tma_arg_u(0)), "dtype = -1 is") != NULL,
              "signed");
    cr_expect(strstr(fmt(TMA_RULE_DTYPE_UNKNOWN, tma_arg_i(INT64_MIN), tma_arg_u(0), tma_arg_u(0)),
                     "dtype = -9223372036854775808 is") != NULL,
              "INT64_MIN");
    cr_expect(strstr(fmt(TMA_RULE_ADDRESS_ALIGN, tma_arg_x(0x7f00000abc08ull), tma_arg_u(16), tma_arg_s("")),
                     "global_address = 0x7f00000abc08 is not 16-byte aligned: use an address that is a multiple of "
                     "16") != NULL,
              "hex and a repeated placeholder");
}

Test(format, dimension_sets) {
    static const struct {
        uint32_t mask;
        const char *text;
    } cases[] = {
        {0x1, "dimension 0"},         {0x2, "dimension 1"},           {0x3, "dimensions 0..1"},
        {0x7, "dimensions 0..2"},     {0x1F, "dimensions 0..4"},      {0x5, "dimensions 0 and 2"},
        {0x15, "dimensions 0, 2 and 4"}, {0xD, "dimensions 0, 2 and 3"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char want[128];
        snprintf(want, sizeof want, "cannot step over %s, which", cases[i].text);
        const char *got = fmt(TMA_RULE_OVERLAP_HUGE, tma_arg_u(0), tma_arg_u(16), tma_arg_dims(cases[i].mask));
        cr_expect(strstr(got, want) != NULL, "mask 0x%x: \"%s\" lacks \"%s\"", cases[i].mask, got, want);
    }
}

Test(format, truncation_keeps_the_terminator_and_counts_the_whole) {
    tma_violation v = {.rule = TMA_RULE_BOX_DIM, .arg = {tma_arg_u(1), tma_arg_u(300)}};
    char full[TMA_DIAG_MESSAGE_BYTES], small[12];
    const size_t n = tma_rule_format(&v, full, sizeof full);
    cr_assert_eq(n, strlen(full), "the whole length");
    memset(small, 'x', sizeof small);
    cr_expect_eq(tma_rule_format(&v, small, sizeof small), n, "a short buffer still counts the whole message");
    cr_expect_eq(small[sizeof small - 1], '\0', "terminated");
    cr_expect(strncmp(small, full, sizeof small - 1) == 0, "the prefix: \"%s\"", small);
    cr_expect_eq(tma_rule_format(&v, NULL, 0), n, "cap 0 writes nothing");
}

Test(format, boxes) {
    static const struct {
        uint32_t dims[5], n;
        const char *text;
    } cases[] = {
        {{64}, 1, "{64}"},
        {{64, 256}, 2, "{64, 256}"},
        {{1, 2, 3, 4, 5}, 5, "{1, 2, 3, 4, 5}"},
        {{4094, 4095, 70000}, 3, "{4094, ?, ?}"}, /* 12 bits a value: past them, no number rather than a wrong one */
        {{0}, 0, "{}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const tma_rule_arg a[TMA_RULE_MAX_ARGS] = {tma_arg_box(cases[i].dims, cases[i].n)};
        char out[64];
        tma_rule_format_text("box {0}.", a, NULL, out, sizeof out);
        char want[64];
        snprintf(want, sizeof want, "box %s.", cases[i].text);
        cr_expect_str_eq(out, want, "case %zu", i);
    }
}

/* A message, then the rule beneath it: one pass, one terminator, truncated like any message. */
Test(format, a_cause_follows_its_message) {
    const uint32_t sub[2] = {64, 256};
    const tma_violation why = tma_violation_of(TMA_RULE_TILE_BOX_DESC, TMA_RULE_ARGS(tma_arg_box(sub, 2)));
    const tma_violation cause = tma_violation_of(TMA_RULE_BOX_DIM, TMA_RULE_ARGS(tma_arg_u(1), tma_arg_u(300)));
    char out[TMA_DIAG_MESSAGE_BYTES], a[TMA_DIAG_MESSAGE_BYTES], b[TMA_DIAG_MESSAGE_BYTES];
    const size_t n = tma_rule_format_text(tma_rule_text(TMA_RULE_TILE_BOX_DESC), why.arg, &cause, out, sizeof out);
    const size_t na = tma_violation_format(&why, a, sizeof a), nb = tma_violation_format(&cause, b, sizeof b);
    cr_expect_eq(n, na + nb, "the two lengths");
    cr_expect(strncmp(out, a, na) == 0 && strcmp(out + na, b) == 0, "\"%s\" is not \"%s\" + \"%s\"", out, a, b);
    cr_expect(strstr(out, "tile plan: the descriptor with box_dim = {64, 256} (the sub-box) breaks a rule: box_dim[1] "
                          "= 300 is outside 1..256") == out,
              "%s", out);
    char small[20];
    cr_expect_eq(tma_rule_format_text(tma_rule_text(TMA_RULE_TILE_BOX_DESC), why.arg, &cause, small, sizeof small), n,
                 "truncated: the whole length");
    cr_expect_eq(small[sizeof small - 1], '\0', "truncated: terminated");
}

/* Another layer's rules (the kernels' argument rules, kernels/kernel_rules.h in the design of tma/detail/rules.h):
 * rows of the same form, numbered from TMA_RULE_TABLE_BASE(1), formatted by the same formatter, statuses from the
 * same enum, and libtma's rules reachable through the same lookups. */
#define TEST_RULE_TABLE(X)                                                                                        \
    X(TEST_RULE_SIZES, ERR_ARG, "M = {0}, N = {1}, K = {2}: sizes must be >= 0")                                \
    X(TEST_RULE_PLAN_NULL, ERR_NULL_ARG, "plan = NULL: pass the address of a {0}")                               \
    X(TEST_RULE_GROUP_MAP, ERR_ARG, "group {0}: the map of {1}_g: ")
typedef enum test_rule {
    TEST_RULE_BASE_ = TMA_RULE_TABLE_BASE(1) - 1,
    TEST_RULE_TABLE(TMA_RULE_ROW_ENUM) TEST_RULE_END_
} test_rule;
static const char *test_rule_text(uint32_t r) {
    switch (r) {
        TEST_RULE_TABLE(TMA_RULE_ROW_TEXT)
    default: return tma_rule_text((tma_rule)r);
    }
}
static tma_status test_rule_status(uint32_t r) {
    switch (r) {
        TEST_RULE_TABLE(TMA_RULE_ROW_STATUS)
    default: return tma_rule_status((tma_rule)r);
    }
}

Test(format, another_layers_table_uses_the_same_formatter) {
    cr_expect_eq((uint32_t)TEST_RULE_SIZES, TMA_RULE_TABLE_BASE(1), "the first row at the base");
    const tma_violation v =
        tma_violation_of(TEST_RULE_SIZES, TMA_RULE_ARGS(tma_arg_i(-1), tma_arg_i(64), tma_arg_i(128)));
    char out[TMA_DIAG_MESSAGE_BYTES];
    tma_rule_format_text(test_rule_text(v.rule), v.arg, NULL, out, sizeof out);
    cr_expect_str_eq(out, "M = -1, N = 64, K = 128: sizes must be >= 0");
    cr_expect_eq(test_rule_status(v.rule), TMA_ERR_ARG);
    cr_expect_eq(test_rule_status(TEST_RULE_PLAN_NULL), TMA_ERR_NULL_ARG);
    /* a libtma rule through the other table's lookups, and as the cause of one of its rows */
    const tma_violation d = tma_violation_of(TMA_RULE_GLOBAL_DIM, TMA_RULE_ARGS(tma_arg_u(1), tma_arg_u(0)));
    cr_expect_eq(test_rule_status(d.rule), TMA_ERR_GLOBAL_DIM);
    const tma_violation g = tma_violation_of(TEST_RULE_GROUP_MAP, TMA_RULE_ARGS(tma_arg_u(3), tma_arg_s("A")));
    tma_rule_format_text(test_rule_text(g.rule), g.arg, &d, out, sizeof out);
    cr_expect(strstr(out, "group 3: the map of A_g: global_dim[1] = 0 is outside 1..2^32") == out, "%s", out);
}

/* ---------------------------------------------------------------------------------------------
 * geometry: the named box caps and cluster masks say what the checkers enforce
 * ------------------------------------------------------------------------------------------- */

Test(geometry, box_caps_are_the_checkers_limits) {
    static const tma_dtype types[] = {TMA_DTYPE_U8, TMA_DTYPE_BF16, TMA_DTYPE_F32, TMA_DTYPE_F64};
    static const tma_swizzle modes[] = {TMA_SWIZZLE_NONE, TMA_SWIZZLE_32B, TMA_SWIZZLE_64B, TMA_SWIZZLE_128B};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            const uint32_t es = (uint32_t)tma_dtype_size(types[t]), unit = tma_box_dim0_unit(es);
            const uint32_t cap0 = tma_box_dim_max(es, modes[m], 0), cap1 = tma_box_dim_max(es, modes[m], 1);
            cr_expect_eq(unit * es, TMA_BOX_INNER_ALIGN, "%u-byte elements: unit %u", es, unit);
            cr_expect_eq(cap1, TMA_MAX_BOX_DIM, "dimension 1 is capped by the box rule only");
            tma_tiled_desc d = {.dtype = types[t], .rank = 2, .global_address = FAKE_ADDR,
                                .global_dim = {4096, 4096}, .global_stride = {4096u * 8u},
                                .box_dim = {cap0, 4}, .swizzle = modes[m]};
            tma_diag diag;
            cr_expect_eq(tma_check_tiled(&d, &diag), TMA_OK, "%u-byte elements, swizzle %d: box_dim[0] = %u: %s", es,
                         (int)modes[m], cap0, diag.message);
            d.box_dim[0] = cap0 + unit; /* the next legal width is past the cap */
            const tma_status st = tma_check_tiled(&d, &diag);
            cr_expect(st == TMA_ERR_BOX_SWIZZLE_SPAN || st == TMA_ERR_BOX_DIM,
                      "%u-byte elements, swizzle %d: box_dim[0] = %u passed (%s)", es, (int)modes[m], cap0 + unit,
                      tma_status_name(st));
            d.box_dim[0] = cap0, d.box_dim[1] = cap1 + 1u;
            cr_expect_eq(tma_check_tiled(&d, NULL), TMA_ERR_BOX_DIM, "box_dim[1] past tma_box_dim_max");
        }
    cr_expect_eq(tma_box_dim_max(2, TMA_SWIZZLE_128B, 0), 64u, "64 bf16 per 128B row");
    cr_expect_eq(tma_box_dim_max(4, TMA_SWIZZLE_128B, 0), 32u, "32 f32 per 128B row");
    cr_expect_eq(tma_box_dim_max(0, TMA_SWIZZLE_128B, 0), 0u, "no type, no box");
    cr_expect_eq(tma_box_dim0_unit(0), 0u, "no type, no unit");
}

Test(geometry, cluster_masks_name_every_block_and_no_other) {
    for (uint32_t n = 1; n <= TMA_MAX_CLUSTER_BLOCKS; n++) {
        const uint16_t all = tma_cluster_mask_all(n);
        cr_expect_eq((uint32_t)__builtin_popcount(all), n, "cluster of %u: %u bits", n, (unsigned)all);
        cr_expect_eq(tma_check_multicast(all, n, NULL), TMA_OK, "cluster of %u: mask 0x%x", n, (unsigned)all);
        if (n < TMA_MAX_CLUSTER_BLOCKS)
            cr_expect_eq(tma_check_multicast(tma_cluster_mask_all(n + 1u), n, NULL), TMA_ERR_MULTICAST_MASK,
                         "cluster of %u: a bit past it", n);
        uint16_t masks[1] = {all};
        for (uint32_t r = 0; r < n; r++)
            cr_expect_eq(tma_multicast_rx_bytes(masks, 1, r, 4096), 4096u, "rank %u receives", r);
    }
    cr_expect_eq(tma_cluster_mask_all(2), 0x3u, "a pair");
    cr_expect_eq(tma_cluster_mask_all(0), 0u, "no block");
    cr_expect_eq(tma_cluster_mask_all(40), 0xFFFFu, "capped at the 16 bits of a cta_mask");
}

/* ---------------------------------------------------------------------------------------------
 * nesting
 * ------------------------------------------------------------------------------------------- */

/* A row-major rows x cols bf16 matrix described as {64, rows, cols / 64}, strides {pitch, 128 bytes}: the layout
 * of a public Hopper GEMM's maps (dimension 2's stride is smaller than dimension 1's). */
static tma_tiled_desc view3d(uint64_t rows, uint64_t cols, void *base) {
    tma_tiled_desc d = {
        .dtype = TMA_DTYPE_BF16,
        .rank = 3,
        .global_address = base,
        .global_dim = {64, rows, cols / 64},
        .global_stride = {cols * 2, 128},
        .box_dim = {64, 128, 1},
        .swizzle = TMA_SWIZZLE_128B,
    };
    return d;
}

Test(nesting, three_d_view_of_a_gemm_is_accepted_for_loads_and_stores) {
    tma_tiled_desc d = view3d(4096, 4096, FAKE_ADDR);
    tma_diag diag;
    cr_assert_eq(tma_check_tiled(&d, &diag), TMA_OK, "the 3-D view is one-to-one: %s", diag.message);
    const int32_t c[5] = {0, 128, 5, 0, 0};
    cr_expect_eq(tma_check_store_coords(&d, c, &diag), TMA_OK, "stores through it: %s", diag.message);
    cr_expect_eq(tma_global_extent_bytes(&d), (size_t)4096 * 4096 * 2, "its extent is the matrix");
    d.flags = TMA_DESC_STORE; /* the store-side rules find nothing in a view that nests */
    cr_expect_eq(tma_check_tiled(&d, &diag), TMA_OK, "as a store map: %s", diag.message);
    cr_expect_eq(tma_check_store_coords(&d, c, &diag), TMA_OK, "stores with the flag set: %s", diag.message);
    const tma_box_info box = tma_box_info_of(&d);
    cr_expect_eq(box.flags & TMA_BOX_LOAD_ONLY, 0u, "not load-only");
}

Test(nesting, every_order_of_dense_strides_is_accepted) {
    /* f32 {8, 3, 5, 7, 2}: dense strides in some order of the outer dimensions. */
    static const uint64_t dims[5] = {8, 3, 5, 7, 2};
    static const uint32_t perms[24][4] = {
        {1, 2, 3, 4}, {1, 2, 4, 3}, {1, 3, 2, 4}, {1, 3, 4, 2}, {1, 4, 2, 3}, {1, 4, 3, 2}, {2, 1, 3, 4}, {2, 1, 4, 3},
        {2, 3, 1, 4}, {2, 3, 4, 1}, {2, 4, 1, 3}, {2, 4, 3, 1}, {3, 1, 2, 4}, {3, 1, 4, 2}, {3, 2, 1, 4}, {3, 2, 4, 1},
        {3, 4, 1, 2}, {3, 4, 2, 1}, {4, 1, 2, 3}, {4, 1, 3, 2}, {4, 2, 1, 3}, {4, 2, 3, 1}, {4, 3, 1, 2}, {4, 3, 2, 1},
    };
    for (int p = 0; p < 24; p++) {
        tma_tiled_desc d = {.dtype = TMA_DTYPE_F32, .rank = 5, .global_address = FAKE_ADDR, .box_dim = {8, 1, 1, 1, 1}};
        memcpy(d.global_dim, dims, sizeof dims);
        uint64_t stride = 32; /* one row of 8 f32 */
        for (int k = 0; k < 4; k++) {
            const uint32_t i = perms[p][k];
            d.global_stride[i - 1] = stride;
            stride *= dims[i];
        }
        tma_diag diag;
        cr_expect_eq(tma_check_tiled(&d, &diag), TMA_OK, "order %u%u%u%u: %s", perms[p][0], perms[p][1], perms[p][2],
                     perms[p][3], diag.message);
        cr_expect_eq(tma_global_extent_bytes(&d), (size_t)8 * 3 * 5 * 7 * 2 * 4, "order %d: extent", p);
    }
}

/* The overlap rule's message for d as a store map; as a load map (no TMA_DESC_STORE) d must be valid, load-only. */
static tma_diag overlap_diag(const tma_tiled_desc *d) {
    tma_diag diag;
    cr_assert_eq(tma_check_tiled(d, &diag), TMA_OK, "a load map may overlap: %s %s", tma_status_name(diag.status),
                 diag.message);
    cr_assert_eq(tma_box_info_of(d).flags & TMA_BOX_LOAD_ONLY, TMA_BOX_LOAD_ONLY, "its box facts say load-only");
    tma_tiled_desc stored = *d;
    stored.flags |= TMA_DESC_STORE;
    cr_assert_eq(tma_check_tiled(&stored, &diag), TMA_ERR_GLOBAL_STRIDE_OVERLAP, "expected an overlap: %s %s",
                 tma_status_name(diag.status), diag.message);
    cr_expect(strstr(diag.message, "race with itself") != NULL, "says why a store may not: %s", diag.message);
    cr_expect(strstr(diag.message, "TMA_DESC_ALLOW_OVERLAP") == NULL, "no longer suggests the flag: %s",
              diag.message);
    tma_diag store;
    const int32_t zero[5] = {0};
    cr_assert_eq(tma_check_store_coords(d, zero, &store), TMA_ERR_GLOBAL_STRIDE_OVERLAP, "a store through it");
    cr_expect_str_eq(store.message, diag.message, "a store's check names the same dimensions");
    return diag;
}

Test(nesting, stride_in_elements_is_named) {
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_F32, FAKE_ADDR, 1024, 1024, 1024 /* elements, not bytes */, 32, 32,
                                   TMA_SWIZZLE_128B);
    const tma_diag diag = overlap_diag(&d);
    cr_expect(strstr(diag.message, "global_stride[0] = 1024 bytes is smaller than the 4096 bytes of dimension 0 it "
                                   "steps over, so dimension 1 overlaps dimension 0") != NULL,
              "names both dimensions: %s", diag.message);
    cr_expect(strstr(diag.message, "Strides are in bytes (1024 f32 elements are 4096 bytes)") != NULL,
              "suggests the unit mistake: %s", diag.message);
}

Test(nesting, swapped_dimensions_are_named) {
    /* 100 rows x 4000 columns of f32 with its pitch, but dims given as {rows, cols} */
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_F32, FAKE_ADDR, 4000, 100, 400, 32, 32, TMA_SWIZZLE_128B);
    d.global_dim[0] = 4000, d.global_dim[1] = 100, d.global_stride[0] = 400;
    const tma_diag diag = overlap_diag(&d);
    cr_expect(strstr(diag.message, "global_dim[1] = 100 and global_dim[0] = 4000 look swapped") != NULL,
              "suggests the swap: %s", diag.message);
}

Test(nesting, three_d_overlap_names_the_inner_dimension) {
    /* the 3-D view with dimension 2's stride 64 bytes: dimension 2 lands inside dimension 0's 128-byte rows */
    tma_tiled_desc d = view3d(256, 256, FAKE_ADDR);
    d.global_stride[1] = 64;
    const tma_diag diag = overlap_diag(&d);
    cr_expect(strstr(diag.message, "global_stride[1] = 64 bytes is smaller than the 128 bytes of dimension 0 it "
                                   "steps over, so dimension 2 overlaps dimension 0: ") != NULL,
              "%s", diag.message);
    cr_expect(strstr(diag.message, "store into a destination whose strides do not overlap, e.g. global_stride[1] >= "
                                   "128") != NULL,
              "%s", diag.message);
    /* and with dimension 2's stride between a row and the span of dimensions 0..1 (255 x 512 + 128 bytes) */
    d.global_stride[1] = 1024;
    const tma_diag d2 = overlap_diag(&d);
    cr_expect(strstr(d2.message, "global_stride[1] = 1024 bytes is smaller than the 130688 bytes of dimensions 0..1 "
                                 "it steps over, so dimension 2 overlaps dimension 1") != NULL,
              "sorted by stride, dimension 1 is inside dimension 2: %s", d2.message);
}

Test(nesting, zero_strides) {
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_U8, FAKE_ADDR, 4, 64, 0, 4, 64, TMA_SWIZZLE_NONE);
    tma_diag diag = overlap_diag(&d);
    cr_expect(strstr(diag.message, "global_stride[0] = 0 bytes is smaller than the 64 bytes") != NULL, "%s",
              diag.message);
    d.global_dim[1] = 1; /* a dimension of one index reaches no second byte: any stride will do */
    d.box_dim[1] = 1;
    cr_expect_eq(tma_check_tiled(&d, &diag), TMA_OK, "global_dim[1] = 1 with stride 0: %s", diag.message);
}

Test(nesting, equal_strides_overlap) {
    tma_tiled_desc d = {.dtype = TMA_DTYPE_F32, .rank = 3, .global_address = FAKE_ADDR, .global_dim = {4, 2, 2},
                        .global_stride = {64, 64}, .box_dim = {4, 2, 2}};
    const tma_diag diag = overlap_diag(&d);
    cr_expect(strstr(diag.message, "dimension 2 overlaps dimension 1") != NULL, "%s", diag.message);
}

Test(nesting, load_only_views_pass_and_refuse_stores) {
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_U8, FAKE_ADDR, 128, 128, 64, 8, 32, TMA_SWIZZLE_NONE); /* rows overlap */
    tma_diag diag;
    const int32_t c[5] = {0};
    cr_expect_eq(tma_check_tiled(&d, &diag), TMA_OK, "a load map, no flag needed: %s", diag.message);
    cr_expect_eq(tma_check_coords(&d, c, &diag), TMA_OK, "loads: %s", diag.message);
    cr_expect_eq(tma_check_store_coords(&d, c, &diag), TMA_ERR_GLOBAL_STRIDE_OVERLAP, "stores refused");
    cr_expect(strstr(diag.message, "global_stride[0] = 64 bytes is smaller than the 128 bytes of dimension 0 it steps "
                                   "over, so dimension 1 overlaps dimension 0: two coordinates reach the same bytes, "
                                   "so a store through this map would race with itself (loads are fine): store into "
                                   "a destination whose strides do not overlap, e.g. "
                                   "global_stride[0] >= 128") != NULL,
              "the store's message names the dimensions and the fix: %s", diag.message);
    cr_expect_eq(tma_box_info_of(&d).flags & TMA_BOX_LOAD_ONLY, TMA_BOX_LOAD_ONLY, "the box facts say load-only");
    d.flags = TMA_DESC_ALLOW_OVERLAP; /* accepted for compatibility: it changes nothing */
    cr_expect_eq(tma_check_tiled(&d, &diag), TMA_OK, "with the old flag: %s", diag.message);
    cr_expect_eq(tma_check_store_coords(&d, c, &diag), TMA_ERR_GLOBAL_STRIDE_OVERLAP, "the old flag allows no store");
    d.flags = TMA_DESC_STORE; /* a map made to be stored through is refused when it is checked */
    cr_expect_eq(tma_check_tiled(&d, &diag), TMA_ERR_GLOBAL_STRIDE_OVERLAP, "a store map");
}

/* Views kernels read through, which the driver encodes: a broadcast (stride 0: every row of the box is the same
 * row), a sliding window (rows one 16-byte chunk apart: each row starts inside the previous one), and tiles that share
 * their halo rows. Each is a valid load map, its box facts say load-only, and a store through it is refused with the
 * rule's message. */
Test(nesting, views_kernels_read_through_are_load_maps) {
    const struct {
        const char *what;
        tma_tiled_desc d;
    } views[] = {
        {"broadcast row (stride 0)",
         {.dtype = TMA_DTYPE_BF16, .rank = 2, .global_address = FAKE_ADDR, .global_dim = {64, 128},
          .global_stride = {0}, .box_dim = {64, 64}, .swizzle = TMA_SWIZZLE_128B}},
        {"broadcast of a bias over a batch (stride 0 in dimension 2)",
         {.dtype = TMA_DTYPE_F32, .rank = 3, .global_address = FAKE_ADDR, .global_dim = {32, 16, 8},
          .global_stride = {128, 0}, .box_dim = {32, 16, 8}}},
        {"sliding window (rows 16 bytes apart)",
         {.dtype = TMA_DTYPE_U8, .rank = 2, .global_address = FAKE_ADDR, .global_dim = {64, 1000},
          .global_stride = {16}, .box_dim = {64, 32}}},
        {"tiles with a halo (24 rows tall, 16 rows apart)",
         {.dtype = TMA_DTYPE_F32, .rank = 3, .global_address = FAKE_ADDR, .global_dim = {32, 24, 8},
          .global_stride = {128, 16 * 128}, .box_dim = {32, 24, 1}}},
    };
    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) {
        const tma_tiled_desc *d = &views[i].d;
        tma_diag diag;
        const int32_t c[5] = {0};
        cr_expect_eq(tma_check_tiled(d, &diag), TMA_OK, "%s: %s", views[i].what, diag.message);
        cr_expect_eq(tma_check_coords(d, c, &diag), TMA_OK, "%s: a load: %s", views[i].what, diag.message);
        cr_expect_eq(tma_box_info_of(d).flags & TMA_BOX_LOAD_ONLY, TMA_BOX_LOAD_ONLY, "%s: load-only", views[i].what);
        cr_expect_eq(tma_check_store_coords(d, c, &diag), TMA_ERR_GLOBAL_STRIDE_OVERLAP, "%s: a store",
                     views[i].what);
        cr_expect(strstr(diag.message, "race with itself") != NULL, "%s: %s", views[i].what, diag.message);
    }
}

/* Brute force: for a small tensor, whether two coordinates reach a common byte. Rows are dimension 0's bytes,
 * rounded to the 16-byte chunk a store writes (the rule's own reading; see rules.h). */
static int overlaps_by_enumeration(const tma_tiled_desc *d) {
    enum { MAXR = 4096 };
    static uint64_t start[MAXR];
    uint64_t n = 0, row = tma_rule_store_row_bytes(d->global_dim[0], tma_rule_dtype_bytes(d->dtype));
    uint64_t idx[5] = {0};
    for (;;) {
        uint64_t off = 0;
        for (uint32_t i = 1; i < d->rank; i++)
            off += idx[i] * d->global_stride[i - 1];
        start[n++] = off;
        uint32_t i = 1;
        while (i < d->rank && ++idx[i] == d->global_dim[i])
            idx[i++] = 0;
        if (i == d->rank)
            break;
    }
    for (uint64_t a = 0; a < n; a++)
        for (uint64_t b = a + 1; b < n; b++) {
            uint64_t lo = start[a] < start[b] ? start[a] : start[b], hi = start[a] ^ start[b] ^ lo;
            if (hi - lo < row)
                return 1;
        }
    return 0;
}

Test(nesting, agrees_with_brute_force_on_random_small_tensors) {
    seed_rng("nesting::brute_force");
    unsigned accepted = 0, refused = 0, interleaved = 0;
    for (int it = 0; it < 20000; it++) {
        tma_tiled_desc d = {.dtype = (tma_dtype)(rnd() % TMA_DTYPE_COUNT_), .global_address = FAKE_ADDR};
        d.rank = 2 + (uint32_t)(rnd() % 3);
        d.global_dim[0] = 1 + rnd() % 40;
        for (uint32_t i = 0; i < d.rank; i++)
            d.box_dim[i] = 1;
        d.box_dim[0] = 16 / tma_rule_dtype_bytes(d.dtype);
        for (uint32_t i = 1; i < d.rank; i++) {
            d.global_dim[i] = 1 + rnd() % 6;
            d.global_stride[i - 1] = 16 * (rnd() % 48);
        }
        tma_overlap o;
        const int nest = tma_rule_strides_nest(&d, &o), one_to_one = tma_rule_one_to_one(&d, &o);
        const int overlap = overlaps_by_enumeration(&d);
        char what[200];
        snprintf(what, sizeof what, "%s dims {%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "} strides {%" PRIu64
                 ",%" PRIu64 ",%" PRIu64 "}", tma_dtype_name(d.dtype), d.global_dim[0], d.global_dim[1],
                 d.global_dim[2], d.global_dim[3], d.global_stride[0], d.global_stride[1], d.global_stride[2]);
        /* nesting implies one-to-one, and the rule is exact: one-to-one exactly when no two rows collide */
        cr_assert(!(nest && overlap), "nesting strides that overlap: %s", what);
        cr_assert_eq(one_to_one, !overlap, "the rule says %s, enumeration says %s: %s",
                     one_to_one ? "one-to-one" : "overlap", overlap ? "overlap" : "one-to-one", what);
        accepted += one_to_one;
        refused += !one_to_one;
        interleaved += one_to_one && !nest;
        tma_diag diag;
        cr_assert_eq(tma_check_tiled(&d, &diag), TMA_OK, "a load map may overlap: %s: %s", what, diag.message);
        d.flags = TMA_DESC_STORE;
        const tma_status st = tma_check_tiled(&d, &diag);
        cr_assert_eq(st == TMA_OK, one_to_one, "the checker and the rule differ: %s: %s", what, diag.message);
    }
    cr_log_info("nesting: %u one-to-one (%u of them with interleaved strides, found by the search), %u overlapping",
                accepted, interleaved, refused);
    cr_expect_gt(accepted, 1000, "the generator makes enough valid views");
    cr_expect_gt(refused, 1000, "and enough overlapping ones");
    cr_expect_gt(interleaved, 100, "and enough interleaved one-to-one ones to exercise the search");
}

/* ---------------------------------------------------------------------------------------------
 * copy_rules
 * ------------------------------------------------------------------------------------------- */

static const char *copy_message(const tma_copy_facts *f, uint32_t rank, const int32_t c[5], uint32_t smem, int store,
                                tma_status want) {
    static char msg[TMA_DIAG_MESSAGE_BYTES];
    tma_violation v;
    tma_rule_sink s = tma_rule_sink_make(&v, 1);
    const tma_status st = tma_rules_copy(f, rank, c, smem, store, &s);
    cr_assert_eq(st, want, "status %s, want %s", tma_status_name(st), tma_status_name(want));
    msg[0] = '\0';
    if (s.count)
        tma_rule_format(&v, msg, sizeof msg);
    return msg;
}

Test(copy_rules, each_rule_and_its_message) {
    const tma_copy_facts f = {.rank = 2, .elem_bytes = 1};
    const int32_t ok[5] = {16, 3}, c114[5] = {114, 0}, neg[5] = {16, -1};
    cr_expect_str_empty(copy_message(&f, 2, ok, 1024, 0, TMA_OK), "a good load");
    cr_expect(strstr(copy_message(&f, 2, c114, 1024, 0, TMA_ERR_COORD_ALIGN),
                     "TMA load at coord[0] = 114 with 1-byte elements: coord[0] * elem = 114 bytes is not a multiple "
                     "of 16") != NULL,
              "coord align");
    cr_expect(strstr(copy_message(&f, 2, neg, 1024, 1, TMA_ERR_COORD_NEGATIVE_STORE), "TMA store at coord[1] = -1") !=
                  NULL,
              "negative store");
    cr_expect_str_empty(copy_message(&f, 2, neg, 1024, 0, TMA_OK), "negative load coordinates fill");
    cr_expect(strstr(copy_message(&f, 2, ok, 1024 + 64, 0, TMA_ERR_SMEM_ALIGN),
                     "shared-memory address 0x440 of a TMA load is not 128-byte aligned") != NULL,
              "smem align");
    cr_expect(strstr(copy_message(&f, 3, ok, 1024, 1, TMA_ERR_RANK), "TMA store of rank 3 through a map of rank 2: "
                                                                    "use tma_store_2d") != NULL,
              "rank");
    const tma_copy_facts il = {.rank = 3, .elem_bytes = 2, .interleaved = 1};
    const int32_t odd[5] = {3, 0, 0};
    cr_expect_str_empty(copy_message(&il, 3, odd, ~0u, 0, TMA_OK), "interleaved maps: coord[0] rule not measured");
    const tma_copy_facts lo = {.rank = 2, .elem_bytes = 4, .load_only = 1};
    cr_expect(strstr(copy_message(&lo, 2, ok, ~0u, 1, TMA_ERR_GLOBAL_STRIDE_OVERLAP),
                     "TMA store through a load-only map (TMA_BOX_LOAD_ONLY: two of its coordinates reach the same "
                     "bytes), so the store would race with itself") != NULL,
              "store through a load-only map");
    cr_expect_str_empty(copy_message(&lo, 2, ok, ~0u, 0, TMA_OK), "a load through a load-only map");
    const tma_copy_facts tm = {.rank = 2, .elem_bytes = 4, .is_template = 1};
    cr_expect(strstr(copy_message(&tm, 2, ok, ~0u, 0, TMA_ERR_ARG), "TMA load through a template map "
                                                                    "(TMA_DESC_TEMPLATE)") != NULL,
              "load through a template");
    cr_expect(strstr(copy_message(&tm, 2, ok, ~0u, 1, TMA_ERR_ARG), "TMA store through a template map") != NULL,
              "store through a template");
    cr_expect(strstr(copy_message(&f, 2, NULL, ~0u, 0, TMA_ERR_NULL_ARG), "coord = NULL") != NULL, "NULL coords");
}

Test(copy_rules, host_check_gives_the_same_message) {
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_U8, FAKE_ADDR, 64, 256, 256, 8, 64, TMA_SWIZZLE_NONE);
    const int32_t c114[5] = {114, 0};
    tma_diag diag;
    cr_assert_eq(tma_check_coords(&d, c114, &diag), TMA_ERR_COORD_ALIGN, "u8 at 114");
    const tma_copy_facts f = tma_rule_copy_facts(&d);
    cr_expect_str_eq(diag.message, copy_message(&f, 2, c114, ~0u, 0, TMA_ERR_COORD_ALIGN), "one message");
    cr_expect_eq(diag.status, TMA_ERR_COORD_ALIGN, "diag status");
    cr_expect_eq(tma_check_coords(&d, (const int32_t[5]){112, 0}, &diag), TMA_OK, "u8 at 112");
    cr_expect_str_empty(diag.message, "an OK diag is empty");
}

/* ---------------------------------------------------------------------------------------------
 * check_all_independent: mistakes in unrelated fields are all reported
 * ------------------------------------------------------------------------------------------- */

/* Each breaks one rule of a valid f32 rank-3 descriptor and reads no field another one changes. */
typedef struct mistake {
    const char *what;
    tma_status status;
    void (*apply)(tma_tiled_desc *);
} mistake;

static void m_l2(tma_tiled_desc *d) { d->l2_promotion = (tma_l2_promotion)9; }
static void m_oob(tma_tiled_desc *d) { d->oob_fill = (tma_oob_fill)5; }
static void m_addr(tma_tiled_desc *d) { d->global_address = (void *)(uintptr_t)0x100008; }
static void m_dim(tma_tiled_desc *d) { d->global_dim[2] = 0; }
static void m_stride(tma_tiled_desc *d) { d->global_stride[1] = UINT64_C(1) << 41; }
static void m_box(tma_tiled_desc *d) { d->box_dim[1] = 300; }
static void m_estride(tma_tiled_desc *d) { d->element_stride[2] = 9; }
static void m_inner(tma_tiled_desc *d) { d->box_dim[0] = 6; }
static void m_estride0(tma_tiled_desc *d) { d->element_stride[0] = 2; }

static const mistake mistakes[] = {
    {"l2", TMA_ERR_L2_PROMOTION, m_l2},       {"oob", TMA_ERR_OOB_FILL, m_oob},
    {"address", TMA_ERR_GLOBAL_ADDRESS_ALIGN, m_addr}, {"dim", TMA_ERR_GLOBAL_DIM, m_dim},
    {"stride", TMA_ERR_GLOBAL_STRIDE_RANGE, m_stride}, {"box", TMA_ERR_BOX_DIM, m_box},
    {"estride", TMA_ERR_ELEMENT_STRIDE, m_estride}, {"inner", TMA_ERR_BOX_INNER_BYTES, m_inner},
    {"estride0", TMA_ERR_ELEMENT_STRIDE, m_estride0},
};
enum { NMISTAKES = sizeof mistakes / sizeof mistakes[0] };

Test(check_all_independent, every_subset_of_mistakes_is_reported_in_full) {
    for (unsigned set = 1; set < (1u << NMISTAKES); set++) {
        tma_tiled_desc d = {.dtype = TMA_DTYPE_F32, .rank = 3, .global_address = FAKE_ADDR,
                            .global_dim = {64, 16, 8}, .global_stride = {256, 4096}, .box_dim = {32, 8, 4}};
        unsigned want = 0;
        char names[256] = "";
        for (int m = 0; m < NMISTAKES; m++)
            if (set >> m & 1u) {
                mistakes[m].apply(&d);
                want++;
                strcat(names, mistakes[m].what), strcat(names, " ");
            }
        tma_diag diags[16];
        size_t count = 0;
        tma_check_tiled_all(&d, diags, 16, &count);
        cr_assert_eq(count, want, "mistakes {%s}: %zu reported, %u made", names, count, want);
        for (int m = 0, k = 0; m < NMISTAKES; m++) /* each mistake's status is among the reports */
            if (set >> m & 1u) {
                int found = 0;
                for (size_t i = 0; i < count; i++)
                    found |= diags[i].status == mistakes[m].status;
                cr_assert(found, "mistakes {%s}: %s not reported", names, mistakes[m].what);
                k++;
            }
    }
}

/* ---------------------------------------------------------------------------------------------
 * layout
 * ------------------------------------------------------------------------------------------- */

Test(layout, version_is_the_generated_one) {
    cr_expect_eq(tma_version(), (unsigned)TMA_VERSION_NUMBER, "library %u, headers %u", tma_version(),
                 (unsigned)TMA_VERSION_NUMBER);
    cr_expect_str_eq(tma_version_string(), TMA_VERSION_STRING, "version string");
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", TMA_VERSION_MAJOR, TMA_VERSION_MINOR, TMA_VERSION_PATCH);
    cr_expect_str_eq(tma_version_string(), want, "MAJOR.MINOR.PATCH");
}

Test(layout, tma_tensor_is_256_bytes_aligned_to_128_without_cuda_headers) {
    cr_expect_eq(sizeof(tma_map), 128, "tma_map holds the 128-byte CUtensorMap");
    cr_expect_eq(alignof(tma_map), 128, "CUDA 13's alignment");
    cr_expect_eq(sizeof(tma_tensor), 256, "tma_tensor");
    cr_expect_eq(alignof(tma_tensor), 128, "tma_tensor alignment");
    cr_expect_eq(offsetof(tma_tensor, box), 128, "the box facts follow the map");
}

/* ---------------------------------------------------------------------------------------------
 * Edits: a field of a map changed on the device, mirrored on a descriptor
 * ------------------------------------------------------------------------------------------- */

Test(edits, each_field_changes_its_descriptor_field) {
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_F32, FAKE_ADDR, 64, 64, 256, 8, 32, TMA_SWIZZLE_128B);
    tma_desc_apply_edit(&d, tma_edit(TMA_FIELD_GLOBAL_ADDRESS, 0, 0x200000));
    tma_desc_apply_edit(&d, tma_edit(TMA_FIELD_RANK, 0, 3));
    tma_desc_apply_edit(&d, tma_edit(TMA_FIELD_GLOBAL_DIM, 2, 7));
    tma_desc_apply_edit(&d, tma_edit(TMA_FIELD_GLOBAL_STRIDE, 2, 256 * 64));
    tma_desc_apply_edit(&d, tma_edit(TMA_FIELD_BOX_DIM, 2, 3));
    tma_desc_apply_edit(&d, tma_edit(TMA_FIELD_ELEMENT_STRIDE, 1, 2));
    tma_desc_apply_edit(&d, tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_TF32));
    tma_desc_apply_edit(&d, tma_edit(TMA_FIELD_SWIZZLE, 0, TMA_SWIZZLE_64B));
    tma_desc_apply_edit(&d, tma_edit(TMA_FIELD_OOB_FILL, 0, TMA_OOB_NAN));
    tma_desc_apply_edit(&d, tma_edit(TMA_FIELD_BOX_DIM, 0, 16));
    cr_expect_eq((uintptr_t)d.global_address, 0x200000, "address");
    cr_expect_eq(d.rank, 3, "rank");
    cr_expect_eq(d.global_dim[2], 7, "global_dim[2]");
    cr_expect_eq(d.global_stride[1], 256 * 64, "global_stride of dimension 2 is global_stride[1]");
    cr_expect_eq(d.box_dim[2], 3, "box_dim[2]");
    cr_expect_eq(d.element_stride[1], 2, "element_stride[1]");
    cr_expect_eq(d.dtype, TMA_DTYPE_TF32, "dtype");
    cr_expect_eq(d.swizzle, TMA_SWIZZLE_64B, "swizzle");
    cr_expect_eq(d.oob_fill, TMA_OOB_NAN, "fill");
    tma_diag diag;
    cr_expect_eq(tma_check_tiled(&d, &diag), TMA_OK, "the edited descriptor: %s", diag.message);
    /* an edit naming no field or no dimension changes nothing */
    const tma_tiled_desc before = d;
    tma_desc_apply_edit(&d, tma_edit(TMA_FIELD_GLOBAL_STRIDE, 0, 16));
    tma_desc_apply_edit(&d, tma_edit(TMA_FIELD_BOX_DIM, 5, 16));
    tma_desc_apply_edit(&d, tma_edit(TMA_FIELD_COUNT_, 0, 16));
    cr_expect(desc_equal(&d, &before), "invalid edits left the descriptor alone");
    cr_expect(!tma_edit_is_valid(tma_edit(TMA_FIELD_GLOBAL_STRIDE, 0, 16)), "stride of dimension 0 is no field");
}

Test(edits, a_zero_map_needs_every_field_set) {
    tma_tiled_desc d = tma_rule_zero_map_desc();
    size_t count = 0;
    cr_expect_neq(tma_check_tiled_all(&d, NULL, 0, &count), TMA_OK, "a zero map is not usable");
    cr_expect_gt(count, 1, "several fields are missing (%zu rules)", count);
    const tma_map_edit build[] = {
        tma_edit(TMA_FIELD_GLOBAL_ADDRESS, 0, 0x100000), tma_edit(TMA_FIELD_RANK, 0, 2),
        tma_edit(TMA_FIELD_GLOBAL_DIM, 0, 64),           tma_edit(TMA_FIELD_GLOBAL_DIM, 1, 8),
        tma_edit(TMA_FIELD_GLOBAL_STRIDE, 1, 64),        tma_edit(TMA_FIELD_BOX_DIM, 0, 16),
        tma_edit(TMA_FIELD_BOX_DIM, 1, 8),               tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_U8),
    };
    for (size_t i = 0; i < sizeof build / sizeof build[0]; i++)
        tma_desc_apply_edit(&d, build[i]);
    tma_diag diag;
    cr_expect_eq(tma_check_tiled(&d, &diag), TMA_OK, "built from zeros: %s", diag.message);
    cr_expect_eq(d.l2_promotion, TMA_L2_NONE, "no instruction sets the L2 promotion");
}

Test(edits, operand_encodings_for_each_cuda_version) {
    const tma_map_edit stride = tma_edit(TMA_FIELD_GLOBAL_STRIDE, 1, 4096);
    cr_expect_eq(tma_rule_edit_operand(stride, 12040), 256, "CUDA 12.4: the stride in 16-byte units");
    cr_expect_eq(tma_rule_edit_operand(stride, 12050), 4096, "CUDA 12.5: bytes (PTX ISA 8.5)");
    cr_expect_eq(tma_rule_edit_operand(stride, 13000), 4096, "CUDA 13.0: bytes");
    cr_expect_eq(tma_rule_edit_operand(tma_edit(TMA_FIELD_RANK, 0, 5), 13000), 4, "rank - 1");
    cr_expect_eq(tma_rule_edit_operand(tma_edit(TMA_FIELD_BOX_DIM, 1, 256), 13000), 256, "box_dim as it is");
    cr_expect_eq(tma_rule_edit_operand(tma_edit(TMA_FIELD_GLOBAL_DIM, 0, 1ull << 32), 13000), 1ull << 32,
                 "global_dim as it is");
    /* elemtype codes: every type has its own, all within the 13 the instruction takes */
    unsigned seen = 0;
    for (int t = 0; t < TMA_DTYPE_COUNT_; t++) {
        const uint64_t code = tma_rule_edit_operand(tma_edit(TMA_FIELD_DTYPE, 0, (uint64_t)t), 13000);
        cr_expect_lt(code, 13, "%s: code %" PRIu64, tma_dtype_name((tma_dtype)t), code);
        cr_expect_eq(seen >> code & 1u, 0, "%s: code %" PRIu64 " taken twice", tma_dtype_name((tma_dtype)t), code);
        seen |= 1u << code;
    }
}

Test(edits, leaving_tf32_needs_the_map_encoded_again) {
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_TF32, FAKE_ADDR, 64, 64, 256, 8, 32, TMA_SWIZZLE_128B);
    d.l2_promotion = TMA_L2_256B;
    const tma_dtype others[] = {TMA_DTYPE_F32, TMA_DTYPE_U32, TMA_DTYPE_F16, TMA_DTYPE_F32_FTZ};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        cr_expect(tma_rule_edit_needs_reencode(&d, tma_edit(TMA_FIELD_DTYPE, 0, others[i])), "tf32 -> %s",
                  tma_dtype_name(others[i]));
    cr_expect(!tma_rule_edit_needs_reencode(&d, tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_TF32_FTZ)),
              "tf32 -> tf32_ftz: the flag stays, the instruction can");
    cr_expect(!tma_rule_edit_needs_reencode(&d, tma_edit(TMA_FIELD_BOX_DIM, 0, 8)), "other fields: the instruction");
    tma_tiled_desc f32 = d;
    f32.dtype = TMA_DTYPE_F32;
    cr_expect(!tma_rule_edit_needs_reencode(&f32, tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_TF32)),
              "f32 -> tf32: the instruction sets the flag");
    /* the mirror: an encoding from zeros has no L2 promotion */
    tma_tiled_desc m = d;
    tma_desc_apply_edit(&m, tma_edit(TMA_FIELD_DTYPE, 0, TMA_DTYPE_F32));
    cr_expect_eq(m.dtype, TMA_DTYPE_F32, "dtype");
    cr_expect_eq(m.l2_promotion, TMA_L2_NONE, "encoded again from zeros: L2 promotion none");
    m = d;
    tma_desc_apply_edit(&m, tma_edit(TMA_FIELD_BOX_DIM, 0, 8));
    cr_expect_eq(m.l2_promotion, TMA_L2_256B, "a replaced field keeps the template's promotion");
}

/* ---------------------------------------------------------------------------------------------
 * Templates (TMA_DESC_TEMPLATE): maps encoded on the host whose fields a kernel replaces before any copy
 * ------------------------------------------------------------------------------------------- */

/* The way grouped GEMMs encode theirs (CUTLASS's ptr-array kernels): a NULL address, zero strides, placeholder
 * dimensions; a store map's template too. */
static tma_tiled_desc grouped_template(uint32_t flags) {
    tma_tiled_desc d = {.dtype = TMA_DTYPE_BF16, .rank = 3, .global_address = NULL, .global_dim = {64, 128, 1},
                        .global_stride = {0, 0}, .box_dim = {64, 128, 1}, .swizzle = TMA_SWIZZLE_128B,
                        .flags = TMA_DESC_TEMPLATE | flags};
    return d;
}

Test(templates, null_address_and_zero_strides_are_accepted_with_the_flag_only) {
    for (uint32_t store = 0; store <= TMA_DESC_STORE; store += TMA_DESC_STORE) {
        tma_tiled_desc d = grouped_template(store);
        tma_diag diag;
        cr_expect_eq(tma_check_tiled(&d, &diag), TMA_OK, "a template%s: %s", store ? " of a store map" : "",
                     diag.message);
        const tma_box_info box = tma_box_info_of(&d);
        cr_expect_eq(box.flags & TMA_BOX_TEMPLATE, TMA_BOX_TEMPLATE, "its box facts say template");
        cr_expect_eq(box.tx_bytes, 64u * 128u * 2u, "and hold the box it will copy");
        d.flags &= ~TMA_DESC_TEMPLATE;
        cr_expect_eq(tma_check_tiled(&d, &diag), TMA_ERR_GLOBAL_ADDRESS_NULL, "NULL without the flag");
        cr_expect(strstr(diag.message, "global_address = NULL: pass the tensor's device address") != NULL &&
                      strstr(diag.message, "only a template encoded on the host, whose address a "
                                           "kernel replaces before any copy, may leave it NULL "
                                           "(TMA_DESC_TEMPLATE)") != NULL,
                  "the refusal names the way out: %s", diag.message);
    }
    /* an im2col map cannot be a template (no device edits): its NULL message does not offer the flag */
    const tma_im2col_desc x = {.dtype = TMA_DTYPE_BF16, .rank = 4, .global_dim = {64, 8, 8, 2},
                               .global_stride = {128, 1024, 8192}, .channels_per_pixel = 64, .pixels_per_column = 64};
    tma_diag diag;
    cr_expect_eq(tma_check_im2col(&x, &diag), TMA_ERR_GLOBAL_ADDRESS_NULL, "im2col NULL");
    cr_expect(strstr(diag.message, "TMA_DESC_TEMPLATE") == NULL, "%s", diag.message);
}

Test(templates, no_copy_goes_through_a_template) {
    const tma_tiled_desc d = grouped_template(0);
    const int32_t c[5] = {0};
    tma_diag diag;
    cr_expect_eq(tma_check_coords(&d, c, &diag), TMA_ERR_ARG, "a load");
    cr_expect(strstr(diag.message, "TMA load through a template map (TMA_DESC_TEMPLATE): its address and strides "
                                   "are placeholders until a kernel replaces them") != NULL,
              "%s", diag.message);
    cr_expect_eq(tma_check_store_coords(&d, c, &diag), TMA_ERR_ARG, "a store");
    cr_expect(strstr(diag.message, "TMA store through a template map") != NULL, "%s", diag.message);
    const tma_copy_facts f = tma_rule_copy_facts(&d);
    cr_expect(f.is_template && f.load_only, "the copy facts: a template, and its zero strides overlap");
}

/* The map built from a template is a real one: an edit drops the flag (tma_desc_apply_edit, the builder's and
 * tma_map_edit_in_step's mirror), so a NULL address no edit replaced is refused, and a store map's strides must not
 * overlap once they are set. */
Test(templates, the_map_built_from_a_template_is_checked_as_a_real_one) {
    tma_tiled_desc d = grouped_template(TMA_DESC_STORE);
    tma_desc_apply_edit(&d, tma_edit(TMA_FIELD_GLOBAL_DIM, 1, 1000)); /* the rows, not the address */
    cr_expect_eq(d.flags, TMA_DESC_STORE, "the edit dropped TMA_DESC_TEMPLATE and kept TMA_DESC_STORE");
    tma_diag diag;
    cr_expect_eq(tma_check_tiled(&d, &diag), TMA_ERR_GLOBAL_ADDRESS_NULL, "address never replaced: %s", diag.message);
    tma_desc_apply_edit(&d, tma_edit(TMA_FIELD_GLOBAL_ADDRESS, 0, (uint64_t)(uintptr_t)FAKE_ADDR));
    cr_expect_eq(tma_check_tiled(&d, &diag), TMA_ERR_GLOBAL_STRIDE_OVERLAP, "a store map's zero stride: %s",
                 diag.message);
    tma_desc_apply_edit(&d, tma_edit(TMA_FIELD_GLOBAL_STRIDE, 1, 128));
    tma_desc_apply_edit(&d, tma_edit(TMA_FIELD_GLOBAL_STRIDE, 2, 128 * 1000));
    cr_expect_eq(tma_check_tiled(&d, &diag), TMA_OK, "every placeholder replaced: %s", diag.message);
    const int32_t c[5] = {0};
    cr_expect_eq(tma_check_store_coords(&d, c, &diag), TMA_OK, "a store through the built map: %s", diag.message);
    cr_expect_eq(tma_box_info_of(&d).flags & (TMA_BOX_TEMPLATE | TMA_BOX_LOAD_ONLY), 0u, "a real map's box facts");
}

/* A random edit of the fields tma_rules_tiled_tensor covers: the address (valid, NULL, off 16 bytes, near the top of
 * the address space), a global dimension (0, 1, 2^32, 2^32 + 1, any) or a stride (aligned, off 16 bytes, 2^40, any). */
static tma_map_edit random_tensor_edit(uint32_t rank) {
    const uint32_t kind = (uint32_t)(rnd() % 3u), pick = (uint32_t)(rnd() % 6u);
    if (kind == 0 || rank < 2u) {
        static const uint64_t addr[] = {0x100000u, 0u, 0x100008u, 0xFFFFFFFFFFFFFF00ull, 0x7F0000000000ull};
        return tma_edit(TMA_FIELD_GLOBAL_ADDRESS, 0, pick < 5u ? addr[pick] : (rnd() & ~0xFull) >> 8);
    }
    if (kind == 1) {
        static const uint64_t dim[] = {0u, 1u, 1ull << 32, (1ull << 32) + 1u, 1000u};
        return tma_edit(TMA_FIELD_GLOBAL_DIM, (uint32_t)(rnd() % rank), pick < 5u ? dim[pick] : rnd() % 100000u);
    }
    static const uint64_t stride[] = {1u << 20, 8u, 1ull << 40, 16u, 0u};
    return tma_edit(TMA_FIELD_GLOBAL_STRIDE, 1u + (uint32_t)(rnd() % (rank - 1u)),
                    pick < 5u ? stride[pick] : (rnd() % (1ull << 24)) * 16u);
}

/* tma_rules_tiled_tensor, the check of maps built from checked templates by edits of the address, dimensions and
 * strides (the grouped GEMM's), reports what the whole check reports first, for every such map: templates that pass
 * every rule (load and store maps of several ranks, types and swizzles), one to four random edits each, valid and
 * not; 20,000 maps. */
Test(templates, the_tensor_rules_say_what_the_whole_check_says_of_an_edited_map) {
    seed_rng("templates.the_tensor_rules");
    const tma_tiled_desc bases[] = {
        grouped_template(0),
        grouped_template(TMA_DESC_STORE),
        tma_desc_2d(TMA_DTYPE_BF16, FAKE_ADDR, 4096, 4096, 8192, 128, 64, TMA_SWIZZLE_128B),
        tma_desc_2d(TMA_DTYPE_F32, FAKE_ADDR, 1000, 96, 384, 64, 32, TMA_SWIZZLE_128B),
        {.dtype = TMA_DTYPE_U8, .rank = 5, .global_address = FAKE_ADDR, .global_dim = {64, 3, 5, 7, 2},
         .global_stride = {64, 192, 960, 6720}, .box_dim = {32, 2, 2, 2, 1}, .swizzle = TMA_SWIZZLE_32B,
         .flags = TMA_DESC_STORE},
        {.dtype = TMA_DTYPE_F64, .rank = 1, .global_address = FAKE_ADDR, .global_dim = {300}, .box_dim = {16}},
    };
    long compared = 0, refused = 0;
    for (int i = 0; i < 20000; i++) {
        tma_tiled_desc d = bases[i % (int)(sizeof bases / sizeof bases[0])];
        tma_diag diag;
        cr_assert_eq(tma_check_tiled(&d, &diag), TMA_OK, "base %d passes every rule: %s", i % 6, diag.message);
        const int edits = 1 + (int)(rnd() % 4u);
        for (int e = 0; e < edits; e++)
            tma_desc_apply_edit(&d, random_tensor_edit(d.rank));
        tma_violation whole, tensor;
        tma_rule_sink sw = tma_rule_sink_make(&whole, 1), st = tma_rule_sink_make(&tensor, 1);
        const tma_status a = tma_rules_tiled(&d, &sw), b = tma_rules_tiled_tensor(&d, &st);
        cr_assert_eq(b, a, "map %d (base %d, %d edits): the tensor rules say %s, the whole check %s", i, i % 6, edits,
                     tma_status_name(b), tma_status_name(a));
        if (a != TMA_OK) { /* the same rule, worded the same (its values compared as the message prints them: a
                              tma_rule_arg has padding, so no memcmp) */
            char mt[TMA_DIAG_MESSAGE_BYTES], mw[TMA_DIAG_MESSAGE_BYTES];
            tma_violation_format(&tensor, mt, sizeof mt);
            tma_violation_format(&whole, mw, sizeof mw);
            cr_assert_eq(tensor.rule, whole.rule, "map %d: the same rule first", i);
            cr_assert_str_eq(mt, mw, "map %d: the same message", i);
            refused++;
        }
        compared++;
    }
    cr_expect(refused > 2000 && compared - refused > 2000, "both kinds drawn: %ld refused of %ld", refused, compared);
}
