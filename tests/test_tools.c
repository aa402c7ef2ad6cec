/* The command-line tools (tools/): tma-explain and tma-layout run as programs (popen), their output
 * compared byte for byte with tests/golden/, their exit codes, JSON validity, SVG well-formedness, the
 * command-line syntax they share (tools/cli.c); and the 32-bank model (tools/bank_model.c) on cases with
 * known answers.
 *
 * Regenerate the goldens after an intended change of output: TMA_UPDATE_GOLDEN=1 ./test_tools
 * (then review the diff in tests/golden/). */
#define _POSIX_C_SOURCE 200809L /* popen, pclose, fork, pipe */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bank_model.h"
#include "tma/tma.h"
#include "tma/wgmma.h"

#ifndef TMA_EXPLAIN_PATH
#error "TMA_EXPLAIN_PATH must name the tma-explain binary"
#endif
#ifndef TMA_LAYOUT_PATH
#error "TMA_LAYOUT_PATH must name the tma-layout binary"
#endif
#ifndef TMA_GOLDEN_DIR
#error "TMA_GOLDEN_DIR must name tests/golden"
#endif
#ifndef TMA_TOOLS_TMPDIR
#error "TMA_TOOLS_TMPDIR must name a scratch directory"
#endif
/* Printed on stdout by a test that skips itself for want of an outside program (xmllint, Chromium). Criterion
 * counts a skip as no failure, so CTest would say Passed: each such test has a CTest entry of its own that runs it
 * alone (--filter) and is reported Skipped when this mark appears (SKIP_REGULAR_EXPRESSION, tests/CMakeLists.txt). */
#ifndef TOOLS_SKIP_MARK
#define TOOLS_SKIP_MARK "libtma test skipped:"
#endif

/* ---------------------------------------------------------------------------------------------
 * Running a tool
 * ------------------------------------------------------------------------------------------- */

typedef struct run_result {
    char *out;   /* stdout, NUL-terminated (malloc'd) */
    size_t len;
    int status;  /* exit status, or -1 if the tool did not exit normally */
} run_result;

/* Run `cmd` through the shell; capture stdout. `cmd` chooses what happens to stderr. */
static run_result run_cmd(const char *cmd) {
    run_result r = {NULL, 0, -1};
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p, "popen(%s) failed", cmd);
    size_t cap = 4096;
    r.out = malloc(cap);
    cr_assert_not_null(r.out);
    size_t n;
    while ((n = fread(r.out + r.len, 1, cap - r.len - 1, p)) > 0) {
        r.len += n;
        if (cap - r.len - 1 == 0) {
            cap *= 2;
            r.out = realloc(r.out, cap);
            cr_assert_not_null(r.out);
        }
    }
    r.out[r.len] = '\0';
    int st = pclose(p);
    if (st != -1 && WIFEXITED(st))
        r.status = WEXITSTATUS(st);
    return r;
}

/* Run a tool with arguments; stdout captured, stderr discarded. */
static run_result run_tool(const char *tool, const char *args) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>/dev/null", tool, args);
    return run_cmd(cmd);
}

/* Run a tool; capture its stderr instead (stdout discarded). */
static run_result run_tool_stderr(const char *tool, const char *args) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1 >/dev/null", tool, args);
    return run_cmd(cmd);
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    cr_assert_not_null(buf);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = '\0';
    fclose(f);
    *len = got;
    return buf;
}

/* Compare the tool's stdout with tests/golden/<name>, byte for byte, and check the exit status. */
static void check_golden(const char *tool, const char *args, const char *name, int want_status) {
    run_result r = run_tool(tool, args);
    cr_assert_eq(r.status, want_status, "%s %s: exit status %d, want %d", tool, args, r.status, want_status);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", TMA_GOLDEN_DIR, name);
    if (getenv("TMA_UPDATE_GOLDEN")) {
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f, "cannot write %s", path);
        fwrite(r.out, 1, r.len, f);
        fclose(f);
        cr_log_info("updated %s", path);
    }
    size_t glen = 0;
    char *golden = read_file(path, &glen);
    cr_assert_not_null(golden, "golden file %s is missing (TMA_UPDATE_GOLDEN=1 writes it)", path);
    size_t i = 0;
    while (i < glen && i < r.len && golden[i] == r.out[i])
        i++;
    cr_assert(i == glen && i == r.len,
              "%s %s: output differs from %s at byte %zu (output %zu bytes, golden %zu)\n--- output from there:\n%.200s"
              "\n--- golden from there:\n%.200s",
              tool, args, name, i, r.len, glen, r.out + i, golden + i);
    free(golden);
    free(r.out);
}

/* The file at `path`, which must exist, equals `out[0..len)` byte for byte. */
static void check_same_as_file(const char *what, const char *out, size_t len, const char *path) {
    size_t flen = 0;
    char *file = read_file(path, &flen);
    cr_assert_not_null(file, "%s was not written", path);
    cr_assert(flen == len && memcmp(file, out, len) == 0, "%s: stdout (%zu bytes) differs from %s (%zu bytes)", what,
              len, path, flen);
    free(file);
}

/* ---------------------------------------------------------------------------------------------
 * A tiny JSON validity check (RFC 8259 grammar, no semantics)
 * ------------------------------------------------------------------------------------------- */

static const char *json_value(const char *p, int depth);

static const char *json_ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

static const char *json_string_(const char *p) {
    if (*p++ != '"')
        return NULL;
    while (*p != '"') {
        if ((unsigned char)*p < 0x20)
            return NULL;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int k = 1; k <= 4; k++)
                    if (!strchr("0123456789abcdefABCDEF", p[k]) || p[k] == '\0')
                        return NULL;
                p += 5;
                continue;
            }
            if (!strchr("\"\\/bfnrt", *p) || *p == '\0')
                return NULL;
        }
        p++;
    }
    return p + 1;
}

static const char *json_number(const char *p) {
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return NULL;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9'))
            return NULL;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return NULL;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return p;
}

static const char *json_value(const char *p, int depth) {
    if (depth > 64)
        return NULL;
    p = json_ws(p);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        bool object = *p == '{';
        p = json_ws(p + 1);
        if (*p == close)
            return p + 1;
        for (;;) {
            if (object) {
                p = json_string_(json_ws(p));
                if (p == NULL)
                    return NULL;
                p = json_ws(p);
                if (*p++ != ':')
                    return NULL;
            }
            p = json_value(p, depth + 1);
            if (p == NULL)
                return NULL;
            p = json_ws(p);
            if (*p == close)
                return p + 1;
            if (*p++ != ',')
                return NULL;
        }
    }
    if (*p == '"')
        return json_string_(p);
    if (strncmp(p, "true", 4) == 0)
        return p + 4;
    if (strncmp(p, "false", 5) == 0)
        return p + 5;
    if (strncmp(p, "null", 4) == 0)
        return p + 4;
    return json_number(p);
}

static bool json_valid(const char *text) {
    const char *end = json_value(text, 0);
    return end != NULL && *json_ws(end) == '\0';
}

Test(json_check, accepts_and_rejects) {
    cr_assert(json_valid("{\"a\":[1,2.5,-3e2,true,false,null,\"x\\\"\\u00e9\"],\"b\":{}}\n"));
    cr_assert(!json_valid("{\"a\":1,}"));
    cr_assert(!json_valid("{\"a\" 1}"));
    cr_assert(!json_valid("[1,2"));
    cr_assert(!json_valid("{\"a\":\"tab\there\"}"));
    cr_assert(!json_valid("{} {}"));
}

/* ---------------------------------------------------------------------------------------------
 * tma-explain
 * ------------------------------------------------------------------------------------------- */

#define VALID_ARGS "--dtype bf16 --dims 4096,4096 --strides 8192 --box 64,128 --swizzle 128B"
/* Two broken rules: a stride that is not a multiple of 16, and a 256-byte box row under 128B swizzle. */
#define INVALID2_ARGS "--dtype bf16 --dims 4096,4095 --strides 8190 --box 128,64 --swizzle 128B"

Test(tma_explain, golden_valid_text) { check_golden(TMA_EXPLAIN_PATH, VALID_ARGS, "explain_valid.txt", 0); }
Test(tma_explain, golden_valid_json) {
    check_golden(TMA_EXPLAIN_PATH, VALID_ARGS " --json", "explain_valid.json", 0);
}
Test(tma_explain, golden_invalid_text) { check_golden(TMA_EXPLAIN_PATH, INVALID2_ARGS, "explain_invalid.txt", 1); }
Test(tma_explain, golden_invalid_json) {
    check_golden(TMA_EXPLAIN_PATH, INVALID2_ARGS " --json", "explain_invalid.json", 1);
}
Test(tma_explain, golden_defaults_f32_nan_3d) {
    check_golden(TMA_EXPLAIN_PATH, "--dtype f32 --dims 1000,30,7 --oob nan --l2 128B", "explain_defaults_3d.txt", 0);
}
Test(tma_explain, golden_interleave_json) {
    check_golden(TMA_EXPLAIN_PATH,
                 "--dtype u8 --dims 64,64,8 --box 32,32,4 --interleave 32B --swizzle 128B --oob nan --json",
                 "explain_interleave.json", 1);
}

