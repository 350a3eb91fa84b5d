/* test_shell.c -- the POSIX sh reader: variables, and the walk that hands each simple command to a
 * callback with its words expanded. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
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

Suite *tg_test_shell_suite(void);
Suite *tg_test_shell_suite(void)
{
    Suite *s = suite_create("shell");
    TCase *tc = tcase_create("walk");
    tcase_add_test(tc, shell_vars);
    tcase_add_test(tc, shell_walk_hands_over_each_simple_command);
    tcase_add_test(tc, shell_walk_words_reads_a_nested_script);
    tcase_add_test(tc, shell_walk_stops_where_sh_would);
    tcase_add_test(tc, shell_callback_error_ends_the_walk);
    suite_add_tcase(s, tc);
    return s;
}
