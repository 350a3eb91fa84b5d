/* shell.h -- a POSIX sh reader that runs nothing: variables, words after quote removal and
 * parameter expansion, and a walk that hands every simple command of a script to a callback.
 *
 * Contract:
 * - Nothing here guesses. A value that is not a literal, a variable of known value, or simple
 *   $((...)) arithmetic over those, is "unresolved" and carries a one-line reason that names
 *   what could not be read.
 * - Unquoted expansions are split into fields on blanks and newlines (the default IFS), as sh
 *   does: `ARGS="-np 4"; mpirun $ARGS` gives mpirun two words. An unresolved expansion stays one
 *   word. Bash arrays (`A=(x y)`, `"${A[@]}"`) are read too. No pathname expansion.
 * - The reader knows the shell and nothing it runs: assignments, `export` and its kin, the
 *   wrappers that run their arguments as a command (exec, env, nohup, timeout, nice, ...), and
 *   `sh -c` / `bash -c` scripts, which it reads in turn (at most TG_SH_MAX_DEPTH deep). Every
 *   other simple command goes to the caller's callback with its words expanded; what the command
 *   is (mpirun, torchrun, ...) is the caller's business (src/launcher/launch.c).
 * - Every string a function returns is owned by the structure it is returned in; everything a
 *   callback receives is borrowed for the duration of the call.
 * - Limits: a reason fits TG_SH_REASON_MAX bytes (it names one word of the script, and stays
 *   inside a 256-character warning). */
#ifndef TG_SHELL_H
#define TG_SHELL_H

#include <stdbool.h>
#include <stddef.h>

#define TG_SH_MAX_DEPTH 4
#define TG_SH_REASON_MAX 160

/* ---- variables -------------------------------------------------------------------------------
 * The variables a script can read: the container's env (literal values; valueFrom makes the name
 * known but its value unknown) and the assignments the script makes as it runs. */
struct tg_sh_var {
    char *name;
    char *value;   /* NULL: defined, value unknown (why says why); an array: its first element */
    char *why;     /* NULL when value is set */
    bool exported; /* in the environment of the commands the script runs */
    struct tg_sh_word *elems; /* a bash array (NAME=(a b c)): its elements, each known or not
                                 (with its reason), else NULL */
    size_t nelems;
};

/* What a shell holds is bounded, so that a short script cannot make the reader allocate without
 * end (X=$X$X repeated doubles a value: 29 times make 4 GiB). A value past a bound is stored as
 * unknown, with the reason, and is not followed:
 * - TG_SH_VALUE_MAX: one value, or all the elements of an array together: Linux's
 *   MAX_ARG_STRLEN (32 pages), the longest string execve(2) passes as one argument or environment
 *   entry, so no command can receive a longer one (docs/references.md#ref-linux-arg-max);
 * - TG_SH_ARRAY_MAX: the elements of one array (A+=(...) copies the array each time);
 * - TG_SH_VARS_MAX: all the values and elements of one shell's variables together. */
#define TG_SH_VALUE_MAX 131072
#define TG_SH_ARRAY_MAX 1024
#define TG_SH_VARS_MAX ((size_t)4 << 20)
/* The text all the expansions of one walk produce (words, fields, nested scripts), each field
 * counting the size of its word too: past it the walk stops as at a reading error
 * (script_error), so that `Y=$X$X...` or `$X $X ...` over a large X stays bounded too. */
#define TG_SH_EXPAND_MAX ((size_t)16 << 20)

struct tg_sh_vars {
    struct tg_sh_var *v;
    size_t n, cap;
    size_t bytes; /* the values' and elements' lengths together, at most TG_SH_VARS_MAX */
};

void tg_sh_vars_init(struct tg_sh_vars *vs);
void tg_sh_vars_release(struct tg_sh_vars *vs);
/* Sets (or replaces, keeping its place and export flag) name. value NULL means "defined,
 * unknown", with why as the reason; so does a value past TG_SH_VALUE_MAX or TG_SH_VARS_MAX.
 * Returns 0 or -ENOMEM. */
int tg_sh_vars_set(struct tg_sh_vars *vs, const char *name, const char *value, const char *why);
struct tg_sh_word;
/* Sets name to a copy of the array elems[0..n) (bash NAME=(...)); elems NULL means "an array of
 * unknown elements", with why as the reason; so does an array past TG_SH_ARRAY_MAX elements or
 * TG_SH_VALUE_MAX bytes, or one that would take the shell past TG_SH_VARS_MAX. Returns 0 or
 * -ENOMEM. */
int tg_sh_vars_set_array(struct tg_sh_vars *vs, const char *name, const struct tg_sh_word *elems,
                         size_t n, const char *why);