/* A sliding window (rows 16 bytes apart, 128 bytes long): valid, read from, never written through; as a store map
 * (--store), invalid. A grouped GEMM's template: NULL address, zero strides, no copy through it. */
#define LOAD_ONLY_ARGS "--dtype bf16 --dims 64,1000 --strides 16 --box 64,32 --swizzle 128B"
#define TEMPLATE_ARGS "--dtype bf16 --dims 64,128,1 --strides 0,0 --box 64,128,1 --swizzle 128B --address 0 --template"

Test(tma_explain, golden_load_only_text) {
    check_golden(TMA_EXPLAIN_PATH, LOAD_ONLY_ARGS, "explain_load_only.txt", 0);
}
Test(tma_explain, golden_load_only_json) {
    check_golden(TMA_EXPLAIN_PATH, LOAD_ONLY_ARGS " --json", "explain_load_only.json", 0);
}
Test(tma_explain, golden_store_map_text) {
    check_golden(TMA_EXPLAIN_PATH, LOAD_ONLY_ARGS " --store", "explain_store_map.txt", 1);
}
Test(tma_explain, golden_template_text) { check_golden(TMA_EXPLAIN_PATH, TEMPLATE_ARGS, "explain_template.txt", 0); }

/* im2col: a 3x3 filter's window with padding 1 over a 56x56 bf16 image, and one breaking three rules. */
#define IM2COL_ARGS                                                                                              \
    "--mode im2col --dims 64,56,56,32 --lower -1,-1 --upper -1,-1 --channels 64 --pixels 128 --swizzle 128B"
#define IM2COL_INVALID_ARGS "--mode im2col --dims 60,56,56,32 --lower 2,-1 --upper -70,-1 --channels 300 --pixels 2000"

Test(tma_explain, golden_im2col_text) { check_golden(TMA_EXPLAIN_PATH, IM2COL_ARGS, "explain_im2col.txt", 0); }
Test(tma_explain, golden_im2col_json) {
    check_golden(TMA_EXPLAIN_PATH, IM2COL_ARGS " --json", "explain_im2col.json", 0);
}
Test(tma_explain, golden_im2col_invalid_text) {
    check_golden(TMA_EXPLAIN_PATH, IM2COL_INVALID_ARGS, "explain_im2col_invalid.txt", 1);
}
Test(tma_explain, golden_im2col_invalid_json) {
    check_golden(TMA_EXPLAIN_PATH, IM2COL_INVALID_ARGS " --json", "explain_im2col_invalid.json", 1);
}

/* Drawings of im2col loads (tma-explain --coord): rows from the model. Rank 4, 128B swizzle: 8 rows of padding
 * (h = -1), then image rows; rank 3, u8 (two digit passes): channels past C filled, the walk into the next image. */
#define IM2COL_DRAW_ARGS                                                                                         \
    "--mode im2col --dims 64,8,8,2 --lower -1,-1 --upper -1,-1 --channels 64 --pixels 12 --swizzle 128B "        \
    "--coord 0,-1,-1,0 --offset 1,0"
#define IM2COL_DRAW_U8_ARGS                                                                                      \
    "--mode im2col --dtype u8 --dims 16,40,2 --channels 32 --pixels 6 --swizzle 32B --coord 0,37,0"

Test(tma_explain, golden_im2col_draw) {
    check_golden(TMA_EXPLAIN_PATH, IM2COL_DRAW_ARGS, "explain_im2col_draw.txt", 0);
}
/* At 384 the 128B pattern starts at phase 3, as in layout_bf16_128b_base384.txt. */
Test(tma_explain, golden_im2col_draw_base384) {
    check_golden(TMA_EXPLAIN_PATH, IM2COL_DRAW_ARGS " --base 384", "explain_im2col_draw_base384.txt", 0);
}
Test(tma_explain, golden_im2col_draw_u8_next_image) {
    check_golden(TMA_EXPLAIN_PATH, IM2COL_DRAW_U8_ARGS, "explain_im2col_draw_u8.txt", 0);
}
Test(tma_explain, golden_im2col_draw_start_outside_the_box) {
    check_golden(TMA_EXPLAIN_PATH,
                 "--mode im2col --dims 64,8,8,2 --lower -1,-1 --upper -1,-1 --channels 64 --pixels 12 "
                 "--coord 0,-2,-1,0",
                 "explain_im2col_draw_invalid.txt", 1);
}

/* Row r of a load at w = 37 of a 40-pixel row: pixel 37 + r of image 0, then pixels 0.. of image 1. */
Test(tma_explain, im2col_draw_walks_into_the_next_image) {
    run_result r = run_tool(TMA_EXPLAIN_PATH, IM2COL_DRAW_U8_ARGS);
    cr_assert_eq(r.status, 0);
    cr_assert_not_null(strstr(r.out, "   2     64    0    -    -   39     0..15   +16   |"), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "   3     96    1    -    -    0     0..15   +16   |"), "%s", r.out);
    free(r.out);
}

Test(tma_explain, im2col_footprints_are_the_librarys) {
    const tma_im2col_desc d = {.dtype = TMA_DTYPE_BF16, .rank = 4, .global_address = (void *)0x7f0000000000ull,
                               .global_dim = {64, 56, 56, 32}, .global_stride = {128, 7168, 401408},
                               .pixel_box_lower = {-1, -1}, .pixel_box_upper = {-1, -1}, .channels_per_pixel = 64,
                               .pixels_per_column = 128, .swizzle = TMA_SWIZZLE_128B};
    char want[96];
    run_result r = run_tool(TMA_EXPLAIN_PATH, IM2COL_ARGS " --json");
    cr_assert_eq(r.status, 0);
    snprintf(want, sizeof want, "\"tx_bytes\":%zu,\"smem_bytes\":%zu,", tma_im2col_tx_bytes(&d),
             tma_im2col_smem_bytes(&d));
    cr_assert_not_null(strstr(r.out, want), "%s not in %s", want, r.out);
    free(r.out);
}

Test(tma_explain, options_of_the_other_mode_are_refused) {
    const struct {
        const char *args, *message;
    } cases[] = {
        {"--mode im2col --dims 64,56,56 --box 8,8,8", "--box is not an option of --mode im2col"},
        {"--dims 64,56 --lower -1", "--lower is not an option of --mode tiled"},
        {"--mode im2col --dims 64,56,56 --store", "--store is not an option of --mode im2col"},
        {"--mode im2col --dims 64,56,56 --template", "--template is not an option of --mode im2col"},
        {"--mode im2col --dims 64,56,56,4 --lower -1", "--lower has 1 value; a rank-4 tensor has 2 spatial dimensions"},
        {"--mode im2col --dims 64,56,4 --upper 1x", "'1x' is not a 32-bit signed number"},
        {"--mode conv --dims 64", "--mode 'conv': use tiled or im2col"},
        {"--mode im2col --dims 64,8,8 --coord 0,0", "--coord has 2 values; --dims has 3"},
        {"--mode im2col --dims 64,8,8 --offset 1", "--offset needs --coord"},
        {"--mode im2col --dims 64,8,8 --coord 0,0,0 --json", "--coord draws text"},
        {"--mode im2col --dims 64,8,8 --coord 0,0,0 --offset 70000", "70000 is too large: at most 65535"},
        {"--mode im2col --dims 64,8,8 --coord 0,0,0 --base 100", "--base 100: use a multiple of 128"},
        {"--mode im2col --dims 64,8,8 --base 128", "--base needs --coord"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_result r = run_tool_stderr(TMA_EXPLAIN_PATH, cases[i].args);
        cr_assert_eq(r.status, 2, "%s: status %d", cases[i].args, r.status);
        cr_assert_not_null(strstr(r.out, cases[i].message), "%s: %s", cases[i].args, r.out);
        free(r.out);
    }
}

Test(tma_explain, invalid_lists_both_broken_rules) {
    run_result r = run_tool(TMA_EXPLAIN_PATH, INVALID2_ARGS);
    cr_assert_eq(r.status, 1);
    cr_assert_not_null(strstr(r.out, "2 broken rules"), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "1. TMA_ERR_GLOBAL_STRIDE_ALIGN: "), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "2. TMA_ERR_BOX_SWIZZLE_SPAN: "), "%s", r.out);
    /* each message carries its fix */
    cr_assert_not_null(strstr(r.out, "the stride is 8192 bytes"), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "use box_dim[0] <= 64"), "%s", r.out);
    free(r.out);
}

