/* base64.c -- standard base64 encoding and strict decoding. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tg/base64.h"

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The alphabet's character for a 6-bit value, as a constant expression (for the table below). */
#define B64_CHAR(x)                                                                                \
    ((char)((x) < 26    ? 'A' + (x)                                                                \
            : (x) < 52  ? 'a' + (x)-26                                                             \
            : (x) < 62  ? '0' + (x)-52                                                             \
            : (x) == 62 ? '+'                                                                      \
                        : '/'))
#define B64_PAIR(x)                                                                                \
    {                                                                                              \
        B64_CHAR((x) >> 6), B64_CHAR((x)&63)                                                       \
    }
#define B64_P4(x) B64_PAIR(x), B64_PAIR((x) + 1), B64_PAIR((x) + 2), B64_PAIR((x) + 3)
#define B64_P16(x) B64_P4(x), B64_P4((x) + 4), B64_P4((x) + 8), B64_P4((x) + 12)
#define B64_P64(x) B64_P16(x), B64_P16((x) + 16), B64_P16((x) + 32), B64_P16((x) + 48)
#define B64_P256(x) B64_P64(x), B64_P64((x) + 64), B64_P64((x) + 128), B64_P64((x) + 192)
#define B64_P1024(x) B64_P256(x), B64_P256((x) + 256), B64_P256((x) + 512), B64_P256((x) + 768)

/* The two characters of every 12-bit value: a group of three bytes is two lookups, not four. */
static const char b64_pairs[4096][2] = {B64_P1024(0), B64_P1024(1024), B64_P1024(2048),
                                        B64_P1024(3072)};

char *tg_base64_encode(const unsigned char *data, size_t len)
{
    char *out = malloc(4 * ((len + 2) / 3) + 1);
    if (out)
        tg_base64_encode_to(out, data, len);
    return out;
}

size_t tg_base64_encode_to(char *out, const unsigned char *data, size_t len)
{
    size_t o = 0, i = 0;
    /* whole groups of three bytes, then the last one or two with padding */
    for (; i + 3 <= len; i += 3) {
        unsigned int v = (unsigned int)data[i] << 16 | (unsigned int)data[i + 1] << 8 | data[i + 2];
        memcpy(out + o, b64_pairs[v >> 12], 2);
        memcpy(out + o + 2, b64_pairs[v & 4095], 2);
        o += 4;
    }
    for (; i < len; i += 3) {
        unsigned int v = (unsigned int)data[i] << 16;
        if (i + 1 < len)
            v |= (unsigned int)data[i + 1] << 8;
        if (i + 2 < len)
            v |= data[i + 2];
        out[o++] = b64_alphabet[(v >> 18) & 63];
        out[o++] = b64_alphabet[(v >> 12) & 63];
        out[o++] = i + 1 < len ? b64_alphabet[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < len ? b64_alphabet[v & 63] : '=';
    }
    out[o] = '\0';
    return o;
}

static int b64_value(char c)
{
    const char *p = c ? strchr(b64_alphabet, c) : NULL;
    return p ? (int)(p - b64_alphabet) : -1;
}

unsigned char *tg_base64_decode(const char *text, size_t *outlen)
{
    size_t len = strlen(text);
    if (len % 4)
        return NULL;
    unsigned char *out = malloc(len / 4 * 3 + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len; i += 4) {
        int v[4];
        for (int k = 0; k < 4; k++) {
            char c = text[i + k];
            bool pad_ok = (i + 4 == len) && k >= 2 && c == '=';
            v[k] = pad_ok ? 0 : b64_value(c);
            if (v[k] < 0 || (k == 2 && c == '=' && text[i + 3] != '='))
                goto fail;
        }
        unsigned int w =
            (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)v[2] << 6 | (unsigned)v[3];
        out[o++] = (unsigned char)(w >> 16);
        if (text[i + 2] != '=')
            out[o++] = (unsigned char)(w >> 8);
        if (text[i + 3] != '=')
            out[o++] = (unsigned char)w;
    }
    out[o] = '\0';
    *outlen = o;
    return out;
fail:
    free(out);
    return NULL;
}
