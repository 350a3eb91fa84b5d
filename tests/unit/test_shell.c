/* test_shell.c -- the POSIX sh reader: variables, and the walk that hands each simple command to a
 * callback with its words expanded. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/shell.h"

/* What the callback saw, one line per command: words joined by spaces (unresolved ones as
 * "?text"), and where the command was. */
struct seen {
    char cmds[8][160];
    int line[8], depth[8];
    size_t index[8], argv_index[8];
    char env[8][96]; /* the command's environment: NAME=VALUE (NAME=? when unknown) */
    size_t n;
    int fail_with; /* the callback returns this */
};

static void join_env(const struct tg_sh_cmd *cmd, char *buf, size_t len)
{
    struct tg_sh_env env;
    size_t at = 0;
    buf[0] = '\0';
    ck_assert_int_eq(tg_sh_cmd_env(cmd, &env), 0);
    for (size_t i = 0; i < env.n && at < len; i++) {
        int k = snprintf(buf + at, len - at, "%s%.*s=%s", i ? " " : "", (int)env.v[i].namelen,
                         env.v[i].name, env.v[i].value ? env.v[i].value : "?");
        at += k > 0 ? (size_t)k : 0;
    }
    tg_sh_env_release(&env);
}

static int record(void *ctx, const struct tg_sh_cmd *cmd)
{
    struct seen *s = ctx;
    ck_assert_uint_ge(cmd->nwords, 1);
    ck_assert_uint_lt(s->n, 8);
    size_t at = 0;
    char *buf = s->cmds[s->n];
    for (size_t i = 0; i < cmd->nwords; i++) {
        const struct tg_sh_word *w = &cmd->words[i];
        ck_assert(w->resolved == (w->reason == NULL));
        int k = snprintf(buf + at, sizeof(s->cmds[0]) - at, "%s%s%s", i ? " " : "",
                         w->resolved ? "" : "?", w->text);
        at += k > 0 ? (size_t)k : 0;
        if (at >= sizeof(s->cmds[0])) /* cut (a long word) */
            at = sizeof(s->cmds[0]) - 1;
    }
    s->line[s->n] = cmd->line;
    s->depth[s->n] = cmd->depth;
    s->index[s->n] = cmd->index;
    s->argv_index[s->n] = cmd->argv_index;
    join_env(cmd, s->env[s->n], sizeof(s->env[0]));
    s->n++;
    return s->fail_with;
}

START_TEST(shell_vars)
{
    struct tg_sh_vars vs;
    tg_sh_vars_init(&vs);
    ck_assert_int_eq(tg_sh_vars_set(&vs, "A", "1", NULL), 0);
    ck_assert_int_eq(tg_sh_vars_set(&vs, "B", NULL, "B unknown"), 0);
    ck_assert_int_eq(tg_sh_vars_set(&vs, "A", "2", NULL), 0);
    ck_assert_uint_eq(vs.n, 2);
    ck_assert_str_eq(tg_sh_vars_get(&vs, "A")->value, "2");
    ck_assert_str_eq(tg_sh_vars_get(&vs, "B")->why, "B unknown");
    ck_assert_ptr_null(tg_sh_vars_get(&vs, "C"));
    tg_sh_vars_export(&vs, "B");
    tg_sh_vars_export(&vs, "C"); /* not defined: no-op */
    ck_assert(tg_sh_vars_get(&vs, "B")->exported);
    ck_assert(!tg_sh_vars_get(&vs, "A")->exported);
    ck_assert_uint_eq(vs.n, 2);
    tg_sh_vars_release(&vs);
}
END_TEST

/* A shell holds bounded values (include/tg/shell.h): one value up to TG_SH_VALUE_MAX bytes, an
 * array up to TG_SH_ARRAY_MAX elements and TG_SH_VALUE_MAX bytes, all of them up to
 * TG_SH_VARS_MAX; past a bound the variable is defined and unknown, with the reason. */
START_TEST(shell_vars_are_bounded)
{
    struct tg_sh_vars vs;
    char *big = malloc(TG_SH_VALUE_MAX + 2), name[16];
    struct tg_sh_word *elems = calloc(TG_SH_ARRAY_MAX + 1, sizeof(*elems));

    tg_sh_vars_init(&vs);
    memset(big, 'a', TG_SH_VALUE_MAX + 1);
    big[TG_SH_VALUE_MAX] = '\0'; /* exactly the bound: held */
    ck_assert_int_eq(tg_sh_vars_set(&vs, "A", big, NULL), 0);
    ck_assert_uint_eq(strlen(tg_sh_vars_get(&vs, "A")->value), TG_SH_VALUE_MAX);
    ck_assert_uint_eq(vs.bytes, TG_SH_VALUE_MAX);
    big[TG_SH_VALUE_MAX] = 'a'; /* one past: unknown, and what A held is given back */
    big[TG_SH_VALUE_MAX + 1] = '\0';
    ck_assert_int_eq(tg_sh_vars_set(&vs, "A", big, NULL), 0);
    ck_assert_ptr_null(tg_sh_vars_get(&vs, "A")->value);
    ck_assert_ptr_nonnull(strstr(tg_sh_vars_get(&vs, "A")->why, "longer than 131072 bytes"));
    ck_assert_uint_eq(vs.bytes, 0);

    /* 32 values of the largest size fill TG_SH_VARS_MAX; the 33rd is unknown; replacing one by
     * an unknown one makes room again */
    big[TG_SH_VALUE_MAX] = '\0';
    for (int i = 0; i < 33; i++) {
        snprintf(name, sizeof(name), "V%d", i);
        ck_assert_int_eq(tg_sh_vars_set(&vs, name, big, NULL), 0);
        ck_assert((tg_sh_vars_get(&vs, name)->value != NULL) == (i < 32));
    }
    ck_assert_uint_eq(vs.bytes, TG_SH_VARS_MAX);
    ck_assert_ptr_nonnull(strstr(tg_sh_vars_get(&vs, "V32")->why, "more than 4 MiB"));
    ck_assert_int_eq(tg_sh_vars_set(&vs, "V0", NULL, "unset"), 0);
    ck_assert_int_eq(tg_sh_vars_set(&vs, "V32", big, NULL), 0);
    ck_assert_ptr_nonnull(tg_sh_vars_get(&vs, "V32")->value);
    tg_sh_vars_release(&vs);

    /* arrays: TG_SH_ARRAY_MAX elements are held, one more is not */
    tg_sh_vars_init(&vs);
    for (size_t i = 0; i <= TG_SH_ARRAY_MAX; i++) {
        elems[i].text = "e";
        elems[i].resolved = true;
    }
    ck_assert_int_eq(tg_sh_vars_set_array(&vs, "R", elems, TG_SH_ARRAY_MAX, NULL), 0);
    ck_assert_uint_eq(tg_sh_vars_get(&vs, "R")->nelems, TG_SH_ARRAY_MAX);
    ck_assert_uint_eq(vs.bytes, TG_SH_ARRAY_MAX + 1); /* the elements and the value "e" */
    ck_assert_int_eq(tg_sh_vars_set_array(&vs, "R", elems, TG_SH_ARRAY_MAX + 1, NULL), 0);
    ck_assert_ptr_null(tg_sh_vars_get(&vs, "R")->elems);
    ck_assert_ptr_null(tg_sh_vars_get(&vs, "R")->value);
    ck_assert_ptr_nonnull(strstr(tg_sh_vars_get(&vs, "R")->why, "more than 1024 elements"));
    ck_assert_uint_eq(vs.bytes, 0);
    /* and no more than TG_SH_VALUE_MAX bytes in all */
    elems[0].text = big;
    ck_assert_int_eq(tg_sh_vars_set_array(&vs, "R", elems, 2, NULL), 0);
    ck_assert_ptr_null(tg_sh_vars_get(&vs, "R")->elems);
    tg_sh_vars_release(&vs);
    free(elems);
    free(big);
}
END_TEST

