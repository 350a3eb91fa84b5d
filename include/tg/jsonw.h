/* jsonw.h -- a growable text buffer and a compact JSON writer for the response path (jansson's
 * json_dumps costs more than the rules on a typical review). Output is byte-for-byte what
 * json_dumps(v, JSON_COMPACT) writes for strings, integers, booleans, null, arrays and objects
 * (insertion order); reals are written with "%.17g" like jansson. */
#ifndef TG_JSONW_H
#define TG_JSONW_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Invariant: p is NULL or NUL-terminated at len; failed is sticky after an allocation failure. */
struct tg_buf {
    char *p;
    size_t len, cap;
    bool failed;
};

void tg_buf_init(struct tg_buf *b);
void tg_buf_release(struct tg_buf *b);
/* Hands the text to the caller (malloc'd, NUL-terminated) or NULL when any append failed. */
char *tg_buf_steal(struct tg_buf *b, size_t *len);

void tg_buf_put(struct tg_buf *b, const char *s, size_t n);
/* Room for n more bytes (and the NUL) at the end of b, to be filled by the caller and then
 * counted with tg_buf_commit; NULL when it cannot grow. */
char *tg_buf_tail(struct tg_buf *b, size_t n);
/* Counts n bytes written at tg_buf_tail() and terminates the text after them. */
void tg_buf_commit(struct tg_buf *b, size_t n);
void tg_buf_puts(struct tg_buf *b, const char *s);
/* A JSON string literal of s (n bytes of UTF-8), with quotes and escapes. */
void tg_buf_json_string(struct tg_buf *b, const char *s, size_t n);
/* Writes the escape jansson uses for c (a byte below 0x20, '"' or '\\') to out, which has room
 * for 6 bytes; returns its length (2 or 6). */
size_t tg_json_escape_byte(unsigned char c, char *out);
/* Any JSON value, compact. */
void tg_buf_json(struct tg_buf *b, const json_t *v);

#endif
