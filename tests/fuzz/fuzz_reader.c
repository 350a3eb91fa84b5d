/* fuzz_reader.c -- differential: the request reader against jansson (same accept/reject, same tree
 * after tg_reader_prune). */
#include <stdint.h>
#include <stdlib.h>

#include "tg/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    json_error_t jerr;
    json_t *want = json_loadb((const char *)data, size, 0, &jerr);
    json_t *got = tg_reader_load((const char *)data, size, err, sizeof(err));
    if ((want == NULL) != (got == NULL))
        abort();
    if (want) {
        tg_reader_prune(want);
        if (!json_equal(want, got))
            abort();
    }
    json_decref(want);
    json_decref(got);
    return 0;
}
