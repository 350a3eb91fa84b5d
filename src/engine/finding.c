/* finding.c -- findings of one evaluation: an ordered, de-duplicated list, and safe text. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/finding.h"

void tg_findings_init(struct tg_findings *fs)
{
    fs->v = NULL;
    fs->n = 0;
    fs->cap = 0;
}

void tg_findings_release(struct tg_findings *fs)
{
    free(fs->v);
    tg_findings_init(fs);
}

/* Cuts s in place to fit len bytes without splitting a UTF-8 sequence. */
static void utf8_cut(char *s, size_t len)
{
    size_t n = strlen(s);
    if (n < len)
        return;
    n = len - 1;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    s[n] = '\0';
}

int tg_findings_vadd(struct tg_findings *fs, const char *rule, int rule_index,
                     enum tg_action action, const char *field, const char *fmt, va_list ap)
{
    for (size_t i = 0; i < fs->n; i++) {
        if (fs->v[i].rule == rule && !strcmp(fs->v[i].field, field))
            return 0;
    }
    if (fs->n == fs->cap) {
        size_t cap = fs->cap ? fs->cap * 2 : 8;
        struct tg_finding *v = realloc(fs->v, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        fs->v = v;
        fs->cap = cap;
    }
    struct tg_finding *f = &fs->v[fs->n];
    f->rule = rule;
    f->rule_index = rule_index;
    f->action = action;
    snprintf(f->field, sizeof(f->field), "%s", field ? field : "");
    utf8_cut(f->field, sizeof(f->field));
    vsnprintf(f->message, sizeof(f->message), fmt, ap);
    utf8_cut(f->message, sizeof(f->message));
    fs->n++;
    return 0;
}

int tg_findings_add(struct tg_findings *fs, const char *rule, int rule_index, enum tg_action action,
                    const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = tg_findings_vadd(fs, rule, rule_index, action, field, fmt, ap);
    va_end(ap);
    return rc;
}

void tg_findings_sort(struct tg_findings *fs)
{
    /* Insertion sort: lists are short, and it is stable. */
    for (size_t i = 1; i < fs->n; i++) {
        struct tg_finding tmp = fs->v[i];
        size_t j = i;
        while (j > 0 && fs->v[j - 1].rule_index > tmp.rule_index) {
            fs->v[j] = fs->v[j - 1];
            j--;
        }
        fs->v[j] = tmp;
    }
}

size_t tg_finding_format(const struct tg_finding *f, char *buf, size_t len)
{
    int n;
    if (f->field[0])
        n = snprintf(buf, len, "[%s] %s: %s", f->rule, f->field, f->message);
    else
        n = snprintf(buf, len, "[%s] %s", f->rule, f->message);
    return n < 0 ? 0 : (size_t)n;
}

/* Length of the UTF-8 sequence starting at s (1..4), or 0 when it is not valid UTF-8. */
static size_t utf8_seq(const unsigned char *s)
{
    unsigned char c = s[0];
    size_t n;
    unsigned int cp;
    if (c < 0x80)
        return 1;
    if ((c & 0xE0) == 0xC0) {
        n = 2;
        cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        n = 3;
        cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    /* Overlong forms, surrogates and values past U+10FFFF are invalid. */
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
        (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        return 0;
    /* C1 control characters (U+0080..U+009F) are control characters too. */
    if (cp >= 0x80 && cp <= 0x9F)
        return 0;
    return n;
}

void tg_text_sanitize(const char *src, char *dst, size_t dstlen, size_t max_runes)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t out = 0, runes = 0;
    size_t total = 0;
    /* Count runes first to know whether the text must be cut. */
    for (const unsigned char *p = s; *p;) {
        size_t n = utf8_seq(p);
        p += n ? n : 1;
        total++;
    }
    bool cut = total > max_runes;
    size_t keep = cut ? (max_runes >= 3 ? max_runes - 3 : 0) : total;
    if (dstlen == 0)
        return;
    while (*s && runes < keep) {
        size_t n = utf8_seq(s);
        if (n == 0 || (n == 1 && (*s < 0x20 || *s == 0x7F))) {
            if (out + 1 >= dstlen)
                break;
            dst[out++] = (n == 0) ? '?' : ' ';
            s++;
        } else {
            if (out + n >= dstlen)
                break;
            memcpy(dst + out, s, n);
            out += n;
            s += n;
        }
        runes++;
    }
    if (cut) {
        for (int i = 0; i < 3 && out + 1 < dstlen; i++)
            dst[out++] = '.';
    }
    dst[out] = '\0';
}
