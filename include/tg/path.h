/* path.h -- a location in an object, kept both as a field path for people and a JSON pointer for
 * patches. Never join these strings by hand: the two forms escape differently. */
#ifndef TG_PATH_H
#define TG_PATH_H

#include <stdbool.h>
#include <stddef.h>

#define TG_PATH_MAX 256

/* field: "spec.containers[0].resources.limits[vpc.amazonaws.com/efa]" (keys that are not plain
 *        identifiers go in brackets, as kubectl and apimachinery field errors print them)
 * ptr:   "/spec/containers/0/resources/limits/vpc.amazonaws.com~1efa" (RFC 6901: ~ -> ~0, / -> ~1)
 * overflow is set (and both strings stay valid, truncated) when a path does not fit. */
struct tg_path {
    char field[TG_PATH_MAX];
    char ptr[TG_PATH_MAX];
    bool overflow;
    /* strlen of field and ptr, kept by the functions below (paths are built for every field a
     * rule reads, so they never measure the strings again). A zeroed struct is the root. */
    unsigned short field_len, ptr_len;
};

/* The initializer of a fixed path, for a rule that reads the same place of every object:
 * FIELD and PTR are string literals ("spec.x", "/spec/x"). */
#define TG_PATH_CONST(FIELD, PTR)                                                                  \
    {                                                                                              \
        .field = FIELD, .ptr = PTR, .field_len = sizeof(FIELD) - 1, .ptr_len = sizeof(PTR) - 1     \
    }

void tg_path_root(struct tg_path *p);
/* dst = src + key. dst may equal src. */
void tg_path_key(struct tg_path *dst, const struct tg_path *src, const char *key);
/* dst = src + [i]. dst may equal src. */
void tg_path_index(struct tg_path *dst, const struct tg_path *src, size_t i);

/* Appends "/" + escaped token to a JSON pointer in buf. Returns 0, or -ENAMETOOLONG when it does
 * not fit (buf is then unchanged). */
int tg_ptr_append(char *buf, size_t len, const char *token);

/* Writes "<path>.<sub>" (or just sub when path is empty) into buf; for a message about a child. */
const char *tg_path_sub(char *buf, size_t len, const struct tg_path *p, const char *sub);

#endif
