/* fuzz_ptr.c -- JSON pointer escaping: a pointer built from any key, applied as a patch, lands on
 * exactly that key. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tg/patch.h"
#include "tg/path.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char key[200], ptr[TG_PATH_MAX] = "", err[256];
    if (size >= sizeof(key))
        return 0;
    memcpy(key, data, size);
    key[size] = '\0';
    /* jansson keys are NUL-free UTF-8 */
    json_t *probe = strlen(key) == size ? json_string(key) : NULL;
    if (!probe)
        return 0;
    json_decref(probe);
    if (tg_ptr_append(ptr, sizeof(ptr), key) < 0)
        return 0;
    json_t *doc = json_object();
    json_t *ops = json_pack("[{s:s, s:s, s:i}]", "op", "add", "path", ptr, "value", 1);
    if (tg_patch_apply(&doc, ops, err, sizeof(err)) != 0 || json_object_size(doc) != 1 ||
        json_integer_value(json_object_get(doc, key)) != 1)
        abort();
    json_decref(ops);
    json_decref(doc);
    return 0;
}
