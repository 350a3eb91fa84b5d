/* version.c -- the trainguard release. */
#include "tg/version.h"

const char *tg_version(void)
{
    return TG_VERSION;
}
