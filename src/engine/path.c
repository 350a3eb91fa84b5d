/* path.c -- field paths for people and RFC 6901 JSON pointers for patches, built side by side. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tg/path.h"

void tg_path_root(struct tg_path *p)
{
    p->field[0] = '\0';
    p->ptr[0] = '\0';
    p->overflow = false;
    p->field_len = 0;
    p->ptr_len = 0;
}

/* Appends "/" + the escaped token to the pointer of length n in buf; returns the new length, or
 * -ENAMETOOLONG (buf unchanged). */
static int ptr_append_at(char *buf, size_t len, size_t n, const char *token)
{
    size_t tl = strlen(token), need = 1;
    if (strcspn(token, "~/") == tl) { /* nothing to escape: the common case */
        if (n + 1 + tl + 1 > len)
            return -ENAMETOOLONG;
        buf[n] = '/';
        memcpy(buf + n + 1, token, tl + 1);
        return (int)(n + 1 + tl);
    }
    for (const char *c = token; *c; c++)
        need += (*c == '~' || *c == '/') ? 2 : 1;
    if (n + need + 1 > len)
        return -ENAMETOOLONG;
    buf[n++] = '/';
    for (const char *c = token; *c; c++) {
        if (*c == '~') {
            buf[n++] = '~';
            buf[n++] = '0';
        } else if (*c == '/') {
            buf[n++] = '~';
            buf[n++] = '1';
        } else {
            buf[n++] = *c;
        }
    }
    buf[n] = '\0';
    return (int)n;
}

int tg_ptr_append(char *buf, size_t len, const char *token)
{
    int n = ptr_append_at(buf, len, strlen(buf), token);
    return n < 0 ? n : 0;
}

static void ptr_append(struct tg_path *dst, const char *token)
{
    int n = ptr_append_at(dst->ptr, sizeof(dst->ptr), dst->ptr_len, token);
    if (n < 0)
        dst->overflow = true;
    else
        dst->ptr_len = (unsigned short)n;
}

/* dst = src, copying only the used bytes (the buffers are 256 bytes each). */
static void path_copy(struct tg_path *dst, const struct tg_path *src)
{
    if (dst == src)
        return;
    memcpy(dst->field, src->field, (size_t)src->field_len + 1);
    memcpy(dst->ptr, src->ptr, (size_t)src->ptr_len + 1);
    dst->field_len = src->field_len;
    dst->ptr_len = src->ptr_len;
    dst->overflow = src->overflow;
}

/* The class of each byte in a key: 0 a plain byte (isalnum in the C locale, which the program
 * never sets, '_' or '-'), 1 another byte, 3 a byte the pointer escapes ('~' 0x7e, '/' 0x2f).
 * One load per byte. */
/* clang-format off */
static const unsigned char byte_class[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 3,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1,
    1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0,
    1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 3, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};
/* clang-format on */

/* A key prints after a dot when it looks like an identifier (non-empty, plain bytes only), else
 * in brackets. One pass over the key gives its length, whether it is plain and whether its
 * pointer token needs escaping ('~', '/'); the field and the pointer are then written in place
 * (the common case is a memcpy each). */
void tg_path_key(struct tg_path *dst, const struct tg_path *src, const char *key)
{
    size_t kl = 0;
    unsigned cls = 0; /* the classes of the key's bytes, or'ed */
    for (; key[kl]; kl++)
        cls |= byte_class[(unsigned char)key[kl]];
    bool plain = cls == 0, esc = cls & 2;
    path_copy(dst, src);
    size_t n = dst->field_len;
    plain = plain && kl;
    size_t need = n + kl + (plain ? (n ? 1 : 0) : 2);
    if (need + 1 > sizeof(dst->field)) {
        dst->overflow = true;
    } else {
        char *f = dst->field + n;
        if (!plain || n)
            *f++ = plain ? '.' : '[';
        memcpy(f, key, kl);
        f += kl;
        if (!plain)
            *f++ = ']';
        *f = '\0';
        dst->field_len = (unsigned short)need;
    }
    if (esc) {
        ptr_append(dst, key);
        return;
    }
    n = dst->ptr_len;
    if (n + 1 + kl + 1 > sizeof(dst->ptr)) {
        dst->overflow = true;
        return;
    }
    dst->ptr[n] = '/';
    memcpy(dst->ptr + n + 1, key, kl + 1);
    dst->ptr_len = (unsigned short)(n + 1 + kl);
}

void tg_path_index(struct tg_path *dst, const struct tg_path *src, size_t i)
{
    char num[24], *d = num + sizeof(num);
    path_copy(dst, src);
    do {
        *--d = (char)('0' + i % 10);
        i /= 10;
    } while (i);
    size_t nl = (size_t)(num + sizeof(num) - d);
    /* "[digits]" and "/digits" written in place (digits need no escaping), as field_append and
     * ptr_append would write them */
    size_t n = dst->field_len;
    if (n + nl + 2 + 1 > sizeof(dst->field)) {
        dst->overflow = true;
    } else {
        dst->field[n] = '[';
        memcpy(dst->field + n + 1, d, nl);
        dst->field[n + 1 + nl] = ']';
        dst->field[n + 2 + nl] = '\0';
        dst->field_len = (unsigned short)(n + nl + 2);
    }
    n = dst->ptr_len;
    if (n + 1 + nl + 1 > sizeof(dst->ptr)) {
        dst->overflow = true;
        return;
    }
    dst->ptr[n] = '/';
    memcpy(dst->ptr + n + 1, d, nl);
    dst->ptr[n + 1 + nl] = '\0';
    dst->ptr_len = (unsigned short)(n + 1 + nl);
}

const char *tg_path_sub(char *buf, size_t len, const struct tg_path *p, const char *sub)
{
    if (!p->field[0])
        snprintf(buf, len, "%s", sub);
    else if (sub[0] == '[')
        snprintf(buf, len, "%s%s", p->field, sub);
    else
        snprintf(buf, len, "%s.%s", p->field, sub);
    return buf;
}
