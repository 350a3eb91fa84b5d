/* ratchet.h -- the UPDATE ratchet (SPEC 12): a deny-level finding that the old object already had
 * is reported at warn, so that a controller's update of an object admitted in audit or warn mode
 * is not blocked when the cluster moves to enforce; new findings deny as usual.
 *
 * "Already had" means the same rule at the same field, where list elements that have a name
 * (containers, env, volumes, tasks, replicated jobs; Ray's groupName) count by that name, not by
 * their index: inserting a container before the offending one does not make its finding new.
 * The old object is judged by the caller exactly as the new one is (src/admission/pipeline.c). */
#ifndef TG_RATCHET_H
#define TG_RATCHET_H

#include <jansson.h>
#include <stddef.h>

#include "tg/finding.h"

/* The identity of field path `field` in object obj: "spec.containers[0].env[2]" becomes
 * "spec.containers[name=trainer].env[name=FI_PROVIDER]" when those elements have names. Parts
 * that do not resolve in obj stay as written. Always NUL-terminates out. */
void tg_ratchet_key(json_t *obj, const char *field, char *out, size_t len);

/* Downgrades to warn every deny finding of `now` (judged on obj) whose rule and key also appear in
 * `before` (judged on old_obj), and says so in its message. Returns how many it downgraded. */
size_t tg_ratchet_apply(struct tg_findings *now, json_t *obj, const struct tg_findings *before,
                        json_t *old_obj);

#endif
