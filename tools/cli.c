/* Shared command-line helpers of the tools (cli.h). */
#define _POSIX_C_SOURCE 200809L /* strcasecmp, strncasecmp */
#include "cli.h"

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

void cli_print_version(void) { printf("%s %s\n", cli_program, tma_version_string()); }

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

/* s[0..n) as a decimal or 0x-hexadecimal number. strtoull is not used: it takes a leading 0 for octal,
 * and skips spaces and signs. */
static bool parse_u64_span(const char *s, size_t n, uint64_t *out) {
    uint64_t base = 10;
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
        n -= 2;
    }
    if (n == 0)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        const int d = digit_value(s[i]);
        if (d < 0 || (uint64_t)d >= base || v > (UINT64_MAX - (uint64_t)d) / base)
            return false;
        v = v * base + (uint64_t)d;
    }
    *out = v;
    return true;
}

bool cli_parse_u64(const char *s, uint64_t *out) { return s != NULL && parse_u64_span(s, strlen(s), out); }

bool cli_parse_u32(const char *s, uint32_t *out) {
    uint64_t v;
    if (!cli_parse_u64(s, &v) || v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

/* One list element s[0..len) into out[n]; false if it is not a number of the list's kind. */
typedef bool (*list_element_fn)(const char *s, size_t len, void *out, uint32_t n);

static bool u64_element(const char *s, size_t len, void *out, uint32_t n) {
    return parse_u64_span(s, len, &((uint64_t *)out)[n]);
}

/* An optional '-', then a number that fits in int32_t. */
static bool i32_element(const char *s, size_t len, void *out, uint32_t n) {
    const bool negative = len > 0 && s[0] == '-';
    uint64_t v;
    if (!parse_u64_span(s + negative, len - negative, &v) || v > (negative ? 0x80000000u : 0x7fffffffu))
        return false;
    ((int32_t *)out)[n] = negative ? (int32_t)(-(int64_t)v) : (int32_t)v;
    return true;
}

static uint32_t parse_list(const char *opt, const char *s, void *out, uint32_t cap, list_element_fn element,
                           const char *kind) {
    if (*s == '\0')
        cli_bad_usage("%s '%s': empty list", opt, s);
    uint32_t n = 0;
    for (const char *p = s;;) {
        const size_t len = strcspn(p, ",");
        if (len == 0)
            cli_bad_usage("%s '%s': value %u is empty; separate the numbers with single commas (e.g. 64,64)", opt, s,
                          n + 1);
        if (n == cap)
            cli_bad_usage("%s '%s': at most %u values", opt, s, cap);
        if (!element(p, len, out, n))
            cli_bad_usage("%s '%s': '%.*s' is not %s (decimal, or hexadecimal after 0x)", opt, s, (int)len, p, kind);
        n++;
        if (p[len] == '\0')
            return n;
        p += len + 1;
    }
}

uint32_t cli_parse_list(const char *opt, const char *s, uint64_t *out, uint32_t cap) {
    return parse_list(opt, s, out, cap, u64_element, "an unsigned number");
}

uint32_t cli_parse_i32_list(const char *opt, const char *s, int32_t *out, uint32_t cap) {
    return parse_list(opt, s, out, cap, i32_element, "a 32-bit signed number");
}

uint32_t cli_to_u32(const char *opt, uint64_t v) {
    if (v > UINT32_MAX)
        cli_bad_usage("%s: %llu does not fit in 32 bits", opt, (unsigned long long)v);
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
