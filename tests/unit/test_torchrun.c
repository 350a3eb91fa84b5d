/* test_torchrun.c -- torchrun command lines (torchrun, python -m torch.distributed.run and
 * torch.distributed.launch) read through the container walk: the effective --nnodes and
 * --nproc-per-node with their sources (command line, PET_* env, torchrun's defaults). */
#include <check.h>
#include <jansson.h>
#include <string.h>

#include "tg/launch.h"

/* One container (JSON) and what its first torch launch must read. nnodes / nproc: "1:4" or "8"
 * for a known value, "?" for unknown; src: 'f' flag, 'e' PET_* env, 'd' default. */
struct tcase {
    const char *name;
    const char *container;
    size_t ntorch;
    const char *launcher;
    const char *nnodes;
    char nnodes_src;
    const char *nproc;
    char nproc_src;
    bool standalone;
    bool rdzv;
};

static const struct tcase cases[] = {
    {"torchrun with both flags (= form)",
     "{\"command\": [\"torchrun\", \"--nnodes=4\", \"--nproc_per_node=8\", \"train.py\"]}", 1,
     "torchrun", "4:4", 'f', "8", 'f', false, false},
    {"torchrun with the dash spelling and separate values",
     "{\"command\": [\"/usr/local/bin/torchrun\", \"--nnodes\", \"2:4\", \"--nproc-per-node\", "
     "\"gpu\", \"train.py\"]}",
     1, "torchrun", "2:4", 'f', "?", 'f', false, false},
    {"no flags: torchrun's defaults 1:1 and 1", "{\"command\": [\"torchrun\", \"train.py\"]}", 1,
     "torchrun", "1:1", 'd', "1", 'd', false, false},
    {"PET_NNODES and PET_NPROC_PER_NODE from the env when the flags are absent",
     "{\"command\": [\"torchrun\", \"train.py\"], \"env\": [{\"name\": \"PET_NNODES\", \"value\": "
     "\"3\"}, {\"name\": \"PET_NPROC_PER_NODE\", \"value\": \"4\"}]}",
     1, "torchrun", "3:3", 'e', "4", 'e', false, false},
    {"the command line wins over PET_NNODES",
     "{\"command\": [\"torchrun\", \"--nnodes=4\", \"train.py\"], \"env\": [{\"name\": "
     "\"PET_NNODES\", \"value\": \"2\"}]}",
     1, "torchrun", "4:4", 'f', "1", 'd', false, false},
    {"the later of two PET_NNODES entries wins (training-operator appends its own)",
     "{\"command\": [\"torchrun\", \"train.py\"], \"env\": [{\"name\": \"PET_NNODES\", \"value\": "
     "\"1\"}, {\"name\": \"PET_NNODES\", \"value\": \"4\"}]}",
     1, "torchrun", "4:4", 'e', "1", 'd', false, false},
    {"PET_NNODES from valueFrom is unknown",
     "{\"command\": [\"torchrun\", \"train.py\"], \"env\": [{\"name\": \"PET_NNODES\", "
     "\"valueFrom\": {\"fieldRef\": {\"fieldPath\": \"metadata.name\"}}}]}",
     1, "torchrun", "?", 'e', "1", 'd', false, false},
    {"--standalone is one node whatever --nnodes says",
     "{\"command\": [\"torchrun\", \"--standalone\", \"--nnodes=4\", \"--nproc_per_node=8\", "
     "\"t.py\"]}",
     1, "torchrun", "1:1", 'f', "8", 'f', true, false},
    {"python -m torch.distributed.run with a rendezvous endpoint",
     "{\"command\": [\"python\", \"-m\", \"torch.distributed.run\"], \"args\": [\"--nnodes=2:4\", "
     "\"--nproc_per_node=8\", \"--rdzv_backend=c10d\", \"--rdzv_endpoint=h:29400\", \"t.py\"]}",
     1, "python -m torch.distributed.run", "2:4", 'f', "8", 'f', false, true},
    {"python3 -u -m torch.distributed.launch inside bash -c",
     "{\"command\": [\"bash\", \"-c\", \"cd /w && python3 -u -m torch.distributed.launch "
     "--nnodes=4 --nproc_per_node=8 --node_rank=$RANK t.py\"]}",
     1, "python -m torch.distributed.launch", "4:4", 'f', "8", 'f', false, false},
    {"$NNODES from the container's literal env inside sh -c",
     "{\"command\": [\"sh\", \"-c\", \"torchrun --nnodes=$NNODES t.py\"], \"env\": [{\"name\": "
     "\"NNODES\", \"value\": \"2\"}]}",
     1, "torchrun", "2:2", 'f', "1", 'd', false, false},
    {"$(NNODES) Kubernetes expansion of an args item",
     "{\"command\": [\"torchrun\"], \"args\": [\"--nnodes=$(NNODES)\", \"t.py\"], \"env\": "
     "[{\"name\": \"NNODES\", \"value\": \"4\"}]}",
     1, "torchrun", "4:4", 'f', "1", 'd', false, false},
    {"$NUM_NODES set nowhere is unresolved",
     "{\"command\": [\"bash\", \"-c\", \"torchrun --nnodes=$NUM_NODES t.py\"]}", 1, "torchrun", "?",
     'f', "1", 'd', false, false},
    {"a script assignment before the line resolves it",
     "{\"command\": [\"bash\", \"-c\", \"N=3; torchrun --nnodes=$N --nproc-per-node=auto t.py\"]}",
     1, "torchrun", "3:3", 'f', "?", 'f', false, false},
    {"the training script's own --nnodes is not torchrun's",
     "{\"command\": [\"torchrun\", \"--nproc_per_node=8\", \"t.py\", \"--nnodes\", \"9\"]}", 1,
     "torchrun", "1:1", 'd', "8", 'f', false, false},
    {"--no-python takes no value: the program after it is the script",
     "{\"command\": [\"torchrun\", \"--no-python\", \"python3\", \"-c\", \"x\"]}", 1, "torchrun",
     "1:1", 'd', "1", 'd', false, false},
    {"two lines in one script",
     "{\"command\": [\"bash\", \"-c\", \"torchrun --nnodes=4 a.py && "
     "torchrun --nnodes=2 b.py\"]}",
     2, "torchrun", "4:4", 'f', "1", 'd', false, false},
    {"python running a script is not torchrun", "{\"command\": [\"python\", \"train.py\"]}", 0,
     NULL, NULL, 0, NULL, 0, false, false},
    {"python -m another module is not torchrun",
     "{\"command\": [\"python\", \"-m\", \"torch.utils.collect_env\", \"torchrun\"]}", 0, NULL,
     NULL, 0, NULL, 0, false, false},
    {"an invalid --nnodes value is not a count",
     "{\"command\": [\"torchrun\", \"--nnodes=4:2\", \"t.py\"]}", 1, "torchrun", "?", 'f', "1", 'd',
     false, false},
    {"names compared by length: --standalone=1 is no switch, --nnodesx another option",
     "{\"command\": [\"torchrun\", \"--standalone=1\", \"--nnodesx\", \"3\", \"--nnodes=2\", "
     "\"--nproc_per_nod\", \"4\", \"--nproc_per_node\", \"8\", \"--rdzv_backend=c10d\", "
     "\"t.py\", \"--nnodes\", \"9\"]}",
     1, "torchrun", "2:2", 'f', "8", 'f', false, true},
};

