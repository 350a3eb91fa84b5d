/* test_mpirun.c -- the MPI launcher option grammar over already expanded words. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/mpirun.h"

/* Resolved words from strings; an item starting with '?' is unresolved, with that text. */
static size_t make_words(const char *const *in, struct tg_sh_word *out, size_t max)
{
    size_t n = 0;
    for (; in[n] && n < max; n++) {
        bool unresolved = in[n][0] == '?';
        out[n].text = (char *)in[n] + (unresolved ? 1 : 0);
        out[n].resolved = !unresolved;
        out[n].reason = unresolved ? "$NP is not set in the container env or script" : NULL;
    }
    return n;
}

static void parse(const char *const *in, enum tg_mpi_impl impl, struct tg_mpirun *run)
{
    struct tg_sh_word w[32];
    size_t n = make_words(in, w, 32);
    ck_assert_int_eq(tg_mpirun_parse(w, n, impl, run), 0);
}

START_TEST(mpirun_impl_names)
{
    enum tg_mpi_impl m;
    ck_assert_int_eq(tg_mpi_impl_parse(NULL, &m), 0);
    ck_assert_int_eq(m, TG_MPI_OPENMPI);
    ck_assert_int_eq(tg_mpi_impl_parse("Intel", &m), 0);
    ck_assert_int_eq(m, TG_MPI_INTEL);
    ck_assert_int_eq(tg_mpi_impl_parse("MPICH", &m), 0);
    ck_assert_str_eq(tg_mpi_impl_name(m), "MPICH");
    ck_assert_int_eq(tg_mpi_impl_parse("openmpi", &m), -EINVAL);
    ck_assert(tg_launcher_is_mpi("/opt/amazon/openmpi/bin/mpirun"));
    ck_assert(tg_launcher_is_mpi("mpiexec.hydra"));
    ck_assert(!tg_launcher_is_mpi("mpirun.sh"));
    ck_assert(!tg_launcher_is_mpi(""));
}
END_TEST

START_TEST(mpirun_reads_options_up_to_the_program)
{
    static const char *const in[] = {"/opt/amazon/openmpi/bin/mpirun",
                                     "-np",
                                     "16",
                                     "-N",
                                     "8",
                                     "-x",
                                     "FI_PROVIDER=efa",
                                     "-x",
                                     "NCCL_DEBUG",
                                     "all_reduce_perf",
                                     "-n",
                                     "50",
                                     "-x",
                                     "NOT_OURS",
                                     NULL};
    struct tg_mpirun run;
    parse(in, TG_MPI_OPENMPI, &run);
    ck_assert_str_eq(run.launcher, "mpirun");
    ck_assert(run.np.set && run.np.resolved);
    ck_assert_int_eq(run.np.value, 16);
    ck_assert(run.per_node.resolved);
    ck_assert_int_eq(run.per_node.value, 8);
    ck_assert_uint_eq(run.nfwd, 2);
    const struct tg_launch_fwd *f = tg_mpirun_find_fwd(&run, "FI_PROVIDER");
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(f->value, "efa");
    ck_assert(f->value_resolved);
    f = tg_mpirun_find_fwd(&run, "NCCL_DEBUG");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_null(f->value);
    ck_assert_ptr_null(tg_mpirun_find_fwd(&run, "NOT_OURS"));
    ck_assert(!tg_mpirun_forwards_all(&run));
    ck_assert_uint_eq(run.nenv, 0); /* the environment is the caller's to set */
    tg_mpirun_release(&run);
}
END_TEST

START_TEST(mpirun_unresolved_count_keeps_the_reason)
{
    static const char *const in[] = {"mpirun", "-np", "?$NP", "./a", NULL};
    struct tg_mpirun run;
    parse(in, TG_MPI_OPENMPI, &run);
    ck_assert(run.np.set);
    ck_assert(!run.np.resolved);
    ck_assert_str_eq(run.np.text, "$NP");
    ck_assert_ptr_nonnull(strstr(run.np.reason, "$NP is not set"));
    tg_mpirun_release(&run);

    static const char *const bad[] = {"mpirun", "-np", "-1", "./a", NULL};
    parse(bad, TG_MPI_OPENMPI, &run);
    ck_assert(run.np.set && !run.np.resolved);
    ck_assert_ptr_nonnull(strstr(run.np.reason, "is not a process count"));
    tg_mpirun_release(&run);
}
END_TEST