/* X=$X$X repeated doubles X: the walk ends, X stops being followed past TG_SH_VALUE_MAX, and the
 * command after it is still read (29 doublings of 8 bytes would be 4 GiB). */
START_TEST(shell_walk_survives_a_value_that_doubles)
{
    struct seen s = {0};
    char script[1024];
    size_t at = (size_t)snprintf(script, sizeof(script), "X=aaaaaaaa; ");
    for (int i = 0; i < 29; i++)
        at += (size_t)snprintf(script + at, sizeof(script) - at, "X=$X$X; ");
    snprintf(script + at, sizeof(script) - at, "mpirun -np 2 ./a ok");
    struct tg_sh_walk wk = {.on_command = record, .ctx = &s};
    struct tg_sh_vars vs;
    tg_sh_vars_init(&vs);
    ck_assert_int_eq(tg_sh_walk_script(&wk, script, &vs, 0), 0);
    ck_assert_uint_eq(s.n, 1);
    ck_assert_str_eq(s.cmds[0], "mpirun -np 2 ./a ok");
    const struct tg_sh_var *x = tg_sh_vars_get(&vs, "X");
    ck_assert_ptr_nonnull(x);
    ck_assert_ptr_null(x->value);
    ck_assert_uint_le(vs.bytes, TG_SH_VARS_MAX);
    tg_sh_vars_release(&vs);
}
END_TEST

/* A word longer than TG_SH_VALUE_MAX is unresolved; expansions past TG_SH_EXPAND_MAX in all stop
 * the walk as a reading error does (Y=$X$X... over a 64 KiB X asked for 128 MiB). */
START_TEST(shell_walk_bounds_what_expansions_produce)
{
    struct seen s = {0};
    struct tg_sh_walk wk = {.on_command = record, .ctx = &s};
    struct tg_sh_vars vs;
    size_t cap = 16 * 1024, at;
    char *script = malloc(cap);

    /* X of 65536 bytes; mpirun gets "$X$X$X" (unresolved, cut) and then "$X$X" (131072 bytes:
     * resolved; cut by this test's record) */
    at = (size_t)snprintf(script, cap,
                          "X=aaaaaaaaaaaaaaaa; X=$X$X$X$X$X$X$X$X; X=$X$X$X$X$X$X$X$X; "
                          "X=$X$X$X$X$X$X$X$X; X=$X$X$X$X$X$X$X$X; "
                          "mpirun -np 2 \"$X$X$X\" \"$X$X\"");
    tg_sh_vars_init(&vs);
    ck_assert_int_eq(tg_sh_walk_script(&wk, script, &vs, 0), 0);
    ck_assert(!wk.script_error);
    ck_assert_uint_eq(s.n, 1);
    ck_assert_ptr_nonnull(strstr(s.cmds[0], "mpirun -np 2 ?aaaa"));
    tg_sh_vars_release(&vs);

    /* 2,000 words of 64 KiB: the walk stops past 16 MiB, with the reason, and says it read
     * only part of the script; nothing after it is handed over */
    memset(&s, 0, sizeof(s));
    wk = (struct tg_sh_walk){.on_command = record, .ctx = &s};
    at = (size_t)snprintf(script, cap,
                          "X=aaaaaaaaaaaaaaaa; X=$X$X$X$X$X$X$X$X; X=$X$X$X$X$X$X$X$X; "
                          "X=$X$X$X$X$X$X$X$X; X=$X$X$X$X$X$X$X$X; echo");
    for (int i = 0; i < 2000 && at + 4 < cap; i++)
        at += (size_t)snprintf(script + at, cap - at, " $X");
    snprintf(script + at, cap - at, "; mpirun -np 2 ./a");
    tg_sh_vars_init(&vs);
    ck_assert_int_eq(tg_sh_walk_script(&wk, script, &vs, 0), 0);
    ck_assert(wk.script_error);
    ck_assert_ptr_nonnull(strstr(wk.error, "more than 16 MiB"));
    ck_assert_uint_le(wk.expanded, TG_SH_EXPAND_MAX);
    ck_assert_uint_eq(s.n, 0);
    tg_sh_vars_release(&vs);
    free(script);
}
END_TEST

START_TEST(shell_walk_hands_over_each_simple_command)
{
    static const char script[] = "NP=4\n"
                                 "export FOO=1\n"
                                 "echo hi && exec env -i BAR=2 mpirun -np $NP ./a\n"
                                 "X=1 nohup torchrun --nproc_per_node $((NP * 2)) t.py\n"
                                 "sh -c 'deepspeed --num_gpus \"$NP\" t.py'\n"
                                 "cat <<EOF\n"
                                 "mpirun inside a here-document\n"
                                 "EOF\n"
                                 "$RUNNER go\n";
    struct seen s = {0};
    struct tg_sh_walk wk = {.on_command = record, .ctx = &s};
    struct tg_sh_vars vs;
    tg_sh_vars_init(&vs);
    ck_assert_int_eq(tg_sh_walk_script(&wk, script, &vs, 0), 0);
    ck_assert(!wk.script_error);
    ck_assert_uint_eq(s.n, 6);
    ck_assert_str_eq(s.cmds[0], "echo hi");
    ck_assert_int_eq(s.line[0], 3);
    ck_assert_uint_eq(s.index[0], 2);
    ck_assert_str_eq(s.env[0], "FOO=1");
    ck_assert_str_eq(s.cmds[1], "mpirun -np 4 ./a");
    ck_assert_int_eq(s.line[1], 3);
    ck_assert_uint_eq(s.index[1], 3);
    ck_assert_str_eq(s.env[1], "BAR=2"); /* env -i: the exported FOO does not reach it */
    ck_assert_str_eq(s.cmds[2], "torchrun --nproc_per_node 8 t.py");
    ck_assert_int_eq(s.line[2], 4);
    ck_assert_str_eq(s.env[2], "FOO=1 X=1"); /* a prefix assignment reaches the command only */
    ck_assert_str_eq(s.cmds[3], "deepspeed --num_gpus 4 t.py");
    ck_assert_int_eq(s.depth[3], 1);
    ck_assert_int_eq(s.line[3], 1);
    ck_assert_uint_eq(s.index[3], 0);
    ck_assert_uint_eq(s.argv_index[3], 2); /* the script is word 2 of `sh -c '...'` */
    ck_assert_str_eq(s.cmds[4], "cat");
    ck_assert_int_eq(s.line[4], 6);
    ck_assert_str_eq(s.cmds[5], "?$RUNNER go");
    ck_assert_int_eq(s.line[5], 9);
    /* the script's own variables stay; the prefix assignment X does not */
    ck_assert_str_eq(tg_sh_vars_get(&vs, "NP")->value, "4");
    ck_assert(tg_sh_vars_get(&vs, "FOO")->exported);
    ck_assert_ptr_null(tg_sh_vars_get(&vs, "X"));
    tg_sh_vars_release(&vs);
}
END_TEST

