/* reader.c -- a JSON reader for AdmissionReview bodies that validates everything but only builds
 * the members the rules read (see include/tg/reader.h for the contract). jansson parses about
 * 40 MB/s here; most of a real review is managedFields, the last-applied annotation, status and
 * oldObject, which no rule reads, so not building them is where the time goes. */
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

/* jansson's JSON_PARSER_MAX_DEPTH: 2048 nested arrays parse, 2049 do not (measured, 2.14). */
#define MAX_DEPTH 2048

/* Where the parser is, for deciding what to skip. */
enum ctx {
    CTX_OTHER = 0,
    CTX_ROOT,
    CTX_REQUEST,
    CTX_OBJECT,      /* request.object or request.oldObject */
    CTX_METADATA,    /* its metadata */
    CTX_ANNOTATIONS, /* its annotations */
};

struct reader {
    const char *p, *end, *start;
    char *scratch; /* decoded strings */
    size_t cap;
    int depth;
    size_t built; /* values built so far (TG_READER_MAX_VALUES) */
    bool too_many;
    char err[160];
    const char *err_at;
};

static int fail(struct reader *r, const char *at, const char *msg)
{
    if (!r->err[0]) {
        snprintf(r->err, sizeof(r->err), "%s", msg);
        r->err_at = at;
    }
    return -1;
}

