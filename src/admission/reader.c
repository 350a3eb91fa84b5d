/* reader.c -- a JSON reader for AdmissionReview bodies that validates everything but only builds
 * the members the rules read (see include/tg/reader.h for the contract). jansson parses about
 * 40 MB/s here; most of a real review is managedFields, the last-applied annotation, status and
 * oldObject, which no rule reads, so not building them is where the time goes.
 *
 * Two readers share the scanners: read_value builds (recursively, with the member context that
 * decides what to skip), skip_value only validates (one loop with an explicit stack, no values,
 * no decoded strings). Both report the same error at the same byte. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/reader.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* jansson's JSON_PARSER_MAX_DEPTH: 2048 nested arrays parse, 2049 do not, and neither does a
 * scalar inside 2048 arrays: every value counts (measured, 2.14). */
#define MAX_DEPTH 2048 /* docs/references.md#ref-jansson-depth-nul */

/* Where the parser is, for deciding what to skip. */
enum ctx {
    CTX_OTHER = 0,
    CTX_ROOT,
    CTX_REQUEST,
    CTX_OBJECT,      /* request.object or request.oldObject */
    CTX_METADATA,    /* its metadata */
    CTX_ANNOTATIONS, /* its annotations */
    CTX_USER_INFO,   /* request.userInfo */
};

struct reader {
    const char *p, *end, *start;
    char *scratch; /* decoded strings */
    size_t cap;
    int depth;
    long left; /* values that may still be built (TG_READER_MAX_VALUES at the start) */
    bool too_many;
    json_t **members; /* tg_reader_load_review's, or NULL */
    const char *msg;  /* the first error's reason (a literal), NULL while there is none */
    const char *err_at;
};

static int fail(struct reader *r, const char *at, const char *msg)
{
    if (!r->msg) {
        r->msg = msg;
        r->err_at = at;
    }
    return -1;
}

/* The same, for the scanners that return where they stopped. */
static const char *fail_at(struct reader *r, const char *at, const char *msg)
{
    fail(r, at, msg);
    return NULL;
}