START_TEST(mpirun_hydra_grammar_and_forwarding)
{
    static const char *const in[] = {"mpiexec.hydra", "-n",  "4",         "-ppn", "2", "-genv",
                                     "FI_PROVIDER",   "efa", "-genvnone", "./a",  NULL};
    struct tg_mpirun run;
    parse(in, TG_MPI_INTEL, &run);
    ck_assert_int_eq(run.np.value, 4);
    ck_assert_int_eq(run.per_node.value, 2);
    ck_assert(run.forward_none);
    ck_assert(!tg_mpirun_forwards_all(&run));
    ck_assert_str_eq(tg_mpirun_find_fwd(&run, "FI_PROVIDER")->value, "efa");
    tg_mpirun_release(&run);

    /* hydra passes the launcher's whole environment by default; Open MPI does not */
    static const char *const plain[] = {"mpirun", "-n", "2", "./a", NULL};
    parse(plain, TG_MPI_MPICH, &run);
    ck_assert(tg_mpirun_forwards_all(&run));
    tg_mpirun_release(&run);
    parse(plain, TG_MPI_OPENMPI, &run);
    ck_assert(!tg_mpirun_forwards_all(&run));
    tg_mpirun_release(&run);
}
END_TEST

START_TEST(mpirun_mpmd_sums_the_contexts)
{
    static const char *const in[] = {"mpirun", "-np", "2", "./a", ":", "-np", "3", "./b", NULL};
    struct tg_mpirun run;
    parse(in, TG_MPI_OPENMPI, &run);
    ck_assert(run.mpmd);
    ck_assert(run.np.resolved);
    ck_assert_int_eq(run.np.value, 5);
    tg_mpirun_release(&run);
}
END_TEST

START_TEST(mpirun_env_and_the_mca_env_list)
{
    static const char *const in[] = {"mpirun", "-np", "2", "./a", NULL};
    static const char list[] = "OMPI_MCA_mca_base_env_list=ignored";
    struct tg_sh_env_var vars[] = {
        {"A", 1, "1"},
        {"OMPI_MCA_mca_base_env_list", 26, " X ; Y=1;;bad-name"},
        {"B", 1, NULL},
        {list, 26, "Z"}, /* a NAME=VALUE word: the name is not NUL-terminated; the last wins */
    };
    struct tg_sh_env env = {vars, 4};
    struct tg_mpirun run;
    parse(in, TG_MPI_OPENMPI, &run);
    ck_assert_int_eq(tg_mpirun_set_env(&run, &env), 0);
    ck_assert_uint_eq(run.nenv, 3);
    ck_assert(tg_mpirun_env_has(&run, "A"));
    ck_assert(tg_mpirun_env_has(&run, "B"));
    ck_assert(tg_mpirun_env_has(&run, "OMPI_MCA_mca_base_env_list"));
    ck_assert_uint_eq(run.nfwd, 1);
    ck_assert_ptr_nonnull(tg_mpirun_find_fwd(&run, "Z"));
    tg_mpirun_release(&run);

    /* only the first list: X (launcher's value) and Y=1; a bad name is skipped */
    env.n = 3;
    parse(in, TG_MPI_OPENMPI, &run);
    ck_assert_int_eq(tg_mpirun_set_env(&run, &env), 0);
    ck_assert_uint_eq(run.nfwd, 2);
    ck_assert_ptr_null(tg_mpirun_find_fwd(&run, "X")->value);
    ck_assert_str_eq(tg_mpirun_find_fwd(&run, "Y")->value, "1");
    tg_mpirun_release(&run);

    /* hydra does not read Open MPI's list */
    parse(in, TG_MPI_INTEL, &run);
    ck_assert_int_eq(tg_mpirun_set_env(&run, &env), 0);
    ck_assert_uint_eq(run.nfwd, 0);
    tg_mpirun_release(&run);
}
END_TEST

/* Options are found by their length and bytes: --opt=value only for long options that take one
 * value, and a near name is an unknown option. */
START_TEST(mpirun_finds_options_by_name_and_length)
{
    struct tg_mpirun run;
    const char *const a[] = {"mpirun", "--np=4", "--map-by=ppr:2:node", "-npernod", "--mca=x",
                             "./a",    NULL};
    parse(a, TG_MPI_OPENMPI, &run);
    ck_assert(run.np.resolved);
    ck_assert_int_eq(run.np.value, 4);
    ck_assert(run.per_node.resolved);
    ck_assert_int_eq(run.per_node.value, 2);
    ck_assert_str_eq(run.note, "unknown OpenMPI option -npernod read as a flag");
    ck_assert_uint_eq(run.prog, 5);
    tg_mpirun_release(&run);
    const char *const b[] = {"mpirun", "-np=4", "-x", "A=1", "./a", NULL};
    parse(b, TG_MPI_OPENMPI, &run);
    ck_assert(!run.np.set); /* -np=4: a short option takes no =value */
    ck_assert_str_eq(run.note, "unknown OpenMPI option -np=4 read as a flag");
    ck_assert_ptr_nonnull(tg_mpirun_find_fwd(&run, "A"));
    tg_mpirun_release(&run);
    const char *const c[] = {"mpiexec", "-ppn", "2", "-genvall", "-n", "8", "./a", NULL};
    parse(c, TG_MPI_INTEL, &run);
    ck_assert_int_eq(run.np.value, 8);
    ck_assert_int_eq(run.per_node.value, 2);
    ck_assert(run.forward_all);
    ck_assert_str_eq(run.note, "");
    tg_mpirun_release(&run);
}
END_TEST