Test(tma_explain, json_parses_valid_and_invalid) {
    const char *args[] = {VALID_ARGS " --json", INVALID2_ARGS " --json",
                          "--dims 16 --dtype u8 --json", "--dims 7,7 --dtype tf32 --oob nan --swizzle 32B --json",
                          "--dims 64,64 --swizzle 128B_atom_64B --oob nan --dtype i32 --estrides 1,9 --json",
                          LOAD_ONLY_ARGS " --json", TEMPLATE_ARGS " --store --allow-overlap --json"};
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        run_result r = run_tool(TMA_EXPLAIN_PATH, args[i]);
        cr_assert(r.status == 0 || r.status == 1, "%s: status %d", args[i], r.status);
        cr_assert(json_valid(r.out), "%s: not valid JSON:\n%s", args[i], r.out);
        free(r.out);
    }
}

/* A command line, the exit status it must give, and a piece of its one-line stderr message. */
typedef struct exit_case {
    const char *args;
    int status;
    const char *stderr_has;
} exit_case;

static void check_exit_cases(const char *tool, const exit_case *cases, size_t n) {
    for (size_t i = 0; i < n; i++) {
        run_result r = run_tool_stderr(tool, cases[i].args);
        cr_assert_eq(r.status, cases[i].status, "'%s': status %d, want %d (stderr: %s)", cases[i].args, r.status,
                     cases[i].status, r.out);
        cr_assert_not_null(strstr(r.out, cases[i].stderr_has), "'%s': stderr '%s' lacks '%s'", cases[i].args, r.out,
                           cases[i].stderr_has);
        char *nl = strchr(r.out, '\n');
        cr_assert(nl != NULL && nl[1] == '\0', "'%s': stderr is not one line: '%s'", cases[i].args, r.out);
        free(r.out);
    }
}

Test(tma_explain, exit_codes_and_one_line_stderr) {
    static const exit_case cases[] = {
        {VALID_ARGS, 0, "valid descriptor"},
        {INVALID2_ARGS, 1, "invalid descriptor: 2 broken rules"},
        {"--dims 16 --address 0", 1, "TMA_ERR_GLOBAL_ADDRESS_NULL"},
        {"--dims 16 --address 0 --template", 0, "valid descriptor (32 bytes per copy), a template: no copy until"},
        {LOAD_ONLY_ARGS, 0, "valid descriptor (4096 bytes per copy), for loads only: a store through it would race"},
        {LOAD_ONLY_ARGS " --allow-overlap", 0, "for loads only"},
        {LOAD_ONLY_ARGS " --store", 1, "invalid descriptor: 1 broken rule, first TMA_ERR_GLOBAL_STRIDE_OVERLAP"},
        {"", 2, "--dims is required"},
        {"--dims 4096,4096 --bogus 1", 2, "unknown option '--bogus'"},
        {"--dims 4096,x", 2, "not an unsigned number"},
        {"--dims 1,2,3,4,5,6", 2, "at most 5 values"},
        {"--dims 64,64 --box 64", 2, "--box has 1 value; --dims has 2"},
        {"--dims 64,64 --strides 128,128", 2, "--strides has 2 values"},
        {"--dims 64,64 --dtype bf17", 2, "unknown type"},
        {"--dims 64,64 --swizzle 96B", 2, "--swizzle '96B'"},
        {"--dims 64,64 --oob", 2, "--oob needs a value"},
    };
    check_exit_cases(TMA_EXPLAIN_PATH, cases, sizeof cases / sizeof cases[0]);
}

Test(tma_explain, help_has_examples) {
    run_result r = run_tool(TMA_EXPLAIN_PATH, "--help");
    cr_assert_eq(r.status, 0);
    cr_assert_not_null(strstr(r.out, "examples:"));
    cr_assert_not_null(strstr(r.out, "tma-explain --dtype bf16 --dims 4096,4096"));
    free(r.out);
}

Test(tma_explain, facts_agree_with_the_library) {
    /* The printed numbers are the library's, for the same descriptor. */
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_BF16, (void *)(uintptr_t)0x7f0000000000ull, 4096, 4096, 8192, 128, 64,
                                   TMA_SWIZZLE_128B);
    char want[128];
    run_result r = run_tool(TMA_EXPLAIN_PATH, VALID_ARGS " --json");
    snprintf(want, sizeof want, "\"tx_bytes\":%zu,\"smem_bytes\":%zu,", tma_box_tx_bytes(&d), tma_box_smem_bytes(&d));
    cr_assert_not_null(strstr(r.out, want), "%s lacks %s", r.out, want);
    cr_assert_not_null(strstr(r.out, "\"cute_swizzle\":\"Swizzle<3,4,3>\""), "%s", r.out);
    free(r.out);
}

Test(tma_explain, wgmma_layout_is_the_librarys) {
    static const struct {
        const char *arg;
        tma_swizzle mode;
    } modes[] = {{"none", TMA_SWIZZLE_NONE}, {"32B", TMA_SWIZZLE_32B}, {"64B", TMA_SWIZZLE_64B},
                 {"128B", TMA_SWIZZLE_128B}};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        char args[128], want[64];
        snprintf(args, sizeof args, "--dtype bf16 --dims 256,256 --swizzle %s --json", modes[i].arg);
        snprintf(want, sizeof want, "layout type %u", tma_wgmma_layout_of(modes[i].mode));
        run_result r = run_tool(TMA_EXPLAIN_PATH, args);
        cr_assert_eq(r.status, 0, "%s: status %d", args, r.status);
        const char *field = strstr(r.out, "\"wgmma_swizzle\":");
        cr_assert_not_null(field, "%s: no wgmma_swizzle in %s", args, r.out);
        cr_assert_not_null(strstr(field, want), "%s: %s lacks '%s'", args, field, want);
        free(r.out);
    }
}

Test(tma_explain, coord0_multiple_is_the_rules) {
    for (int t = 0; t < TMA_DTYPE_COUNT_; t++) {
        const size_t esize = tma_dtype_size((tma_dtype)t);
        char args[128], want[64];
        snprintf(args, sizeof args, "--dtype %s --dims 64,64 --json", tma_dtype_name((tma_dtype)t));
        snprintf(want, sizeof want, "\"coord0_multiple\":%zu,", TMA_COORD0_ALIGN_BYTES / esize);
        run_result r = run_tool(TMA_EXPLAIN_PATH, args);
        cr_assert_eq(r.status, 0, "%s: status %d", args, r.status);
        cr_assert_not_null(strstr(r.out, want), "%s: %s lacks %s", args, r.out, want);
        free(r.out);
    }
}

Test(tma_explain, list_elements_must_not_be_empty) {
    static const exit_case cases[] = {
        {"--dims 10,,16", 2, "--dims '10,,16': value 2 is empty"},
        {"--dims 10,16,", 2, "--dims '10,16,': value 3 is empty"},
        {"--dims ,10", 2, "--dims ',10': value 1 is empty"},
        {"--dims ,", 2, "--dims ',': value 1 is empty"},
        {"--dims 64,64 --box 64,,", 2, "--box '64,,': value 2 is empty"},
        {"--dims 64,64,64 --strides 128,", 2, "--strides '128,': value 2 is empty"},
        {"--dims=", 2, "--dims '': empty list"},
    };
    check_exit_cases(TMA_EXPLAIN_PATH, cases, sizeof cases / sizeof cases[0]);
}

Test(tma_explain, numbers_are_decimal_or_hex) {
    /* a leading 0 is decimal: 016 is sixteen (as octal, fourteen bytes would be an invalid box row) */
    run_result r =
        run_tool(TMA_EXPLAIN_PATH, "--dtype u8 --dims 0160,0x20,0X1f --box 016,1,1 --address 0100000 --json");
    cr_assert_eq(r.status, 0, "status %d: %s", r.status, r.out);
    cr_assert_not_null(strstr(r.out, "\"global_dim\":[160,32,31]"), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "\"box_dim\":[16,1,1]"), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "\"global_address\":\"0x186a0\""), "%s", r.out);
    free(r.out);
    static const exit_case cases[] = {
        {"--dims 0x", 2, "'0x' is not an unsigned number"},
        {"--dims 1e3", 2, "'1e3' is not an unsigned number"},
        {"--dims 0b101", 2, "'0b101' is not an unsigned number"},
        {"--dims 0x1g", 2, "'0x1g' is not an unsigned number"},
        {"--dims 08,+8", 2, "'+8' is not an unsigned number"},
        {"--dims -8", 2, "'-8' is not an unsigned number"},
        {"--dims ' 8'", 2, "' 8' is not an unsigned number"},
        {"--dims 18446744073709551616", 2, "'18446744073709551616' is too large: at most 18446744073709551615"},
        {"--dims 18446744073709551616x", 2, "'18446744073709551616x' is not an unsigned number"},
        {"--dims 64 --address 0x", 2, "--address '0x'"},
    };
    check_exit_cases(TMA_EXPLAIN_PATH, cases, sizeof cases / sizeof cases[0]);
}