static char src_of(const struct tg_torch_opt *o)
{
    return !o->set ? 'd' : o->from_env ? 'e' : 'f';
}

START_TEST(torchrun_case)
{
    const struct tcase *c = &cases[_i];
    struct tg_launch l;
    json_error_t err;
    long long a, b;
    char buf[64];
    json_t *ctr = json_loads(c->container, 0, &err);
    ck_assert_msg(ctr != NULL, "%s: bad JSON: %s", c->name, err.text);
    tg_launch_init(&l);
    ck_assert_int_eq(tg_launch_parse_container(ctr, TG_MPI_OPENMPI, &l), 0);
    ck_assert_msg(l.ntorch == c->ntorch, "%s: %zu torch launches", c->name, l.ntorch);
    if (c->ntorch) {
        const struct tg_torchrun *r = &l.torch[0];
        ck_assert_str_eq(r->launcher, c->launcher);
        if (tg_torchrun_nnodes(r, &a, &b) == 1)
            snprintf(buf, sizeof(buf), "%lld:%lld", a, b);
        else
            snprintf(buf, sizeof(buf), "?");
        ck_assert_msg(!strcmp(buf, c->nnodes), "%s: nnodes %s", c->name, buf);
        ck_assert_msg(src_of(&r->nnodes) == c->nnodes_src, "%s: nnodes source %c", c->name,
                      src_of(&r->nnodes));
        if (tg_torchrun_nproc(r, &a) == 1)
            snprintf(buf, sizeof(buf), "%lld", a);
        else
            snprintf(buf, sizeof(buf), "?");
        ck_assert_msg(!strcmp(buf, c->nproc), "%s: nproc %s", c->name, buf);
        ck_assert_msg(src_of(&r->nproc) == c->nproc_src, "%s: nproc source", c->name);
        ck_assert_int_eq(r->standalone, c->standalone);
        ck_assert_int_eq(r->rdzv, c->rdzv);
    }
    tg_launch_release(&l);
    json_decref(ctr);
}
END_TEST

