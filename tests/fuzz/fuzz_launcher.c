/* fuzz_launcher.c -- the POSIX sh and mpirun reader on arbitrary scripts, for each MPI
 * implementation. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tg/launcher.h"

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
    free(script);
    return 0;
}