Test(tma_explain, unknown_option_is_named_before_its_value) {
    static const exit_case cases[] = {
        {"--dims 4,4 --bogus", 2, "unknown option '--bogus'"},
        {"--bogus", 2, "unknown option '--bogus'"},
        {"--dims 4,4 --bogus=1", 2, "unknown option '--bogus'"},
        {"--dims 4,4 -x", 2, "unknown option '-x'"},
        {"--dims 4,4 --json=yes", 2, "--json takes no value"},
        {"--dims 4,4 --dtype", 2, "--dtype needs a value"},
    };
    check_exit_cases(TMA_EXPLAIN_PATH, cases, sizeof cases / sizeof cases[0]);
}

/* ---------------------------------------------------------------------------------------------
 * tma-layout
 * ------------------------------------------------------------------------------------------- */

Test(tma_layout, golden_bf16_128b) {
    check_golden(TMA_LAYOUT_PATH, "--swizzle 128B --dtype bf16 --box 64,16", "layout_bf16_128b.txt", 0);
}
Test(tma_layout, golden_bf16_128b_base384) {
    check_golden(TMA_LAYOUT_PATH, "--swizzle 128B --dtype bf16 --box 64,8 --base 384", "layout_bf16_128b_base384.txt",
                 0);
}
Test(tma_layout, golden_f32_none_json) {
    check_golden(TMA_LAYOUT_PATH, "--swizzle none --dtype f32 --box 32,32 --json", "layout_f32_none.json", 0);
}
Test(tma_layout, golden_f32_64b_pitch128) {
    check_golden(TMA_LAYOUT_PATH, "--swizzle 64B --dtype f32 --box 16,8 --pitch 128", "layout_f32_64b_pitch128.txt",
                 0);
}
Test(tma_layout, golden_f32_32b_padded_box) {
    /* a 16-byte box row in a 32-byte span: half of every row is padding, and the written half moves */
    check_golden(TMA_LAYOUT_PATH, "--swizzle 32B --dtype f32 --box 4,8", "layout_f32_32b_narrow.txt", 0);
}

Test(tma_layout, json_parses) {
    const char *args[] = {"--json", "--swizzle 32B --dtype u8 --box 32,5 --base 128 --json",
                          "--swizzle none --dtype f64 --box 18,3 --pitch 160 --json"};
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        run_result r = run_tool(TMA_LAYOUT_PATH, args[i]);
        cr_assert_eq(r.status, 0, "%s: status %d", args[i], r.status);
        cr_assert(json_valid(r.out), "%s: not valid JSON:\n%s", args[i], r.out);
        free(r.out);
    }
}

Test(tma_layout, exit_codes) {
    static const exit_case cases[] = {
        {"--swizzle 64B --dtype f32 --box 16,8", 0, "8 rows x 4 slots"},
        {"--swizzle 128B --dtype bf16 --box 128,8", 1, "TMA_ERR_BOX_SWIZZLE_SPAN"},
        {"--swizzle 128B --dtype bf16 --box 64,300", 1, "TMA_ERR_BOX_DIM"},
        {"--base 100", 2, "multiple of 128"},
        {"--swizzle 16B", 2, "--swizzle '16B'"},
        {"--box 64", 2, "COLS,ROWS"},
        {"--swizzle 64B --dtype f32 --box 16,8 --pitch 96", 2, "--pitch 96"},
        {"--frobnicate", 2, "unknown option '--frobnicate'"},
    };
    check_exit_cases(TMA_LAYOUT_PATH, cases, sizeof cases / sizeof cases[0]);
}

/* --mode im2col: one load drawn with tma-explain's drawing (im2col_rows.c), then the bank patterns over its rows.
 * The first is tma-explain's IM2COL_DRAW_ARGS load; the second a rank-5 f32 load at base 384 with an element stride
 * and offsets at the box's corner (no --coord); then a broken descriptor and a load outside the box. */
#define LAYOUT_IM2COL_ARGS \
    "--mode im2col --dims 64,8,8,2 --lower -1,-1 --upper -1,-1 --pixels 12 --coord 0,-1,-1,0 --offset 1,0"
#define LAYOUT_IM2COL_5D_ARGS                                                                                       \
    "--mode im2col --dtype f32 --swizzle 64B --dims 16,5,3,2,2 --lower 0,-1,0 --upper 0,0,0 --pixels 20 "          \
    "--estrides 1,2,1,1,1 --offset 1,1,0 --base 384"

Test(tma_layout, golden_im2col) { check_golden(TMA_LAYOUT_PATH, LAYOUT_IM2COL_ARGS, "layout_im2col.txt", 0); }
Test(tma_layout, golden_im2col_5d_base384) {
    check_golden(TMA_LAYOUT_PATH, LAYOUT_IM2COL_5D_ARGS, "layout_im2col_5d.txt", 0);
}
Test(tma_layout, golden_im2col_invalid) {
    check_golden(TMA_LAYOUT_PATH, "--mode im2col --dims 60,56,56,32 --lower 2,-1 --upper -70,-1 --channels 300",
                 "layout_im2col_invalid.txt", 1);
}
Test(tma_layout, golden_im2col_load_outside_the_box) {
    check_golden(TMA_LAYOUT_PATH, "--mode im2col --dims 64,8,8,2 --lower -1,-1 --upper -1,-1 --coord 0,7,0,0",
                 "layout_im2col_load_invalid.txt", 1);
}

/* The text from "im2col load at" to the end of the row table (the first blank line after it). */
static char *drawing_of(const char *out) {
    const char *from = strstr(out, "im2col load at");
    cr_assert_not_null(from, "no drawing in:\n%s", out);
    const char *table = strstr(from, "\n row ");
    cr_assert_not_null(table, "no row table in:\n%s", out);
    const char *end = strstr(table + 1, "\n\n");
    const size_t n = end ? (size_t)(end - from) + 1 : strlen(from); /* through the last row's newline */
    char *d = malloc(n + 1);
    cr_assert_not_null(d);
    memcpy(d, from, n);
    d[n] = '\0';
    return d;
}

/* One drawing, two tools: tma-layout's rows are tma-explain's --coord rows, byte for byte. */
Test(tma_layout, im2col_drawing_is_tma_explains) {
    static const char *const loads[] = {
        "--dims 64,8,8,2 --lower -1,-1 --upper -1,-1 --pixels 12 --coord 0,-1,-1,0 --offset 1,0 --swizzle 128B",
        "--dtype u8 --dims 16,40,2 --channels 32 --pixels 6 --swizzle 32B --coord 0,37,0 --base 384",
        ("--dtype f32 --dims 16,5,3,2,2 --lower 0,-1,0 --upper 0,0,0 --channels 16 --pixels 20 --estrides 1,2,1,1,1 "
         "--coord 0,0,-1,0,1 --offset 1,1,0 --swizzle 64B"),
    };
    for (size_t i = 0; i < sizeof loads / sizeof loads[0]; i++) {
        char args[512];
        snprintf(args, sizeof args, "--mode im2col %s", loads[i]);
        run_result e = run_tool(TMA_EXPLAIN_PATH, args), l = run_tool(TMA_LAYOUT_PATH, args);
        cr_assert_eq(e.status, 0, "tma-explain %s: status %d", args, e.status);
        cr_assert_eq(l.status, 0, "tma-layout %s: status %d", args, l.status);
        char *de = drawing_of(e.out), *dl = drawing_of(l.out);
        cr_assert_str_eq(dl, de, "%s: the tools draw the load differently", args);
        free(de);
        free(dl);
        free(e.out);
        free(l.out);
    }
}

/* The bank patterns of an im2col load are those of the tiled box of channels x pixels with the same pitch. */
Test(tma_layout, im2col_banks_are_the_boxs) {
    run_result i = run_tool(TMA_LAYOUT_PATH, "--mode im2col --dims 64,8,8,2 --pixels 16 --swizzle 128B");
    run_result t = run_tool(TMA_LAYOUT_PATH, "--box 64,16 --swizzle 128B");
    cr_assert_eq(i.status, 0);
    cr_assert_eq(t.status, 0);
    const char *bi = strstr(i.out, "bank conflicts, CPU model"), *bt = strstr(t.out, "bank conflicts, CPU model");
    cr_assert(bi != NULL && bt != NULL, "no bank table:\n%s\n%s", i.out, t.out);
    cr_assert_str_eq(bi, bt, "the same rows, different bank costs");
    free(i.out);
    free(t.out);
}

