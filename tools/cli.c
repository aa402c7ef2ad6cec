/* Shared command-line helpers of the tools (cli.h). */
#define _POSIX_C_SOURCE 200809L /* strcasecmp, strncasecmp */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *cli_program = "tma-tool";

const char *const cli_swizzle_names[7] = {"none", "32B", "64B", "128B", "128B_atom_32B", "128B_atom_32B_flip_8B",
                                          "128B_atom_64B"};

void cli_bad_usage(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", cli_program);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see %s --help)\n", cli_program);
    va_end(ap);
    exit(2);
}

/* ---------------------------------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------------------------------- */

cli_args cli_args_start(const cli_option *options, int noptions, int argc, char **argv) {
    cli_args a = {options, noptions, argc, argv, 1};
    return a;
}

static bool spelled(const char *spelling, const char *name, size_t len) {
    return spelling != NULL && strlen(spelling) == len && strncmp(spelling, name, len) == 0;
}

/* The option spelled name[0..len), or -1. */
static int find_option(const cli_args *a, const char *name, size_t len) {
    for (int i = 0; i < a->noptions; i++)
        if (spelled(a->options[i].name, name, len) || spelled(a->options[i].alias, name, len))
            return i;
    return -1;
}

int cli_next_option(cli_args *a, const char **value) {
    *value = NULL;
    if (a->next >= a->argc)
        return CLI_DONE;
    const char *arg = a->argv[a->next++];
    if (strcmp(arg, "--") == 0) {
        if (a->next < a->argc)
            cli_bad_usage("unexpected argument '%s' after '--' (%s takes options only)", a->argv[a->next],
                          cli_program);
        return CLI_DONE;
    }
    if (arg[0] != '-' || arg[1] == '\0')
        cli_bad_usage("unexpected argument '%s'", arg);
    /* "--name=value": only long options carry their value after '=' */
    const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
    const size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
    const int id = find_option(a, arg, name_len);
    if (id < 0)
        cli_bad_usage("unknown option '%.*s'", (int)name_len, arg);
    const cli_option *o = &a->options[id];
    if (!o->takes_value) {
        if (eq)
            cli_bad_usage("%s takes no value (got '%s')", o->name, arg);
        return id;
    }
    if (eq)
        *value = eq + 1;
    else if (a->next < a->argc)
        *value = a->argv[a->next++];
    else
        cli_bad_usage("%s needs a value", o->name);
    return id;
}

void cli_print_version(void) {
    printf("%s %s\n", cli_program, tma_version_string());
    cli_flush_stdout();
    exit(0);
}

void cli_print_help(const char *text) {
    fputs(text, stdout);
    cli_flush_stdout();
    exit(0);
}

/* ---------------------------------------------------------------------------------------------
 * Values
 * ------------------------------------------------------------------------------------------- */

static int digit_value(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* What a number on the command line turned out to be. */
typedef enum number_kind { NUMBER_OK, NOT_A_NUMBER, NUMBER_TOO_LARGE } number_kind;

/* s[0..n) as a decimal or 0x-hexadecimal number. strtoull is not used: it takes a leading 0 for octal,
 * and skips spaces and signs. Digits past 2^64 - 1 are NUMBER_TOO_LARGE, not NOT_A_NUMBER, so that the
 * message says what is wrong with "4294967296000000000000". */
static number_kind parse_u64_span(const char *s, size_t n, uint64_t *out) {
    uint64_t base = 10;
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
        n -= 2;
    }
    if (n == 0)
        return NOT_A_NUMBER;
    uint64_t v = 0;
    bool overflow = false;
    for (size_t i = 0; i < n; i++) {
        const int d = digit_value(s[i]);
        if (d < 0 || (uint64_t)d >= base)
            return NOT_A_NUMBER;
        if (v > (UINT64_MAX - (uint64_t)d) / base)
            overflow = true; /* keep reading: a bad digit later makes it not a number at all */
        else
            v = v * base + (uint64_t)d;
    }
    if (overflow)
        return NUMBER_TOO_LARGE;
    *out = v;
    return NUMBER_OK;
}

