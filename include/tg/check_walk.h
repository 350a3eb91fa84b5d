/* check_walk.h -- the files `trainguard check` reads for one command-line argument (SPEC section
 * 12): a file as given, or a directory walked for its manifests.
 *
 * A directory stands for every *.yaml, *.yml and *.json file below it, at any depth. Names that
 * start with a dot (hidden files and directories: .git, .github, ...) are skipped, and so are
 * symbolic links to directories (a link cycle cannot loop the walk). Within a directory, entries
 * come in byte order of their names (strcmp, not the locale), and a subdirectory is walked where
 * its name sorts, so the same tree always gives the same order. */
#ifndef TG_CHECK_WALK_H
#define TG_CHECK_WALK_H

/* A directory tree deeper than this is an error: real manifest trees are a few levels deep, and
 * the bound keeps the recursion's stack use small. */
#define TG_CHECK_WALK_MAX_DEPTH 64

/* What the walk calls. Both return 0 to go on or a negative errno to stop the walk. */
struct tg_check_walk_ops {
    /* A file to check: the argument itself (also "-", or a path that does not exist: reading it
     * reports why), or a manifest found in a directory. */
    int (*file)(void *ctx, const char *path);
    /* A directory or entry that could not be read; msg says why. */
    int (*error)(void *ctx, const char *path, const char *msg);
};

/* Walks arg. Returns the number of files handed to ops->file (0 for a directory without any
 * manifest: the caller decides what that means), or the first negative value a callback returned,
 * or -ENOMEM. */
long tg_check_walk(const char *arg, const struct tg_check_walk_ops *ops, void *ctx);

/* True when name ends in .yaml, .yml or .json (the extensions a directory walk picks). */
int tg_check_walk_is_manifest(const char *name);

#endif
