/* base64.h -- standard base64 (RFC 4648 section 4, padded), for JSON Patches and caBundles. */
#ifndef TG_BASE64_H
#define TG_BASE64_H

#include <stddef.h>

/* Standard base64 with padding. Returns a malloc'd NUL-terminated string, or NULL. */
char *tg_base64_encode(const unsigned char *data, size_t len);
/* The same into out, which has room for 4 * ((len + 2) / 3) + 1 bytes; returns the length (the
 * text is NUL-terminated). */
size_t tg_base64_encode_to(char *out, const unsigned char *data, size_t len);
/* Strict decoder (padding required, no whitespace). Returns malloc'd bytes and *outlen, or NULL. */
unsigned char *tg_base64_decode(const char *text, size_t *outlen);

#endif