START_TEST(shell_walk_words_reads_a_nested_script)
{
    struct tg_sh_word argv[] = {
        {"/bin/bash", true, NULL}, {"-lc", true, NULL}, {"A=3\nmpirun -np $A ./a", true, NULL}};
    struct seen s = {0};
    struct tg_sh_walk wk = {.on_command = record, .ctx = &s};
    struct tg_sh_vars vs;
    tg_sh_vars_init(&vs);
    ck_assert_int_eq(tg_sh_walk_words(&wk, argv, 3, &vs), 0);
    ck_assert_uint_eq(s.n, 1);
    ck_assert_str_eq(s.cmds[0], "mpirun -np 3 ./a");
    ck_assert_int_eq(s.depth[0], 1);
    ck_assert_int_eq(s.line[0], 2);
    ck_assert_uint_eq(s.index[0], 1);
    ck_assert_uint_eq(s.argv_index[0], 2);
    ck_assert_ptr_null(tg_sh_vars_get(&vs, "A")); /* the inner shell's assignments stay inside */
    tg_sh_vars_release(&vs);
}
END_TEST

START_TEST(shell_walk_stops_where_sh_would)
{
    struct seen s = {0};
    struct tg_sh_walk wk = {.on_command = record, .ctx = &s};
    struct tg_sh_vars vs;
    tg_sh_vars_init(&vs);
    ck_assert_int_eq(tg_sh_walk_script(&wk, "echo ok; echo 'never\nmpirun -np 2", &vs, 1), 0);
    ck_assert_uint_eq(s.n, 1);
    ck_assert_str_eq(s.cmds[0], "echo ok");
    ck_assert(wk.script_error);
    ck_assert_ptr_nonnull(strstr(wk.error, "unterminated single quote"));
    tg_sh_vars_release(&vs);
}
END_TEST

START_TEST(shell_callback_error_ends_the_walk)
{
    struct seen s = {.fail_with = -EIO};
    struct tg_sh_walk wk = {.on_command = record, .ctx = &s};
    struct tg_sh_vars vs;
    tg_sh_vars_init(&vs);
    ck_assert_int_eq(tg_sh_walk_script(&wk, "a; sh -c 'b; c'; d", &vs, 0), -EIO);
    ck_assert_uint_eq(s.n, 1);
    s.n = 0;
    ck_assert_int_eq(tg_sh_walk_script(&wk, "sh -c 'b; c'; d", &vs, 0), -EIO);
    ck_assert_uint_eq(s.n, 1);
    ck_assert_str_eq(s.cmds[0], "b");
    tg_sh_vars_release(&vs);
}
END_TEST

/* Runs script and returns what the callback saw (the variables are released). */
static void walk(const char *script, struct seen *s)
{
    struct tg_sh_walk wk = {.on_command = record, .ctx = s};
    struct tg_sh_vars vs;
    tg_sh_vars_init(&vs);
    ck_assert_int_eq(tg_sh_walk_script(&wk, script, &vs, 1), 0);
    ck_assert_msg(!wk.script_error, "%s", wk.error);
    tg_sh_vars_release(&vs);
}

START_TEST(shell_splits_unquoted_expansions_into_fields)
{
    struct seen s = {0};
    walk("ARGS=\"--nproc_per_node 8  --nnodes 2\"\n"
         "EMPTY=\n"
         "torchrun $ARGS \"$ARGS\" $EMPTY x$EMPTY \"\" t.py\n"
         "D=\" -np 4 \"; mpirun${D}./a $((1 + 1))\n"
         "mpirun $UNSET ${UNSET:-a  b}\n",
         &s);
    ck_assert_uint_eq(s.n, 3);
    /* unquoted: four fields; quoted: one word; $EMPTY alone vanishes; "" stays an empty word */
    ck_assert_str_eq(
        s.cmds[0], "torchrun --nproc_per_node 8 --nnodes 2 --nproc_per_node 8  --nnodes 2 x  t.py");
    ck_assert_str_eq(s.cmds[1], "mpirun -np 4 ./a 2");
    ck_assert_str_eq(s.cmds[2], "mpirun ?$UNSET a b");
}
END_TEST

START_TEST(shell_reads_bash_arrays)
{
    struct seen s = {0};
    walk("GPUS=8\n"
         "DIST=(\n"
         "    --nproc_per_node $GPUS  # per node\n"
         "    --nnodes \"2\"\n"
         ")\n"
         "DIST+=(--node_rank 0)\n"
         "MODEL=(--name \"a b\")\n"
         "BAD=(--x $(hostname))\n"
         "torchrun ${DIST[@]} t.py \"${MODEL[@]}\" \"${MODEL[*]}\" $DIST\n"
         "run ${BAD[@]} ${NONE[@]}\n",
         &s);
    ck_assert_uint_eq(s.n, 2);
    ck_assert_str_eq(s.cmds[0], "torchrun --nproc_per_node 8 --nnodes 2 --node_rank 0 t.py --name "
                                "a b --name a b --nproc_per_node");
    ck_assert_str_eq(s.cmds[1], "run --x ?$(hostname) ?${NONE[@]}"); /* the element alone */
}
END_TEST

/* What the callback saw of redirections: the stdout file and the here-document of each
 * command ("-" when none). */
struct redirs {
    char out[8][64];
    char doc[8][160];
    bool doc_resolved[8];
    size_t n;
};

static int record_redirs(void *ctx, const struct tg_sh_cmd *cmd)
{
    struct redirs *r = ctx;
    ck_assert_uint_lt(r->n, 8);
    snprintf(r->out[r->n], sizeof(r->out[0]), "%s",
             cmd->stdout_file ? cmd->stdout_file->text : "-");
    snprintf(r->doc[r->n], sizeof(r->doc[0]), "%s", cmd->heredoc ? cmd->heredoc->text : "-");
    r->doc_resolved[r->n] = cmd->heredoc && cmd->heredoc->resolved;
    r->n++;
    return 0;
}

