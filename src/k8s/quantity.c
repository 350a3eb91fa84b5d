/* quantity.c -- Kubernetes resource quantities, parsed exactly into nano units. */
#include "tg/quantity.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Grammar and rounding follow kubernetes/apimachinery: pkg/api/resource/quantity.go
 * (parseQuantityString, ParseQuantity) and suffix.go (quantitySuffixer.interpret):
 *   [+-] digits [. digits] [suffix], suffix one of n u m k M G T P E, Ki Mi Gi Ti Pi Ei, or
 *   e/E followed by a signed decimal exponent. "1." and ".5" are numbers there.
 * Values finer than a nano unit round away from zero (inf.RoundUp), as ParseQuantity does.
 * Deliberate differences: at least one digit is required (apimachinery reads "-", "." and "Gi"
 * as 0; a quantity without a digit in a manifest is a mistake we report), an exponent beyond
 * int32 is refused instead of wrapping, and magnitudes of 1e20 or more are -ERANGE (the API
 * server caps binary quantities at 2^63-1 and no device count comes near).
 * Arithmetic is done on the decimal digit string, so no input length or exponent overflows.
 */

#define NANO 1000000000LL
/* 1e20 in nano units: the exclusive bound of what we represent. */
#define LIMIT_DIGITS 29
#define LIMIT ((__int128)10000000000LL * 10000000000LL * 1000000000LL) /* 10^LIMIT_DIGITS */

/* The named suffixes: "" (none); decimal n u m k M G T P E (10^-9 .. 10^18); binary Ki Mi Gi Ti
 * Pi Ei (2^10 .. 2^60). Sets the decimal exponent and binary shift of s when it is one of them
 * (by length and first byte: this runs for every quantity read). */
static bool named_suffix(const char *s, long long *e10, int *b2)
{
    static const char binary[] = "KMGTPE";
    *e10 = 0;
    *b2 = 0;
    if (s[0] == '\0')
        return true;
    if (s[1] == '\0') {
        switch (s[0]) {
        case 'n':
            *e10 = -9;
            return true;
        case 'u':
            *e10 = -6;
            return true;
        case 'm':
            *e10 = -3;
            return true;
        case 'k':
            *e10 = 3;
            return true;
        case 'M':
            *e10 = 6;
            return true;
        case 'G':
            *e10 = 9;
            return true;
        case 'T':
            *e10 = 12;
            return true;
        case 'P':
            *e10 = 15;
            return true;
        case 'E':
            *e10 = 18;
            return true;
        default:
            return false;
        }
    }
    const char *b = s[1] == 'i' && s[2] == '\0' ? strchr(binary, s[0]) : NULL;
    if (!b || !*b)
        return false;
    *b2 = 10 * (int)(b - binary + 1);
    return true;
}

/* Suffix text -> decimal exponent and binary shift. Exponent form: e/E, optional sign, digits. */
static int parse_suffix(const char *s, long long *e10, int *b2)
{
    const char *p;
    long long v = 0;
    bool neg = false;

    if (named_suffix(s, e10, b2))
        return 0;
    if (s[0] != 'e' && s[0] != 'E')
        return -EINVAL;
    p = s + 1;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (*p < '0' || *p > '9')
        return -EINVAL;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return -EINVAL;
        /* apimachinery keeps the exponent in an int32. */
        if (v > (INT32_MAX - (*p - '0')) / 10)
            return -EINVAL;
        v = v * 10 + (*p - '0');
    }
    *e10 = neg ? -v : v;
    *b2 = 0;
    return 0;
}

/* 10^e for 0 <= e <= LIMIT_DIGITS. */
static __int128 pow10_128(int e)
{
    static const long long small[] = {1LL,
                                      10LL,
                                      100LL,
                                      1000LL,
                                      10000LL,
                                      100000LL,
                                      1000000LL,
                                      10000000LL,
                                      100000000LL,
                                      1000000000LL,
                                      10000000000LL,
                                      100000000000LL,
                                      1000000000000LL,
                                      10000000000000LL,
                                      100000000000000LL,
                                      1000000000000000LL,
                                      10000000000000000LL,
                                      100000000000000000LL,
                                      1000000000000000000LL};
    if (e <= 18)
        return small[e];
    return (__int128)small[18] * small[e - 18];
}

