/* floor.c -- the transport floor for `make bench`: what libmicrohttpd + GnuTLS cost per request
 * with nothing else. One thread (MHD's internal polling thread, epoll), TLS 1.2/1.3 with the
 * priorities trainguard serves, the same certificate; it reads the whole POST body and answers a
 * fixed allow AdmissionReview. No rules, no JSON parsing, no log, no metrics.
 *
 * With WORK_US, each request also spins that many microseconds of CPU before it is answered:
 * `make bench` uses it to show what a handler of a known cost does to the ratio (a busier server
 * also pays more kernel time per request: its client sleeps between answers and must be woken).
 *
 * usage: floor PORT CERT.pem KEY.pem [WORK_US]     (runs until SIGTERM or SIGINT) */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The same string as TG_TLS_PRIORITIES in src/server/server.c. */
#define FLOOR_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-RSA"

static const char allow_review[] =
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"response\":"
    "{\"uid\":\"0d6f8f3e-1c2b-4a5d-9e7f-8a9b0c1d2e3f\",\"allowed\":true}}";

static struct MHD_Response *allow_response;
static long work_us; /* CPU to spend per request (WORK_US), 0 for none */

/* Spins on the monotonic clock for work_us microseconds. */
static void work(void)
{
    struct timespec t0, t;

    if (work_us <= 0)
        return;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < work_us);
}

/* Counts the body bytes (MHD hands the body in pieces). */
struct floor_req {
    size_t seen;
};

static enum MHD_Result access_cb(void *cls, struct MHD_Connection *c, const char *url,
                                 const char *method, const char *version, const char *upload,
                                 size_t *upload_size, void **req_cls)
{
    struct floor_req *r = *req_cls;

    (void)cls;
    (void)url;
    (void)upload;
    (void)method; /* any method gets the answer: run.sh probes readiness with a GET */
    (void)version;
    if (!r) {
        r = calloc(1, sizeof(*r));
        if (!r)
            return MHD_NO;
        *req_cls = r;
        return MHD_YES;
    }
    if (*upload_size) {
        /* MHD has read and decrypted these bytes; taking them is all the transport asks. */
        r->seen += *upload_size;
        *upload_size = 0;
        return MHD_YES;
    }
    work();
    return MHD_queue_response(c, MHD_HTTP_OK, allow_response);
}

static void completed_cb(void *cls, struct MHD_Connection *c, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    free(*req_cls);
    *req_cls = NULL;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n + 1);
        if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        } else if (buf) {
            buf[n] = '\0';
        }
    }
    fclose(f);
    return buf;
}

int main(int argc, char **argv)
{
    struct MHD_Daemon *d;
    char *cert, *key, *end;
    sigset_t set;
    int sig;
    long port;

    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: floor PORT CERT.pem KEY.pem [WORK_US]\n");
        return 2;
    }
    if (argc == 5) {
        work_us = strtol(argv[4], &end, 10);
        if (*end || work_us < 0 || work_us > 1000000) {
            fprintf(stderr, "floor: WORK_US must be 0 to 1000000\n");
            return 2;
        }
    }
    port = strtol(argv[1], &end, 10);
    cert = read_file(argv[2]);
    key = read_file(argv[3]);
    if (*end || port <= 0 || port > 65535 || !cert || !key) {
        fprintf(stderr, "floor: bad port or unreadable certificate/key\n");
        return 2;
    }
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    allow_response = MHD_create_response_from_buffer(sizeof(allow_review) - 1, (void *)allow_review,
                                                     MHD_RESPMEM_PERSISTENT);
    if (!allow_response)
        return 1;
    MHD_add_response_header(allow_response, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TLS | MHD_USE_ERROR_LOG,
        (uint16_t)port, NULL, NULL, access_cb, NULL, MHD_OPTION_HTTPS_MEM_CERT, cert,
        MHD_OPTION_HTTPS_MEM_KEY, key, MHD_OPTION_HTTPS_PRIORITIES, FLOOR_PRIORITIES,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16 * 1024, MHD_OPTION_CONNECTION_TIMEOUT, 30U,
        MHD_OPTION_NOTIFY_COMPLETED, completed_cb, NULL, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "floor: cannot start on port %ld\n", port);
        return 1;
    }
    sigwait(&set, &sig);
    MHD_stop_daemon(d);
    MHD_destroy_response(allow_response);
    free(cert);
    free(key);
    return 0;
}
