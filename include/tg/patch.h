/* patch.h -- build RFC 6902 JSON Patches, and apply them the way kube-apiserver's library does. */
#ifndef TG_PATCH_H
#define TG_PATCH_H

#include <jansson.h>
#include <stddef.h>

#include "tg/jsonw.h"

/* ops is a JSON array of {"op","path","value"} objects, in the order they were added. */
struct tg_patch {
    json_t *ops;
};

int tg_patch_init(struct tg_patch *p); /* 0 or -ENOMEM */
void tg_patch_release(struct tg_patch *p);
size_t tg_patch_count(const struct tg_patch *p);

/* Appends {"op":"add","path":ptr,"value":value}. Steals value (also on failure). 0 or -ENOMEM. */
int tg_patch_add_new(struct tg_patch *p, const char *ptr, json_t *value);

/* Appends the items of `items` (an array; stolen) to the array member `key` of `parent` (the
 * object in the document that `parent_ptr` points at): one "add" of the whole array when the
 * member is absent or null, one "add .../key/-" per item otherwise. 0, -EINVAL (parent not an
 * object, member not an array), -ENAMETOOLONG or -ENOMEM. Empty `items` adds nothing. */
int tg_patch_append_items(struct tg_patch *p, json_t *parent, const char *parent_ptr,
                          const char *key, json_t *items);

/* Compact JSON of the ops, base64-encoded (standard alphabet, padded), malloc'd; NULL on ENOMEM. */
char *tg_patch_base64(const struct tg_patch *p);
/* The same text appended to out (no copy of its own); 0, or -ENOMEM. */
int tg_patch_base64_to(const struct tg_patch *p, struct tg_buf *out);

/* Applies ops (array) to *doc in place, with evanphx/json-patch v4 semantics for add, remove,
 * replace and test: add needs the parent to exist, "-" appends, indices must be in range.
 * Returns 0 or -EINVAL, with the reason in err. *doc may be replaced (a patch on ""). */
int tg_patch_apply(json_t **doc, const json_t *ops, char *err, size_t errlen);

#endif
