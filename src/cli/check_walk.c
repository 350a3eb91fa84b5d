/* check_walk.c -- command-line arguments of `trainguard check` to files: directories recurse. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tg/check_walk.h"

struct walk {
    const struct tg_check_walk_ops *ops;
    void *ctx;
    long found;
};

int tg_check_walk_is_manifest(const char *name)
{
    static const char *const exts[] = {".yaml", ".yml", ".json"};
    size_t n = strlen(name);

    for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
        size_t e = strlen(exts[i]);

        if (n > e && strcmp(name + n - e, exts[i]) == 0)
            return 1;
    }
    return 0;
}

static int visible(const struct dirent *e)
{
    return e->d_name[0] != '.';
}

/* Byte order, whatever the locale (alphasort uses strcoll). */
static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int walk_dir(struct walk *w, const char *dir, int depth);

/* One directory entry: a manifest file is handed over, a real directory walked. */
static int walk_entry(struct walk *w, const char *path, const char *name, int depth)
{
    struct stat st;

    if (lstat(path, &st) != 0)
        return w->ops->error(w->ctx, path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return walk_dir(w, path, depth + 1);
    if (!tg_check_walk_is_manifest(name))
        return 0;
    /* A link to a file counts as the file; a link to a directory is not followed. */
    if (S_ISLNK(st.st_mode) && stat(path, &st) != 0)
        return w->ops->error(w->ctx, path, "a symbolic link to nothing");
    if (!S_ISREG(st.st_mode))
        return 0;
    w->found++;
    return w->ops->file(w->ctx, path);
}

static int walk_dir(struct walk *w, const char *dir, int depth)
{
    struct dirent **names = NULL;
    size_t dlen = strlen(dir);
    int n, rc = 0;

    if (depth > TG_CHECK_WALK_MAX_DEPTH)
        return w->ops->error(w->ctx, dir, "directories nested too deeply; not walked");
    n = scandir(dir, &names, visible, by_name);
    if (n < 0)
        return errno == ENOMEM ? -ENOMEM : w->ops->error(w->ctx, dir, strerror(errno));
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX];
        int len = snprintf(path, sizeof(path), "%s%s%s", dir,
                           dlen && dir[dlen - 1] == '/' ? "" : "/", names[i]->d_name);

        if (rc == 0 && (len < 0 || (size_t)len >= sizeof(path)))
            rc = w->ops->error(w->ctx, names[i]->d_name, "path too long; skipped");
        else if (rc == 0)
            rc = walk_entry(w, path, names[i]->d_name, depth);
        free(names[i]);
    }
    free(names);
    return rc;
}

long tg_check_walk(const char *arg, const struct tg_check_walk_ops *ops, void *ctx)
{
    struct walk w = {.ops = ops, .ctx = ctx};
    struct stat st;
    int rc;

    if (strcmp(arg, "-") == 0 || stat(arg, &st) != 0 || !S_ISDIR(st.st_mode)) {
        rc = ops->file(ctx, arg);
        return rc < 0 ? rc : 1;
    }
    rc = walk_dir(&w, arg, 0);
    return rc < 0 ? rc : w.found;
}