/* Marks name as exported (container env, `export NAME`); no-op when it is not defined. */
void tg_sh_vars_export(struct tg_sh_vars *vs, const char *name);
/* The variable, or NULL when the name was never defined. Borrowed. */
const struct tg_sh_var *tg_sh_vars_get(const struct tg_sh_vars *vs, const char *name);

/* ---- words ------------------------------------------------------------------------------------
 * One word of a simple command after quote removal and parameter expansion. */
struct tg_sh_word {
    char *text;    /* the word; unresolved parts kept as written ("$(hostname)") */
    bool resolved; /* every part of it is known */
    char *reason;  /* NULL when resolved: "$NP is not set in the container env or the script" */
};

/* ---- the walk ---------------------------------------------------------------------------------*/

/* One simple command as the walk hands it over. Borrowed for the duration of the callback. */
struct tg_sh_cmd {
    const struct tg_sh_word *words; /* the command and its arguments, with prefix assignments
                                       and wrappers (exec, env, nohup, ...) taken off; words[0]
                                       may be unresolved ($RUNNER): what runs is then unknown */
    size_t nwords;                  /* at least 1 */
    int depth;                      /* 0: the words the walk started from; n: n `sh -c` deep */
    int line;                       /* 1-based line of the script where the command starts */
    size_t index;                   /* 0-based ordinal of the simple command in its script */
    size_t argv_index; /* the word of the depth-0 command (counted after its prefix assignments)
                          that is words[0] (depth 0) or holds the outermost script (deeper) */
    const struct tg_sh_vars *vars; /* the shell variables at this point */
    /* What the command's own environment adds and removes; read it with tg_sh_cmd_env(). */
    const struct tg_sh_word *prefix; /* NAME=VALUE words before the command */
    size_t nprefix;
    const struct tg_sh_word *env_args; /* NAME=VALUE arguments of env(1) */
    size_t nenv_args;
    bool env_cleared; /* env -i: the exported variables do not reach the command */
    /* Redirections of a command of a script (NULL for the exec-form words of a container): */
    const struct tg_sh_word *stdout_file; /* the target of `> FILE`, `>> FILE`, `&> FILE` */
    const struct tg_sh_word *heredoc;     /* its here-document (`cat <<EOF > FILE`), read when the
                                             command ends its line: the body expanded as sh
                                             would (literal when the delimiter is quoted) */
};

/* One variable of a command's environment. name is not NUL-terminated at namelen when it comes
 * from a NAME=VALUE word. */
struct tg_sh_env_var {
    const char *name;
    size_t namelen;
    const char *value; /* NULL: unknown */
};

struct tg_sh_env {
    struct tg_sh_env_var *v;
    size_t n;
};

/* The environment cmd's process starts with, in this order: the exported variables (unless env
 * -i), the prefix assignments, the env(1) arguments. A name may come more than once; the last
 * one is what the process sees. Entries borrow from cmd (valid while it is). Returns 0 or
 * -ENOMEM; tg_sh_env_release() frees the array. */
int tg_sh_cmd_env(const struct tg_sh_cmd *cmd, struct tg_sh_env *out);
void tg_sh_env_release(struct tg_sh_env *env);

/* One variable of that environment without building it: true when name is in it, *value then
 * the value the process sees (its last entry; NULL: unknown). */
bool tg_sh_cmd_getenv(const struct tg_sh_cmd *cmd, const char *name, const char **value);

/* The walk over one container command line. The caller sets on_command and ctx; the walk sets
 * script_error and error when reading stopped early (unterminated quote, `$(` or `${`, scripts
 * nested deeper than TG_SH_MAX_DEPTH, or expansions past TG_SH_EXPAND_MAX); the first such reason
 * is kept. */
struct tg_sh_walk {
    /* Called for each simple command the reader does not interpret itself, in the order the
     * shell would run them. Returns 0 to go on, or a negative errno, which ends the walk. */
    int (*on_command)(void *ctx, const struct tg_sh_cmd *cmd);
    void *ctx;
    bool script_error;
    char error[TG_SH_REASON_MAX];
    size_t expanded; /* bytes the expansions produced so far, at most TG_SH_EXPAND_MAX */
};

/* Reads argv as the words of one simple command (exec form: a container's command and args,
 * already Kubernetes-expanded), at depth 0 and line 1. vars is updated by the assignments the
 * command makes (export NAME=...). Returns 0, -ENOMEM, or the callback's error. */
int tg_sh_walk_words(struct tg_sh_walk *wk, const struct tg_sh_word *argv, size_t argc,
                     struct tg_sh_vars *vars);

/* Reads one shell script (the text after sh -c) at nesting depth, with the variables in vars
 * (updated by the script's assignments). Same contract. */
int tg_sh_walk_script(struct tg_sh_walk *wk, const char *script, struct tg_sh_vars *vars,
                      int depth);

#endif