bool cli_parse_u64(const char *s, uint64_t *out) {
    return s != NULL && parse_u64_span(s, strlen(s), out) == NUMBER_OK;
}

/* "OPT 'V': too large: at most MAX WHY" */
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
static void too_large(const char *opt, const char *v, uint64_t max, const char *why) {
    cli_bad_usage("%s '%s': too large: at most %llu%s", opt, v, (unsigned long long)max, why);
}

uint64_t cli_u64_arg(const char *opt, const char *v, uint64_t max, const char *why) {
    uint64_t n = 0;
    const number_kind k = parse_u64_span(v, strlen(v), &n);
    if (k == NOT_A_NUMBER)
        cli_bad_usage("%s '%s': not an unsigned number (decimal, or hexadecimal after 0x)", opt, v);
    if (k == NUMBER_TOO_LARGE || n > max)
        too_large(opt, v, max, why);
    return n;
}

uint32_t cli_u32_arg(const char *opt, const char *v) {
    return (uint32_t)cli_u64_arg(opt, v, UINT32_MAX, " (32 bits)");
}

/* One list element s[0..len) into out[n]. */
typedef number_kind (*list_element_fn)(const char *s, size_t len, void *out, uint32_t n);

static number_kind u64_element(const char *s, size_t len, void *out, uint32_t n) {
    return parse_u64_span(s, len, &((uint64_t *)out)[n]);
}

/* An optional '-', then a number that fits in int32_t. */
static number_kind i32_element(const char *s, size_t len, void *out, uint32_t n) {
    const bool negative = len > 0 && s[0] == '-';
    uint64_t v = 0;
    const number_kind k = parse_u64_span(s + negative, len - negative, &v);
    if (k != NUMBER_OK)
        return k;
    if (v > (negative ? 0x80000000u : 0x7fffffffu))
        return NUMBER_TOO_LARGE;
    ((int32_t *)out)[n] = negative ? (int32_t)(-(int64_t)v) : (int32_t)v;
    return NUMBER_OK;
}

/* `range` says what is wrong with an element past the kind's range ("too large: at most ..."). */
static uint32_t parse_list(const char *opt, const char *s, void *out, uint32_t cap, list_element_fn element,
                           const char *kind, const char *range) {
    if (*s == '\0')
        cli_bad_usage("%s '%s': empty list", opt, s);
    uint32_t n = 0;
    for (const char *p = s;;) {
        const size_t len = strcspn(p, ",");
        if (len == 0)
            cli_bad_usage("%s '%s': value %u is empty; separate the numbers with single commas (e.g. 64,64)", opt, s,
                          n + 1);
        if (n == cap)
            cli_bad_usage("%s '%s': at most %u value%s", opt, s, cap, cli_plural(cap));
        const number_kind k = element(p, len, out, n);
        if (k == NOT_A_NUMBER)
            cli_bad_usage("%s '%s': '%.*s' is not %s (decimal, or hexadecimal after 0x)", opt, s, (int)len, p, kind);
        if (k == NUMBER_TOO_LARGE)
            cli_bad_usage("%s '%s': '%.*s' is %s", opt, s, (int)len, p, range);
        n++;
        if (p[len] == '\0')
            return n;
        p += len + 1;
    }
}

uint32_t cli_parse_list(const char *opt, const char *s, uint64_t *out, uint32_t cap) {
    return parse_list(opt, s, out, cap, u64_element, "an unsigned number",
                      "too large: at most 18446744073709551615 (2^64 - 1)");
}

