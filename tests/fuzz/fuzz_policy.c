/* fuzz_policy.c -- the policy file loader: errors or a policy, never a crash or a leak. */
#include <stdint.h>

#include "tg/policy.h"
#include "tg/policy_yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    struct tg_policy *p = tg_policy_load_yaml((const char *)data, size, "fuzz", err, sizeof(err));
    tg_policy_unref(p);
    return 0;
}
