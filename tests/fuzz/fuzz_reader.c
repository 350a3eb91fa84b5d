/* fuzz_reader.c -- differential: the request reader against jansson (same accept/reject, same tree
 * after tg_reader_prune), and the review members it notes against json_object_get on its tree. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tg/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    json_error_t jerr;
    json_t *members[TG_RM_COUNT];
    json_t *want = json_loadb((const char *)data, size, 0, &jerr);
    json_t *got = tg_reader_load_review((const char *)data, size, members, err, sizeof(err));
    /* The one known difference (include/tg/reader.h): jansson drops a NUL byte that follows a
     * number or a literal ([1\0] parses); the reader refuses every NUL outside a string. */
    if (want && !got && memchr(data, '\0', size)) {
        json_decref(want);
        return 0;
    }
    if ((want == NULL) != (got == NULL))
        abort();
    for (int i = 0; i < TG_RM_COUNT; i++) {
        json_t *in = i < TG_RM_UID ? got : json_object_get(got, "request");
        if (members[i] !=
            (json_is_object(in) ? json_object_get(in, tg_review_member_name(i)) : NULL))
            abort();
    }
    if (want) {
        tg_reader_prune(want);
        if (!json_equal(want, got))
            abort();
    }
    json_decref(want);
    json_decref(got);
    return 0;
}
