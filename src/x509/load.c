/* load.c -- finds and loads trainguard-x509.so (see include/tg/x509.h). */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tg/x509.h"

/* Defined by src/x509/x509.c when it is linked in (the unit tests); NULL in the trainguard binary,
 * which loads the shared object instead. */
extern const struct tg_x509_api tg_x509_api __attribute__((weak));

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct tg_x509_api *loaded;
static char load_err[3 * PATH_MAX];

/* The directory of the running executable ("" when /proc/self/exe cannot be read whole). */
static void exe_dir(char *dir, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", dir, len);
    char *slash;

    if (n <= 0 || (size_t)n >= len) {
        dir[0] = '\0';
        return;
    }
    dir[n] = '\0';
    slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
}

static const struct tg_x509_api *load_locked(void)
{
    static const char *const where[] = {"/", "/../lib/trainguard/"};
    char dir[PATH_MAX], path[PATH_MAX + 64], tried[2 * PATH_MAX + 512] = "";
    const struct tg_x509_api *api = NULL;
    void *h = NULL;
    size_t used = 0;

    exe_dir(dir, sizeof(dir));
    if (!dir[0]) {
        snprintf(load_err, sizeof(load_err),
                 "cannot find " TG_X509_SO ": the path of this executable cannot be read from "
                 "/proc/self/exe (is /proc mounted?)");
        return NULL;
    }
    /* Each candidate and why it failed, for the message: "PATH (not found); PATH (why)". */
    for (size_t i = 0; i < sizeof(where) / sizeof(where[0]) && !h; i++) {
        const char *why = "not found";
        snprintf(path, sizeof(path), "%s%s" TG_X509_SO, dir, where[i]);
        if (access(path, F_OK) == 0) {
            h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            why = h ? NULL : dlerror();
        }
        if (why && used < sizeof(tried))
            used += (size_t)snprintf(tried + used, sizeof(tried) - used, "%s%s (%s)", i ? "; " : "",
                                     path, why);
    }
    if (!h) {
        snprintf(load_err, sizeof(load_err),
                 "cannot load trainguard's OpenSSL part, " TG_X509_SO ", which must be installed "
                 "beside the binary or in ../lib/trainguard/: %s",
                 tried);
        return NULL;
    }
    api = dlsym(h, "tg_x509_api");
    if (!api) {
        snprintf(load_err, sizeof(load_err), "%s: %s", path, dlerror());
    } else if (api->abi != TG_X509_ABI || api->size != sizeof(*api) ||
               api->info_size != sizeof(struct tg_tls_info) ||
               api->opts_size != sizeof(struct tg_certs_opts)) {
        snprintf(load_err, sizeof(load_err),
                 "%s was built from other sources than this trainguard (ABI %u, expected %u): "
                 "install the " TG_X509_SO " built with this binary",
                 path, api->abi, TG_X509_ABI);
        api = NULL;
    }
    if (!api)
        dlclose(h);
    return api; /* on success the handle stays open for the life of the process */
}

const struct tg_x509_api *tg_x509(char *err, size_t errlen)
{
    const struct tg_x509_api *api;

    if (&tg_x509_api)
        return &tg_x509_api;
    pthread_mutex_lock(&load_lock);
    if (!loaded)
        loaded = load_locked();
    api = loaded;
    if (!api)
        snprintf(err, errlen, "%s", load_err);
    pthread_mutex_unlock(&load_lock);
    return api;
}