START_TEST(shell_hands_over_here_documents_and_the_output_file)
{
    static const char script[] = "GBS=64\n"
                                 "CFG=/tmp/ds.json\n"
                                 "cat <<EOF > $CFG\n"
                                 "{\"train_batch_size\": $GBS, \"x\": \"\\$GBS\"}\n"
                                 "EOF\n"
                                 "cat > raw.json <<'EOT'\n"
                                 "{\"b\": $GBS}\n"
                                 "EOT\n"
                                 "python t.py 2> err.log <<-E | tee out.log\n"
                                 "\tignored: not on the line of its command\n"
                                 "\tE\n"
                                 "cat <<EOF >> $(pwd)/x.json\n"
                                 "$(date)\n"
                                 "EOF\n";
    struct redirs r = {0};
    struct tg_sh_walk wk = {.on_command = record_redirs, .ctx = &r};
    struct tg_sh_vars vs;
    tg_sh_vars_init(&vs);
    ck_assert_int_eq(tg_sh_walk_script(&wk, script, &vs, 1), 0);
    ck_assert(!wk.script_error);
    ck_assert_uint_eq(r.n, 5);
    ck_assert_str_eq(r.out[0], "/tmp/ds.json");
    ck_assert_str_eq(r.doc[0], "{\"train_batch_size\": 64, \"x\": \"$GBS\"}\n");
    ck_assert(r.doc_resolved[0]);
    ck_assert_str_eq(r.out[1], "raw.json"); /* quoted delimiter: literal body */
    ck_assert_str_eq(r.doc[1], "{\"b\": $GBS}\n");
    ck_assert_str_eq(r.out[2], "-"); /* 2> is not standard output */
    ck_assert_str_eq(r.doc[2], "-"); /* the command does not end its line */
    ck_assert_str_eq(r.out[3], "-"); /* tee out.log: the file is an argument */
    ck_assert_str_eq(r.out[4], "$(pwd)/x.json");
    ck_assert(!r.doc_resolved[4]); /* a command substitution in the body */
    tg_sh_vars_release(&vs);
}
END_TEST

/* A word that is one literal (the reader's fast path) and the same text in several parts (the
 * general expansion) give the same words. */
START_TEST(shell_reads_one_literal_words_as_words_of_several_parts)
{
    struct seen s = {0};
    walk("E=\n"
         "w abc 'abc' \"abc\" a'b'c a\"b\"c ab$E'c' \\abc a\\bc \"a\\$c\" 'a\\c'\n"
         "w '' \"\" $E \"$E\" a$ a$/b $ \\$x '$x' -x=1 A=1\n"
         "A= B='' C=x\"y\"z D=plain F=\"\" G=$E H=a'b'$E\n"
         "w $A.$B.$C.$D.$F.$G.$H\n"
         "2>x w 12 '1'> y\n"
         "w\\\n"
         "x 'a\n"
         "b' \"c\n"
         "d\" 10\n",
         &s);
    ck_assert_uint_eq(s.n, 5);
    ck_assert_str_eq(s.cmds[0], "w abc abc abc abc abc abc abc abc a$c a\\c");
    /* '' "" and "$E" are empty words, $E alone none */
    ck_assert_str_eq(s.cmds[1], "w    a$ a$/b $ $x $x -x=1 A=1");
    ck_assert_str_eq(s.cmds[2], "w ..xyz.plain...ab");
    ck_assert_str_eq(s.cmds[3], "w 12 1"); /* a quoted '1' is no IO number */
    ck_assert_str_eq(s.cmds[4], "wx a\nb c\nd 10");
    ck_assert_int_eq(s.line[4], 7);
}
END_TEST

/* The usual word (plain bytes up to a blank or an operator) is read inline by the lexer, any
 * other by its loop: words ending at each kind of end, words going on with a special byte, '#'
 * starting a comment or inside a word, and digits before '<' or '>' (an IO number, read by the
 * loop) or before a blank (a word) come out the same as sh reads them. */
START_TEST(shell_reads_plain_words_inline_and_the_rest_by_parts)
{
    struct seen s = {0};
    walk("w a\tb\rc d#e #f g\n"
         "w h;w i&w j|w k&&w l||w m\n",
         &s);
    ck_assert_uint_eq(s.n, 7);
    ck_assert_str_eq(s.cmds[0], "w a b c d#e");
    ck_assert_str_eq(s.cmds[1], "w h");
    ck_assert_str_eq(s.cmds[2], "w i");
    ck_assert_str_eq(s.cmds[3], "w j");
    ck_assert_str_eq(s.cmds[4], "w k");
    ck_assert_str_eq(s.cmds[5], "w l");
    ck_assert_str_eq(s.cmds[6], "w m");
    struct seen t = {0};
    walk("E=e\n"
         "w o\"p\" q$E r\\ s t'u' y\n"
         "w 12>f a 3<g b 45 >h c6>i d\n"
         "(n)\n"
         "w 7",
         &t);
    ck_assert_uint_eq(t.n, 4);
    ck_assert_str_eq(t.cmds[0], "w op qe r s tu y");
    /* 12>f 3<g: IO numbers; 45 >h and c6>i: words, then the redirection */
    ck_assert_str_eq(t.cmds[1], "w a b 45 c6 d");
    ck_assert_str_eq(t.cmds[2], "n");
    ck_assert_str_eq(t.cmds[3], "w 7");
}
END_TEST

/* Every word of every command, whole (the words of a command only live as long as the call). */
struct whole {
    char *words[4][8];
    size_t nwords[4];
    size_t n;
};

static int record_whole(void *ctx, const struct tg_sh_cmd *cmd)
{
    struct whole *r = ctx;
    ck_assert_uint_lt(r->n, 4);
    ck_assert_uint_le(cmd->nwords, 8);
    for (size_t i = 0; i < cmd->nwords; i++) {
        r->words[r->n][i] = strdup(cmd->words[i].text);
        ck_assert_ptr_nonnull(r->words[r->n][i]);
    }
    r->nwords[r->n++] = cmd->nwords;
    return 0;
}

