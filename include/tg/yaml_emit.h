/* yaml_emit.h -- JSON values back to YAML for `check --mutate`. */
#ifndef TG_YAML_EMIT_H
#define TG_YAML_EMIT_H

#include <jansson.h>
#include <stdio.h>

/* Writes v as a YAML document (block style, keys in the object's order, strings quoted whenever
 * plain YAML 1.1 would read them as another type). Returns 0 or -EIO / -ENOMEM. */
int tg_yaml_emit(const json_t *v, FILE *out);

#endif