uint32_t cli_parse_list_max(const char *opt, const char *s, uint64_t *out, uint32_t cap, uint64_t max,
                            const char *why) {
    const uint32_t n = cli_parse_list(opt, s, out, cap);
    for (uint32_t i = 0; i < n; i++)
        if (out[i] > max)
            cli_bad_usage("%s '%s': value %u = %llu is too large: at most %llu%s", opt, s, i + 1,
                          (unsigned long long)out[i], (unsigned long long)max, why);
    return n;
}

uint32_t cli_parse_i32_list(const char *opt, const char *s, int32_t *out, uint32_t cap) {
    return parse_list(opt, s, out, cap, i32_element, "a 32-bit signed number",
                      "out of range: use -2147483648 .. 2147483647 (32-bit signed)");
}

uint32_t cli_to_u32(const char *opt, uint64_t v) {
    if (v > UINT32_MAX)
        cli_bad_usage("%s: %llu is too large: at most 4294967295 (32 bits)", opt, (unsigned long long)v);
    return (uint32_t)v;
}

bool cli_parse_dtype(const char *s, tma_dtype *out) {
    for (int t = 0; t < TMA_DTYPE_COUNT_; t++)
        if (strcasecmp(s, tma_dtype_name((tma_dtype)t)) == 0) {
            *out = (tma_dtype)t;
            return true;
        }
    return false;
}

tma_dtype cli_dtype_arg(const char *v) {
    tma_dtype t = TMA_DTYPE_U8;
    if (!cli_parse_dtype(v, &t))
        cli_bad_usage("--dtype '%s': unknown type (u8 u16 u32 i32 u64 i64 f16 f32 f64 bf16 f32_ftz tf32 tf32_ftz)", v);
    return t;
}

int cli_parse_name(const char *s, const char *prefix, const char *const *names, int n) {
    size_t plen = strlen(prefix);
    if (strncasecmp(s, prefix, plen) == 0)
        s += plen;
    for (int i = 0; i < n; i++)
        if (strcasecmp(s, names[i]) == 0)
            return i;
    return -1;
}

tma_swizzle cli_swizzle_arg(const char *v) {
    const int mode = cli_parse_name(v, "TMA_SWIZZLE_", cli_swizzle_names, 7);
    if (mode < 0)
        cli_bad_usage("--swizzle '%s': use none, 32B, 64B or 128B (or 128B_atom_32B, 128B_atom_32B_flip_8B, "
                      "128B_atom_64B, which Hopper lacks)",
                      v);
    return (tma_swizzle)mode;
}

bool cli_im2col_mode_arg(const char *v) {
    static const char *const modes[] = {"tiled", "im2col"};
    const int mode = cli_parse_name(v, "", modes, 2);
    if (mode < 0)
        cli_bad_usage("--mode '%s': use tiled or im2col", v);
    return mode == 1;
}

uint32_t cli_base_arg(const char *v) {
    const uint32_t base = (uint32_t)cli_u64_arg("--base", v, CLI_MAX_BASE, " (1 MiB; a block's shared memory is at "
                                                                          "most 227 KiB)");
    if (base % TMA_SMEM_ALIGN != 0)
        cli_bad_usage("--base %u: use a multiple of %u (TMA_SMEM_ALIGN: TMA writes boxes to %u-byte aligned shared "
                      "addresses), e.g. %u or %u",
                      base, TMA_SMEM_ALIGN, TMA_SMEM_ALIGN, base / TMA_SMEM_ALIGN * TMA_SMEM_ALIGN,
                      (base / TMA_SMEM_ALIGN + 1u) * TMA_SMEM_ALIGN);
    return base;
}

uint32_t cli_estrides_arg(const char *v, uint64_t *out, uint32_t cap) {
    const uint32_t n = cli_parse_list("--estrides", v, out, cap);
    for (uint32_t i = 0; i < n; i++)
        if (out[i] == 0)
            cli_bad_usage("--estrides '%s': value %u is 0: element strides are 1..8 (the driver refuses 0; libtma's "
                          "descriptors read it as 1): write 1",
                          v, i + 1);
    return n;
}

