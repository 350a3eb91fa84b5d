/* digest.h -- SHA-256 of a byte string as lowercase hex, through GnuTLS's hash API (the server
 * process never loads OpenSSL: include/tg/x509.h). */
#ifndef TG_DIGEST_H
#define TG_DIGEST_H

#include <stddef.h>

#define TG_SHA256_HEX_LEN 64

/* Writes the 64 hex digits and a NUL to out. 0, or -EIO when GnuTLS refuses (out is then ""). */
int tg_sha256_hex(const void *data, size_t len, char out[TG_SHA256_HEX_LEN + 1]);

#endif