static void skip_ws(struct reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
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

/* Length of the run of plain bytes at q (see plain_byte). Eight bytes at a time: a word's mask
 * flags bytes below 0x20, equal to '"' or '\\', or above 0x7f, with the "some byte is zero /
 * below n" bit tricks (Hacker's Delight 6-1). Those may also flag bytes after a real hit (a
 * borrow), never before one, so the lowest flag is the first special byte. Little-endian only
 * (the lowest address is the lowest byte); elsewhere, and for the last bytes, byte by byte. */
static size_t plain_run(const unsigned char *q, const unsigned char *e)
{
    const unsigned char *s = q;
#if defined(__SSE2__)
    /* Sixteen bytes at a time where SSE2 is there (every x86-64): a signed compare below 0x20
     * flags the control characters and, as negative bytes, everything above 0x7f; two equality
     * compares flag '"' and '\\'. The lowest set bit of the mask is the first special byte. */
    const __m128i space = _mm_set1_epi8(0x20), quote16 = _mm_set1_epi8('"'),
                  bslash16 = _mm_set1_epi8('\\');
    while (e - q >= 16) {
        __m128i w = _mm_loadu_si128((const __m128i *)(const void *)q);
        __m128i hit =
            _mm_or_si128(_mm_cmplt_epi8(w, space),
                         _mm_or_si128(_mm_cmpeq_epi8(w, quote16), _mm_cmpeq_epi8(w, bslash16)));
        unsigned mask = (unsigned)_mm_movemask_epi8(hit);
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

/* Appends len bytes to the decoded string in scratch. */
static int put(struct reader *r, size_t *n, const char *src, size_t len)
{
    if (grow(r, *n + len + 1) < 0)
        return -1;
    memcpy(r->scratch + *n, src, len);
    *n += len;
    return 0;
}

/* Reads a \\u escape (and its low surrogate) at r->p; writes UTF-8 into tmp. Returns its length
 * or 0 on error. */
static size_t read_u_escape(struct reader *r, char *tmp)
{
    unsigned cp, lo;
    if (r->end - r->p < 6 || hex4(r->p + 2, &cp) < 0)
        return (size_t)fail(r, r->p, "invalid escape") * 0;
    r->p += 6;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (r->end - r->p < 6 || r->p[0] != '\\' || r->p[1] != 'u' || hex4(r->p + 2, &lo) < 0 ||
            lo < 0xDC00 || lo > 0xDFFF)
            return (size_t)fail(r, r->p, "invalid Unicode surrogate") * 0;
        r->p += 6;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        return (size_t)fail(r, r->p, "invalid Unicode surrogate") * 0;
    } else if (cp == 0) {
        return (size_t)fail(r, r->p, "\\u0000 is not allowed") * 0;
    }
    return put_utf8(tmp, cp);
}

/* Reads a string at r->p (on the opening quote). When out is set, *text and *out are the
 * decoded text and its length: the bytes in the input itself when the string is one plain run
 * (no escape, nothing but printable ASCII; not NUL-terminated), else r->scratch. Returns 0 or
 * -1. */
static int read_string(struct reader *r, const char **text, size_t *out)
{
    static const char to[] = "\"\\/\b\f\n\r\t";
    const char *start = r->p++;
    size_t n = 0;
    bool first = true;
    for (;;) {
        const unsigned char *q = (const unsigned char *)r->p, *e = (const unsigned char *)r->end;
        q += plain_run(q, e);
        if (first && q < e && *q == '"') {
            if (out) {
                *text = r->p;
                *out = (size_t)(q - (const unsigned char *)r->p);
            }
            r->p = (const char *)q + 1;
            return 0;
        }
        first = false;
        if (out && q > (const unsigned char *)r->p &&
            put(r, &n, r->p, (size_t)(q - (const unsigned char *)r->p)) < 0)
            return -1;
        r->p = (const char *)q;
        if (q >= e)
            return fail(r, start, "premature end of input");
        unsigned char c = *q;
        if (c == '"') {
            r->p++;
            break;
        }
        if (c < 0x20)
            return fail(r, r->p, "control character in string");
        if (c == '\\') {
            char tmp[4];
            size_t len;
            if (r->p + 1 >= r->end)
                return fail(r, start, "premature end of input");
            if (r->p[1] == 'u') {
                if (!(len = read_u_escape(r, tmp)))
                    return -1;
            } else {
                int k = escape_index[(unsigned char)r->p[1]];
                if (!k)
                    return fail(r, r->p, "invalid escape");
                tmp[0] = to[k - 1];
                len = 1;
                r->p += 2;
            }
            if (out && put(r, &n, tmp, len) < 0)
                return -1;
            continue;
        }
        size_t len = utf8_len(q, e);
        if (!len)
            return fail(r, r->p, "invalid UTF-8 in string");
        if (out && put(r, &n, r->p, len) < 0)
            return -1;
        r->p += len;
    }
    if (out) {
        if (grow(r, n + 1) < 0)
            return -1;
        r->scratch[n] = '\0';
        *text = r->scratch;
        *out = n;
    }
    return 0;
}

/* Reads a number; builds it when v is set. Same grammar and limits as jansson. */
static int read_number(struct reader *r, json_t **v)
{
    const char *s = r->p, *q = r->p;
    bool real = false;
    if (q < r->end && *q == '-')
        q++;
    if (q >= r->end || *q < '0' || *q > '9')
        return fail(r, s, "invalid token");
    if (*q == '0') {
        q++;
        if (q < r->end && *q >= '0' && *q <= '9')
            return fail(r, s, "invalid token");
    } else {
        while (q < r->end && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < r->end && *q == '.') {
        real = true;
        q++;
        if (q >= r->end || *q < '0' || *q > '9')
            return fail(r, s, "invalid token");
        while (q < r->end && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < r->end && (*q == 'e' || *q == 'E')) {
        real = true;
        q++;
        if (q < r->end && (*q == '+' || *q == '-'))
            q++;
        if (q >= r->end || *q < '0' || *q > '9')
            return fail(r, s, "invalid token");
        while (q < r->end && *q >= '0' && *q <= '9')
            q++;
    }
    r->p = q;
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
        /* jansson rejects overflow (inf) and accepts underflow to 0 (measured). */
        if (errno == ERANGE && (d > 1.0 || d < -1.0))
            rc = fail(r, s, "real number overflow");
        else if (v && !(*v = json_real(d)))
            rc = fail(r, s, "out of memory");
    }
    if (text != buf)
        free(text);
    return rc;
}

static int read_value(struct reader *r, enum ctx ctx, bool build, json_t **v);

/* The context of member `key` inside an object of context ctx, and whether it is skipped. */
static enum ctx child_ctx(struct reader *r, enum ctx ctx, const char *key, bool *skip)
{
    *skip = false;
    switch (ctx) {
    case CTX_ROOT:
        return !strcmp(key, "request") ? CTX_REQUEST : CTX_OTHER;
    case CTX_REQUEST:
        if (!strcmp(key, "options")) {
            *skip = true;
            return CTX_OTHER;
        }
        if (!strcmp(key, "object") || !strcmp(key, "oldObject"))
            return CTX_OBJECT;
        return CTX_OTHER;
    case CTX_OBJECT:
        if (!strcmp(key, "status")) {
            *skip = true;
            return CTX_OTHER;
        }
        return !strcmp(key, "metadata") ? CTX_METADATA : CTX_OTHER;
    case CTX_METADATA:
        if (!strcmp(key, "managedFields")) {
            *skip = true;
            return CTX_OTHER;
        }
        return !strcmp(key, "annotations") ? CTX_ANNOTATIONS : CTX_OTHER;
    case CTX_ANNOTATIONS:
        *skip = !strcmp(key, "kubectl.kubernetes.io/last-applied-configuration");
        return CTX_OTHER;
    default:
        (void)r;
        return CTX_OTHER;
    }
}

/* After a member or element: 1 when a ',' announces another, 0 when `close` ends the container,
 * -1 (with the error set) otherwise. */
static int next_item(struct reader *r, char close)
{
    skip_ws(r);
    if (r->p < r->end && *r->p == ',') {
        r->p++;
        return 1;
    }
    if (r->p < r->end && *r->p == close) {
        r->p++;
        return 0;
    }
    return close == '}' ? fail(r, r->p, "'}' expected") : fail(r, r->p, "']' expected");
}

static int read_object(struct reader *r, enum ctx ctx, bool build, json_t **v)
{
    json_t *obj = NULL;
    const char *open = r->p++;
    if (++r->depth > MAX_DEPTH)
        return fail(r, open, "maximum parsing depth reached");
    if (build && !(obj = json_object()))
        return fail(r, open, "out of memory");
    skip_ws(r);
    if (r->p < r->end && *r->p == '}') {
        r->p++;
        goto done;
    }
    for (;;) {
        size_t klen = 0;
        bool skip = false;
        enum ctx cc = CTX_OTHER;
        json_t *child = NULL;
        char keybuf[128], *key = NULL;
        const char *ktext = NULL;
        skip_ws(r);
        if (r->p >= r->end || *r->p != '"') {
            fail(r, r->p, "string or '}' expected");
            goto bad;
        }
        /* Keys are decoded when the value is built or the context depends on them; inside a
         * skipped value (never built, always CTX_OTHER) they are only validated. */
        bool decode = build || ctx != CTX_OTHER;
        if (read_string(r, &ktext, decode ? &klen : NULL) < 0)
            goto bad;
        if (decode) {
            key = klen < sizeof(keybuf) ? keybuf : strndup(ktext, klen);
            if (!key) {
                fail(r, r->p, "out of memory");
                goto bad;
            }
            if (key == keybuf) {
                memcpy(keybuf, ktext, klen);
                keybuf[klen] = '\0';
            }
            cc = child_ctx(r, ctx, key, &skip);
        }
        skip_ws(r);
        int rc = -1;
        if (r->p >= r->end || *r->p != ':')
            fail(r, r->p, "':' expected");
        else {
            r->p++;
            skip_ws(r);
            rc = read_value(r, cc, build && !skip, &child);
        }
        /* a child is only built when build is set, and then the key was decoded */
        if (rc == 0 && child && json_object_setn_new_nocheck(obj, key, klen, child)) {
            fail(r, r->p, "out of memory");
            rc = -1;
        }
        if (key && key != keybuf)
            free(key);
        if (rc < 0)
            goto bad;
        int more = next_item(r, '}');
        if (more < 0)
            goto bad;
        if (!more)
            break;
    }
done:
    r->depth--;
    if (build)
        *v = obj;
    return 0;
bad:
    json_decref(obj);
    return -1;
}

static int read_array(struct reader *r, bool build, json_t **v)
{
    json_t *arr = NULL;
    const char *open = r->p++;
    if (++r->depth > MAX_DEPTH)
        return fail(r, open, "maximum parsing depth reached");
    if (build && !(arr = json_array()))
        return fail(r, open, "out of memory");
    skip_ws(r);
    if (r->p < r->end && *r->p == ']') {
        r->p++;
        goto done;
    }
    for (;;) {
        json_t *child = NULL;
        skip_ws(r);
        if (read_value(r, CTX_OTHER, build, &child) < 0)
            goto bad;
        if (child && json_array_append_new(arr, child)) {
            fail(r, r->p, "out of memory");
            goto bad;
        }
        int more = next_item(r, ']');
        if (more < 0)
            goto bad;
        if (!more)
            break;
    }
done:
    r->depth--;
    if (build)
        *v = arr;
    return 0;
bad:
    json_decref(arr);
    return -1;
}

static int literal(struct reader *r, const char *word, json_t *(*make)(void), bool build,
                   json_t **v)
{
    size_t n = strlen(word);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n))
        return fail(r, r->p, "invalid token");
    r->p += n;
    if (build && !(*v = make()))
        return fail(r, r->p, "out of memory");
    return 0;
}

static int read_value(struct reader *r, enum ctx ctx, bool build, json_t **v)
{
    if (r->p >= r->end)
        return fail(r, r->p, "unexpected end of input");
    if (build && ++r->built > TG_READER_MAX_VALUES) {
        r->too_many = true;
        return fail(r, r->p, "too many values");
    }
    switch (*r->p) {
    case '{':
        return read_object(r, ctx, build, v);
    case '[':
        return read_array(r, build, v);
    case '"': {
        size_t n;
        const char *text;
        if (!build)
            return read_string(r, &text, NULL);
        if (read_string(r, &text, &n) < 0)
            return -1;
        if (!(*v = json_stringn_nocheck(text, n)))
            return fail(r, r->p, "out of memory");
        return 0;
    }
    case 't':
        return literal(r, "true", json_true, build, v);
    case 'f':
        return literal(r, "false", json_false, build, v);
    case 'n':
        return literal(r, "null", json_null, build, v);
    default:
        return read_number(r, build ? v : NULL);
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
    struct reader r = {.p = buf, .end = buf + len, .start = buf};
    json_t *root = NULL;
    skip_ws(&r);
    if (r.p >= r.end || (*r.p != '{' && *r.p != '[')) {
        fail(&r, r.p, "'[' or '{' expected");
    } else if (read_value(&r, CTX_ROOT, true, &root) == 0) {
        skip_ws(&r);
        if (r.p != r.end) {
            fail(&r, r.p, "end of file expected");
            json_decref(root);
            root = NULL;
        }
    }
    free(r.scratch);
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
        snprintf(err, errlen, "malformed JSON at line %d, column %d: %s", line, col, r.err);
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

void tg_reader_prune(json_t *root)
{
    json_t *req = json_object_get(root, "request");
    if (!json_is_object(root) || !json_is_object(req))
        return;
    json_object_del(req, "options");
    prune_object(json_object_get(req, "object"));
    prune_object(json_object_get(req, "oldObject"));
}
