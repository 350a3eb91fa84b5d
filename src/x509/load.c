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

/* The directory of the running executable ("" when /proc/self/exe cannot be read). */
static void exe_dir(char *dir, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", dir, len - 1);
    char *slash;

    if (n <= 0) {
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
    char dir[PATH_MAX], path[PATH_MAX + 64], first[PATH_MAX + 64] = "";
    const char *why = "not found";
    const struct tg_x509_api *api;
    void *h = NULL;

    exe_dir(dir, sizeof(dir));
    if (!dir[0]) {
        snprintf(load_err, sizeof(load_err),
                 "cannot find " TG_X509_SO ": /proc/self/exe is not readable");
        return NULL;
    }
    for (size_t i = 0; i < sizeof(where) / sizeof(where[0]) && !h; i++) {
        snprintf(path, sizeof(path), "%s%s" TG_X509_SO, dir, where[i]);
        if (i == 0)
            snprintf(first, sizeof(first), "%s", path);
        if (access(path, F_OK) < 0)
            continue;
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h)
            why = dlerror();
    }
    if (!h) {
        snprintf(load_err, sizeof(load_err),
                 "cannot load %s (%s): trainguard keeps OpenSSL in that file, which must be "
                 "installed beside the binary or in %s/../lib/trainguard/",
                 first, why, dir);
        return NULL;
    }
    api = dlsym(h, "tg_x509_api");
    if (!api || api->abi != TG_X509_ABI || api->size != sizeof(*api)) {
        snprintf(load_err, sizeof(load_err),
                 "%s does not belong to this trainguard build (ABI %u, expected %u): install "
                 "the one built with it",
                 path, api ? api->abi : 0, TG_X509_ABI);
        dlclose(h);
        return NULL;
    }
    return api; /* the handle stays open for the life of the process */
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
