/* version.c -- `trainguard version`. */
#include <jansson.h>
#include <microhttpd.h>
#include <openssl/opensslv.h>
#include <stdio.h>
#include <yaml.h>

#include "tg/cli.h"

int tg_cmd_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("trainguard %s (libmicrohttpd %s, jansson %s, libyaml %s, %s)\n", TG_VERSION,
           MHD_get_version(), JANSSON_VERSION, yaml_get_version_string(), OPENSSL_VERSION_TEXT);
    return 0;
}
