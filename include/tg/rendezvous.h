/* rendezvous.h -- where the training processes of a pod meet: the master or rendezvous address a
 * container hands to torchrun or torch.distributed (MASTER_ADDR), read from its env and its
 * command line without running anything. The JobSet decoder builds its worlds from it (SPEC 11:
 * the replicated jobs that share one rendezvous address train together; never guess a world
 * across child Jobs).
 *
 * Contract:
 * - Read, in this order of precedence: a torchrun flag on the command line (--master_addr,
 *   --master-addr, --rdzv_endpoint, --rdzv-endpoint, as `--flag=V` or `--flag V`), then the env a
 *   script sets or the container's env gives: MASTER_ADDR, PET_MASTER_ADDR, PET_RDZV_ENDPOINT
 *   (torchrun reads its flags from PET_<FLAG>; torch.distributed's env:// reads MASTER_ADDR).
 * - A value is literal when every variable it names ($(VAR) of Kubernetes, $VAR and ${VAR} of
 *   the shell) has a literal value in the container's env or an assignment earlier in the
 *   command line. A fieldRef, a command substitution or an unknown variable makes it vary.
 * - The host is returned without its port, in lower case, cut to its first DNS label unless it
 *   is an IP address ("llm-workers-0-0.llm.ns.svc" -> "llm-workers-0-0"), so that the short and
 *   the long form of one pod's name compare equal. A local address (localhost, 127.x, ::1,
 *   0.0.0.0) or --standalone means every pod meets only itself: TG_RDZV_NONE.
 * - Nothing is allocated; the container object is borrowed. */
#ifndef TG_RENDEZVOUS_H
#define TG_RENDEZVOUS_H

#include <jansson.h>
#include <stddef.h>

enum tg_rdzv {
    TG_RDZV_NONE = 0, /* no address found (or a local one): nothing shared */
    TG_RDZV_LITERAL,  /* host holds the literal address */
    TG_RDZV_VARIES,   /* an address is given but depends on the pod (fieldRef, unknown var) */
};

/* Reads the rendezvous host of one container object into host (len bytes, NUL-terminated; a host
 * that does not fit varies). */
enum tg_rdzv tg_rendezvous_host(json_t *container, char *host, size_t len);

/* The same, where the controller gives every pod the same value for one label and annotation
 * `key`: an env entry whose valueFrom.fieldRef.fieldPath is metadata.annotations['KEY'] or
 * metadata.labels['KEY'] has the literal `value`. */
enum tg_rdzv tg_rendezvous_host_field(json_t *container, const char *key, const char *value,
                                      char *host, size_t len);

#endif
