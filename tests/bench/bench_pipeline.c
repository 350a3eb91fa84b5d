/* bench_pipeline.c -- the request path without the network, per body: full jansson parse (what
 * a naive server does), the request reader alone, and the whole handler for /validate and
 * /mutate (decode, rules, encode). Prints microseconds per operation.
 * `bench_pipeline --only validate|mutate FILE` runs the handler alone BENCH_ITER times (for
 * valgrind --tool=callgrind --toggle-collect=tg_admission_handle: instructions per request). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tg/arena.h"
#include "tg/handler.h"
#include "tg/reader.h"
#include "tg/yaml_json.h"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int iterations(size_t len)
{
    const char *env = getenv("BENCH_ITER");
    if (env && *env)
        return (int)strtol(env, NULL, 10);
    return len > 20000 ? 2000 : 10000;
}

/* The handler alone on one body, n times; 0, or 2 when the file cannot be read. */
static int only(struct tg_policy *pol, const char *what, const char *file)
{
    char err[256];
    size_t len;
    char *body = tg_read_file(file, 8u << 20, &len, err, sizeof(err));
    bool mutate = strcmp(what, "mutate") == 0;

    if (!body) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    int n = iterations(len);
    for (int i = 0; i < n; i++) {
        struct tg_admission_out out;
        tg_admission_handle(pol, NULL, mutate, body, len, &out);
        if (out.http_status != 200)
            fprintf(stderr, "%s: status %d\n", file, out.http_status);
        tg_admission_out_release(&out);
    }
    printf("%d requests\n", n);
    free(body);
    return 0;
}

int main(int argc, char **argv)
{
    struct tg_policy *pol = tg_policy_new_default();
    if (!getenv("BENCH_NO_ARENA"))
        tg_arena_install(); /* as the server does */
    if (argc == 4 && strcmp(argv[1], "--only") == 0) {
        int rc = only(pol, argv[2], argv[3]);
        tg_policy_unref(pol);
        return rc;
    }
    printf("%-12s %8s %12s %12s %12s %12s\n", "body", "bytes", "jansson_us", "reader_us",
           "validate_us", "mutate_us");
    for (int a = 1; a < argc; a++) {
        char err[256];
        size_t len;
        char *body = tg_read_file(argv[a], 8u << 20, &len, err, sizeof(err));
        if (!body) {
            fprintf(stderr, "%s\n", err);
            return 2;
        }
        int n = iterations(len);
        double t0 = now_us();
        for (int i = 0; i < n; i++)
            json_decref(json_loadb(body, len, 0, NULL));
        double t1 = now_us();
        for (int i = 0; i < n; i++)
            json_decref(tg_reader_load(body, len, err, sizeof(err)));
        double t2 = now_us();
        for (int i = 0; i < n; i++) {
            struct tg_admission_out out;
            tg_admission_handle(pol, NULL, false, body, len, &out);
            if (out.http_status != 200)
                fprintf(stderr, "%s: status %d\n", argv[a], out.http_status);
            tg_admission_out_release(&out);
        }
        double t3 = now_us();
        for (int i = 0; i < n; i++) {
            struct tg_admission_out out;
            tg_admission_handle(pol, NULL, true, body, len, &out);
            tg_admission_out_release(&out);
        }
        double t4 = now_us();
        const char *name = strrchr(argv[a], '/') ? strrchr(argv[a], '/') + 1 : argv[a];
        printf("%-12.*s %8zu %12.1f %12.1f %12.1f %12.1f\n", (int)(strlen(name) - 5), name, len,
               (t1 - t0) / n, (t2 - t1) / n, (t3 - t2) / n, (t4 - t3) / n);
        free(body);
    }
    tg_policy_unref(pol);
    return 0;
}
