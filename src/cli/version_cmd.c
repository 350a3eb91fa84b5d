/* version.c -- `trainguard version`. */
#include <jansson.h>
#include <microhttpd.h>
#include <stdio.h>
#include <yaml.h>

#include "tg/version.h"
#include "tg/version_cmd.h"
#include "tg/x509.h"

int tg_cmd_version(int argc, char **argv)
{
    char err[512];
    const struct tg_x509_api *api = tg_x509(err, sizeof(err));

    (void)argc;
    (void)argv;
    printf("trainguard %s (libmicrohttpd %s, jansson %s, libyaml %s, %s)\n", TG_VERSION,
           MHD_get_version(), JANSSON_VERSION, yaml_get_version_string(),
           api ? api->openssl_version() : "OpenSSL not loaded: see the message below");
    if (!api)
        fprintf(stderr, "trainguard version: %s\n", err);
    return api ? 0 : 1;
}
