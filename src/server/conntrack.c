/* conntrack.c -- per-connection deadlines against slow clients (see include/tg/conntrack.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "tg/conntrack.h"

enum phase {
    PHASE_WAITING = 0,
    PHASE_HEADERS = 1,
    PHASE_REQUEST = 2,
};

struct conn {
    MHD_socket fd;
    const struct tg_conntrack_limits *limits;
    _Atomic int phase;
    _Atomic int64_t since_ms; /* start of the current phase */
    bool cut;
    struct conn *prev, *next;
};

/* The list is touched on accept and close only; the per-request updates are atomics. Holding the
 * lock across shutdown() means a connection cannot be closed (and its fd reused) meanwhile: MHD
 * calls the CLOSED notification, which takes the lock, before it closes the socket. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct conn *head;
static unsigned int count;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? (struct conn *)ci->socket_context : NULL;
}

static void set_phase(struct conn *k, int phase)
{
    if (!k)
        return;
    atomic_store(&k->since_ms, now_ms());
    atomic_store(&k->phase, phase);
}

void tg_conntrack_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                         enum MHD_ConnectionNotificationCode toe)
{
    struct conn *k;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        struct tg_conntrack_limits *limits = cls;
        if (ci && atomic_load_explicit(&limits->closing, memory_order_relaxed)) {
            /* Draining: MHD reads EOF at the handshake and closes it (untracked). */
            shutdown(ci->connect_fd, SHUT_RDWR);
            return;
        }
        if (!ci || !(k = calloc(1, sizeof(*k))))
            return; /* untracked: only the idle timeout applies */
        k->fd = ci->connect_fd;
        k->limits = cls;
        atomic_store(&k->since_ms, now_ms());
        pthread_mutex_lock(&lock);
        k->next = head;
        if (head)
            head->prev = k;
        head = k;
        count++;
        pthread_mutex_unlock(&lock);
        *socket_context = k;
        return;
    }
    k = *socket_context;
    if (!k)
        return;
    pthread_mutex_lock(&lock);
    if (k->prev)
        k->prev->next = k->next;
    else
        head = k->next;
    if (k->next)
        k->next->prev = k->prev;
    count--;
    pthread_mutex_unlock(&lock);
    free(k);
    *socket_context = NULL;
}

void *tg_conntrack_request_line(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)cls;
    (void)uri;
    set_phase(conn_of(c), PHASE_HEADERS);
    return NULL;
}

void tg_conntrack_in_request(struct MHD_Connection *c)
{
    set_phase(conn_of(c), PHASE_REQUEST);
}

void tg_conntrack_request_done(struct MHD_Connection *c)
{
    set_phase(conn_of(c), PHASE_WAITING);
}

void tg_conntrack_close_new(struct tg_conntrack_limits *limits)
{
    atomic_store(&limits->closing, true);
}

unsigned int tg_conntrack_reap(void)
{
    unsigned int cut = 0;
    int64_t now = now_ms();
    pthread_mutex_lock(&lock);
    for (struct conn *k = head; k; k = k->next) {
        int phase = atomic_load(&k->phase);
        int64_t age = now - atomic_load(&k->since_ms);
        bool late = (phase == PHASE_WAITING && age > (int64_t)k->limits->idle_ms) ||
                    (phase == PHASE_HEADERS && age > (int64_t)k->limits->header_ms) ||
                    (phase == PHASE_REQUEST && k->limits->request_ms &&
                     age > (int64_t)k->limits->request_ms);
        if (late && !k->cut) {
            /* shutdown, not close: the fd stays MHD's, which sees EOF and cleans up. */
            shutdown(k->fd, SHUT_RDWR);
            k->cut = true;
            cut++;
        }
    }
    pthread_mutex_unlock(&lock);
    return cut;
}

unsigned int tg_conntrack_count(void)
{
    pthread_mutex_lock(&lock);
    unsigned int n = count;
    pthread_mutex_unlock(&lock);
    return n;
}