static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    ck_assert_ptr_nonnull(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

/* The reader's first scratch block is sized by the script's length (at least 992 and at most
 * 16 KiB of data), then doubles: a script that starts with a comment of PAD bytes makes it hold
 * SCRATCH_B bytes whatever follows, and a command's array of raw words, carved from it after
 * the first word, start with room for 256 words of 24 bytes (SCRATCH_A). */
#define SCRATCH_B 16384
#define SCRATCH_A (256 * 24)
#define PAD 2400

/* The comment of PAD bytes, then text: a new string. */
static char *padded(const char *text)
{
    size_t len = strlen(text);
    char *s = malloc(PAD + len + 1);
    ck_assert_ptr_nonnull(s);
    s[0] = '#';
    memset(s + 1, 'c', PAD - 2);
    s[PAD - 1] = '\n';
    memcpy(s + PAD, text, len + 1);
    return s;
}

/* Words the size of the reader's scratch blocks (SCRATCH_B bytes of data, then doubling) and
 * around them, in one part and in several, over several commands (the scratch area is emptied
 * between commands), in a script of the padded length and in one without the pad: each word
 * comes out whole. */
START_TEST(shell_reads_words_longer_than_a_scratch_block)
{
    enum { B = SCRATCH_B, A = SCRATCH_A };
    static const size_t sizes[] = {1,          B / 2 - 6,  B / 2 - 5,  B / 2 - 1,  B / 2,
                                   B - A - 97, B - A - 96, B - A - 89, B - A - 88, B - A - 87,
                                   B - 8,      B - 7,      B - 2,      B - 1,      B,
                                   B + 1,      B + 31,     B + 32,     B + 33,     2 * B - 1,
                                   2 * B,      2 * B + 1,  2 * B + 64, 4 * B - 64, 5000};
    for (size_t k = 0; k < 2 * sizeof(sizes) / sizeof(sizes[0]); k++) {
        size_t n = sizes[k / 2];
        bool pad = k % 2 == 0;
        char *a = repeat('a', n), *b = repeat('b', n);
        /* plain; quoted; three parts; a double-quoted run grown in place by an escape; a word
         * of many segments; the same again after a newline (a new command) */
        size_t len = 12 * n + 256;
        char *script = malloc(len);
        ck_assert_ptr_nonnull(script);
        snprintf(script, len,
                 "w %s '%s' %s\"%s\"'x' \"%s\\$%s\" x${E}${E}${E}${E}${E}${E}${E}${E}${E}%s\n"
                 "w %s\"%s\"\n"
                 "w $L\n",
                 a, b, a, b, a, b, b, b, a);
        if (pad) {
            char *p = padded(script);
            free(script);
            script = p;
        }
        struct whole r = {0};
        struct tg_sh_walk wk = {.on_command = record_whole, .ctx = &r};
        struct tg_sh_vars vs;
        tg_sh_vars_init(&vs);
        ck_assert_int_eq(tg_sh_vars_set(&vs, "E", "", NULL), 0);
        char *l = malloc(2 * n + 2);
        ck_assert_ptr_nonnull(l);
        snprintf(l, 2 * n + 2, "%s %s", a, b);
        ck_assert_int_eq(tg_sh_vars_set(&vs, "L", l, NULL), 0); /* $L: two fields */
        free(l);
        ck_assert_int_eq(tg_sh_walk_script(&wk, script, &vs, 1), 0);
        ck_assert(!wk.script_error);
        ck_assert_uint_eq(r.n, 3);
        ck_assert_uint_eq(r.nwords[0], 6);
        ck_assert_str_eq(r.words[0][1], a);
        ck_assert_str_eq(r.words[0][2], b);
        ck_assert_uint_eq(strlen(r.words[0][3]), 2 * n + 1);
        ck_assert(!strncmp(r.words[0][3], a, n) && !strncmp(r.words[0][3] + n, b, n));
        ck_assert_int_eq(r.words[0][3][2 * n], 'x');
        ck_assert_uint_eq(strlen(r.words[0][4]), 2 * n + 1);
        ck_assert_int_eq(r.words[0][4][n], '$');
        ck_assert_uint_eq(strlen(r.words[0][5]), n + 1);
        ck_assert_int_eq(r.words[0][5][0], 'x');
        ck_assert_str_eq(r.words[0][5] + 1, b);
        ck_assert_uint_eq(r.nwords[1], 2);
        ck_assert_uint_eq(strlen(r.words[1][1]), 2 * n);
        ck_assert(!strncmp(r.words[1][1], b, n) && !strcmp(r.words[1][1] + n, a));
        ck_assert_uint_eq(r.nwords[2], 3);
        ck_assert_str_eq(r.words[2][1], a);
        ck_assert_str_eq(r.words[2][2], b);
        for (size_t c = 0; c < r.n; c++)
            for (size_t i = 0; i < r.nwords[c]; i++)
                free(r.words[c][i]);
        tg_sh_vars_release(&vs);
        free(script);
        free(a);
        free(b);
    }
}
END_TEST

/* A word's first literal is carved with its segment in one piece of scratch (a 40-byte segment,
 * then the text): words whose piece just fits the block left, or just does not, at the first
 * block's size less the array of raw words and at the second block's, with a word before them; each
 * alone, grown in place by a second literal of the same quoting ('a''b'), and followed by segments
 * of other kinds. */
START_TEST(shell_reads_first_segments_at_block_edges)
{
    enum { B = SCRATCH_B - SCRATCH_A, B2 = 2 * SCRATCH_B };
    static const size_t sizes[] = {0,       1,       7,       8,       9,       B - 97,  B - 96,
                                   B - 95,  B - 89,  B - 88,  B - 87,  B - 49,  B - 48,  B - 47,
                                   B - 42,  B - 41,  B - 40,  B - 39,  B2 - 49, B2 - 48, B2 - 41,
                                   B2 - 40, B2 - 39, B2 - 33, B2 - 32, B2 - 31};
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        size_t n = sizes[k];
        char *a = repeat('a', n);
        size_t len = 8 * n + 256;
        char *script = malloc(len);
        ck_assert_ptr_nonnull(script);
        snprintf(script, len,
                 "w '%s'\n"
                 "w '%s''bc'\n"
                 "w '%s'x\\ y\"$E\"z\n"
                 "%s '%s'\n",
                 a, a, a, n ? a : "w", a);
        char *p = padded(script);
        free(script);
        script = p;
        struct whole r = {0};
        struct tg_sh_walk wk = {.on_command = record_whole, .ctx = &r};
        struct tg_sh_vars vs;
        tg_sh_vars_init(&vs);
        ck_assert_int_eq(tg_sh_vars_set(&vs, "E", "e", NULL), 0);
        ck_assert_int_eq(tg_sh_walk_script(&wk, script, &vs, 1), 0);
        ck_assert(!wk.script_error);
        ck_assert_uint_eq(r.n, 4);
        for (size_t c = 0; c < 4; c++)
            ck_assert_uint_eq(r.nwords[c], 2);
        ck_assert_str_eq(r.words[0][1], a);
        ck_assert_uint_eq(strlen(r.words[1][1]), n + 2);
        ck_assert(!strncmp(r.words[1][1], a, n) && !strcmp(r.words[1][1] + n, "bc"));
        ck_assert_uint_eq(strlen(r.words[2][1]), n + 5);
        ck_assert(!strncmp(r.words[2][1], a, n) && !strcmp(r.words[2][1] + n, "x yez"));
        ck_assert_str_eq(r.words[3][0], n ? a : "w");
        ck_assert_str_eq(r.words[3][1], a);
        for (size_t c = 0; c < r.n; c++)
            for (size_t i = 0; i < r.nwords[c]; i++)
                free(r.words[c][i]);
        tg_sh_vars_release(&vs);
        free(script);
        free(a);
    }
}
END_TEST

/* The reason of an unset or unknown $NAME, cut at TG_SH_REASON_MAX as snprintf cuts it: names
 * and reasons of every length around the cut. */
static int keep_reason(void *ctx, const struct tg_sh_cmd *cmd)
{
    char *out = ctx;
    ck_assert_uint_eq(cmd->nwords, 2);
    ck_assert(!cmd->words[1].resolved);
    snprintf(out, TG_SH_REASON_MAX + 8, "%s", cmd->words[1].reason);
    return 0;
}

