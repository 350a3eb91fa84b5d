/* certs_cmd.h -- `trainguard certs`: a development / bootstrap CA and a webhook serving certificate
 * (src/cli/certs_cmd.c). Takes argv after the subcommand name (argv[0] is the subcommand) and
 * returns the process exit code. */
#ifndef TG_CERTS_CMD_H
#define TG_CERTS_CMD_H

#include <stddef.h>

#include "tg/x509.h"

int tg_cmd_certs(int argc, char **argv);

/* tg_certs_generate() writes four PEM files into opts->out_dir, the names of a Kubernetes TLS
 * Secret plus the CA: ca.crt, ca.key, tls.crt, tls.key. Keys are created mode 0600 (never widened
 * and narrowed later), certificates 0644 (both subject to the umask). Nothing is written unless
 * every input is valid and every key and certificate has been made in memory first. */
/* Sets the defaults: ECDSA, TG_CERTS_DEFAULT_DAYS, no names, no force. */
void tg_certs_opts_init(struct tg_certs_opts *o);

/* Checks every input without touching the file system. 0 or -EINVAL with the reason in err. */
int tg_certs_validate(const struct tg_certs_opts *o, char *err, size_t errlen);

/* Makes the CA and the serving certificate and writes the four files. On success returns 0 and,
 * when ca_bundle is not NULL, stores a new NUL-terminated string (free() it): the base64 of ca.crt
 * on one line, the value of a webhook's clientConfig.caBundle.
 * Errors: -EINVAL (bad input), -EEXIST (a file exists and force is false; err names it, and no
 * file has been written), -EIO / -ENOMEM / other -errno, each with a message in err. */
int tg_certs_generate(const struct tg_certs_opts *o, char **ca_bundle, char *err, size_t errlen);

#endif