/* The option index of each grammar finds the first and last options of its table, and the
 * --opt=value form only for an option that takes one value. */
START_TEST(mpirun_index_finds_every_table_end)
{
    struct tg_mpirun run;
    const char *const a[] = {"mpirun",        "--version", "-np", "3",
                             "--prefix=/opt", "--mca=x",   "./a", NULL};
    parse(a, TG_MPI_OPENMPI, &run);
    ck_assert_int_eq(run.np.value, 3);
    ck_assert_str_eq(run.note, "unknown OpenMPI option --mca=x read as a flag");
    ck_assert_uint_eq(run.prog, 6);
    tg_mpirun_release(&run);
    const char *const b[] = {"mpiexec", "--help", "-n", "5", "-genvnone", "-nosuch", "./a", NULL};
    parse(b, TG_MPI_MPICH, &run);
    ck_assert_int_eq(run.np.value, 5);
    ck_assert(run.forward_none);
    ck_assert_str_eq(run.note, "unknown MPICH option -nosuch read as a flag");
    tg_mpirun_release(&run);
    const char *const c[] = {
        "horovodrun", "--prefix-output-with-timestamp", "--num-proc=6", "--slots", "2", "python",
        NULL};
    parse(c, TG_MPI_OPENMPI, &run);
    ck_assert_int_eq(run.np.value, 6);
    ck_assert_int_eq(run.per_node.value, 2);
    ck_assert_str_eq(run.note, "");
    ck_assert_uint_eq(run.prog, 5);
    tg_mpirun_release(&run);
}
END_TEST

/* The forwarded list keeps every variable in order across its growth (it doubles past 8, 16),
 * and a name given again replaces the value (a value by another, a value by none) without a new
 * entry. */
START_TEST(mpirun_forwarded_list_grows)
{
    for (size_t want = 7; want <= 18; want++) {
        const char *in[48];
        char names[18][8];
        size_t n = 0;
        in[n++] = "mpirun";
        for (size_t i = 0; i < want; i++) {
            names[i][0] = 'V';
            names[i][1] = (char)('A' + i);
            names[i][2] = '\0';
            in[n++] = "-x";
            in[n++] = names[i];
        }
        in[n++] = "-x";
        in[n++] = "VA=again";
        in[n++] = "-x";
        in[n++] = "VB=b";
        in[n++] = "-x";
        in[n++] = "VB"; /* a value given, then none */
        in[n++] = "./a";
        in[n] = NULL;
        struct tg_sh_word w[48];
        size_t nw = 0;
        for (; in[nw]; nw++)
            w[nw] = (struct tg_sh_word){.text = (char *)in[nw], .resolved = true};
        struct tg_mpirun run;
        ck_assert_int_eq(tg_mpirun_parse(w, nw, TG_MPI_OPENMPI, &run), 0);
        ck_assert_uint_eq(run.nfwd, want);
        for (size_t i = 0; i < want; i++)
            ck_assert_str_eq(run.fwd[i].name, names[i]);
        ck_assert_str_eq(run.fwd[0].value, "again");
        ck_assert(run.fwd[0].value_resolved);
        ck_assert_ptr_null(run.fwd[1].value);
        ck_assert(!run.fwd[1].value_resolved);
        ck_assert_ptr_null(run.fwd[want - 1].value);
        tg_mpirun_release(&run);
    }
}
END_TEST

/* The names and values of the forwarded variables and the env names are carved from blocks the
 * run holds: values longer than a block, many short names over several blocks, names that share
 * their first byte, and a name given again all read back as given. */