START_TEST(shell_unset_reasons_cut_as_snprintf)
{
    for (size_t n = 1; n < TG_SH_REASON_MAX + 4; n++) {
        char *name = repeat('N', n), *why = repeat('w', n);
        char script[TG_SH_REASON_MAX + 16], got[TG_SH_REASON_MAX + 8], want[TG_SH_REASON_MAX];
        struct tg_sh_walk wk = {.on_command = keep_reason, .ctx = got};
        struct tg_sh_vars vs;
        tg_sh_vars_init(&vs);
        snprintf(script, sizeof(script), "echo $%s", name);
        ck_assert_int_eq(tg_sh_walk_script(&wk, script, &vs, 0), 0);
        snprintf(want, sizeof(want), "$%s is not set in the container env or script", name);
        ck_assert_str_eq(got, want);
        ck_assert_int_eq(tg_sh_vars_set(&vs, name, NULL, why), 0);
        ck_assert_int_eq(tg_sh_walk_script(&wk, script, &vs, 0), 0);
        snprintf(want, sizeof(want), "%s", why);
        ck_assert_str_eq(got, want);
        tg_sh_vars_release(&vs);
        free(name);
        free(why);
    }
}
END_TEST

/* A command's words: "w", then for each i a literal of i % 50 + 1 bytes (byte 'a' + i % 26)
 * and, every third word, $L's two fields "p q". */
struct many {
    size_t n;  /* literals */
    size_t ok; /* commands checked */
};

static int check_many(void *ctx, const struct tg_sh_cmd *cmd)
{
    struct many *m = ctx;
    size_t at = 1;
    ck_assert_str_eq(cmd->words[0].text, "w");
    for (size_t i = 0; i < m->n; i++) {
        size_t len = i % 50 + 1;
        ck_assert_uint_lt(at, cmd->nwords);
        ck_assert_uint_eq(strlen(cmd->words[at].text), len);
        for (size_t k = 0; k < len; k++)
            ck_assert_int_eq(cmd->words[at].text[k], 'a' + (int)(i % 26));
        ck_assert(cmd->words[at].resolved);
        at++;
        if (i % 3 == 2) {
            ck_assert_uint_lt(at + 1, cmd->nwords);
            ck_assert_str_eq(cmd->words[at].text, "p");
            ck_assert_str_eq(cmd->words[at + 1].text, "q");
            at += 2;
        }
    }
    ck_assert_uint_eq(at, cmd->nwords);
    m->ok++;
    return 0;
}

/* Commands of as many words as the word array's sizes (8, doubling) and around them, the array
 * growing in the scratch area among the words' texts: every word comes out whole, in order. */
START_TEST(shell_reads_commands_of_many_words)
{
    static const size_t counts[] = {1,  4,  5,  6,  7,  8,  9,  15, 16,  17,  21,  22,
                                    31, 32, 33, 43, 44, 63, 64, 65, 127, 128, 129, 300};
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        struct many m = {.n = counts[c]};
        size_t len = m.n * 56 + 64;
        char *script = malloc(2 * len);
        ck_assert_ptr_nonnull(script);
        size_t at = 0;
        for (int rep = 0; rep < 2; rep++) { /* twice: the second after the scratch is emptied */
            script[at++] = 'w';
            for (size_t i = 0; i < m.n; i++) {
                script[at++] = ' ';
                for (size_t k = 0; k < i % 50 + 1; k++)
                    script[at++] = (char)('a' + i % 26);
                if (i % 3 == 2) {
                    memcpy(script + at, " $L", 3);
                    at += 3;
                }
            }
            script[at++] = '\n';
        }
        script[at] = '\0';
        struct tg_sh_walk wk = {.on_command = check_many, .ctx = &m};
        struct tg_sh_vars vs;
        tg_sh_vars_init(&vs);
        ck_assert_int_eq(tg_sh_vars_set(&vs, "L", "p q", NULL), 0);
        ck_assert_int_eq(tg_sh_walk_script(&wk, script, &vs, 1), 0);
        ck_assert(!wk.script_error);
        ck_assert_uint_eq(m.ok, 2);
        tg_sh_vars_release(&vs);
        free(script);
    }
}
END_TEST

/* A command's words "w" and then n words of the usual kind, word i of i % 4 + 1 bytes 'a' + i % 26
 * (the reader takes such runs in one loop, up to where the command's array of raw words or the
 * scratch block is full, and goes on by its general path there). */
static int check_plain_run(void *ctx, const struct tg_sh_cmd *cmd)
{
    struct many *m = ctx;
    ck_assert_uint_eq(cmd->nwords, m->n + 1);
    ck_assert_str_eq(cmd->words[0].text, "w");
    for (size_t i = 0; i < m->n; i++) {
        const struct tg_sh_word *w = &cmd->words[i + 1];
        ck_assert(w->resolved);
        ck_assert_ptr_null(w->reason);
        ck_assert_uint_eq(strlen(w->text), i % 4 + 1);
        for (size_t k = 0; k < i % 4 + 1; k++)
            ck_assert_int_eq(w->text[k], 'a' + (int)(i % 26));
    }
    m->ok++;
    return 0;
}

/* Commands of only usual words, as many as fill the array of raw words (sized for a word per
 * eight bytes of script, 16 at the least and 256 at the most) or the scratch block (a 48-byte
 * segment a word) and around that, between blanks of every kind, each command twice (the
 * second after the scratch area is emptied) and then a command whose words end at an operator:
 * every word comes out whole, in order, and the operators still end their commands. */
START_TEST(shell_reads_runs_of_usual_words)
{
    static const size_t counts[] = {1,   2,   3,   15,  16,  17,  31,  32,  33,  63,  64,  65,
                                    127, 128, 129, 255, 256, 257, 300, 511, 512, 513, 2000};
    static const char *const blanks[] = {" ", "\t", " \r ", "  "};
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        struct many m = {.n = counts[c]};
        size_t len = 2 * m.n * 8 + 64;
        char *script = malloc(len);
        ck_assert_ptr_nonnull(script);
        size_t at = 0;
        for (int rep = 0; rep < 2; rep++) {
            script[at++] = 'w';
            for (size_t i = 0; i < m.n; i++) {
                const char *b = blanks[i % 4];
                memcpy(script + at, b, strlen(b));
                at += strlen(b);
                for (size_t k = 0; k < i % 4 + 1; k++)
                    script[at++] = (char)('a' + i % 26);
            }
            script[at++] = rep ? ';' : '\n';
        }
        script[at] = '\0';
        struct tg_sh_walk wk = {.on_command = check_plain_run, .ctx = &m};
        struct tg_sh_vars vs;
        tg_sh_vars_init(&vs);
        ck_assert_int_eq(tg_sh_walk_script(&wk, script, &vs, 1), 0);
        ck_assert(!wk.script_error);
        ck_assert_uint_eq(m.ok, 2);
        tg_sh_vars_release(&vs);
        free(script);
    }
    struct seen s = {0};
    walk("w a b;w c d|w e f&&w g h)\n", &s);
    ck_assert_uint_eq(s.n, 4);
    ck_assert_str_eq(s.cmds[0], "w a b");
    ck_assert_str_eq(s.cmds[1], "w c d");
    ck_assert_str_eq(s.cmds[2], "w e f");
    ck_assert_str_eq(s.cmds[3], "w g h");
}
END_TEST

