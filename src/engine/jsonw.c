/* jsonw.c -- growable buffer and compact JSON writer (see include/tg/jsonw.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/arena.h"
#include "tg/jsonw.h"

void tg_buf_init(struct tg_buf *b)
{
    b->p = NULL;
    b->len = b->cap = 0;
    b->failed = false;
}

void tg_buf_release(struct tg_buf *b)
{
    free(b->p);
    tg_buf_init(b);
}

char *tg_buf_steal(struct tg_buf *b, size_t *len)
{
    char *p = b->failed ? NULL : b->p;
    if (!p && !b->failed)
        p = calloc(1, 1);
    if (p && len)
        *len = b->len;
    if (b->failed)
        free(b->p);
    tg_buf_init(b);
    return p;
}

static bool reserve(struct tg_buf *b, size_t n)
{
    if (b->failed)
        return false;
    if (b->len + n + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 512;
    while (cap < b->len + n + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void tg_buf_put(struct tg_buf *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

char *tg_buf_tail(struct tg_buf *b, size_t n)
{
    return reserve(b, n) ? b->p + b->len : NULL;
}

void tg_buf_commit(struct tg_buf *b, size_t n)
{
    b->len += n;
    b->p[b->len] = '\0';
}

void tg_buf_puts(struct tg_buf *b, const char *s)
{
    tg_buf_put(b, s, strlen(s));
}

size_t tg_json_escape_byte(unsigned char c, char *out)
{
    static const char hex[] = "0123456789ABCDEF";
    char e;

    switch (c) {
    case '"':
    case '\\':
        e = (char)c;
        break;
    case '\b':
        e = 'b';
        break;
    case '\f':
        e = 'f';
        break;
    case '\n':
        e = 'n';
        break;
    case '\r':
        e = 'r';
        break;
    case '\t':
        e = 't';
        break;
    default:
        /* jansson writes other control characters as \u00XX, upper-case hex. */
        memcpy(out, "\\u00", 4);
        out[4] = hex[c >> 4];
        out[5] = hex[c & 15];
        return 6;
    }
    out[0] = '\\';
    out[1] = e;
    return 2;
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* Does the word hold a byte below 0x20, a quote or a backslash? (bytes of 0x80 and up are none
 * of them: the high-bit mask leaves them out) */
static bool word_needs_escape(uint64_t w)
{
    uint64_t q = w ^ (ONES * '"'), bs = w ^ (ONES * '\\');
    uint64_t hit = (w - ONES * 0x20) | (q - ONES) | (bs - ONES);
    return (hit & ~w & HIGHS) != 0;
}

/* Does s[0..n) need no escape (no control byte, quote or backslash)? Eight bytes at a time. */
static bool plain_string(const char *s, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        if (word_needs_escape(w))
            return false;
    }
    for (; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == '"' || c == '\\')
            return false;
    }
    return true;
}

void tg_buf_json_string(struct tg_buf *b, const char *s, size_t n)
{
    size_t run = 0;
    if (plain_string(s, n)) { /* nearly every string: quotes around one copy */
        if (!reserve(b, n + 2))
            return;
        char *d = b->p + b->len;
        d[0] = '"';
        memcpy(d + 1, s, n);
        d[n + 1] = '"';
        d[n + 2] = '\0';
        b->len += n + 2;
        return;
    }
    tg_buf_put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[6];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        tg_buf_put(b, s + run, i - run);
        run = i + 1;
        tg_buf_put(b, esc, tg_json_escape_byte(c, esc));
    }
    tg_buf_put(b, s + run, n - run);
    tg_buf_put(b, "\"", 1);
}

/* Writes what goes before a member's value: pre ('{' for the first member, ',' for the others),
 * the quoted key and ':'. A key that needs no escape (nearly all) is written with one reserve. */
static void member_key(struct tg_buf *b, char pre, const char *k)
{
    size_t n = strlen(k);
    if (!plain_string(k, n)) {
        tg_buf_put(b, &pre, 1);
        tg_buf_json_string(b, k, n);
        tg_buf_put(b, ":", 1);
        return;
    }
    if (!reserve(b, n + 4))
        return;
    char *d = b->p + b->len;
    d[0] = pre;
    d[1] = '"';
    memcpy(d + 2, k, n);
    d[n + 2] = '"';
    d[n + 3] = ':';
    d[n + 4] = '\0';
    b->len += n + 4;
}

void tg_buf_json(struct tg_buf *b, const json_t *v)
{
    char num[40];
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        json_t *o = (json_t *)v;
        char pre = '{';
        /* the iterator steps, not json_object_foreach (which finds each key's iterator again) */
        for (void *it = json_object_iter(o); it; it = json_object_iter_next(o, it)) {
            member_key(b, pre, json_object_iter_key(it));
            pre = ',';
            tg_buf_json(b, json_object_iter_value(it));
        }
        tg_buf_put(b, pre == '{' ? "{}" : "}", pre == '{' ? 2 : 1);
        return;
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *x;
        tg_buf_put(b, "[", 1);
        json_array_foreach ((json_t *)v, i, x) {
            if (i)
                tg_buf_put(b, ",", 1);
            tg_buf_json(b, x);
        }
        tg_buf_put(b, "]", 1);
        return;
    }
    case JSON_STRING:
        tg_buf_json_string(b, json_string_value(v), json_string_length(v));
        return;
    case JSON_INTEGER:
        snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        tg_buf_puts(b, num);
        return;
    case JSON_REAL: {
        /* Rare on this path; let jansson format it so the two writers never disagree. */
        char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        if (!s) {
            b->failed = true;
            return;
        }
        tg_buf_puts(b, s);
        tg_json_free(s);
        return;
    }
    case JSON_TRUE:
        tg_buf_put(b, "true", 4);
        return;
    case JSON_FALSE:
        tg_buf_put(b, "false", 5);
        return;
    case JSON_NULL:
        tg_buf_put(b, "null", 4);
        return;
    }
}