START_TEST(mpirun_strings_span_blocks)
{
    char longval[600];
    memset(longval, 'v', sizeof(longval) - 1);
    memcpy(longval, "FI_LONG=", 8);
    longval[sizeof(longval) - 1] = '\0';
    const char *in[80];
    char names[30][12];
    size_t n = 0;
    in[n++] = "mpirun";
    for (size_t i = 0; i < 30; i++) {
        snprintf(names[i], sizeof(names[i]), "FI_%02zu=%zu", i, i * 7);
        in[n++] = "-x";
        in[n++] = names[i];
    }
    in[n++] = "-x";
    in[n++] = longval;
    in[n++] = "-x";
    in[n++] = "FI_03=again";
    in[n++] = "./a";
    in[n] = NULL;
    struct tg_sh_word w[80];
    size_t nw = 0;
    for (; in[nw]; nw++)
        w[nw] = (struct tg_sh_word){.text = (char *)in[nw], .resolved = true};
    struct tg_mpirun run;
    ck_assert_int_eq(tg_mpirun_parse(w, nw, TG_MPI_OPENMPI, &run), 0);
    ck_assert_uint_eq(run.nfwd, 31);
    for (size_t i = 0; i < 30; i++) {
        char name[8], value[8];
        snprintf(name, sizeof(name), "FI_%02zu", i);
        snprintf(value, sizeof(value), "%zu", i * 7);
        const struct tg_launch_fwd *f = tg_mpirun_find_fwd(&run, name);
        ck_assert_ptr_eq(f, &run.fwd[i]);
        ck_assert_str_eq(f->value, i == 3 ? "again" : value);
    }
    const struct tg_launch_fwd *f = tg_mpirun_find_fwd(&run, "FI_LONG");
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(f->value, longval + 8);
    ck_assert_ptr_null(tg_mpirun_find_fwd(&run, "FI_"));
    ck_assert_ptr_null(tg_mpirun_find_fwd(&run, "GI_00"));
    /* env names: each once, over blocks too */
    struct tg_sh_env_var vars[40];
    char envn[40][16];
    for (size_t i = 0; i < 40; i++) {
        snprintf(envn[i], sizeof(envn[i]), "ENV_NAME_%02zuXY", i % 35);
        vars[i] = (struct tg_sh_env_var){.name = envn[i], .namelen = 11, .value = "x"};
    }
    struct tg_sh_env env = {.v = vars, .n = 40};
    ck_assert_int_eq(tg_mpirun_set_env(&run, &env), 0);
    ck_assert_uint_eq(run.nenv, 35);
    for (size_t i = 0; i < 35; i++) {
        char want[16];
        snprintf(want, sizeof(want), "ENV_NAME_%02zu", i);
        ck_assert_str_eq(run.env[i], want);
        ck_assert(tg_mpirun_env_has(&run, want));
    }
    tg_mpirun_release(&run);
    ck_assert_ptr_null(run.strings);
    ck_assert_uint_eq(run.nfwd, 0);
}
END_TEST

/* -x takes a NAME (a letter or '_', then letters, digits, '_'; ASCII only, as the C locale's
 * isalpha/isalnum) with or without a value; any other word forwards nothing. */
START_TEST(mpirun_forwarded_names_are_names)
{
    static const char *const in[] = {"mpirun", "-x", "_A1=1", "-x",  "Ab9_", "-x",        "z",
                                     "-x",     "1A", "-x",    "A-B", "-x",   "\xc3\xa9T", "-x",
                                     "=v",     "-x", "A B",   "-x",  "_",    "./a",       NULL};
    struct tg_mpirun run;
    parse(in, TG_MPI_OPENMPI, &run);
    ck_assert_uint_eq(run.nfwd, 4);
    ck_assert_str_eq(run.fwd[0].name, "_A1");
    ck_assert_str_eq(run.fwd[0].value, "1");
    ck_assert_str_eq(run.fwd[1].name, "Ab9_");
    ck_assert_str_eq(run.fwd[2].name, "z");
    ck_assert_str_eq(run.fwd[3].name, "_");
    tg_mpirun_release(&run);
}
END_TEST

Suite *tg_test_mpirun_suite(void);
Suite *tg_test_mpirun_suite(void)
{
    Suite *s = suite_create("mpirun");
    TCase *tc = tcase_create("grammar");
    tcase_add_test(tc, mpirun_impl_names);
    tcase_add_test(tc, mpirun_reads_options_up_to_the_program);
    tcase_add_test(tc, mpirun_unresolved_count_keeps_the_reason);
    tcase_add_test(tc, mpirun_hydra_grammar_and_forwarding);
    tcase_add_test(tc, mpirun_mpmd_sums_the_contexts);
    tcase_add_test(tc, mpirun_env_and_the_mca_env_list);
    tcase_add_test(tc, mpirun_finds_options_by_name_and_length);
    tcase_add_test(tc, mpirun_index_finds_every_table_end);
    tcase_add_test(tc, mpirun_forwarded_list_grows);
    tcase_add_test(tc, mpirun_strings_span_blocks);
    tcase_add_test(tc, mpirun_forwarded_names_are_names);
    suite_add_tcase(s, tc);
    return s;
}