uint32_t cli_offsets_arg(const char *v, uint64_t *out, uint32_t cap) {
    return cli_parse_list_max("--offset", v, out, cap, UINT16_MAX, " (im2col offsets are 16 bits)");
}

void cli_dense_strides(const uint64_t *dims, uint32_t rank, uint64_t esize, uint64_t *strides, const char *fix) {
    /* Every step is checked: a wrapped product is a small stride that the checker would call valid. */
    const uint64_t granule = TMA_GLOBAL_ALIGN;
    uint32_t past = 0; /* the dimension whose stride does not fit; 0: all fit */
    uint64_t st = 0;
    if (esize == 0 || dims[0] > (UINT64_MAX - (granule - 1)) / esize)
        past = 1;
    else
        st = (dims[0] * esize + granule - 1) / granule * granule;
    for (uint32_t i = 1; past == 0 && i < rank; i++) {
        strides[i - 1] = st; /* dimension i */
        const uint64_t n = dims[i] ? dims[i] : 1u;
        if (i + 1 < rank && st > UINT64_MAX / n)
            past = i + 1;
        else
            st *= i + 1 < rank ? n : 1u;
    }
    if (past == 0 || rank < 2)
        return;
    cli_bad_usage("--dims: the default stride of dimension %u (dense rows of %llu-byte elements, each row rounded up "
                  "to %llu bytes) is past 2^64 - 1 bytes: %s",
                  past, (unsigned long long)esize, (unsigned long long)granule, fix);
}

const char *cli_plural(uint64_t n) { return n == 1 ? "" : "s"; }

/* ---------------------------------------------------------------------------------------------
 * Output
 * ------------------------------------------------------------------------------------------- */

bool cli_is_stdout(const char *path) { return strcmp(path, "-") == 0; }

FILE *cli_open_output(const char *path) { return cli_is_stdout(path) ? stdout : fopen(path, "w"); }

bool cli_close_output(FILE *f) {
    if (f == stdout)
        return fflush(stdout) == 0 && !ferror(stdout);
    const bool written = !ferror(f);
    return fclose(f) == 0 && written;
}

/* errno says why a write failed, when the failing call set it; an error left over from an earlier buffered write
 * may have no errno of its own. */
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
static void cannot_write(const char *what, int err) {
    fprintf(stderr, "%s: cannot write %s: %s\n", cli_program, what,
            err ? strerror(err) : "a write failed (a full disk or a closed pipe?)");
    exit(CLI_EXIT_USAGE);
}

FILE *cli_open_output_or_exit(const char *path) {
    FILE *f = cli_open_output(path);
    if (f == NULL)
        cannot_write(cli_is_stdout(path) ? "stdout" : path, errno);
    return f;
}

void cli_close_output_or_exit(FILE *f, const char *path) {
    errno = 0;
    if (!cli_close_output(f))
        cannot_write(cli_is_stdout(path) ? "stdout" : path, errno);
}

void cli_flush_stdout(void) {
    /* A write that failed earlier (a report larger than stdio's buffer) left the stream's error flag and its errno;
     * a failing flush sets its own. ENOTTY is stdio asking isatty about stdout, not a write error. */
    const int earlier = errno;
    errno = 0;
    if (fflush(stdout) != 0)
        cannot_write("the report to stdout", errno);
    if (ferror(stdout))
        cannot_write("the report to stdout", earlier == ENOTTY ? 0 : earlier);
}

void cli_json_string(const char *s) {
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", stdout); break;
        case '\\': fputs("\\\\", stdout); break;
        case '\n': fputs("\\n", stdout); break;
        case '\r': fputs("\\r", stdout); break;
        case '\t': fputs("\\t", stdout); break;
        default:
            if (*p < 0x20)
                printf("\\u%04x", *p);
            else
                putchar(*p);
        }
    }
    putchar('"');
}
