/* fuzz_quantity.c -- the quantity parser: no crash, no overflow (UBSan), and parse/format agree. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tg/quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char s[128], out[128];
    struct tg_quantity q, q2;
    long long v;
    if (size >= sizeof(s))
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    if (tg_quantity_parse(s, &q) != 0)
        return 0;
    tg_quantity_is_integer(&q);
    tg_quantity_to_int(&q, &v);
    tg_quantity_format(&q, out, sizeof(out));
    if (tg_quantity_parse(out, &q2) == 0 && tg_quantity_cmp(&q, &q2) != 0)
        abort();
    return 0;
}