Test(tma_layout, im2col_exit_codes) {
    static const exit_case cases[] = {
        {"--mode im2col --dims 64,8,8,2 --pixels 12", 0, "im2col load of 12 rows x 8 slots drawn"},
        {"--mode im2col --dims 64,8,8 --pixels 0", 1, "TMA_ERR_IM2COL_PIXELS"},
        {"--mode im2col --dims 64,8,8 --coord 0,9,0", 1, "load INVALID: TMA_ERR_IM2COL_START"},
        {"--mode im2col --dims 64,8,8 --coord 0,0,0 --offset 256", 0, "drawn"},
        {"--mode im2col --dims 64,8,8,2 --coord 0,0,0,0 --offset 256,0", 1, "TMA_ERR_IM2COL_OFFSET"},
        {"--mode im2col", 2, "--mode im2col needs --dims"},
        {"--mode im2col --dims 64,8,8 --box 8,8", 2, "--box is not an option of --mode im2col"},
        {"--mode im2col --dims 64,8,8 --json", 2, "--json is not an option of --mode im2col"},
        {"--mode im2col --dims 64,8,8 --svg x.svg", 2, "--svg is not an option of --mode im2col"},
        {"--dims 64,8,8", 2, "--dims is not an option of --mode tiled"},
        {"--coord 0,0,0", 2, "--coord is not an option of --mode tiled"},
        {"--mode im2col --dims 64,8,8 --coord 0,0", 2, "--coord has 2 values; a rank-3 image (--dims) needs 3"},
        {"--mode im2col --dims 64,8,8,2 --lower -1", 2, "--lower has 1 value; a rank-4 image (--dims) needs 2"},
        {"--mode im2col --dims 64,8,8 --offset 70000", 2, "70000 is too large: at most 65535"},
        {"--mode im2col --dims 64,8,8 --base 100", 2, "multiple of 128"},
        {"--mode conv", 2, "--mode 'conv': use tiled or im2col"},
    };
    check_exit_cases(TMA_LAYOUT_PATH, cases, sizeof cases / sizeof cases[0]);
}

Test(tma_layout, golden_invalid_box_json) {
    check_golden(TMA_LAYOUT_PATH, "--swizzle 128B --dtype bf16 --box 128,300 --json", "layout_invalid.json", 1);
}

