/* path.c -- field paths for people and RFC 6901 JSON pointers for patches, built side by side. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tg/path.h"

void tg_path_root(struct tg_path *p)
{
    p->field[0] = '\0';
    p->ptr[0] = '\0';
    p->overflow = false;
}

/* A key prints after a dot when it looks like an identifier, else in brackets. */
static bool plain_key(const char *key)
{
    if (!*key)
        return false;
    for (const char *c = key; *c; c++) {
        if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-')
            return false;
    }
    return true;
}

int tg_ptr_append(char *buf, size_t len, const char *token)
{
    size_t n = strlen(buf);
    size_t need = 1;
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
    return 0;
}

/* Appends pre + a + post to the field path. */
static void field_append(struct tg_path *dst, const char *pre, const char *a, const char *post)
{
    size_t n = strlen(dst->field);
    int w = snprintf(dst->field + n, sizeof(dst->field) - n, "%s%s%s", pre, a, post);
    if (w < 0 || (size_t)w >= sizeof(dst->field) - n) {
        dst->field[n] = '\0';
        dst->overflow = true;
    }
}

void tg_path_key(struct tg_path *dst, const struct tg_path *src, const char *key)
{
    if (dst != src)
        *dst = *src;
    if (plain_key(key))
        field_append(dst, dst->field[0] ? "." : "", key, "");
    else
        field_append(dst, "[", key, "]");
    if (tg_ptr_append(dst->ptr, sizeof(dst->ptr), key) < 0)
        dst->overflow = true;
}

void tg_path_index(struct tg_path *dst, const struct tg_path *src, size_t i)
{
    char num[24];
    if (dst != src)
        *dst = *src;
    snprintf(num, sizeof(num), "%zu", i);
    field_append(dst, "[", num, "]");
    if (tg_ptr_append(dst->ptr, sizeof(dst->ptr), num) < 0)
        dst->overflow = true;
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