/* The first byte at or after p that is not whitespace (or e). */
static __attribute__((noinline)) const char *skip_ws_run(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* Whitespace is rare in the compact JSON the API server sends: one compare settles a byte above
 * ' ' (every token starts with one), and a run of whitespace is skipped out of line. */
static inline const char *skip_ws(const char *p, const char *e)
{
    if (p < e && (unsigned char)*p > ' ')
        return p;
    return skip_ws_run(p, e);
}

/* p when it is on c, else the first byte after the whitespace at p: one compare in the common
 * case, where the separator or string the grammar expects follows without whitespace. */
static inline const char *to_token(const char *p, const char *e, char c)
{
    if (p < e && *p == c)
        return p;
    return skip_ws_run(p, e);
}

static int grow(struct reader *r, size_t need)
{
    if (need <= r->cap)
        return 0;
    size_t cap = r->cap ? r->cap : 256;
    while (cap < need)
        cap *= 2;
    char *s = realloc(r->scratch, cap);
    if (!s)
        return fail(r, r->p, "out of memory");
    r->scratch = s;
    r->cap = cap;
    return 0;
}
static int hex4(const char *s, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

/* Length of a valid UTF-8 sequence at s (within end), 0 if invalid. Same rules as jansson:
 * no overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_len(const unsigned char *s, const unsigned char *end)
{
    unsigned c = s[0], cp;
    size_t n;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if ((size_t)(end - s) < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Bytes that need no attention inside a string: printable ASCII except '"' and '\\'. */
static const unsigned char plain_byte[256] = {
#define R8(x) x, x, x, x, x, x, x, x
    R8(0), R8(0), R8(0), R8(0),                                  /* 0x00-0x1f: control characters */
    1,     1,     0,     1,     1, 1, 1, 1, R8(1), R8(1), R8(1), /* 0x20-0x3f, '"' is 0x22 */
    R8(1), R8(1), R8(1), 1,     1, 1, 1, 0, 1,     1,     1,     /* 0x40-0x5f, '\\' is 0x5c */
    R8(1), R8(1), R8(1), R8(1),                                  /* 0x60-0x7f */
#undef R8
};

#if defined(__SSE2__)
/* One bit per byte of the sixteen at q that needs attention inside a string: '\\', and with one
 * signed compare below 0x21 after flipping bit 1 ('"' becomes ' ', which no other byte does;
 * control characters stay below 0x20 and, as negative bytes, everything above 0x7f stays below
 * too), the control characters, '"' and the non-ASCII bytes. */
static inline unsigned special16v(__m128i w)
{
    const __m128i t = _mm_xor_si128(w, _mm_set1_epi8(0x02));
    const __m128i hit = _mm_or_si128(_mm_cmplt_epi8(t, _mm_set1_epi8(0x21)),
                                     _mm_cmpeq_epi8(w, _mm_set1_epi8('\\')));
    return (unsigned)_mm_movemask_epi8(hit);
}

static inline unsigned special16(const unsigned char *q)
{
    return special16v(_mm_loadu_si128((const __m128i *)(const void *)q));
}
#endif

/* Length of the run of plain bytes at q (see plain_byte). Sixteen bytes at a time where SSE2 is
 * there (every x86-64), then eight at a time: a word's mask flags bytes below 0x20, equal to '"'
 * or '\\', or above 0x7f, with the "some byte is zero / below n" bit tricks (Hacker's Delight
 * 6-1). Those may also flag bytes after a real hit (a borrow), never before one, so the lowest
 * flag is the first special byte. Little-endian only (the lowest address is the lowest byte);
 * elsewhere, and for the last bytes, byte by byte. */
static inline size_t plain_run(const unsigned char *q, const unsigned char *e)
{
    const unsigned char *s = q;
#if defined(__SSE2__)
    while (e - q >= 16) {
        unsigned mask = special16(q);
        if (mask)
            return (size_t)(q - s) + (unsigned)__builtin_ctz(mask);
        q += 16;
    }
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;

    while (e - q >= 8) {
        uint64_t w, quote, bslash, mask;
        memcpy(&w, q, sizeof(w));
        quote = w ^ (ones * '"');
        bslash = w ^ (ones * '\\');
        mask = (((w - ones * 0x20) & ~w) | ((quote - ones) & ~quote) | ((bslash - ones) & ~bslash) |
                w) &
               highs;
        if (mask)
            return (size_t)(q - s) + ((unsigned)__builtin_ctzll(mask) >> 3);
        q += 8;
    }
#endif
    while (q < e && plain_byte[*q])
        q++;
    return (size_t)(q - s);
}

/* 1 + position in "\"\\/bfnrt" of the byte after a backslash, 0 when it is no escape. */
static const unsigned char escape_index[256] = {
    ['"'] = 1, ['\\'] = 2, ['/'] = 3, ['b'] = 4, ['f'] = 5, ['n'] = 6, ['r'] = 7, ['t'] = 8,
};

/* Reads the \u escape at q (and the low surrogate after a high one) into *cp. Returns the byte
 * after it, or NULL with the error set: a short or non-hex escape is reported at its backslash, a
 * bad surrogate pair or \u0000 just after the escape that makes it so. */
static const unsigned char *u_escape(struct reader *r, const unsigned char *q,
                                     const unsigned char *e, unsigned *cp)
{
    unsigned lo;
    if (e - q < 6 || hex4((const char *)q + 2, cp) < 0)
        return (const unsigned char *)fail_at(r, (const char *)q, "invalid escape");
    q += 6;
    if (*cp >= 0xD800 && *cp <= 0xDBFF) {
        if (e - q < 6 || q[0] != '\\' || q[1] != 'u' || hex4((const char *)q + 2, &lo) < 0 ||
            lo < 0xDC00 || lo > 0xDFFF)
            return (const unsigned char *)fail_at(r, (const char *)q, "invalid Unicode surrogate");
        *cp = 0x10000 + ((*cp - 0xD800) << 10) + (lo - 0xDC00);
        return q + 6;
    }
    if (*cp >= 0xDC00 && *cp <= 0xDFFF)
        return (const unsigned char *)fail_at(r, (const char *)q, "invalid Unicode surrogate");
    if (*cp == 0)
        return (const unsigned char *)fail_at(r, (const char *)q, "\\u0000 is not allowed");
    return q;
}

#if defined(__SSE2__)
/* Escapes in a long skipped string, sixty-four bytes at a time: the last-applied annotation is a
 * whole object as JSON in a string, a \" every few bytes and a \\ wherever that object's own
 * strings had an escape. From q (not an escaped byte), while at least 64 bytes remain, a chunk
 * passes when it has no control or non-ASCII byte and every escape in it is a backslash followed
 * by one of "\\/bfnrt; the string ends at its first unescaped quote. Returns the byte after that
 * quote, or NULL with *at where the careful loop in skip_string takes over (the first chunk that
 * does not pass, or fewer than 64 bytes left), so any error is found and reported there. */
static const unsigned char *skip_string_chunks(const unsigned char *q, const unsigned char *e,
                                               const unsigned char **at)
{
    const __m128i space = _mm_set1_epi8(0x20), quote16 = _mm_set1_epi8('"'),
                  bslash16 = _mm_set1_epi8('\\');
    while (e - q >= 64) {
        uint64_t quote, bslash, starts, escaped, other;
        const __m128i w0 = _mm_loadu_si128((const __m128i *)(const void *)q),
                      w1 = _mm_loadu_si128((const __m128i *)(const void *)(q + 16)),
                      w2 = _mm_loadu_si128((const __m128i *)(const void *)(q + 32)),
                      w3 = _mm_loadu_si128((const __m128i *)(const void *)(q + 48));
        const __m128i odd =
            _mm_or_si128(_mm_or_si128(_mm_cmplt_epi8(w0, space), _mm_cmplt_epi8(w1, space)),
                         _mm_or_si128(_mm_cmplt_epi8(w2, space), _mm_cmplt_epi8(w3, space)));
        if (_mm_movemask_epi8(odd))
            break;
        quote = (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(w0, quote16)) |
                (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(w1, quote16)) << 16 |
                (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(w2, quote16)) << 32 |
                (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(w3, quote16)) << 48;
        bslash = (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(w0, bslash16)) |
                 (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(w1, bslash16)) << 16 |
                 (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(w2, bslash16)) << 32 |
                 (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(w3, bslash16)) << 48;
        /* The backslashes that start an escape: all of them unless two are adjacent (an escaped
         * backslash); then one by one, each start escaping the byte after it. */
        if (!(bslash & (bslash << 1))) {
            starts = bslash;
        } else {
            uint64_t b = bslash;
            starts = 0;
            while (b) {
                unsigned i = (unsigned)__builtin_ctzll(b);
                b &= b - 1;
                /* the backslash at i is escaped when the byte before it starts an escape */
                if (!i || !(starts >> (i - 1) & 1))
                    starts |= (uint64_t)1 << i;
            }
        }
        escaped = starts << 1;
        /* escaped bytes other than '"' and '\\': checked one by one ('u' and the invalid ones
         * go to the careful loop) */
        other = escaped & ~(quote | bslash);
        while (other) {
            unsigned i = (unsigned)__builtin_ctzll(other);
            other &= other - 1;
            if (q[i] == 'u' || !escape_index[q[i]])
                goto careful;
        }
        quote &= ~escaped;
        if (quote)
            return q + __builtin_ctzll(quote) + 1;
        /* a start in the last byte escapes the next chunk's first: begin that chunk with it */
        q += starts >> 63 ? 63 : 64;
    }
careful:
    *at = q;
    return NULL;
}
#endif

/* Validates the string whose opening quote is at s: escapes, strict UTF-8, no control
 * characters. Returns the byte after its closing quote, or NULL with the error set (an
 * unterminated string is reported at its opening quote, anything else at the offending byte).
 * A long string goes through skip_string_chunks first; below, a block's simple escapes (a
 * backslash and one of "\\/bfnrt within the block) are consumed from its mask without reloading
 * it, and everything else goes byte by byte. */
static const char *skip_string(struct reader *r, const char *s)
{
    const unsigned char *q = (const unsigned char *)s + 1, *e = (const unsigned char *)r->end;
#if defined(__SSE2__)
    if (e - q >= 64) {
        const unsigned char *end = skip_string_chunks(q, e, &q);
        if (end)
            return (const char *)end;
    }
#endif
    for (;;) {
#if defined(__SSE2__)
        if (e - q >= 16) {
            unsigned mask = special16(q), i;
            if (!mask) {
                q += 16;
                continue;
            }
            i = (unsigned)__builtin_ctz(mask);
            while (i < 15 && q[i] == '\\' && escape_index[q[i + 1]]) {
                mask &= ~0u << (i + 2); /* the escape's two bytes; i + 2 <= 16 */
                if (!mask)
                    break;
                i = (unsigned)__builtin_ctz(mask);
            }
            if (!mask) {
                q += 16;
                continue;
            }
            q += i;
        } else {
            q += plain_run(q, e);
        }
#else
        q += plain_run(q, e);
#endif
        if (q >= e)
            return fail_at(r, s, "premature end of input");
        unsigned c = *q;
        if (c == '"')
            return (const char *)q + 1;
        if (c == '\\') {
            unsigned cp;
            if (e - q < 2)
                return fail_at(r, s, "premature end of input");
            if (escape_index[q[1]]) {
                q += 2;
                continue;
            }
            if (q[1] != 'u')
                return fail_at(r, (const char *)q, "invalid escape");
            if (!(q = u_escape(r, q, e, &cp)))
                return NULL;
            continue;
        }
        if (c < 0x20)
            return fail_at(r, (const char *)q, "control character in string");
        size_t len = utf8_len(q, e);
        if (!len)
            return fail_at(r, (const char *)q, "invalid UTF-8 in string");
        q += len;
    }
}

#if defined(__SSE2__)
/* The byte after the string at s (on its opening quote) when it is one plain run (see
 * plain_byte) read sixteen bytes at a time, else NULL: most keys and values. */
static inline const char *short_string(const char *s, const char *e)
{
    const unsigned char *q = (const unsigned char *)s + 1;
    while (e - (const char *)q >= 16) {
        unsigned mask = special16(q);
        if (mask)
            return q[__builtin_ctz(mask)] == '"' ? (const char *)q + __builtin_ctz(mask) + 1 : NULL;
        q += 16;
    }
    return NULL;
}
#else
static inline const char *short_string(const char *s, const char *e)
{
    (void)s;
    (void)e;
    return NULL;
}
#endif

/* Keys of up to KEY_SHORT bytes are copied to an aligned buffer for jansson's hash (see
 * read_object_in). */
#define KEY_SHORT 31

#if defined(__SSE2__)
/* The length of the key at s (on its opening quote) when it is one plain run (see plain_byte) of
 * at most KEY_SHORT bytes whose sixteen-byte blocks lie within the body; then buf (16-byte
 * aligned, KEY_SHORT + 1 bytes) holds those blocks, the key first. Else -1 (the key is read as
 * any string). */
static inline ptrdiff_t short_key(const char *s, const char *e, char *buf)
{
    const unsigned char *q = (const unsigned char *)s + 1;
    __m128i w;
    unsigned mask;
    if (e - (const char *)q < 16)
        return -1;
    w = _mm_loadu_si128((const __m128i *)(const void *)q);
    _mm_store_si128((__m128i *)(void *)buf, w);
    if ((mask = special16v(w)))
        return q[__builtin_ctz(mask)] == '"' ? (ptrdiff_t)__builtin_ctz(mask) : -1;
    if (e - (const char *)q < 32)
        return -1;
    w = _mm_loadu_si128((const __m128i *)(const void *)(q + 16));
    _mm_store_si128((__m128i *)(void *)(buf + 16), w);
    if ((mask = special16v(w)))
        return q[16 + __builtin_ctz(mask)] == '"' ? 16 + (ptrdiff_t)__builtin_ctz(mask) : -1;
    return -1;
}
#else
static inline ptrdiff_t short_key(const char *s, const char *e, char *buf)
{
    (void)s;
    (void)e;
    (void)buf;
    return -1;
}
#endif

/* Reads a string at r->p (on the opening quote): *text and *out are its decoded text and length,
 * not NUL-terminated. Without an escape that is the input itself and 0 is returned; with one,
 * r->scratch (which the next decoded string reuses) and 1. -1 on error. */
static int read_string_long(struct reader *r, const char **text, size_t *out)
{
    static const char to[] = "\"\\/\b\f\n\r\t";
    const char *s = r->p;
    const unsigned char *q = (const unsigned char *)s + 1, *e = (const unsigned char *)r->end;
    q += plain_run(q, e);
    if (q < e && *q == '"') { /* one plain run */
        *text = s + 1;
        *out = (size_t)((const char *)q - (s + 1));
        r->p = (const char *)q + 1;
        return 0;
    }
    /* Validate first (the errors are skip_string's), then decode what is known to be valid. */
    const char *end = skip_string(r, s), *last;
    if (!end)
        return -1;
    last = end - 1; /* the closing quote */
    const char *b = memchr(s + 1, '\\', (size_t)(last - (s + 1)));
    r->p = end;
    if (!b) { /* UTF-8 but no escape: still the input's own bytes */
        *text = s + 1;
        *out = (size_t)(last - (s + 1));
        return 0;
    }
    /* Decoded text is never longer than its escaped form. */
    if (grow(r, (size_t)(last - s)) < 0)
        return -1;
    char *o = r->scratch;
    const char *q2 = s + 1;
    while (b) {
        memcpy(o, q2, (size_t)(b - q2));
        o += b - q2;
        if (b[1] == 'u') {
            unsigned cp;
            q2 = (const char *)u_escape(r, (const unsigned char *)b, (const unsigned char *)last,
                                        &cp);
            o += put_utf8(o, cp);
        } else {
            *o++ = to[escape_index[(unsigned char)b[1]] - 1];
            q2 = b + 2;
        }
        b = memchr(q2, '\\', (size_t)(last - q2));
    }
    memcpy(o, q2, (size_t)(last - q2));
    o += last - q2;
    *text = r->scratch;
    *out = (size_t)(o - r->scratch);
    return 1;
}

static inline int read_string(struct reader *r, const char **text, size_t *out)
{
    const char *end = short_string(r->p, r->end);
    if (!end)
        return read_string_long(r, text, out);
    *text = r->p + 1;
    *out = (size_t)(end - 1 - (r->p + 1));
    r->p = end;
    return 0;
}

/* The end of the number at s by jansson's grammar, or NULL ("invalid token" at s). *real is set
 * for a fraction or an exponent, *expo for an exponent; *digits counts the integer digits. */
static const char *scan_number(struct reader *r, const char *s, bool *real, bool *expo,
                               size_t *digits)
{
    const char *q = s, *e = r->end, *d;
    *real = *expo = false;
    if (q < e && *q == '-')
        q++;
    if (q >= e || *q < '0' || *q > '9')
        return fail_at(r, s, "invalid token");
    d = q;
    if (*q == '0') {
        q++;
        if (q < e && *q >= '0' && *q <= '9')
            return fail_at(r, s, "invalid token");
    } else {
        while (q < e && *q >= '0' && *q <= '9')
            q++;
    }
    *digits = (size_t)(q - d);
    if (q < e && *q == '.') {
        *real = true;
        q++;
        if (q >= e || *q < '0' || *q > '9')
            return fail_at(r, s, "invalid token");
        while (q < e && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < e && (*q == 'e' || *q == 'E')) {
        *real = *expo = true;
        q++;
        if (q < e && (*q == '+' || *q == '-'))
            q++;
        if (q >= e || *q < '0' || *q > '9')
            return fail_at(r, s, "invalid token");
        while (q < e && *q >= '0' && *q <= '9')
            q++;
    }
    return q;
}

/* Converts the number text [s, q) as jansson does (strtoll, strtod): an integer beyond int64 is
 * "too big integer", a real that overflows to infinity "real number overflow" (underflow to 0 is
 * accepted, measured). Builds it when v is set. */
static int convert_number(struct reader *r, const char *s, const char *q, bool real, json_t **v)
{
    char buf[64];
    char *text = buf;
    size_t len = (size_t)(q - s);
    if (len >= sizeof(buf) && !(text = malloc(len + 1)))
        return fail(r, s, "out of memory");
    memcpy(text, s, len);
    text[len] = '\0';
    int rc = 0;
    if (!real) {
        char *endp;
        errno = 0;
        long long i = strtoll(text, &endp, 10);
        if (errno == ERANGE)
            rc = fail(r, s, "too big integer");
        else if (v && !(*v = json_integer(i)))
            rc = fail(r, s, "out of memory");
    } else {
        char *endp;
        errno = 0;
        double d = strtod(text, &endp);
        if (errno == ERANGE && (d > 1.0 || d < -1.0))
            rc = fail(r, s, "real number overflow");
        else if (v && !(*v = json_real(d)))
            rc = fail(r, s, "out of memory");
    }
    if (text != buf)
        free(text);
    return rc;
}

/* Integers of up to 18 digits are below 10^18 < 2^63: they cannot overflow. Reals without an
 * exponent and with up to 300 integer digits are below 10^300 < DBL_MAX: they cannot overflow
 * either (and underflow is accepted). Everything else goes through convert_number. */
#define INT_SAFE_DIGITS 18
#define REAL_SAFE_DIGITS 300

/* Validates the number at s; returns its end or NULL with the error set. */
static const char *skip_number(struct reader *r, const char *s)
{
    bool real, expo;
    size_t digits;
    const char *q = scan_number(r, s, &real, &expo, &digits);
    if (!q)
        return NULL;
    if (real ? !expo && digits <= REAL_SAFE_DIGITS : digits <= INT_SAFE_DIGITS)
        return q;
    return convert_number(r, s, q, real, NULL) < 0 ? NULL : q;
}

/* Reads and builds the number at r->p. */
static int read_number(struct reader *r, json_t **v)
{
    bool real, expo;
    size_t digits;
    const char *s = r->p, *q = scan_number(r, s, &real, &expo, &digits);
    if (!q)
        return -1;
    r->p = q;
    if (real || digits > INT_SAFE_DIGITS)
        return convert_number(r, s, q, real, v);
    /* Accumulated negatively so that no step overflows; strtoll gives the same value. */
    const char *d = s + (*s == '-');
    long long i = 0;
    for (; d < q; d++)
        i = i * 10 - (*d - '0');
    if (!(*v = json_integer(*s == '-' ? i : -i)))
        return fail(r, s, "out of memory");
    return 0;
}

/* Validates the literal word at p ("invalid token" at p). */
static const char *skip_literal(struct reader *r, const char *p, const char *word, size_t n)
{
    if ((size_t)(r->end - p) < n || memcmp(p, word, n))
        return fail_at(r, p, "invalid token");
    return p + n;
}

/* Validates the value at r->p without building anything and moves r->p past it. Containers are
 * followed with an explicit stack (the closing byte of each open level) instead of recursion, and
 * count towards the same depth limit as the values around them. */
static int skip_value(struct reader *r)
{
    const char *p = r->p, *e = r->end;
    int depth = 0, room = MAX_DEPTH - r->depth;
    char close[MAX_DEPTH + 1]; /* close[d]: '}' or ']' for the container at level d */

value:
    if (p >= e)
        return fail(r, p, "unexpected end of input");
    if (depth >= room) /* as in count_value: a scalar counts towards the depth too */
        return fail(r, p, "maximum parsing depth reached");
    if (e - p >= 2 && p[0] == '{' && p[1] == '}') { /* managedFields' leaves */
        p += 2;
        goto after;
    }
    switch (*p) {
    case '"': {
        const char *end = short_string(p, e);
        if (!(p = end ? end : skip_string(r, p)))
            return -1;
        break;
    }
    case '{':
    case '[': {
        char c = *p == '{' ? '}' : ']';
        p = skip_ws(p + 1, e);
        if (p < e && *p == c) { /* empty: nothing to push */
            p++;
            break;
        }
        close[++depth] = c;
        if (c == '}')
            goto key;
        goto value;
    }
    case 't':
        if (!(p = skip_literal(r, p, "true", 4)))
            return -1;
        break;
    case 'f':
        if (!(p = skip_literal(r, p, "false", 5)))
            return -1;
        break;
    case 'n':
        if (!(p = skip_literal(r, p, "null", 4)))
            return -1;
        break;
    default:
        if (!(p = skip_number(r, p)))
            return -1;
        break;
    }
after: /* a value: the end of the skipped one, or a separator or a container's end */
    while (depth) {
        p = skip_ws(p, e);
        if (p < e && *p == ',') {
            p = skip_ws(p + 1, e);
            if (close[depth] == '}')
                goto key;
            goto value;
        }
        if (p >= e || *p != close[depth])
            return fail(r, p, close[depth] == '}' ? "'}' expected" : "']' expected");
        p++;
        depth--;
    }
    r->p = p;
    return 0;
key:
    if (p >= e || *p != '"')
        return fail(r, p, "string or '}' expected");
    {
        const char *end = short_string(p, e);
        if (!(p = end ? end : skip_string(r, p)))
            return -1;
    }
    p = to_token(p, e, ':');
    if (p >= e || *p != ':')
        return fail(r, p, "':' expected");
    p = skip_ws(p + 1, e);
    goto value;
}

static int read_value(struct reader *r, enum ctx ctx, json_t **v);
static int read_object(struct reader *r, enum ctx ctx, json_t **v);

#define KEY_IS(lit) (klen == sizeof(lit) - 1 && !memcmp(key, lit, sizeof(lit) - 1))

/* The context of member `key` inside an object of context ctx, and whether it is skipped. */
static enum ctx child_ctx(enum ctx ctx, const char *key, size_t klen, bool *skip)
{
    *skip = false;
    switch (ctx) {
    case CTX_ROOT:
        return KEY_IS("request") ? CTX_REQUEST : CTX_OTHER;
    case CTX_REQUEST:
        /* Only the members tg_review_parse reads are built: resource, requestKind,
         * requestResource, subResource, requestSubResource and options never are. */
        if (KEY_IS("object") || KEY_IS("oldObject"))
            return CTX_OBJECT;
        if (KEY_IS("userInfo"))
            return CTX_USER_INFO;
        *skip = !(KEY_IS("uid") || KEY_IS("kind") || KEY_IS("operation") || KEY_IS("namespace") ||
                  KEY_IS("name") || KEY_IS("dryRun"));
        return CTX_OTHER;
    case CTX_USER_INFO: /* the review reads the username; groups, uid and extra are not built */
        *skip = !KEY_IS("username");
        return CTX_OTHER;
    case CTX_OBJECT:
        if (KEY_IS("status")) {
            *skip = true;
            return CTX_OTHER;
        }
        return KEY_IS("metadata") ? CTX_METADATA : CTX_OTHER;
    case CTX_METADATA:
        if (KEY_IS("managedFields")) {
            *skip = true;
            return CTX_OTHER;
        }
        return KEY_IS("annotations") ? CTX_ANNOTATIONS : CTX_OTHER;
    case CTX_ANNOTATIONS:
        *skip = KEY_IS("kubectl.kubernetes.io/last-applied-configuration");
        return CTX_OTHER;
    default:
        return CTX_OTHER;
    }
}

const char *tg_review_member_name(enum tg_review_member m)
{
    static const char *const names[TG_RM_COUNT] = {
        [TG_RM_API_VERSION] = "apiVersion", [TG_RM_KIND] = "kind",
        [TG_RM_REQUEST] = "request",        [TG_RM_UID] = "uid",
        [TG_RM_REQUEST_KIND] = "kind",      [TG_RM_OPERATION] = "operation",
        [TG_RM_NAMESPACE] = "namespace",    [TG_RM_NAME] = "name",
        [TG_RM_DRY_RUN] = "dryRun",         [TG_RM_USER_INFO] = "userInfo",
        [TG_RM_OBJECT] = "object",          [TG_RM_OLD_OBJECT] = "oldObject",
    };
    return m >= 0 && m < TG_RM_COUNT ? names[m] : NULL;
}

/* The review member (enum tg_review_member) that member `key` of the root (ctx CTX_ROOT) or of
 * its request (CTX_REQUEST) is, or -1. */
static int review_member(enum ctx ctx, const char *key, size_t klen)
{
    if (ctx == CTX_ROOT)
        return KEY_IS("request")      ? TG_RM_REQUEST
               : KEY_IS("apiVersion") ? TG_RM_API_VERSION
               : KEY_IS("kind")       ? TG_RM_KIND
                                      : -1;
    switch (klen) {
    case 3:
        return KEY_IS("uid") ? TG_RM_UID : -1;
    case 4:
        return KEY_IS("kind") ? TG_RM_REQUEST_KIND : KEY_IS("name") ? TG_RM_NAME : -1;
    case 6:
        return KEY_IS("object") ? TG_RM_OBJECT : KEY_IS("dryRun") ? TG_RM_DRY_RUN : -1;
    case 8:
        return KEY_IS("userInfo") ? TG_RM_USER_INFO : -1;
    case 9:
        return KEY_IS("oldObject")   ? TG_RM_OLD_OBJECT
               : KEY_IS("operation") ? TG_RM_OPERATION
               : KEY_IS("namespace") ? TG_RM_NAMESPACE
                                     : -1;
    default:
        return -1;
    }
}

#undef KEY_IS

/* Notes child, just set as member `key` of the root or of its request, for
 * tg_reader_load_review: the last of duplicate keys wins, as in the object. A request replaced
 * by one that is not an object leaves no members (one that is an object clears them when its
 * reading starts, in read_object). */
static void note_member(struct reader *r, enum ctx ctx, const char *key, size_t klen, json_t *child)
{
    int m = review_member(ctx, key, klen);
    if (m < 0)
        return;
    r->members[m] = child;
    if (m == TG_RM_REQUEST && !json_is_object(child))
        memset(r->members + TG_RM_UID, 0, (TG_RM_COUNT - TG_RM_UID) * sizeof(json_t *));
}

/* Counts a value about to be built against TG_READER_MAX_VALUES. */
static inline int count_value(struct reader *r)
{
    /* jansson counts every value towards its depth, scalars too: a value inside MAX_DEPTH open
     * containers is refused, whatever it is (a container there fails the same way). */
    if (r->depth >= MAX_DEPTH)
        return fail(r, r->p, "maximum parsing depth reached");
    if (--r->left < 0) {
        r->too_many = true;
        return fail(r, r->p, "too many values");
    }
    return 0;
}

/* Builds the string at r->p. */
static inline int read_string_value(struct reader *r, json_t **v)
{
    size_t n;
    const char *text;
    if (read_string(r, &text, &n) < 0)
        return -1;
    if (!(*v = json_stringn_nocheck(text, n)))
        return fail(r, r->p, "out of memory");
    return 0;
}

/* Reads and builds the object at r->p. note: the root or its request, whose members are noted
 * for tg_reader_load_review (a separate copy, so that the loop for every other object carries
 * none of it). */
static inline __attribute__((always_inline)) int read_object_in(struct reader *r, enum ctx ctx,
                                                                json_t **v, bool note)
{
    json_t *obj;
    const char *open = r->p, *e = r->end, *p;
    _Alignas(16) char kbuf[KEY_SHORT + 1];
    if (++r->depth > MAX_DEPTH)
        return fail(r, open, "maximum parsing depth reached");
    if (!(obj = json_object()))
        return fail(r, open, "out of memory");
    if (note && ctx == CTX_REQUEST) /* a later request replaces an earlier one */
        memset(r->members + TG_RM_UID, 0, (TG_RM_COUNT - TG_RM_UID) * sizeof(json_t *));
    p = to_token(open + 1, e, '"');
    if (p < e && *p == '}') {
        r->p = p + 1;
        goto done;
    }
    for (;;) {
        size_t klen;
        bool skip = false;
        enum ctx cc = CTX_OTHER;
        json_t *child = NULL;
        char *key = NULL;
        const char *ktext;
        int rc;
        p = to_token(p, e, '"');
        if (p >= e || *p != '"') {
            fail(r, p, "string or '}' expected");
            goto bad;
        }
        /* jansson hashes a key (lookup3's hashlittle) a 32-bit word at a time when it is 4-byte
         * aligned, and two bytes or one at a time otherwise, which costs about twice the
         * instructions; a key in the body is wherever it falls. A short plain one (most keys) is
         * therefore hashed and stored from kbuf, which short_key fills as it looks for the
         * key's end. */
        ptrdiff_t kshort = short_key(p, e, kbuf);
        if (kshort >= 0) {
            ktext = kbuf;
            klen = (size_t)kshort;
            r->p = p + kshort + 2;
            rc = 0;
        } else {
            r->p = p;
            if ((rc = read_string(r, &ktext, &klen)) < 0)
                goto bad;
        }
        /* A key decoded into scratch (it had an escape: rare) is copied: the member's value
         * reuses scratch. */
        if (rc) {
            if (!(key = malloc(klen + 1))) {
                fail(r, r->p, "out of memory");
                goto bad;
            }
            memcpy(key, ktext, klen);
            ktext = key;
        }
        if (ctx != CTX_OTHER)
            cc = child_ctx(ctx, ktext, klen, &skip);
        rc = -1;
        p = to_token(r->p, e, ':');
        if (p >= e || *p != ':') {
            fail(r, p, "':' expected");
        } else {
            r->p = p = skip_ws(p + 1, e);
            if (skip)
                rc = skip_value(r);
            else if (p < e && *p == '"') /* most members: read_value inline */
                rc = count_value(r) < 0 ? -1 : read_string_value(r, &child);
            else if (p < e && *p == '{' && cc != CTX_REQUEST) /* and objects, but the request */
                rc = count_value(r) < 0 ? -1 : read_object(r, cc, &child);
            else
                rc = read_value(r, cc, &child);
        }
        if (rc == 0 && child) {
            /* noted first: a failed set fails the whole load, which forgets the members */
            if (note)
                note_member(r, ctx, ktext, klen, child);
            if (json_object_setn_new_nocheck(obj, ktext, klen, child)) {
                fail(r, r->p, "out of memory");
                rc = -1;
            }
        }
        if (key)
            free(key);
        if (rc < 0)
            goto bad;
        /* a ',' announces another member, '}' ends the object */
        p = skip_ws(r->p, e);
        if (p < e && *p == ',') {
            p++;
            continue;
        }
        if (p < e && *p == '}') {
            r->p = p + 1;
            break;
        }
        fail(r, p, "'}' expected");
        goto bad;
    }
done:
    r->depth--;
    *v = obj;
    return 0;
bad:
    json_decref(obj);
    return -1;
}

static int read_object(struct reader *r, enum ctx ctx, json_t **v)
{
    return read_object_in(r, ctx, v, false);
}

static __attribute__((noinline)) int read_review_object(struct reader *r, enum ctx ctx, json_t **v)
{
    return read_object_in(r, ctx, v, true);
}

static int read_array(struct reader *r, json_t **v)
{
    json_t *arr;
    const char *open = r->p, *e = r->end, *p;
    if (++r->depth > MAX_DEPTH)
        return fail(r, open, "maximum parsing depth reached");
    if (!(arr = json_array()))
        return fail(r, open, "out of memory");
    p = skip_ws(open + 1, e);
    if (p < e && *p == ']') {
        r->p = p + 1;
        goto done;
    }
    for (;;) {
        json_t *child = NULL;
        int rc;
        r->p = p = skip_ws(p, e);
        if (p < e && *p == '"') /* read_value inline, as for members */
            rc = count_value(r) < 0 ? -1 : read_string_value(r, &child);
        else if (p < e && *p == '{')
            rc = count_value(r) < 0 ? -1 : read_object(r, CTX_OTHER, &child);
        else
            rc = read_value(r, CTX_OTHER, &child);
        if (rc < 0)
            goto bad;
        if (json_array_append_new(arr, child)) {
            fail(r, r->p, "out of memory");
            goto bad;
        }
        /* a ',' announces another element, ']' ends the array */
        p = skip_ws(r->p, e);
        if (p < e && *p == ',') {
            p++;
            continue;
        }
        if (p < e && *p == ']') {
            r->p = p + 1;
            break;
        }
        fail(r, p, "']' expected");
        goto bad;
    }
done:
    r->depth--;
    *v = arr;
    return 0;
bad:
    json_decref(arr);
    return -1;
}

static int literal(struct reader *r, const char *word, size_t n, json_t *(*make)(void), json_t **v)
{
    const char *end = skip_literal(r, r->p, word, n);
    if (!end)
        return -1;
    r->p = end;
    if (!(*v = make()))
        return fail(r, r->p, "out of memory");
    return 0;
}

/* Reads and builds the value at r->p. */
static int read_value(struct reader *r, enum ctx ctx, json_t **v)
{
    if (r->p >= r->end)
        return fail(r, r->p, "unexpected end of input");
    if (count_value(r) < 0)
        return -1;
    switch (*r->p) {
    case '{':
        if ((ctx == CTX_ROOT || ctx == CTX_REQUEST) && r->members)
            return read_review_object(r, ctx, v);
        return read_object(r, ctx, v);
    case '[':
        return read_array(r, v);
    case '"':
        return read_string_value(r, v);
    case 't':
        return literal(r, "true", 4, json_true, v);
    case 'f':
        return literal(r, "false", 5, json_false, v);
    case 'n':
        return literal(r, "null", 4, json_null, v);
    default:
        return read_number(r, v);
    }
}

static void where(const struct reader *r, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const char *c = r->start; c < r->err_at && c < r->end; c++) {
        if (*c == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

json_t *tg_reader_load(const char *buf, size_t len, char *err, size_t errlen)
{
    return tg_reader_load_review(buf, len, NULL, err, errlen);
}

json_t *tg_reader_load_review(const char *buf, size_t len, json_t *members[TG_RM_COUNT], char *err,
                              size_t errlen)
{
    struct reader r = {
        .p = buf, .end = buf + len, .start = buf, .left = TG_READER_MAX_VALUES, .members = members};
    json_t *root = NULL;
    if (members)
        memset(members, 0, TG_RM_COUNT * sizeof(json_t *));
    r.p = skip_ws(r.p, r.end);
    if (r.p >= r.end || (*r.p != '{' && *r.p != '[')) {
        fail(&r, r.p, "'[' or '{' expected");
    } else if (read_value(&r, CTX_ROOT, &root) == 0) {
        r.p = skip_ws(r.p, r.end);
        if (r.p != r.end) {
            fail(&r, r.p, "end of file expected");
            json_decref(root);
            root = NULL;
        }
    }
    free(r.scratch);
    if (!root && members)
        memset(members, 0, TG_RM_COUNT * sizeof(json_t *));
    if (!root && r.too_many) {
        snprintf(err, errlen,
                 "review too large: more than %d JSON values in the members the "
                 "rules read",
                 TG_READER_MAX_VALUES);
        return NULL;
    }
    if (!root) {
        int line, col;
        where(&r, &line, &col);
        snprintf(err, errlen, "malformed JSON at line %d, column %d: %s", line, col, r.msg);
        return NULL;
    }
    return root;
}

static void prune_object(json_t *obj)
{
    if (!json_is_object(obj))
        return;
    json_object_del(obj, "status");
    json_t *meta = json_object_get(obj, "metadata");
    if (json_is_object(meta)) {
        json_object_del(meta, "managedFields");
        json_t *ann = json_object_get(meta, "annotations");
        if (json_is_object(ann))
            json_object_del(ann, "kubectl.kubernetes.io/last-applied-configuration");
    }
}

/* Removes every member of obj whose key is not in keep (NULL-terminated). */
static void keep_only(json_t *obj, const char *const *keep)
{
    const char *key;
    json_t *v;
    void *next;
    json_object_foreach_safe (obj, next, key, v) {
        size_t i = 0;
        while (keep[i] && strcmp(keep[i], key) != 0)
            i++;
        if (!keep[i])
            json_object_del(obj, key);
    }
}

void tg_reader_prune(json_t *root)
{
    static const char *const request_keep[] = {"uid",       "kind",   "operation", "namespace",
                                               "name",      "dryRun", "userInfo",  "object",
                                               "oldObject", NULL};
    static const char *const user_keep[] = {"username", NULL};
    json_t *req = json_object_get(root, "request");
    if (!json_is_object(root) || !json_is_object(req))
        return;
    keep_only(req, request_keep);
    json_t *user = json_object_get(req, "userInfo");
    if (json_is_object(user))
        keep_only(user, user_keep);
    prune_object(json_object_get(req, "object"));
    prune_object(json_object_get(req, "oldObject"));
}
