/* fuzz_review.c -- bytes through the whole request path (/validate and /mutate) with the default
 * policy: never crash, always an HTTP status and a JSON body, uid echoed on 200. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tg/handler.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tg_policy *pol;
    if (!pol)
        pol = tg_policy_new_default();
    for (int mutating = 0; mutating < 2; mutating++) {
        struct tg_admission_out out;
        tg_admission_handle(pol, NULL, mutating, (const char *)data, size, &out);
        if (!out.body ||
            (out.http_status != 200 && out.http_status != 400 && out.http_status != 500))
            abort();
        json_t *body = json_loadb(out.body, out.len, 0, NULL);
        if (!body)
            abort();
        if (out.http_status == 200) {
            json_t *response = json_object_get(body, "response");
            const char *uid = json_string_value(json_object_get(response, "uid"));
            if (!uid || strcmp(uid, out.review.uid))
                abort();
            /* /validate never patches (a uid or message may well contain the text "patch) */
            if (!mutating &&
                (json_object_get(response, "patch") || json_object_get(response, "patchType")))
                abort();
        }
        json_decref(body);
        tg_admission_out_release(&out);
    }
    return 0;
}
