/* launch_value.h -- a count written on a launcher's command line (mpirun -np 16, -N $PER_NODE),
 * as every launcher reader reports it: given or not, known or not, and why not.
 *
 * Contract: a value is resolved only when its word is resolved and is a non-negative decimal
 * integer that fits a long long; otherwise reason says why, in one line that names the word. */
#ifndef TG_LAUNCH_VALUE_H
#define TG_LAUNCH_VALUE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "tg/shell.h"

/* Reasons name a word of the script; 160 bytes keeps them inside a 256-character warning. */
#define TG_LAUNCH_REASON_MAX TG_SH_REASON_MAX

struct tg_launch_value {
    bool set;      /* the option was given */
    bool resolved; /* value holds the number */
    long long value;
    char text[64];                     /* the word as seen, for messages ("$NP", "16") */
    char reason[TG_LAUNCH_REASON_MAX]; /* when set && !resolved */
};

/* A count written in decimal, all of s: true when s is digits only and fits a long long. When s
 * starts with a digit, *out is set as strtoll(s, &end, 10) sets it (the leading digits' value,
 * LLONG_MAX past the range), without strtoll's locale and errno; else it is left alone. */
static inline bool tg_launch_count(const char *s, long long *out)
{
    if (*s < '0' || *s > '9')
        return false;
    long long v = 0;
    bool over = false;
    for (; *s >= '0' && *s <= '9'; s++)
        over = over || __builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *s - '0', &v);
    *out = over ? LLONG_MAX : v;
    return !over && *s == '\0';
}

/* Sets v from the count word w of option opt (named in the reason: "-np 'x' is not a process
 * count"); v is then set, and resolved or not. */
void tg_launch_value_read(struct tg_launch_value *v, const struct tg_sh_word *w, const char *opt);

/* Writes n bytes of s at dst + at (dst holds size bytes, at of them already written) and
 * terminates it, cut where snprintf(dst, size, ...) would cut: the fixed-size text of the launch
 * readers without a format string. Returns the new length of dst. Inline: the readers write
 * some 25 short texts a launch line. */
static inline size_t tg_launch_put(char *dst, size_t size, size_t at, const char *s, size_t n)
{
    if (at >= size)
        return at; /* size 0 (snprintf writes nothing), or nothing left to terminate */
    if (n > size - 1 - at)
        n = size - 1 - at;
    memcpy(dst + at, s, n);
    dst[at + n] = '\0';
    return at + n;
}

/* The same for the string s. */
static inline size_t tg_launch_puts(char *dst, size_t size, size_t at, const char *s)
{
    return tg_launch_put(dst, size, at, s, strlen(s));
}

#endif