Test(tma_layout, json_for_every_outcome) {
    static const struct {
        const char *args;
        int status;
        const char *has;
    } cases[] = {
        {"--swizzle 64B --dtype f32 --box 16,8 --json", 0, "{\"valid\":true,\"status\":\"TMA_OK\","},
        {"--swizzle 128B --dtype bf16 --box 128,8 --json", 1,
         "{\"valid\":false,\"status\":\"TMA_ERR_BOX_SWIZZLE_SPAN\","},
        {"--swizzle 128B --dtype bf16 --box 128,300 --json", 1, "\"broken_rules\":2,\"errors\":[{\"status\":"},
        {"--swizzle none --dtype u8 --box 0,0 --json", 1, "\"valid\":false"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_result r = run_tool(TMA_LAYOUT_PATH, cases[i].args);
        cr_assert_eq(r.status, cases[i].status, "%s: status %d", cases[i].args, r.status);
        cr_assert(json_valid(r.out), "%s: not one JSON object:\n%s", cases[i].args, r.out);
        cr_assert_not_null(strstr(r.out, cases[i].has), "%s: %s lacks %s", cases[i].args, r.out, cases[i].has);
        free(r.out);
    }
    static const exit_case one_line[] = {
        {"--swizzle 128B --dtype bf16 --box 128,8 --json", 1, "invalid box: 1 broken rule"}};
    check_exit_cases(TMA_LAYOUT_PATH, one_line, 1);
}

Test(tma_layout, numbers_are_decimal_or_hex) {
    static const exit_case cases[] = {
        {"--base 0200", 2, "--base 200: "}, /* octal 0200 would be 128, a valid base */
        {"--base 0x80", 0, "8 rows x 8 slots"},
        {"--base 0X100 --box 64,010", 0, "10 rows x 8 slots"},
        {"--box 64,", 2, "--box '64,': value 2 is empty"},
        {"--box ,8", 2, "--box ',8': value 1 is empty"},
        {"--box 64,8,1", 2, "COLS,ROWS"},
        {"--box 64,4294967296", 2, "--box: 4294967296 is too large: at most 4294967295"},
    };
    check_exit_cases(TMA_LAYOUT_PATH, cases, sizeof cases / sizeof cases[0]);
    run_result r = run_tool(TMA_LAYOUT_PATH, "--base 0x80");
    cr_assert_not_null(strstr(r.out, ", base 128 (phase 1 of the 1024-byte pattern)"), "%s", r.out);
    free(r.out);
}

Test(tma_layout, unknown_option_is_named_before_its_value) {
    static const exit_case cases[] = {
        {"--box 64,8 --bogus", 2, "unknown option '--bogus'"},
        {"--svg=x.svg --bogus=1", 2, "unknown option '--bogus'"},
        {"--help=1", 2, "--help takes no value"},
        {"--box", 2, "--box needs a value"},
    };
    check_exit_cases(TMA_LAYOUT_PATH, cases, sizeof cases / sizeof cases[0]);
}

/* stdout is one thing: --svg - and --requests - write exactly what the file would hold, and nothing else. */
static void check_output_to_stdout(const char *args, const char *option, const char *file) {
    char path[1024], with_file[1536], with_stdout[1536];
    snprintf(path, sizeof path, "%s/%s", TMA_TOOLS_TMPDIR, file);
    remove(path);
    snprintf(with_file, sizeof with_file, "%s %s '%s'", args, option, path);
    snprintf(with_stdout, sizeof with_stdout, "%s %s -", args, option);
    run_result f = run_tool(TMA_LAYOUT_PATH, with_file);
    cr_assert_eq(f.status, 0, "%s: status %d", with_file, f.status);
    free(f.out);
    run_result r = run_tool(TMA_LAYOUT_PATH, with_stdout);
    cr_assert_eq(r.status, 0, "%s: status %d", with_stdout, r.status);
    cr_assert_null(strstr(r.out, "bank conflicts"), "%s: the report is on stdout too", with_stdout);
    check_same_as_file(with_stdout, r.out, r.len, path);
    free(r.out);
}

Test(tma_layout, svg_and_requests_to_stdout) {
    check_output_to_stdout("--swizzle 128B --dtype bf16 --box 64,16", "--svg", "stdout_128b.svg");
    check_output_to_stdout("--swizzle 64B --dtype f32 --box 16,40 --pitch 128", "--requests", "stdout_64b.req");
    run_result svg = run_tool(TMA_LAYOUT_PATH, "--swizzle 32B --dtype f32 --box 4,8 --svg=-");
    cr_assert_eq(svg.status, 0);
    cr_assert(strncmp(svg.out, "<?xml", 5) == 0, "%s", svg.out);
    free(svg.out);
    run_result req = run_tool(TMA_LAYOUT_PATH, "--swizzle 32B --dtype f32 --box 4,8 --requests -");
    cr_assert(strncmp(req.out, "P 0 load ", 9) == 0, "%s", req.out);
    free(req.out);
    /* an invalid box has no SVG: stdout stays empty, the one-line summary goes to stderr */
    run_result bad = run_tool(TMA_LAYOUT_PATH, "--swizzle 128B --dtype bf16 --box 128,8 --svg -");
    cr_assert_eq(bad.status, 1);
    cr_assert_eq(bad.len, 0u, "stdout: %s", bad.out);
    free(bad.out);
    static const exit_case cases[] = {
        {"--svg - --requests -", 2, "--svg - and --requests - both write to stdout"},
        {"--svg - --json", 2, "--json and --svg - both print on stdout"},
        {"--json --requests=-", 2, "--json and --requests - both print on stdout"},
        {"--svg=", 2, "--svg '': give a file name"},
        {"--svg /nonexistent-dir/x.svg", 2, "cannot write /nonexistent-dir/x.svg"},
        {"--swizzle 128B --dtype bf16 --box 128,8 --svg -", 1, "invalid box: 1 broken rule"},
    };
    check_exit_cases(TMA_LAYOUT_PATH, cases, sizeof cases / sizeof cases[0]);
}

static size_t count_occurrences(const char *hay, const char *needle) {
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* Skip the running test, saying why on stdout with TOOLS_SKIP_MARK (for CTest) and to Criterion. */
#define skip_for_want_of(why)                                                                                     \
    do {                                                                                                          \
        printf("%s %s\n", TOOLS_SKIP_MARK, why);                                                                  \
        fflush(stdout);                                                                                           \
        cr_skip_test("%s", why);                                                                                  \
    } while (0)

static void check_svg(const char *args, const char *file, size_t want_cells) {
    char path[1024], full[1536];
    snprintf(path, sizeof path, "%s/%s", TMA_TOOLS_TMPDIR, file);
    remove(path);
    snprintf(full, sizeof full, "%s --svg '%s'", args, path);
    run_result r = run_tool(TMA_LAYOUT_PATH, full);
    cr_assert_eq(r.status, 0, "%s: status %d", full, r.status);
    free(r.out);
    size_t len = 0;
    char *svg = read_file(path, &len);
    cr_assert_not_null(svg, "%s was not written", path);
    cr_assert_eq(count_occurrences(svg, "<rect class=\"cell\""), want_cells, "%s: cell rects", path);
    cr_assert_eq(count_occurrences(svg, "<rect"), want_cells, "%s: rects other than cells", path);
    free(svg);

    char cmd[2048];
    snprintf(cmd, sizeof cmd, "xmllint --noout '%s' 2>&1", path);
    run_result x = run_cmd(cmd);
    cr_assert_eq(x.status, 0, "xmllint rejects %s: %s", path, x.out);
    free(x.out);
}

Test(tma_layout, svg_is_xml_with_one_cell_per_slot) {
    run_result probe = run_cmd("command -v xmllint >/dev/null 2>&1");
    free(probe.out);
    if (probe.status != 0)
        skip_for_want_of("xmllint is not installed: cannot check that the SVG is well-formed XML (Debian: apt-get "
                         "install libxml2-utils)");
    check_svg("--swizzle 128B --dtype bf16 --box 64,64", "test_svg_128b.svg", 64u * 8u);
    check_svg("--swizzle 32B --dtype f32 --box 4,8 --base 384", "test_svg_32b.svg", 8u * 2u);
    check_svg("--swizzle none --dtype f32 --box 32,32 --pitch 144", "test_svg_none.svg", 32u * 9u);
}

/* The SVG as a person sees it: Chromium renders it headless to PNG, and the picture must not be blank
 * (at least the 8 chunk-column colours, plus background and text). Skipped where Chromium is absent. */
Test(tma_layout, svg_renders_in_chromium, .timeout = 120) {
    run_result probe = run_cmd("command -v chromium >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1");
    free(probe.out);
    if (probe.status != 0)
        skip_for_want_of("chromium or python3 is not installed: cannot render the SVG (Debian: apt-get install "
                         "chromium)");
    char svg[512], png[512], cmd[1800];
    snprintf(svg, sizeof svg, "%s/render_128b.svg", TMA_TOOLS_TMPDIR);
    snprintf(png, sizeof png, "%s/render_128b.png", TMA_TOOLS_TMPDIR);
    remove(png);
    snprintf(cmd, sizeof cmd, "--swizzle 128B --dtype bf16 --box 64,16 --svg '%s'", svg);
    run_result r = run_tool(TMA_LAYOUT_PATH, cmd);
    cr_assert_eq(r.status, 0, "tma-layout --svg: status %d", r.status);
    free(r.out);
    /* The flags keep a root, offline Chromium from reaching for the network or a sandbox it cannot have. */
    snprintf(cmd, sizeof cmd,
             "chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
             "--disable-background-networking --disable-component-update --disable-sync "
             "--user-data-dir='%s/chromium-profile' --window-size=1200,900 --screenshot='%s' 'file://%s' "
             ">/dev/null 2>&1",
             TMA_TOOLS_TMPDIR, png, svg);
    run_result c = run_cmd(cmd);
    free(c.out);
    cr_assert_eq(c.status, 0, "chromium failed to render %s (status %d)", svg, c.status);
    snprintf(cmd, sizeof cmd, "python3 '%s/png_colors.py' '%s' 2>&1", TMA_TESTS_DIR, png);
    run_result n = run_cmd(cmd);
    cr_assert_eq(n.status, 0, "cannot read %s: %s", png, n.out);
    long colours = strtol(n.out, NULL, 10);
    cr_log_info("chromium rendered %s with %ld distinct colours", svg, colours);
    cr_assert_geq(colours, 10, "%s looks blank: %ld distinct colours (%s)", png, colours, n.out);
    free(n.out);
}

/* ---------------------------------------------------------------------------------------------
 * The command line both tools share (tools/cli.c)
 * ------------------------------------------------------------------------------------------- */

static void check_version(const char *tool, const char *name) {
    char want[128];
    snprintf(want, sizeof want, "%s %s\n", name, tma_version_string());
    cr_assert_str_eq(tma_version_string(), TMA_VERSION_STRING);
    run_result r = run_tool(tool, "--version");
    cr_assert_eq(r.status, 0, "%s --version: status %d", name, r.status);
    cr_assert_str_eq(r.out, want);
    free(r.out);
}

Test(cli, version) {
    check_version(TMA_EXPLAIN_PATH, "tma-explain");
    check_version(TMA_LAYOUT_PATH, "tma-layout");
}

Test(cli, help_names_the_syntax) {
    const char *tools[] = {TMA_EXPLAIN_PATH, TMA_LAYOUT_PATH};
    for (size_t i = 0; i < 2; i++) {
        run_result r = run_tool(tools[i], "-h");
        cr_assert_eq(r.status, 0);
        cr_assert_not_null(strstr(r.out, "--version"), "%s", r.out);
        cr_assert_not_null(strstr(r.out, "after '='"), "%s", r.out);
        free(r.out);
    }
    run_result r = run_tool(TMA_LAYOUT_PATH, "--help");
    cr_assert_not_null(strstr(r.out, "FILE - is stdout"), "%s", r.out);
    free(r.out);
}

/* "--opt=value" reads as "--opt value": the same goldens. */
Test(cli, option_equals_value) {
    check_golden(TMA_EXPLAIN_PATH, "--dtype=bf16 --dims=4096,4096 --strides=8192 --box=64,128 --swizzle=128B",
                 "explain_valid.txt", 0);
    check_golden(TMA_EXPLAIN_PATH, "--dtype=bf16 --dims=4096,4095 --strides 8190 --box=128,64 --swizzle=128B --json",
                 "explain_invalid.json", 1);
    check_golden(TMA_LAYOUT_PATH, "--swizzle=128B --dtype=bf16 --box=64,8 --base=384",
                 "layout_bf16_128b_base384.txt", 0);
    check_golden(TMA_LAYOUT_PATH, "--swizzle=64B --dtype f32 --box=16,8 --pitch=128", "layout_f32_64b_pitch128.txt",
                 0);
}

Test(cli, double_dash_ends_the_options) {
    static const exit_case explain[] = {
        {"--dims 16 --", 0, "valid descriptor"},
        {"--dims 16 -- --json", 2, "unexpected argument '--json'"},
        {"--dims 16 -- 32", 2, "unexpected argument '32'"},
        {"-- --dims 16", 2, "unexpected argument '--dims'"},
        {"--dims 16 extra", 2, "unexpected argument 'extra'"},
        {"--dims 16 -", 2, "unexpected argument '-'"},
    };
    check_exit_cases(TMA_EXPLAIN_PATH, explain, sizeof explain / sizeof explain[0]);
    static const exit_case layout[] = {
        {"--box 64,8 --", 0, "8 rows x 8 slots"},
        {"--box 64,8 -- --json", 2, "unexpected argument '--json'"},
    };
    check_exit_cases(TMA_LAYOUT_PATH, layout, sizeof layout / sizeof layout[0]);
    /* bad usage prints nothing on stdout */
    run_result r = run_tool(TMA_EXPLAIN_PATH, "--dims 16 -- --json");
    cr_assert_eq(r.len, 0u, "%s", r.out);
    free(r.out);
}

/* One parser for both tools: a value refused by one is refused by the other in the same words (the message after
 * "PROGRAM: " and before " (see PROGRAM --help)"). */
static char *usage_message(const char *tool, const char *args) {
    run_result r = run_tool_stderr(tool, args);
    cr_assert_eq(r.status, 2, "%s %s: status %d, want 2 (bad usage): %s", tool, args, r.status, r.out);
    const char *from = strstr(r.out, ": "), *to = strstr(r.out, " (see ");
    cr_assert(from != NULL && to != NULL && to > from, "%s %s: not a usage message: %s", tool, args, r.out);
    char *m = strndup(from + 2, (size_t)(to - from - 2));
    cr_assert_not_null(m);
    free(r.out);
    return m;
}

/* An option both tools take, with the prefix of arguments each needs to reach it. */
static void check_same_refusal(const char *explain_args, const char *layout_args, const char *want) {
    char *e = usage_message(TMA_EXPLAIN_PATH, explain_args), *l = usage_message(TMA_LAYOUT_PATH, layout_args);
    cr_assert_str_eq(e, l, "tma-explain %s and tma-layout %s refuse differently", explain_args, layout_args);
    cr_assert_not_null(strstr(e, want), "'%s' lacks '%s'", e, want);
    free(e);
    free(l);
}

#define EXPLAIN_DRAW "--mode im2col --dims 64,8,8 --coord 0,0,0 "
#define LAYOUT_DRAW "--mode im2col --dims 64,8,8 "

Test(cli, base_estrides_offset_swizzle_are_one_parser) {
    /* --base: a number (past 32 bits is "too large", not "not an unsigned number"), at most 1 MiB, 128-aligned */
    check_same_refusal(EXPLAIN_DRAW "--base 4294967296", "--base 4294967296",
                       "'4294967296': too large: at most 1048576");
    check_same_refusal(EXPLAIN_DRAW "--base 1048704", "--base 1048704", "'1048704': too large: at most 1048576");
    check_same_refusal(EXPLAIN_DRAW "--base 99999999999999999999", "--base 99999999999999999999", "too large");
    check_same_refusal(EXPLAIN_DRAW "--base 100", "--base 100", "--base 100: use a multiple of 128");
    check_same_refusal(EXPLAIN_DRAW "--base 12x", "--base 12x", "'12x': not an unsigned number");
    /* --estrides 0: libtma reads it as 1, the driver refuses it: on a command line it is refused, by position */
    check_same_refusal("--dims 64,8,8 --estrides 1,0,1", LAYOUT_DRAW "--estrides 1,0,1",
                       "--estrides '1,0,1': value 2 is 0: element strides are 1..8");
    check_same_refusal("--mode im2col --dims 64,8,8 --estrides 0,1,1", LAYOUT_DRAW "--estrides 0,1,1", "value 1 is 0");
    check_same_refusal(EXPLAIN_DRAW "--offset 70000", LAYOUT_DRAW "--offset 70000",
                       "--offset '70000': value 1 = 70000 is too large: at most 65535");
    check_same_refusal("--dims 64 --swizzle 16B", "--swizzle 16B", "--swizzle '16B': use none, 32B, 64B or 128B");
    check_same_refusal("--dims 64 --mode conv", "--mode conv", "--mode 'conv': use tiled or im2col");
    check_same_refusal("--mode im2col --dims 64,8,8 --channels 4294967296", LAYOUT_DRAW "--channels 4294967296",
                       "--channels '4294967296': too large: at most 4294967295");
    /* the largest --base is accepted by both (it only moves the drawing) */
    static const exit_case explain_ok[] = {{EXPLAIN_DRAW "--base 1048576", 0, "valid descriptor and load"}};
    check_exit_cases(TMA_EXPLAIN_PATH, explain_ok, 1);
    static const exit_case layout_ok[] = {{"--base 1048576", 0, "8 rows x 8 slots printed"}};
    check_exit_cases(TMA_LAYOUT_PATH, layout_ok, 1);
}

/* Every swizzle name is accepted by both tools, the compute capability 10.x ones too: the checker refuses those
 * (exit 1) and says why, rather than the command line (exit 2). */
Test(cli, swizzle_names_are_the_same_in_both_tools) {
    static const char *const hopper[] = {"none", "32B", "64b", "TMA_SWIZZLE_128B"};
    static const char *const sm100[] = {"128B_atom_32B", "128B_ATOM_32B_FLIP_8B", "tma_swizzle_128b_atom_64b"};
    for (size_t i = 0; i < 4; i++) {
        char args[128];
        snprintf(args, sizeof args, "--dims 64,64 --dtype u8 --box 32,8 --swizzle %s", hopper[i]);
        static exit_case c[1];
        c[0] = (exit_case){args, 0, "valid descriptor"};
        check_exit_cases(TMA_EXPLAIN_PATH, c, 1);
        snprintf(args, sizeof args, "--dtype u8 --box 32,8 --swizzle %s", hopper[i]);
        c[0] = (exit_case){args, 0, "printed"};
        check_exit_cases(TMA_LAYOUT_PATH, c, 1);
    }
    for (size_t i = 0; i < 3; i++) {
        char args[128];
        snprintf(args, sizeof args, "--dims 64,64 --dtype u8 --box 32,8 --swizzle %s", sm100[i]);
        static exit_case c[1];
        c[0] = (exit_case){args, 1, "TMA_ERR_SWIZZLE_UNSUPPORTED"};
        check_exit_cases(TMA_EXPLAIN_PATH, c, 1);
        snprintf(args, sizeof args, "--dtype u8 --box 32,8 --swizzle %s", sm100[i]);
        c[0] = (exit_case){args, 1, "TMA_ERR_SWIZZLE_UNSUPPORTED"};
        check_exit_cases(TMA_LAYOUT_PATH, c, 1);
    }
}

/* Default (dense) strides of huge dimensions are refused instead of wrapping around to a small stride that the
 * checker would call valid: 2^32 bf16 elements per row are 2^33 bytes, times 2^32 rows is 2^65. */
Test(cli, default_strides_do_not_wrap) {
    static const exit_case explain[] = {
        {"--dims 4294967296,4294967296,4294967296", 2, "the default stride of dimension 2 (dense rows of 2-byte"},
        {"--dims 18446744073709551615,2", 2, "the default stride of dimension 1"},
        {"--dims 4294967296,4294967296,4294967296", 2, "is past 2^64 - 1 bytes: give --strides"},
        /* given strides need no default: the checker judges them (a stride past 2^40) */
        {"--dims 4294967296,4294967296,4294967296 --strides 0x200000000,0x10000000000", 1, "TMA_ERR_GLOBAL_STRIDE"},
        /* dense strides past 2^40 but inside 64 bits reach the checker too */
        {"--dims 4294967296,4294967296", 1, "invalid descriptor"},
    };
    check_exit_cases(TMA_EXPLAIN_PATH, explain, sizeof explain / sizeof explain[0]);
    static const exit_case layout[] = {
        {"--mode im2col --dims 4294967296,4294967296,4294967296,4294967296", 2,
         "the default stride of dimension 2 (dense rows of 2-byte elements, each row rounded up to 16 bytes) is past "
         "2^64 - 1 bytes: use smaller --dims"},
    };
    check_exit_cases(TMA_LAYOUT_PATH, layout, sizeof layout / sizeof layout[0]);
    /* the stride the tool shows for a large but representable tensor is the exact product */
    run_result r = run_tool(TMA_EXPLAIN_PATH, "--dims 4294967296,4294967296 --json");
    cr_assert_not_null(strstr(r.out, "\"global_stride\":[8589934592]"), "%s", r.out);
    free(r.out);
}

/* Counts read as English: "1 value", "1 byte", "1 row", never "1 values". */
Test(cli, plurals) {
    static const exit_case explain[] = {
        {"--dims 64,64 --box 64", 2, "--box has 1 value; --dims has 2"},
        {"--dims 64,64 --box 64,64,64", 2, "--box has 3 values; --dims has 2"},
        {"--dims 64,64,64 --strides 128", 2, "--strides has 1 value; a rank-3 tensor needs 2"},
        {"--mode im2col --dims 64,8,8 --lower 1,2", 2, "--lower has 2 values; a rank-3 tensor has 1 spatial dimension"},
        {"--mode im2col --dims 64,8,8 --coord 0", 2, "--coord has 1 value; --dims has 3"},
    };
    check_exit_cases(TMA_EXPLAIN_PATH, explain, sizeof explain / sizeof explain[0]);
    static const exit_case layout[] = {
        {"--box 64,1", 0, "tma-layout: 1 row x 8 slots printed"},
        {"--mode im2col --dims 64,8,8,2 --coord 0", 2, "--coord has 1 value; a rank-4 image (--dims) needs 4"},
        {"--mode im2col --dims 16,8,8,2 --dtype u8 --channels 16 --pixels 1 --swizzle none", 0,
         "im2col load of 1 row x 1 slot drawn"},
    };
    check_exit_cases(TMA_LAYOUT_PATH, layout, sizeof layout / sizeof layout[0]);
    run_result r = run_tool(TMA_EXPLAIN_PATH, "--dims 64,1 --dtype u8 --box 64,1");
    cr_assert_eq(r.status, 0);
    cr_assert_not_null(strstr(r.out, "  dtype          u8 (1 byte)\n"), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "= 1 row x 64-byte pitch"), "%s", r.out);
    free(r.out);
    r = run_tool(TMA_LAYOUT_PATH, "--dtype u8 --box 16,1 --swizzle none");
    cr_assert_not_null(strstr(r.out, "box 16 cols x 1 row,"), "%s", r.out);
    cr_assert_not_null(strstr(r.out, "row pitch 16 bytes: 1 slot of 16 bytes per row"), "%s", r.out);
    free(r.out);
    r = run_tool(TMA_LAYOUT_PATH, "--mode im2col --dims 16,8,8,2 --dtype u8 --channels 16 --pixels 1 --swizzle none");
    cr_assert_not_null(strstr(r.out, "one load: 16 channels x 1 pixel,"), "%s", r.out);
    free(r.out);
    check_same_refusal("--dims 1,2,3,4,5,6", "--mode im2col --dims 1,2,3,4,5,6", "'1,2,3,4,5,6': at most 5 values");
}

/* A report that cannot be written is an error (exit 2, and why on stderr), never the verdict's 0 or 1: a script
 * that reads the report must not take a lost one for a valid descriptor. /dev/full fails every write with ENOSPC. */
Test(cli, a_report_that_cannot_be_written_exits_2) {
    static const struct {
        const char *tool, *args;
    } cases[] = {
        {TMA_EXPLAIN_PATH, VALID_ARGS},
        {TMA_EXPLAIN_PATH, VALID_ARGS " --json"},
        {TMA_EXPLAIN_PATH, INVALID2_ARGS},
        {TMA_EXPLAIN_PATH, IM2COL_DRAW_ARGS},
        {TMA_EXPLAIN_PATH, "--help"},
        {TMA_EXPLAIN_PATH, "--version"},
        {TMA_LAYOUT_PATH, "--swizzle 128B --dtype bf16 --box 64,256"}, /* larger than stdio's buffer */
        {TMA_LAYOUT_PATH, "--json"},
        {TMA_LAYOUT_PATH, "--swizzle 128B --dtype bf16 --box 128,8"},
        {TMA_LAYOUT_PATH, "--svg -"},
        {TMA_LAYOUT_PATH, "--requests -"},
        {TMA_LAYOUT_PATH, LAYOUT_IM2COL_ARGS},
        {TMA_LAYOUT_PATH, "--help"},
        {TMA_LAYOUT_PATH, "--version"},
        {TMA_LAYOUT_PATH, "--svg /dev/full"},
    };
    cr_assert_eq(access("/dev/full", W_OK), 0, "/dev/full is needed to test a full disk");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "'%s' %s 2>&1 >/dev/full", cases[i].tool, cases[i].args);
        run_result r = run_cmd(cmd);
        cr_assert_eq(r.status, 2, "%s: status %d with stdout on /dev/full, want 2 (stderr: %s)", cmd, r.status, r.out);
        cr_assert_not_null(strstr(r.out, "cannot write"), "%s: stderr does not say so: '%s'", cmd, r.out);
        cr_assert_not_null(strstr(r.out, "No space left on device"), "%s: stderr lacks the reason: '%s'", cmd, r.out);
        free(r.out);
    }
}

