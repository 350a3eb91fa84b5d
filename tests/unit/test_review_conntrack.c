/* test_review_conntrack.c -- the request-phase deadline: a client that sends complete headers
 * and then dribbles its body is cut once the request deadline passes (plain HTTP daemon on
 * loopback, the same conntrack callbacks as the webhook port). */
#include <arpa/inet.h>
#include <check.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tg/conntrack.h"

static enum MHD_Result access_cb(void *cls, struct MHD_Connection *c, const char *url,
                                 const char *method, const char *version, const char *data,
                                 size_t *size, void **req_cls)
{
    static int marker;
    (void)cls, (void)url, (void)method, (void)version, (void)data;
    if (!*req_cls) {
        *req_cls = &marker;
        tg_conntrack_in_request(c);
        return MHD_YES;
    }
    *size = 0; /* swallow the body; never complete in this test */
    return MHD_YES;
}

static void completed_cb(void *cls, struct MHD_Connection *c, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)req_cls, (void)toe;
    tg_conntrack_request_done(c);
}

static void sleep_ms(long ms)
{
    nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
}

/* Connects and sends complete headers plus one body byte; returns the socket. */
static int slow_client(unsigned int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    static const char req[] = "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                              "\r\nContent-Length: 100\r\n\r\n{";
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL), (ssize_t)(sizeof(req) - 1));
    return fd;
}

static bool closed_by_server(int fd, int wait_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char b;
    return poll(&p, 1, wait_ms) == 1 && recv(fd, &b, 1, 0) <= 0;
}

static void run(unsigned int request_ms, bool expect_cut)
{
    static struct tg_conntrack_limits lim;
    lim.idle_ms = 60000;
    lim.header_ms = 60000;
    lim.request_ms = request_ms;
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, NULL, NULL, access_cb, NULL,
        MHD_OPTION_NOTIFY_COMPLETED, completed_cb, NULL, MHD_OPTION_NOTIFY_CONNECTION,
        tg_conntrack_notify, &lim, MHD_OPTION_URI_LOG_CALLBACK, tg_conntrack_request_line, NULL,
        MHD_OPTION_CONNECTION_TIMEOUT, 60U, MHD_OPTION_END);
    ck_assert_ptr_nonnull(d);
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    int fd = slow_client(di->port);
    /* Keep dribbling (never idle) past the deadline. */
    unsigned int cut = 0;
    for (int i = 0; i < 6; i++) {
        sleep_ms(100);
        send(fd, " ", 1, MSG_NOSIGNAL);
        cut += tg_conntrack_reap();
    }
    ck_assert_uint_eq(cut, expect_cut ? 1 : 0);
    ck_assert(closed_by_server(fd, expect_cut ? 2000 : 100) == expect_cut);
    close(fd);
    MHD_stop_daemon(d);
}

START_TEST(a_dribbled_body_is_cut_at_the_request_deadline)
{
    run(250, true);
}
END_TEST

START_TEST(a_zero_request_deadline_reaps_nothing_in_the_request_phase)
{
    run(0, false);
}
END_TEST

Suite *tg_test_review_conntrack_suite(void);
Suite *tg_test_review_conntrack_suite(void)
{
    Suite *s = suite_create("review_conntrack");
    TCase *tc = tcase_create("deadlines");
    tcase_add_test(tc, a_dribbled_body_is_cut_at_the_request_deadline);
    tcase_add_test(tc, a_zero_request_deadline_reaps_nothing_in_the_request_phase);
    suite_add_tcase(s, tc);
    return s;
}