/* A script of n words "w" "x1" ... "x<n-1>" on one line, and its expected command. */
static char *words_script(size_t n, char *want, size_t wantlen)
{
    char *script = malloc(n * 8 + 2);
    ck_assert_ptr_nonnull(script);
    size_t at = 0, wat = 0;
    for (size_t i = 0; i < n; i++) {
        at += (size_t)sprintf(script + at, i ? " x%zu" : "w", i);
        if (wat < wantlen)
            wat += (size_t)snprintf(want + wat, wantlen - wat, i ? " x%zu" : "w", i);
    }
    return script;
}

/* One command of n words read and checked (its first 159 bytes, as struct seen keeps them). */
static void read_words_script(size_t n)
{
    char want[160];
    char *script = words_script(n, want, sizeof(want));
    struct seen s = {0};
    walk(script, &s);
    ck_assert_uint_eq(s.n, 1);
    ck_assert_str_eq(s.cmds[0], want);
    free(script);
}

static void *read_in_thread(void *arg)
{
    (void)arg;
    read_words_script(100);
    return NULL;
}

/* The first block a script is read with (its scratch, then its copy) is kept, one per thread, for
 * the next script: scripts of every size after one another (smaller and larger than the block
 * kept, larger than what is kept at all), nested scripts (each reads with its own block, and the
 * larger is kept), and a thread that reads and ends (its block freed with it: valgrind and ASan
 * tell a leak) all read the same. */
START_TEST(shell_reads_alike_with_the_kept_block)
{
    static const size_t sizes[] = {1, 100, 2, 900, 3, 20000, 5, 900, 4000, 100, 1};
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
        read_words_script(sizes[k]);
    struct seen s = {0};
    walk("sh -c 'w a b; sh -c \"w c d e f g h i j k l m n o p q r s t u v w x y z\"; w "
         "b'\n"
         "w z\n",
         &s);
    ck_assert_uint_eq(s.n, 4);
    ck_assert_str_eq(s.cmds[0], "w a b");
    ck_assert_str_eq(s.cmds[1], "w c d e f g h i j k l m n o p q r s t u v w x y z");
    ck_assert_str_eq(s.cmds[2], "w b");
    ck_assert_str_eq(s.cmds[3], "w z");
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, read_in_thread, NULL), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    read_words_script(100);
}
END_TEST

/* What the command's words are, each "text" or "?text|reason". */
static int record_reasons(void *ctx, const struct tg_sh_cmd *cmd)
{
    struct whole *r = ctx;
    ck_assert_uint_lt(r->n, 4);
    ck_assert_uint_le(cmd->nwords, 8);
    for (size_t i = 0; i < cmd->nwords; i++) {
        const struct tg_sh_word *w = &cmd->words[i];
        size_t len = strlen(w->text) + (w->reason ? strlen(w->reason) : 0) + 3;
        char *t = malloc(len);
        ck_assert_ptr_nonnull(t);
        ck_assert(w->resolved == !w->reason);
        snprintf(t, len, w->resolved ? "%s" : "?%s|%s", w->text, w->reason ? w->reason : "");
        r->words[r->n][i] = t;
    }
    r->nwords[r->n++] = cmd->nwords;
    return 0;
}

/* A field is built in a 128-byte buffer on the stack and moved to malloc when it outgrows it:
 * fields of every length around that, made by expansions, in a command's words (whose texts and
 * reasons live in the scratch area) and in an assignment's value (malloc'd), resolved and not,
 * split in two, all come out whole, each unresolved one with its reason. */
START_TEST(shell_builds_fields_of_every_length_around_the_stack_buffer)
{
    for (size_t n = 120; n <= 136; n++) {
        char *x = repeat('x', n);
        char script[1024];
        snprintf(script, sizeof(script),
                 "w a$X b$U$X\n"
                 "A=a$X; B=b$U$X; w $A $B\n"
                 "w $L\n");
        char l[2 * 136 + 2];
        snprintf(l, sizeof(l), "%s %s", x, x);
        struct whole r = {0};
        struct tg_sh_walk wk = {.on_command = record_reasons, .ctx = &r};
        struct tg_sh_vars vs;
        tg_sh_vars_init(&vs);
        ck_assert_int_eq(tg_sh_vars_set(&vs, "X", x, NULL), 0);
        ck_assert_int_eq(tg_sh_vars_set(&vs, "L", l, NULL), 0);
        ck_assert_int_eq(tg_sh_walk_script(&wk, script, &vs, 1), 0);
        ck_assert(!wk.script_error);
        ck_assert_uint_eq(r.n, 3);
        char want_a[160], want_b[260];
        snprintf(want_a, sizeof(want_a), "a%s", x);
        snprintf(want_b, sizeof(want_b), "?b$U%s|$U is not set in the container env or script", x);
        for (size_t c = 0; c < 2; c++) {
            ck_assert_uint_eq(r.nwords[c], 3);
            ck_assert_str_eq(r.words[c][1], want_a);
        }
        ck_assert_str_eq(r.words[0][2], want_b);
        /* B is set unknown, with the reason of its value */
        ck_assert_str_eq(r.words[1][2], "?$B|$U is not set in the container env or script");
        ck_assert_uint_eq(r.nwords[2], 3);
        ck_assert_str_eq(r.words[2][1], x);
        ck_assert_str_eq(r.words[2][2], x);
        for (size_t c = 0; c < r.n; c++)
            for (size_t i = 0; i < r.nwords[c]; i++)
                free(r.words[c][i]);
        tg_sh_vars_release(&vs);
        free(x);
    }
}
END_TEST

/* An inner shell reads the outer shell's variables until it assigns one (then works on its own
 * copy), at every depth; nothing it assigns or exports comes back out. */
START_TEST(shell_inner_shells_keep_their_assignments)
{
    struct seen s = {0};
    struct tg_sh_walk wk = {.on_command = record, .ctx = &s};
    struct tg_sh_vars vs;
    tg_sh_vars_init(&vs);
    ck_assert_int_eq(
        tg_sh_walk_script(&wk,
                          "A=1\n"
                          "sh -c 'echo $A; A=2; echo $A; export B=3; "
                          "sh -c \"echo \\$A \\$B; A=4; C=(x y); echo \\$A \\${C[@]}\"; "
                          "echo $A $C'\n"
                          "sh -c 'sh -c \"echo \\$A\"'\n"
                          "echo $A $B $C\n",
                          &vs, 0),
        0);
    ck_assert_msg(!wk.script_error, "%s", wk.error);
    ck_assert_uint_eq(s.n, 7);
    ck_assert_str_eq(s.cmds[0], "echo 1");
    ck_assert_str_eq(s.cmds[1], "echo 2");
    ck_assert_str_eq(s.cmds[2], "echo 2 3");
    ck_assert_int_eq(s.depth[2], 2);
    ck_assert_str_eq(s.env[2], "B=3");
    ck_assert_str_eq(s.cmds[3], "echo 4 x y");
    ck_assert_str_eq(s.cmds[4], "echo 2 ?$C");
    ck_assert_str_eq(s.cmds[5], "echo 1");
    ck_assert_int_eq(s.depth[5], 2);
    ck_assert_str_eq(s.cmds[6], "echo 1 ?$B ?$C");
    ck_assert_str_eq(s.env[6], "");
    ck_assert_str_eq(tg_sh_vars_get(&vs, "A")->value, "1");
    ck_assert_ptr_null(tg_sh_vars_get(&vs, "B"));
    ck_assert_ptr_null(tg_sh_vars_get(&vs, "C"));
    tg_sh_vars_release(&vs);
}
END_TEST