/* A pipe whose reader has gone: with SIGPIPE at its default the tool dies of it (as cat does); with SIGPIPE ignored
 * (as Python and many daemons leave it for their children) every write fails with EPIPE and the tool must say so
 * and exit 2. The read end is closed before the tool starts, so no write can succeed. */
static int run_into_closed_pipe(const char *tool, char *const argv[], bool ignore_sigpipe, char *err, size_t cap) {
    int fds[2];
    cr_assert_eq(pipe(fds), 0, "pipe");
    close(fds[0]);
    char err_path[1024];
    snprintf(err_path, sizeof err_path, "%s/closed_pipe.err", TMA_TOOLS_TMPDIR);
    const pid_t pid = fork();
    cr_assert_geq(pid, 0, "fork");
    if (pid == 0) {
        signal(SIGPIPE, ignore_sigpipe ? SIG_IGN : SIG_DFL); /* kept across exec */
        const int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (e < 0 || dup2(fds[1], 1) < 0 || dup2(e, 2) < 0)
            _exit(126);
        execv(tool, argv);
        _exit(127);
    }
    close(fds[1]);
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid, "waitpid");
    size_t n = 0;
    char *text = read_file(err_path, &n);
    snprintf(err, cap, "%s", text ? text : "");
    free(text);
    return st;
}