/* Multiplies the big-endian decimal digits d[0..*n) by 2^b in place; d has room for *n + 19. */
static void mul_pow2(unsigned char *d, size_t *n, int b)
{
    while (b > 0) {
        int step = b > 30 ? 30 : b;
        unsigned long long carry = 0, m = 1ULL << step;
        size_t len = *n;

        for (size_t i = len; i-- > 0;) {
            unsigned long long x = (unsigned long long)d[i] * m + carry;

            d[i] = (unsigned char)(x % 10);
            carry = x / 10;
        }
        while (carry) {
            memmove(d + 1, d, *n);
            d[0] = (unsigned char)(carry % 10);
            carry /= 10;
            (*n)++;
        }
        b -= step;
    }
}

int tg_quantity_parse(const char *s, struct tg_quantity *q)
{
    const char *p = s, *int_start, *frac_start = NULL;
    size_t nint, nfrac = 0, n = 0;
    bool neg = false, nonzero_rest = false;
    long long e10, k;
    int b2, rc = 0;
    unsigned char *d, small[96];
    __int128 v = 0;

    if (!s || !q)
        return -EINVAL;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    int_start = p;
    while (*p >= '0' && *p <= '9')
        p++;
    nint = (size_t)(p - int_start);
    if (*p == '.') {
        frac_start = ++p;
        while (*p >= '0' && *p <= '9')
            p++;
        nfrac = (size_t)(p - frac_start);
    }
    if (nint + nfrac == 0 || parse_suffix(p, &e10, &b2) < 0)
        return -EINVAL;
    if (nfrac == 0 && nint <= 18 && e10 >= -9 && e10 <= 18) {
        /* Nearly every quantity ("32", "5120Mi", "90", "8k"): at most 18 integer digits (below
         * 2^60) shifted by at most 60 bits fit an __int128, then times 10^(e10 + 9), 0 to 27
         * times, stopping at the bound. The same value, and the same -ERANGE (a value of more
         * than LIMIT_DIGITS digits is at least LIMIT), as the digit string below. */
        long long iv = 0;
        for (size_t i = 0; i < nint; i++)
            iv = iv * 10 + (int_start[i] - '0');
        v = (__int128)iv << b2;
        /* v x 10^k reaches 10^LIMIT_DIGITS exactly when v >= 10^(LIMIT_DIGITS - k): one compare
         * and one multiply, not k of each */
        k = e10 + 9;
        if (v >= pow10_128(LIMIT_DIGITS - (int)k))
            return -ERANGE;
        v *= pow10_128((int)k);
        q->nano = neg ? -v : v;
        return 0;
    }

    /* the digits, with room for 19 more from the binary shift; a real quantity fits small */
    d = nint + nfrac + 20 <= sizeof(small) ? small : malloc(nint + nfrac + 20);
    if (!d)
        return -ENOMEM;
    for (size_t i = 0; i < nint; i++)
        if (n || int_start[i] != '0')
            d[n++] = (unsigned char)(int_start[i] - '0');
    for (size_t i = 0; i < nfrac; i++)
        if (n || frac_start[i] != '0')
            d[n++] = (unsigned char)(frac_start[i] - '0');
    if (n == 0)
        goto out; /* zero, "-0" included */
    mul_pow2(d, &n, b2);

    /* value in nano units = digits x 10^k */
    k = e10 - (long long)nfrac + 9;
    if ((long long)n + k > LIMIT_DIGITS) {
        rc = -ERANGE;
        goto out;
    }
    if (k >= 0) {
        for (size_t i = 0; i < n; i++)
            v = v * 10 + d[i];
        for (long long i = 0; i < k; i++)
            v *= 10;
    } else {
        long long keep = (long long)n + k; /* digits left of the nano point */

        for (long long i = 0; i < keep; i++)
            v = v * 10 + d[i];
        for (size_t i = keep > 0 ? (size_t)keep : 0; i < n; i++)
            nonzero_rest |= d[i] != 0;
        if (nonzero_rest)
            v += 1; /* round away from zero, like inf.RoundUp */
    }
    if (v >= LIMIT)
        rc = -ERANGE;
out:
    if (d != small)
        free(d);
    if (rc == 0)
        q->nano = neg ? -v : v;
    return rc;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

int tg_quantity_from_json(const json_t *v, struct tg_quantity *q)
{
    char buf[64];

    if (!v || !q)
        return -EINVAL;
    if (json_is_string(v)) {
        /* Quantity.UnmarshalJSON trims surrounding white space before parsing. */
        const char *s = json_string_value(v);
        size_t len = json_string_length(v);
        char *t;
        int rc;

        if (strlen(s) != len)
            return -EINVAL;
        while (len && is_space(*s)) {
            s++;
            len--;
        }
        while (len && is_space(s[len - 1]))
            len--;
        if (len < sizeof(buf)) { /* every real quantity: no allocation */
            memcpy(buf, s, len);
            buf[len] = '\0';
            return tg_quantity_parse(buf, q);
        }
        t = strndup(s, len);
        if (!t)
            return -ENOMEM;
        rc = tg_quantity_parse(t, q);
        free(t);
        return rc;
    }
    if (json_is_integer(v)) {
        q->nano = (__int128)json_integer_value(v) * NANO;
        return 0;
    }
    if (json_is_real(v)) {
        /* The API server parses the number's text; use the shortest text that reads back. */
        double x = json_real_value(v);

        for (int prec = 15; prec <= 17; prec++) {
            snprintf(buf, sizeof(buf), "%.*g", prec, x);
            if (strtod(buf, NULL) == x)
                break;
        }
        return tg_quantity_parse(buf, q);
    }
    return -EINVAL;
}

bool tg_quantity_is_integer(const struct tg_quantity *q)
{
    return q->nano % NANO == 0;
}

bool tg_quantity_is_negative(const struct tg_quantity *q)
{
    return q->nano < 0;
}

int tg_quantity_to_int(const struct tg_quantity *q, long long *out)
{
    __int128 v;

    if (q->nano % NANO != 0)
        return -EINVAL;
    v = q->nano / NANO;
    if (v > LLONG_MAX || v < LLONG_MIN)
        return -ERANGE;
    *out = (long long)v;
    return 0;
}

int tg_quantity_cmp(const struct tg_quantity *a, const struct tg_quantity *b)
{
    return (a->nano > b->nano) - (a->nano < b->nano);
}

void tg_quantity_format(const struct tg_quantity *q, char *buf, size_t len)
{
    char tmp[64];
    size_t i = sizeof(tmp);
    unsigned __int128 mag;
    unsigned long long frac;
    int fdig = 9;

    if (!buf || len == 0)
        return;
    mag = q->nano < 0 ? (unsigned __int128)0 - (unsigned __int128)q->nano
                      : (unsigned __int128)q->nano;
    frac = (unsigned long long)(mag % NANO);
    mag /= NANO;
    tmp[--i] = '\0';
    if (frac) {
        while (frac % 10 == 0) {
            frac /= 10;
            fdig--;
        }
        for (int j = 0; j < fdig; j++) {
            tmp[--i] = (char)('0' + frac % 10);
            frac /= 10;
        }
        tmp[--i] = '.';
    }
    do {
        tmp[--i] = (char)('0' + (int)(mag % 10));
        mag /= 10;
    } while (mag);
    if (q->nano < 0)
        tmp[--i] = '-';
    snprintf(buf, len, "%s", tmp + i);
}
