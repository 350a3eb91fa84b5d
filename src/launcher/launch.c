/* launch.c -- a container's command line into launches: Kubernetes expansion, the shell walk,
 * and a table of command readers keyed by the command word (include/tg/launch.h). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/arena.h"
#include "tg/expand.h"
#include "tg/launch.h"
#include "tg/plan_args.h"

#define CWD_MAX 256

/* What the readers of one walk share. */
struct launch_walk {
    enum tg_mpi_impl impl;
    struct tg_launch *out;
    /* files the script wrote so far (here-documents, echo > file), for the plan reader */
    struct tg_plan_file *files;
    size_t nfiles;
    /* the working directory at each nesting depth: "" the starting directory when it is not
     * known (relative paths stay relative), "?cdN" after a cd that cannot be read */
    char cwd[TG_SH_MAX_DEPTH + 1][CWD_MAX];
    int depth; /* of the last command */
    int lost;  /* cd's that could not be read so far */
    /* the torchrun of the command being read, read once for every reader (emptied for each
     * command) */
    struct tg_torchrun_memo torch;
};

/* A reader turns one simple command into a launch of its kind. Returns 0 or -ENOMEM. */
struct launch_reader {
    const char *what;             /* for people reading the table */
    bool (*is)(const char *word); /* does the (resolved) command word run it */
    int (*read)(struct launch_walk *lw, const struct tg_sh_cmd *cmd);
};

/* ---- MPI launchers --------------------------------------------------------------------------*/

/* An array of n elements of size bytes with room for one more: v itself, or v grown (NULL on
 * ENOMEM, v kept). Such arrays grow by doubling: the room is the smallest power of two that holds
 * n, full when n is 0 or a power of two. The arrays of a launch come from the request's arena
 * while it is active (tg_arena_realloc): released with the launch, they cost no free. */
static void *room_for_one(void *v, size_t n, size_t size)
{
    if (n & (n - 1))
        return v;
    return tg_arena_realloc(v, n * size, (n ? n * 2 : 1) * size);
}

static int append_run(struct tg_launch *l, struct tg_mpirun *run)
{
    if (l->nruns >= TG_LAUNCH_MAX_RUNS) {
        tg_mpirun_release(run);
        return 0;
    }
    struct tg_mpirun *v = room_for_one(l->runs, l->nruns, sizeof(*v));
    if (!v) {
        tg_mpirun_release(run);
        return -ENOMEM;
    }
    l->runs = v;
    l->runs[l->nruns++] = *run;
    return 0;
}

/* Is word a shell or a shell script file (sh, bash, dash, *.sh)? */
static bool runs_script(const char *word)
{
    const char *b = strrchr(word, '/');
    size_t n;
    b = b ? b + 1 : word;
    n = strlen(b);
    return !strcmp(b, "sh") || !strcmp(b, "bash") || !strcmp(b, "dash") ||
           (n > 3 && !strcmp(b + n - 3, ".sh"));
}

/* The processes each rank of run starts: a rank that runs torchrun (`mpirun -N 1 torchrun
 * --nproc_per_node 8 train.py`) starts its --nproc_per_node; a rank that runs a shell script is
 * unknown (0): such a script is often the per-node launcher (AWS's aws-efa-eks Megatron and
 * fairseq examples start `python -m torch.distributed.launch --nproc_per_node $GPUS_PER_NODE`
 * from train.sh, one rank per node); any other program is one process. */
static int rank_processes(struct launch_walk *lw, const struct tg_sh_cmd *cmd,
                          struct tg_mpirun *run)
{
    struct tg_torchrun tr;
    struct tg_sh_cmd sub = *cmd;
    long long n;
    run->rank_procs = 1;
    if (run->program && run->program < cmd->nwords && cmd->words[run->program].resolved &&
        runs_script(cmd->words[run->program].text)) {
        run->rank_procs = 0;
        return 0;
    }
    if (!run->program || run->program >= cmd->nwords || !cmd->words[run->program].resolved ||
        !tg_launcher_is_torch(cmd->words[run->program].text))
        return 0;
    sub.words = cmd->words + run->program;
    sub.nwords = cmd->nwords - run->program;
    int rc = tg_torchrun_parse_memo(&lw->torch, &sub, &tr);
    if (rc <= 0)
        return rc;
    run->rank_procs = tg_torchrun_nproc(&tr, &n) == 1 ? n : 0;
    return 0;
}

