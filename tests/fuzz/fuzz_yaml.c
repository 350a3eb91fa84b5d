/* fuzz_yaml.c -- the manifest YAML converter used by `trainguard check`, and the YAML emitter on
 * whatever it produced. */
#include <stdint.h>
#include <stdio.h>

#include "tg/yaml_emit.h"
#include "tg/yaml_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tg_yaml_docs docs;
    if (tg_yaml_parse_stream((const char *)data, size, &docs) < 0)
        return 0;
    FILE *sink = fopen("/dev/null", "w");
    for (size_t i = 0; i < docs.n && sink; i++) {
        if (docs.v[i].value)
            tg_yaml_emit(docs.v[i].value, sink);
    }
    if (sink)
        fclose(sink);
    tg_yaml_docs_release(&docs);
    return 0;
}