/* Both lines of one script are kept, in order. */
START_TEST(torchrun_keeps_every_line)
{
    struct tg_launch l;
    long long a, b;
    json_t *ctr = json_loads("{\"command\": [\"sh\", \"-c\", \"torchrun --nnodes=4 a.py; "
                             "torchrun --nnodes=2 b.py\"]}",
                             0, NULL);
    tg_launch_init(&l);
    ck_assert_int_eq(tg_launch_parse_container(ctr, TG_MPI_OPENMPI, &l), 0);
    ck_assert_uint_eq(l.ntorch, 2);
    ck_assert_int_eq(tg_torchrun_nnodes(&l.torch[1], &a, &b), 1);
    ck_assert_int_eq(a, 2);
    ck_assert_int_eq(l.torch[1].argv_index, 2);
    tg_launch_release(&l);
    json_decref(ctr);
}
END_TEST

/* The memo hands the readers of one command the same read; other words, or an emptied memo,
 * are read anew. */
START_TEST(torchrun_memo_reads_each_command_once)
{
    struct tg_sh_word w[] = {{"mpirun", true, NULL},   {"-np", true, NULL},      {"2", true, NULL},
                             {"torchrun", true, NULL}, {"--nnodes", true, NULL}, {"2", true, NULL},
                             {"t.py", true, NULL}};
    struct tg_sh_vars vs;
    tg_sh_vars_init(&vs);
    struct tg_sh_cmd cmd = {.words = w + 3, .nwords = 4, .vars = &vs, .line = 3};
    struct tg_torchrun_memo memo = {0};
    struct tg_torchrun a, b;
    ck_assert_int_eq(tg_torchrun_parse_memo(&memo, &cmd, &a), 1);
    ck_assert_ptr_eq(memo.words, w + 3);
    ck_assert_str_eq(a.nnodes.text, "2");
    ck_assert_uint_eq(a.script, 3);
    ck_assert_int_eq(a.line, 3);
    ck_assert_int_eq(tg_torchrun_parse_memo(&memo, &cmd, &b), 1);
    ck_assert_str_eq(b.launcher, a.launcher);
    ck_assert_str_eq(b.nnodes.text, a.nnodes.text);
    ck_assert(b.nnodes.set && b.nnodes.resolved && !b.nproc.set);
    ck_assert_uint_eq(b.script, a.script);
    ck_assert_int_eq(b.line, a.line);
    /* new words at the same place: read anew once the memo is emptied */
    w[5].text = "4";
    memo.words = NULL;
    ck_assert_int_eq(tg_torchrun_parse_memo(&memo, &cmd, &b), 1);
    ck_assert_str_eq(b.nnodes.text, "4");
    /* other words (the whole mpirun line): not torchrun, and not the memo's */
    cmd.words = w;
    cmd.nwords = 7;
    ck_assert_int_eq(tg_torchrun_parse_memo(&memo, &cmd, &b), 0);
    ck_assert_ptr_eq(memo.words, w);
    ck_assert_int_eq(memo.rc, 0);
    /* no memo: a plain read */
    cmd.words = w + 3;
    cmd.nwords = 4;
    ck_assert_int_eq(tg_torchrun_parse_memo(NULL, &cmd, &b), 1);
    ck_assert_str_eq(b.nnodes.text, "4");
    tg_sh_vars_release(&vs);
}
END_TEST

Suite *tg_test_torchrun_suite(void);
Suite *tg_test_torchrun_suite(void)
{
    Suite *s = suite_create("torchrun");
    TCase *tc = tcase_create("lines");
    tcase_add_loop_test(tc, torchrun_case, 0, (int)(sizeof(cases) / sizeof(cases[0])));
    tcase_add_test(tc, torchrun_keeps_every_line);
    tcase_add_test(tc, torchrun_memo_reads_each_command_once);
    suite_add_tcase(s, tc);
    return s;
}
