/* Shared command-line helpers of the tools (cli.h). */
#define _POSIX_C_SOURCE 200809L /* strtok_r, strcasecmp */
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

bool cli_parse_u64(const char *s, uint64_t *out) {
    if (s == NULL || *s == '\0' || *s == '-' || *s == '+')
        return false;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno != 0 || *end != '\0')
        return false;
    *out = v;
    return true;
}

bool cli_parse_u32(const char *s, uint32_t *out) {
    uint64_t v;
    if (!cli_parse_u64(s, &v) || v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

uint32_t cli_parse_list(const char *opt, const char *s, uint64_t *out, uint32_t cap) {
    char buf[512];
    if (strlen(s) >= sizeof buf)
        cli_bad_usage("%s: list too long", opt);
    strcpy(buf, s);
    uint32_t n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == cap)
            cli_bad_usage("%s '%s': at most %u values", opt, s, cap);
        if (!cli_parse_u64(tok, &out[n]))
            cli_bad_usage("%s '%s': '%s' is not an unsigned number", opt, s, tok);
        n++;
    }
    if (n == 0)
        cli_bad_usage("%s '%s': empty list", opt, s);
    return n;
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
