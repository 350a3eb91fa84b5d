/* conntrack.h -- deadlines for connections that dribble (slowloris). libmicrohttpd's connection
 * timeout is an idle timeout: a client that sends one byte a second is never idle, so with the
 * connection limit reached it could lock every other client out. Each connection is tracked in
 * one of three phases, and a reaper cuts (shutdown(2); MHD then closes it) those that overstay:
 *   waiting  -- from accept (TLS handshake included) or the end of the previous response until a
 *               request line arrives: at most the idle timeout;
 *   headers  -- from the request line until the headers are complete: at most the header timeout;
 *   request  -- from complete headers (first handler call) until the response is sent: at most
 *               the request timeout when set; a body dribbled a byte at a time is never idle, and
 *               the API server gives up after at most 30 s (timeoutSeconds) anyway.
 * The API server sends its headers at once, so a few seconds is generous for it. */
#ifndef TG_CONNTRACK_H
#define TG_CONNTRACK_H

#include <microhttpd.h>
#include <stdatomic.h>
#include <stdbool.h>

struct tg_conntrack_limits {
    unsigned int idle_ms;    /* waiting phase */
    unsigned int header_ms;  /* headers phase */
    unsigned int request_ms; /* request phase (body and handler); 0: not reaped */
    atomic_bool closing;     /* set by tg_conntrack_close_new: new connections are cut at once */
};

/* MHD_OPTION_NOTIFY_CONNECTION callback; cls is a struct tg_conntrack_limits (static storage). */
void tg_conntrack_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                         enum MHD_ConnectionNotificationCode toe);
/* MHD_OPTION_URI_LOG_CALLBACK: the request line has arrived. Returns NULL (no request state). */
void *tg_conntrack_request_line(void *cls, const char *uri, struct MHD_Connection *c);
/* The handler took the request (first access call) / the response was sent (completed). */
void tg_conntrack_in_request(struct MHD_Connection *c);
void tg_conntrack_request_done(struct MHD_Connection *c);

/* From now on, every new connection of the daemon whose limits these are is cut (shutdown(2))
 * as soon as it is accepted, before its TLS handshake; connections already open go on. This is
 * how a draining server stops taking connections: MHD_quiesce_daemon on an epoll daemon with its
 * own threads races with the worker that removes the listening socket from the same epoll set,
 * and the loser aborts the process (docs/references.md#ref-mhd-quiesce-epoll). Thread-safe. */
void tg_conntrack_close_new(struct tg_conntrack_limits *limits);

/* Cuts every tracked connection past its deadline; returns how many. Thread-safe. */
unsigned int tg_conntrack_reap(void);
/* Connections currently tracked (all daemons). */
unsigned int tg_conntrack_count(void);

#endif