Test(cli, a_closed_pipe_is_not_success) {
    char *const explain[] = {"tma-explain", "--dims", "4096,4096", "--swizzle", "128B", "--box", "64,64", NULL};
    char *const layout[] = {"tma-layout", "--box", "64,64", NULL};
    const struct {
        const char *tool;
        char *const *argv;
    } cases[] = {{TMA_EXPLAIN_PATH, explain}, {TMA_LAYOUT_PATH, layout}};
    for (size_t i = 0; i < 2; i++) {
        char err[1024];
        int st = run_into_closed_pipe(cases[i].tool, cases[i].argv, true, err, sizeof err);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "%s, SIGPIPE ignored: wait status 0x%x, want exit 2 (%s)",
                  cases[i].tool, (unsigned)st, err);
        cr_assert_not_null(strstr(err, "cannot write the report to stdout: Broken pipe"), "%s: '%s'", cases[i].tool,
                           err);
        st = run_into_closed_pipe(cases[i].tool, cases[i].argv, false, err, sizeof err);
        cr_assert(!(WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 1)),
                  "%s, SIGPIPE default: wait status 0x%x reads as a verdict", cases[i].tool, (unsigned)st);
        cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE, "%s: wait status 0x%x, want death by SIGPIPE",
                  cases[i].tool, (unsigned)st);
    }
}

/* ---------------------------------------------------------------------------------------------
 * The bank model
 * ------------------------------------------------------------------------------------------- */

static bank_cost request_rows(uint32_t access, uint32_t nthreads, uint32_t (*addr)(uint32_t lane, void *ctx),
                                  void *ctx) {
    bank_request req = {.access_bytes = access, .active_mask = 0};
    for (uint32_t lane = 0; lane < nthreads; lane++) {
        req.addr[lane] = addr(lane, ctx);
        req.active_mask |= 1u << lane;
    }
    return bank_request_cost(&req);
}

typedef struct chunk_ctx {
    tma_swizzle mode;
    uint32_t base, pitch, col;
} chunk_ctx;

static uint32_t chunk_col_addr(uint32_t lane, void *ctx) {
    const chunk_ctx *c = ctx;
    return tma_swizzle_addr(c->mode, c->base + lane * c->pitch + c->col * 16u);
}

Test(bank_model, swizzle_128b_chunk_column_8_rows_conflict_free) {
    for (uint32_t base = 0; base < 2048u; base += 128u)
        for (uint32_t col = 0; col < 8u; col++) {
            chunk_ctx c = {TMA_SWIZZLE_128B, base, 128u, col};
            bank_cost k = request_rows(16u, 8u, chunk_col_addr, &c);
            cr_assert_eq(k.wavefronts, 1u, "base %u col %u", base, col);
            cr_assert_eq(k.ideal, 1u);
            cr_assert_eq(k.conflicts, 0u, "base %u col %u: %u conflicts", base, col, k.conflicts);
        }
}

Test(bank_model, swizzle_64b_32b_with_128_byte_rows_conflict) {
    for (uint32_t col = 0; col < 8u; col++) {
        chunk_ctx c64 = {TMA_SWIZZLE_64B, 0, 128u, col}, c32 = {TMA_SWIZZLE_32B, 0, 128u, col};
        bank_cost k64 = request_rows(16u, 8u, chunk_col_addr, &c64);
        bank_cost k32 = request_rows(16u, 8u, chunk_col_addr, &c32);
        cr_assert_eq(k64.worst_ways, 2u, "64B col %u", col);
        cr_assert_eq(k64.conflicts, 1u);
        cr_assert_eq(k32.worst_ways, 4u, "32B col %u", col);
        cr_assert_eq(k32.conflicts, 3u);
    }
}

typedef struct word_ctx {
    uint32_t pitch, col;
} word_ctx;

static uint32_t word_col_addr(uint32_t lane, void *ctx) {
    const word_ctx *c = ctx;
    return lane * c->pitch + c->col * 4u;
}

Test(bank_model, none_f32_32x32_column_reads_are_32_way) {
    for (uint32_t col = 0; col < 32u; col++) {
        word_ctx c = {128u, col};
        bank_cost k = request_rows(4u, 32u, word_col_addr, &c);
        cr_assert_eq(k.wavefronts, 32u, "col %u", col);
        cr_assert_eq(k.ideal, 1u);
        cr_assert_eq(k.conflicts, 31u);
        cr_assert_eq(k.worst_ways, 32u);
    }
}

Test(bank_model, padded_rows) {
    for (uint32_t col = 0; col < 32u; col++) {
        /* one word of padding per 32-word row (pitch 132): every row lands one bank further, no conflict */
        word_ctx c132 = {132u, col};
        bank_cost k = request_rows(4u, 32u, word_col_addr, &c132);
        cr_assert_eq(k.conflicts, 0u, "pitch 132 col %u", col);
        /* 16 bytes of padding (pitch 144, what a TMA box of 36 f32 gives): rows 8 apart share a bank, 4-way */
        word_ctx c144 = {144u, col};
        k = request_rows(4u, 32u, word_col_addr, &c144);
        cr_assert_eq(k.worst_ways, 4u, "pitch 144 col %u", col);
        cr_assert_eq(k.conflicts, 3u);
    }
}

static uint32_t same_addr(uint32_t lane, void *ctx) {
    (void)lane;
    (void)ctx;
    return 256u;
}

static uint32_t linear8(uint32_t lane, void *ctx) {
    (void)ctx;
    return lane * 8u;
}

Test(bank_model, broadcast_and_phases) {
    bank_cost k = request_rows(4u, 32u, same_addr, NULL);
    cr_assert_eq(k.wavefronts, 1u, "a broadcast is one wavefront");
    cr_assert_eq(k.conflicts, 0u);
    k = request_rows(8u, 32u, linear8, NULL); /* 256 contiguous bytes: two half-warps, no conflict */
    cr_assert_eq(k.wavefronts, 2u);
    cr_assert_eq(k.ideal, 2u);
    k = request_rows(16u, 32u, linear8, NULL); /* 16-byte reads 8 bytes apart: overlapping pairs share words */
    cr_assert_eq(k.ideal, 4u);
    cr_assert_eq(bank_phase_threads(16u), 8u);
    cr_assert_eq(bank_phase_threads(3u), 0u);
    bank_request bad = {.access_bytes = 12u, .active_mask = 1u};
    cr_assert_eq(bank_request_cost(&bad).requests, 0u, "an unsupported size costs nothing");
}
