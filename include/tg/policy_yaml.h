/* policy_yaml.h -- policy files: YAML (libyaml) to a checked struct tg_policy, and the embedded
 * default policy text. */
#ifndef TG_POLICY_YAML_H
#define TG_POLICY_YAML_H

#include <stddef.h>

#include "tg/policy.h"

/* Loads a policy from YAML text (src/policy/policy_yaml.c; keys and semantics: docs/policy.md).
 * Keys the text leaves out keep the embedded default. On error returns NULL with one line per error
 * in err, "line L, column C: key.path: reason" (1-based; at most 20 lines, in document order). */
struct tg_policy *tg_policy_load_yaml(const char *text, size_t len, const char *source, char *err,
                                      size_t errlen);
/* Loads a policy file. NULL on error, with "<file>: line L, column C: reason" lines in err (or
 * "<file>: cannot open: reason" when it cannot be read). */
struct tg_policy *tg_policy_load_file(const char *path, char *err, size_t errlen);
/* Like tg_policy_load_yaml with "<path>: " before each error line, source = path. */
struct tg_policy *tg_policy_load_bytes(const char *text, size_t len, const char *path, char *err,
                                       size_t errlen);
/* Policy files larger than this are refused (a policy is a few KiB). */
#define TG_POLICY_MAX_BYTES (1024 * 1024)
/* Reads a whole regular file (at most TG_POLICY_MAX_BYTES) into a malloc'd NUL-terminated buffer.
 * NULL on error with errno set and "<path>: reason" in err. */
char *tg_policy_read_file(const char *path, size_t *len, char *err, size_t errlen);
/* The embedded default policy YAML, commented (what `trainguard policy default` prints).
 * NUL-terminated, static storage. */
const char *tg_policy_default_yaml(size_t *len);

#endif