static int read_mpirun(struct launch_walk *lw, const struct tg_sh_cmd *cmd)
{
    struct tg_mpirun run;
    struct tg_sh_env env;
    int rc = tg_mpirun_parse(cmd->words, cmd->nwords, lw->impl, &run);
    if (rc == 0)
        rc = rank_processes(lw, cmd, &run);
    if (rc < 0)
        return rc;
    run.depth = cmd->depth;
    run.line = cmd->line;
    run.index = cmd->index;
    run.argv_index = cmd->argv_index;
    rc = tg_sh_cmd_env(cmd, &env);
    if (rc == 0)
        rc = tg_mpirun_set_env(&run, &env);
    tg_sh_env_release(&env);
    if (rc < 0) {
        tg_mpirun_release(&run);
        return rc;
    }
    return append_run(lw->out, &run);
}

/* ---- the parallel plan ----------------------------------------------------------------------*/

static const char *cwd_of(const struct launch_walk *lw, int depth)
{
    return lw->cwd[depth][0] ? lw->cwd[depth] : NULL;
}

static int read_plan(struct launch_walk *lw, const struct tg_sh_cmd *cmd)
{
    struct tg_launch *l = lw->out;
    const struct tg_mpirun *run = NULL;
    struct tg_plan p;
    if (tg_launcher_is_mpi(cmd->words[0].text)) {
        /* the MPI row read this command just before (when it had room to keep it) */
        run = l->nruns ? &l->runs[l->nruns - 1] : NULL;
        if (!run || run->line != cmd->line || run->index != cmd->index || run->depth != cmd->depth)
            return 0;
    }
    struct tg_plan_files files = {.v = lw->files, .n = lw->nfiles};
    if (l->nplans >= TG_LAUNCH_MAX_RUNS) {
        /* no room to keep it: read for its errors only */
        int rc = tg_plan_parse(cmd, run, &files, cwd_of(lw, cmd->depth), &lw->torch, &p);
        return rc < 0 ? rc : 0;
    }
    /* read in place at the end of the plans (a plan is several KiB: no copy), and kept when
     * it is one */
    if (l->nplans == l->cap_plans) {
        /* doubling, at most TG_LAUNCH_MAX_RUNS (a power of two) */
        size_t cap = l->cap_plans ? l->cap_plans * 2 : 1;
        struct tg_plan *v = tg_arena_realloc(l->plans, l->cap_plans * sizeof(*v), cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        l->plans = v;
        l->cap_plans = cap;
    }
    struct tg_plan *np = &l->plans[l->nplans];
    int rc = tg_plan_parse(cmd, run, &files, cwd_of(lw, cmd->depth), &lw->torch, np);
    if (rc <= 0)
        return rc;
    np->mpi_run = run ? l->nruns - 1 : 0;
    l->nplans++;
    return 0;
}

/* ---- files the script writes ----------------------------------------------------------------*/

static int add_file(struct launch_walk *lw, const char *path, const char *content, const char *why)
{
    struct tg_plan_file *v = realloc(lw->files, (lw->nfiles + 1) * sizeof(*v));
    if (!v)
        return -ENOMEM;
    lw->files = v;
    char full[CWD_MAX];
    tg_plan_path(cwd_of(lw, lw->depth), path, full, sizeof(full));
    struct tg_plan_file *f = &lw->files[lw->nfiles];
    f->path = strdup(full);
    f->content = content ? strdup(content) : NULL;
    f->why = why ? strdup(why) : NULL;
    if (!f->path || (content && !f->content) || (why && !f->why)) {
        free((char *)f->path);
        free((char *)f->content);
        free((char *)f->why);
        return -ENOMEM;
    }
    lw->nfiles++;
    return 0;
}

/* echo WORDS > FILE: the words joined by blanks and a newline (NULL when one is unknown). */
static char *echo_text(const struct tg_sh_cmd *cmd, const char **why)
{
    size_t len = 2;
    for (size_t i = 1; i < cmd->nwords; i++) {
        if (!cmd->words[i].resolved) {
            *why = cmd->words[i].reason;
            return NULL;
        }
        len += strlen(cmd->words[i].text) + 1;
    }
    char *s = calloc(1, len);
    size_t at = 0;
    for (size_t i = 1; s && i < cmd->nwords; i++)
        at += (size_t)snprintf(s + at, len - at, "%s%s", cmd->words[i].text,
                               i + 1 < cmd->nwords ? " " : "\n");
    return s;
}

/* cat <<EOF > FILE, cat > FILE <<EOF, tee FILE <<EOF, echo ... > FILE: the file's content for
 * the plan reader (a DeepSpeed JSON written before the launch line). */
static int note_written(struct launch_walk *lw, const struct tg_sh_cmd *cmd)
{
    const char *b = strrchr(cmd->words[0].text, '/');
    b = b ? b + 1 : cmd->words[0].text;
    const struct tg_sh_word *file = cmd->stdout_file, *doc = cmd->heredoc;
    if (!strcmp(b, "tee") && doc && cmd->nwords > 1 && cmd->words[1].text[0] != '-')
        file = &cmd->words[1];
    if (!file || !file->resolved)
        return 0;
    if ((!strcmp(b, "cat") || !strcmp(b, "tee")) && doc && cmd->nwords <= 2)
        return add_file(lw, file->text, doc->resolved ? doc->text : NULL, doc->reason);
    if (!strcmp(b, "echo") && cmd->nwords > 1 && cmd->words[1].text[0] != '-') {
        const char *why = NULL;
        char *text = echo_text(cmd, &why);
        int rc = text || why ? add_file(lw, file->text, text, why) : -ENOMEM;
        free(text);
        return rc;
    }
    return 0;
}

/* cd DIR: the directory of the following commands at this depth. */
static void note_cd(struct launch_walk *lw, const struct tg_sh_cmd *cmd)
{
    char *cwd = lw->cwd[cmd->depth];
    const struct tg_sh_word *dir = cmd->nwords > 1 ? &cmd->words[1] : NULL;
    if (dir && dir->resolved && strcmp(dir->text, "-") && dir->text[0] != '~') {
        char next[CWD_MAX];
        tg_plan_path(cwd[0] ? cwd : NULL, dir->text, next, sizeof(next));
        snprintf(cwd, CWD_MAX, "%s", next);
    } else {
        snprintf(cwd, CWD_MAX, "?cd%d", ++lw->lost);
    }
}

/* Keeps the directory of each depth as the walk enters and leaves nested scripts, and notes
 * the files and directories the script's own commands make. */
static int track(struct launch_walk *lw, const struct tg_sh_cmd *cmd)
{
    for (int d = lw->depth + 1; d <= cmd->depth && d <= TG_SH_MAX_DEPTH; d++)
        memcpy(lw->cwd[d], lw->cwd[d - 1], CWD_MAX);
    lw->depth = cmd->depth;
    if (!cmd->words[0].resolved)
        return 0;
    if (!strcmp(cmd->words[0].text, "cd")) {
        note_cd(lw, cmd);
        return 0;
    }
    return note_written(lw, cmd);
}
/* ---- torchrun -------------------------------------------------------------------------------*/

static int read_torchrun(struct launch_walk *lw, const struct tg_sh_cmd *cmd)
{
    struct tg_torchrun r;
    struct tg_launch *l = lw->out;
    int rc = tg_torchrun_parse_memo(&lw->torch, cmd, &r);
    if (rc <= 0 || l->ntorch >= TG_LAUNCH_MAX_RUNS)
        return rc < 0 ? rc : 0;
    struct tg_torchrun *v = room_for_one(l->torch, l->ntorch, sizeof(*v));
    if (!v)
        return -ENOMEM;
    l->torch = v;
    l->torch[l->ntorch++] = r;
    return 0;
}

/* ---- the reader table -------------------------------------------------------------------------
 * One row per kind of launch. The next readers (torchrun, python -m torch.distributed.run and
 * torch.distributed.launch, deepspeed, accelerate launch, Megatron/NeMo training scripts) are a
 * row here, a file beside mpirun.c, and an array in struct tg_launch. */
static const struct launch_reader readers[] = {
    {"MPI launchers", tg_launcher_is_mpi, read_mpirun},
    {"torchrun", tg_launcher_is_torch, read_torchrun},
    /* after the launchers it builds on: it reads the program they start */
    {"the parallel plan", tg_plan_is_command, read_plan},
};

/* The strings any command line a row reads contains, sorted by first byte: the MPI launchers'
 * names (mpirun, mpiexec, orterun, prterun, horovodrun); torchrun's (torchrun,
 * torch.distributed, which torch.distributed.run and .launch contain); and the plan reader's,
 * its launchers' names or the words of the flags the plan rules judge (parallel sizes, batch
 * sizes, a DeepSpeed config: parallel, batch, accumulat, deepspeed, accelerate, torchrun,
 * torch.distributed, trainer., nemo). A new row adds its strings here, in order of first byte. */
static const char *const mention_text[] = {
    "accumulat", "accelerate",        "batch",    "deepspeed", "horovodrun",
    "mpirun",    "mpiexec",           "nemo",     "orterun",   "parallel",
    "prterun",   "torch.distributed", "torchrun", "trainer."};

/* Built from mention_text on first use (mention_build): mention_at[c], the first index in
 * mention_text of the strings that start with byte c and their count (0: none does); stop[c],
 * whether the scan stops at byte c to look (some string starts with it, or it ends the text);
 * pair[c][d / 8] bit d % 8, whether some string starts with the bytes c, d. */
static unsigned char mention_at[256][2];
static bool stop[256];
static unsigned char pair[256][32];
static pthread_once_t mention_once = PTHREAD_ONCE_INIT;

static void mention_build(void)
{
    stop[0] = true;
    for (unsigned k = 0; k < sizeof(mention_text) / sizeof(mention_text[0]); k++) {
        const unsigned char *m = (const unsigned char *)mention_text[k];
        unsigned char *at = mention_at[m[0]];
        /* the strings of one first byte must be next to each other (mention_text is sorted) */
        if (at[1] && at[0] + at[1] != k)
            abort();
        if (!at[1])
            at[0] = (unsigned char)k;
        at[1]++;
        stop[m[0]] = true;
        pair[m[0]][m[1] / 8] |= (unsigned char)(1u << (m[1] % 8));
    }
}

bool tg_launch_mentions(const char *text)
{
    /* one pass over text: only the strings that start with a byte are compared there (a strstr
     * per string scanned a long env value fourteen times), and the bytes no string starts with
     * are passed over by one table look each */
    const unsigned char *s = (const unsigned char *)text;
    pthread_once(&mention_once, mention_build);
    for (;; s++) {
        while (!stop[*s])
            s++;
        if (!*s)
            return false;
        if (!(pair[*s][s[1] / 8] >> (s[1] % 8) & 1))
            continue;
        const unsigned char *at = mention_at[*s];
        for (unsigned k = at[0]; k < (unsigned)at[0] + at[1]; k++) {
            const unsigned char *m = (const unsigned char *)mention_text[k] + 1, *p = s + 1;
            while (*m && *m == *p) {
                m++;
                p++;
            }
            if (!*m)
                return true;
        }
    }
}

/* Every row whose command word matches reads the command, in table order. */
static int on_command(void *ctx, const struct tg_sh_cmd *cmd)
{
    struct launch_walk *lw = ctx;
    lw->torch.words = NULL; /* a new command: its words may stand where the last one's did */
    int rc = track(ctx, cmd);
    if (!cmd->words[0].resolved)
        return rc; /* $MPIRUN: what runs is unknown, and never guessed */
    for (size_t i = 0; rc == 0 && i < sizeof(readers) / sizeof(readers[0]); i++) {
        if (readers[i].is(cmd->words[0].text))
            rc = readers[i].read(ctx, cmd);
    }
    return rc;
}

/* ---- walks ------------------------------------------------------------------------------------*/

void tg_launch_init(struct tg_launch *l)
{
    memset(l, 0, sizeof(*l));
}

void tg_launch_release(struct tg_launch *l)
{
    for (size_t i = 0; i < l->nruns; i++)
        tg_mpirun_release(&l->runs[i]);
    tg_arena_free(l->runs);
    tg_arena_free(l->plans);
    tg_arena_free(l->torch);
    tg_launch_init(l);
}

/* The walk's reading error, when it stopped early, becomes the launch's (the first one wins). */
static void take_error(struct tg_launch *out, const struct tg_sh_walk *wk)
{
    if (!wk->script_error || out->script_error)
        return;
    out->script_error = true;
    snprintf(out->error, sizeof(out->error), "%s", wk->error);
}

static void walk_release(struct launch_walk *lw)
{
    for (size_t i = 0; i < lw->nfiles; i++) {
        free((char *)lw->files[i].path);
        free((char *)lw->files[i].content);
        free((char *)lw->files[i].why);
    }
    free(lw->files);
}

int tg_launch_parse_words_in(const struct tg_sh_word *argv, size_t argc, struct tg_sh_vars *vars,
                             enum tg_mpi_impl impl, const char *workdir, struct tg_launch *out)
{
    struct launch_walk lw = {.impl = impl, .out = out};
    struct tg_sh_walk wk = {.on_command = on_command, .ctx = &lw};
    if (workdir && workdir[0] == '/')
        tg_plan_path(NULL, workdir, lw.cwd[0], CWD_MAX);
    int rc = tg_sh_walk_words(&wk, argv, argc, vars);
    take_error(out, &wk);
    walk_release(&lw);
    return rc;
}

int tg_launch_parse_words(const struct tg_sh_word *argv, size_t argc, struct tg_sh_vars *vars,
                          enum tg_mpi_impl impl, struct tg_launch *out)
{
    return tg_launch_parse_words_in(argv, argc, vars, impl, NULL, out);
}

int tg_launch_parse_script(const char *script, struct tg_sh_vars *vars, enum tg_mpi_impl impl,
                           int depth, struct tg_launch *out)
{
    struct launch_walk lw = {.impl = impl, .out = out, .depth = depth};
    struct tg_sh_walk wk = {.on_command = on_command, .ctx = &lw};
    int rc = depth <= TG_SH_MAX_DEPTH ? tg_sh_walk_script(&wk, script, vars, depth) : 0;
    take_error(out, &wk);
    walk_release(&lw);
    return rc;
}

/* ---- containers -------------------------------------------------------------------------------*/

/* "$NAME is set from valueFrom, unknown at admission", NAME cut at 60 bytes. */
static void valuefrom_why(char *buf, size_t len, const struct tg_k8s_env_var *v)
{
    static const char tail[] = " is set from valueFrom, unknown at admission";
    static const char long_tail[] = " expands to more than 131072 bytes (the longest string "
                                    "execve passes): not followed";
    size_t at = tg_launch_put(buf, len, 0, "$", 1);
    at = tg_launch_put(buf, len, at, v->name, strnlen(v->name, 60));
    if (v->too_long)
        tg_launch_put(buf, len, at, long_tail, sizeof(long_tail) - 1);
    else
        tg_launch_put(buf, len, at, tail, sizeof(tail) - 1);
}

/* The container's env as exported shell variables; a valueFrom value is unknown, with why. */
static int vars_from_env(const struct tg_k8s_env *env, struct tg_sh_vars *vars)
{
    for (size_t i = 0; i < env->n; i++) {
        const struct tg_k8s_env_var *e = &env->v[i];
        char why[TG_LAUNCH_REASON_MAX] = "";
        if (!e->value)
            valuefrom_why(why, sizeof(why), e);
        if (tg_sh_vars_set(vars, e->name, e->value, why) < 0)
            return -ENOMEM;
        tg_sh_vars_export(vars, e->name);
    }
    return 0;
}

/* Appends the Kubernetes-expanded strings of arr to words (-EINVAL: an item is not a string). */
static int push_items(json_t *arr, const struct tg_k8s_env *env, struct tg_sh_word *words,
                      size_t *n)
{
    size_t i;
    json_t *it;
    json_array_foreach (arr, i, it) {
        const char *s = json_string_value(it);
        if (!s)
            return -EINVAL;
        char unknown[96];
        struct tg_sh_word *w = &words[(*n)++];
        bool too_long;
        w->reason = NULL; /* the array is malloc'd: every member is set here */
        w->text = tg_k8s_expand(s, env, unknown, sizeof(unknown), &too_long);
        if (!w->text)
            return -ENOMEM;
        w->resolved = !unknown[0] && !too_long;
        if (too_long) {
            w->reason = strdup("the item expands to more than 131072 bytes (the longest string "
                               "execve passes): not followed");
            if (!w->reason)
                return -ENOMEM;
        } else if (unknown[0]) {
            char name[80];
            char why[TG_LAUNCH_REASON_MAX];
            snprintf(name, sizeof(name), "%.*s", (int)strlen(unknown) - 3, unknown + 2);
            const struct tg_k8s_env_var *v = tg_k8s_env_get(env, name);
            if (v && !v->value)
                valuefrom_why(why, sizeof(why), v);
            else
                snprintf(why, sizeof(why), "%s is not defined in the container env", unknown);
            w->reason = strdup(why);
            if (!w->reason)
                return -ENOMEM;
        }
    }
    return 0;
}

/* Does any string the command line can be made of (command, args, literal env values that
 * $(VAR) or $VAR could bring in) contain a string of some reader's row (tg_launch_mentions)? When
 * none does, no word of the command line can be a command a reader reads, and the shell walk (the
 * costliest step of a request) is skipped. A name split across shell quotes ("mpi"run) is not seen:
 * documented in docs/launcher.md. */
/* The "value" member of an env entry (NULL: none, or not an object), found by a walk over its
 * few members (name, value or valueFrom), cheaper than a hashed lookup. */
static json_t *env_value(json_t *entry)
{
    for (void *it = json_object_iter(entry); it; it = json_object_iter_next(entry, it)) {
        if (json_object_iter_key_len(it) == 5 && !memcmp(json_object_iter_key(it), "value", 5))
            return json_object_iter_value(it);
    }
    return NULL;
}

static bool mentions_launcher(json_t *container, json_t *cmd, json_t *args)
{
    /* args first: where a launch line usually is (command is often only a shell and -c) */
    for (size_t l = 0; l < 3; l++) {
        json_t *arr = l == 0 ? args : l == 1 ? cmd : json_object_get(container, "env");
        size_t i;
        json_t *item;
        json_array_foreach (arr, i, item) {
            const char *s = json_string_value(l == 2 ? env_value(item) : item);
            if (s && tg_launch_mentions(s))
                return true;
        }
    }
    return false;
}

/* command then args as words, Kubernetes-expanded against env (-EINVAL: wrong JSON types). */
static int container_words(json_t *cmd, json_t *args, const struct tg_k8s_env *env,
                           struct tg_sh_word *words, size_t *n)
{
    int rc = 0;
    if (json_is_array(cmd))
        rc = push_items(cmd, env, words, n);
    if (rc == 0 && json_is_array(args))
        rc = push_items(args, env, words, n);
    return rc;
}

int tg_launch_parse_container(json_t *container, enum tg_mpi_impl impl, struct tg_launch *out)
{
    return tg_launch_parse_container_items(container, json_object_get(container, "command"),
                                           json_object_get(container, "args"), impl, out);
}

int tg_launch_parse_container_items(json_t *container, json_t *cmd, json_t *args,
                                    enum tg_mpi_impl impl, struct tg_launch *out)
{
    struct tg_k8s_env env;
    struct tg_sh_vars vars;
    size_t n = 0, cap = 0;
    struct tg_sh_word *words = NULL;
    int rc = 0;
    tg_k8s_env_init(&env);
    tg_sh_vars_init(&vars);
    if ((cmd && !json_is_array(cmd) && !json_is_null(cmd)) ||
        (args && !json_is_array(args) && !json_is_null(args)))
        goto out;
    cap = (json_is_array(cmd) ? json_array_size(cmd) : 0) +
          (json_is_array(args) ? json_array_size(args) : 0);
    if (cap == 0 || !mentions_launcher(container, cmd, args))
        goto out;
    /* not calloc (a clearing, and no per-thread cache): push_items sets each word it takes */
    words = tg_arena_malloc(cap * sizeof(*words));
    if (!words) {
        rc = -ENOMEM;
        goto out;
    }
    rc = tg_k8s_env_read(container, &env);
    if (rc == 0)
        rc = vars_from_env(&env, &vars);
    if (rc == 0)
        rc = container_words(cmd, args, &env, words, &n);
    if (rc == -EINVAL) {
        rc = 0; /* not an array of strings: object.invalid-field is the rules' to report */
        goto out;
    }
    if (rc == 0)
        rc = tg_launch_parse_words_in(words, n, &vars, impl,
                                      json_string_value(json_object_get(container, "workingDir")),
                                      out);
out:
    for (size_t i = 0; i < n; i++) {
        free(words[i].text);
        free(words[i].reason);
    }
    tg_arena_free(words);
    tg_sh_vars_release(&vars);
    tg_k8s_env_release(&env);
    return rc;
}

bool tg_launch_runs_openmpi(const struct tg_launch *l)
{
    for (size_t i = 0; i < l->nruns; i++)
        if (l->runs[i].impl == TG_MPI_OPENMPI)
            return true;
    return false;
}

bool tg_launch_forwards(const struct tg_launch *l, const char *name)
{
    if (l->nruns == 0)
        return false;
    for (size_t i = 0; i < l->nruns; i++) {
        const struct tg_mpirun *r = &l->runs[i];
        if (!tg_mpirun_forwards_all(r) && !tg_mpirun_find_fwd(r, name))
            return false;
    }
    return true;
}
