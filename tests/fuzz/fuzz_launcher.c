/* fuzz_launcher.c -- the launcher readers on arbitrary text: the shell walk with the MPI reader
 * (for each MPI implementation), and Kubernetes $(VAR) expansion of the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tg/expand.h"
#include "tg/launch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const enum tg_mpi_impl impls[] = {TG_MPI_OPENMPI, TG_MPI_INTEL, TG_MPI_MPICH};
    char *script = malloc(size + 1);
    if (!script)
        return 0;
    memcpy(script, data, size);
    script[size] = '\0';
    for (size_t i = 0; i < 3; i++) {
        struct tg_sh_vars vars;
        struct tg_launch l;
        tg_sh_vars_init(&vars);
        tg_launch_init(&l);
        tg_launch_parse_script(script, &vars, impls[i], 0, &l);
        tg_launch_release(&l);
        tg_sh_vars_release(&vars);
    }
    struct tg_k8s_env env;
    char unknown[96];
    tg_k8s_env_init(&env);
    if (tg_k8s_env_set(&env, "NP", "16") == 0 && tg_k8s_env_set(&env, "UID", NULL) == 0)
        free(tg_k8s_expand(script, &env, unknown, sizeof(unknown), NULL));
    tg_k8s_env_release(&env);
    free(script);
    return 0;
}