/* Every wrapper and builtin the reader interprets, by its name (in any directory), and names
 * that only look like one: those are commands of their own. */
START_TEST(shell_knows_its_wrappers_by_name)
{
    struct seen s = {0};
    walk("exec -a x /usr/bin/time -p nohup command builtin xargs a1\n"
         "timeout -s KILL 5 env -u X Y=1 nice -n 5 stdbuf -o L sudo -u u numactl -N 0 "
         "taskset 3 a2\n"
         "execs a3; times a4; envy a5; nic a6; sudo- a7; exports A=1\n",
         &s);
    ck_assert_uint_eq(s.n, 8);
    ck_assert_str_eq(s.cmds[0], "a1");
    ck_assert_str_eq(s.cmds[1], "a2");
    ck_assert_str_eq(s.env[1], "Y=1");
    ck_assert_str_eq(s.cmds[2], "execs a3");
    ck_assert_str_eq(s.cmds[3], "times a4");
    ck_assert_str_eq(s.cmds[4], "envy a5");
    ck_assert_str_eq(s.cmds[5], "nic a6");
    ck_assert_str_eq(s.cmds[6], "sudo- a7");
    ck_assert_str_eq(s.cmds[7], "exports A=1");
    struct seen t = {0};
    walk("bash5 -c 'a8'\n"
         "/bin/export B=2; local C=3; readonly D=4; declare -x E=5; typeset F=6\n"
         "zsh -c 'ksh -c \"a9 $B$C$D$E$F\"'; dash -c a10; ash -c a11\n",
         &t);
    ck_assert_uint_eq(t.n, 4);
    ck_assert_str_eq(t.cmds[0], "bash5 -c a8");
    ck_assert_str_eq(t.cmds[1], "a9 23456");
    ck_assert_int_eq(t.depth[1], 3);
    ck_assert_str_eq(t.env[1], "B=2 E=5");
    ck_assert_str_eq(t.cmds[2], "a10");
    ck_assert_str_eq(t.cmds[3], "a11");
}
END_TEST

/* tg_sh_cmd_getenv answers as the last entry of tg_sh_cmd_env's array does, for every name. */
static int check_getenv(void *ctx, const struct tg_sh_cmd *cmd)
{
    static const char *const names[] = {"A", "B", "C", "D", "E", "AB", "U", "Z"};
    size_t *n = ctx;
    struct tg_sh_env env;
    ck_assert_int_eq(tg_sh_cmd_env(cmd, &env), 0);
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
        const struct tg_sh_env_var *last = NULL;
        for (size_t i = 0; i < env.n; i++)
            if (env.v[i].namelen == strlen(names[k]) &&
                !strncmp(env.v[i].name, names[k], env.v[i].namelen))
                last = &env.v[i];
        const char *value = "untouched";
        bool found = tg_sh_cmd_getenv(cmd, names[k], &value);
        ck_assert_msg(found == (last != NULL), "command %zu: %s", *n, names[k]);
        if (last && last->value)
            ck_assert_str_eq(value, last->value);
        else if (last)
            ck_assert_ptr_null(value);
    }
    tg_sh_env_release(&env);
    (*n)++;
    return 0;
}

START_TEST(shell_getenv_is_the_last_entry_of_the_env)
{
    size_t n = 0;
    struct tg_sh_walk wk = {.on_command = check_getenv, .ctx = &n};
    struct tg_sh_vars vs;
    tg_sh_vars_init(&vs);
    ck_assert_int_eq(tg_sh_vars_set(&vs, "A", "1", NULL), 0);
    ck_assert_int_eq(tg_sh_vars_set(&vs, "U", NULL, "U unknown"), 0);
    tg_sh_vars_export(&vs, "A");
    tg_sh_vars_export(&vs, "U");
    ck_assert_int_eq(tg_sh_vars_set(&vs, "B", "2", NULL), 0); /* not exported */
    ck_assert_int_eq(tg_sh_walk_script(&wk,
                                       "run\n"
                                       "A=3 B=4 run\n"
                                       "A=5 A=6 C=$(x) run\n"
                                       "env A=7 AB=8 A=9 run\n"
                                       "D=1 env -i E=2 run\n"
                                       "env -u A run\n"
                                       "export Z=10; A= run\n",
                                       &vs, 0),
                     0);
    ck_assert_uint_eq(n, 7);
    tg_sh_vars_release(&vs);
}
END_TEST

Suite *tg_test_shell_suite(void);
Suite *tg_test_shell_suite(void)
{
    Suite *s = suite_create("shell");
    TCase *tc = tcase_create("walk");
    tcase_add_test(tc, shell_vars);
    tcase_add_test(tc, shell_vars_are_bounded);
    tcase_add_test(tc, shell_walk_survives_a_value_that_doubles);
    tcase_add_test(tc, shell_walk_bounds_what_expansions_produce);
    tcase_add_test(tc, shell_walk_hands_over_each_simple_command);
    tcase_add_test(tc, shell_walk_words_reads_a_nested_script);
    tcase_add_test(tc, shell_walk_stops_where_sh_would);
    tcase_add_test(tc, shell_callback_error_ends_the_walk);
    tcase_add_test(tc, shell_splits_unquoted_expansions_into_fields);
    tcase_add_test(tc, shell_reads_bash_arrays);
    tcase_add_test(tc, shell_hands_over_here_documents_and_the_output_file);
    tcase_add_test(tc, shell_reads_one_literal_words_as_words_of_several_parts);
    tcase_add_test(tc, shell_reads_plain_words_inline_and_the_rest_by_parts);
    tcase_add_test(tc, shell_reads_words_longer_than_a_scratch_block);
    tcase_add_test(tc, shell_reads_first_segments_at_block_edges);
    tcase_add_test(tc, shell_unset_reasons_cut_as_snprintf);
    tcase_add_test(tc, shell_reads_commands_of_many_words);
    tcase_add_test(tc, shell_reads_runs_of_usual_words);
    tcase_add_test(tc, shell_reads_alike_with_the_kept_block);
    tcase_add_test(tc, shell_builds_fields_of_every_length_around_the_stack_buffer);
    tcase_add_test(tc, shell_inner_shells_keep_their_assignments);
    tcase_add_test(tc, shell_knows_its_wrappers_by_name);
    tcase_add_test(tc, shell_getenv_is_the_last_entry_of_the_env);
    suite_add_tcase(s, tc);
    return s;
}
