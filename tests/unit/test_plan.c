/* test_plan.c -- the plan reader: launch lines of Megatron, Megatron-DeepSpeed, NeMo 1 and 2,
 * Hugging Face Trainer and DeepSpeed through the container walk (Kubernetes expansion, the shell,
 * the launchers), and what each plan value is read as. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "tg/launch.h"
#include "tg/plan_args.h"

/* Expected value: NULL not checked; "-" absent; "?" unknown (with a reason); "auto"; "8" set;
 * "=8" set from a default (its source names no flag). */
struct pv {
    const char *tp, *pp, *cp, *ep, *etp, *sp, *micro, *gbs, *accum, *nodes, *devices;
};

struct pcase {
    const char *name;
    const char *container; /* JSON */
    int nplans;
    int plan; /* which plan is checked */
    enum tg_plan_fw fw;
    const char *launcher; /* "mpi", "deepspeed", "accelerate", "nemo", "direct" */
    struct pv v;
    const char *ds;    /* DeepSpeed JSON "train/micro/gas" as values above, e.g. "128/4/2" */
    const char *extra; /* other checks, see check_extra */
};

static const struct pcase cases[] = {
    {.name = "Megatron flags in both spellings on python pretrain_gpt.py",
     .container = "{\"command\": [\"python\", \"-u\", \"/workspace/Megatron-LM/pretrain_gpt.py\","
                  " \"--tensor-model-parallel-size\", \"8\", \"--pipeline-model-parallel-size=4\","
                  " \"--micro-batch-size\", \"1\", \"--global-batch-size\", \"64\"]}",
     .nplans = 1,
     .fw = TG_PLAN_FW_MEGATRON,
     .launcher = "direct",
     .v = {.tp = "8", .pp = "4", .cp = "=1", .ep = "=1", .etp = "-", .micro = "1", .gbs = "64"},
     .extra = "program=pretrain_gpt.py"},
    {.name = "a bash script with variables, field splitting and an array",
     .container =
         "{\"command\": [\"bash\", \"-c\"], \"args\": [\"TP=2\\nPP=4\\n"
         "PAR=\\\"--tensor-model-parallel-size $TP --pipeline-model-parallel-size $PP\\\"\\n"
         "BATCH=(--micro-batch-size 2 --global-batch-size 256 --rampup-batch-size 16 16 100)\\n"
         "python3 pretrain_gpt.py $PAR ${BATCH[@]} --decrease-batch-size-if-needed "
         "--context-parallel-size=2 --expert-model-parallel-size 4 "
         "--expert-tensor-parallel-size 1\"]}",
     .nplans = 1,
     .fw = TG_PLAN_FW_MEGATRON,
     .v = {.tp = "2", .pp = "4", .cp = "2", .ep = "4", .etp = "1", .micro = "2", .gbs = "256"},
     .extra = "decrease rampup=16"},
    {.name = "an unset variable leaves that value unknown, the others read",
     .container =
         "{\"command\": [\"bash\", \"-c\", \"python pretrain_gpt.py "
         "--tensor-model-parallel-size 8 --global-batch-size $GBS --micro-batch-size 1\"]}",
     .nplans = 1,
     .fw = TG_PLAN_FW_MEGATRON,
     .v = {.tp = "8", .gbs = "?", .micro = "1"}},
    {.name = "an unknown word where flags stand makes every absent value unknown",
     .container = "{\"command\": [\"bash\", \"-c\", \"python pretrain_gpt.py $MODEL_ARGS "
                  "--micro-batch-size 1\"]}",
     .nplans = 1,
     .fw = TG_PLAN_FW_MEGATRON,
     .v = {.tp = "?", .pp = "?", .cp = "?", .micro = "1", .gbs = "?"}},
    {.name = "$(VAR) from the container env and valueFrom",
     .container =
         "{\"env\": [{\"name\": \"TP\", \"value\": \"4\"}, {\"name\": \"PP\", "
         "\"valueFrom\": {\"configMapKeyRef\": {\"name\": \"c\", \"key\": \"pp\"}}}],"
         " \"command\": [\"python\", \"pretrain_gpt.py\", "
         "\"--tensor-model-parallel-size=$(TP)\", \"--pipeline-model-parallel-size=$(PP)\"]}",
     .nplans = 1,
     .fw = TG_PLAN_FW_MEGATRON,
     .v = {.tp = "4", .pp = "?"},
     .extra = "why:pp=valueFrom"},
    {.name = "Megatron --yaml-cfg: what the line does not say is in the file",
     .container = "{\"command\": [\"python\", \"pretrain_gpt.py\", \"--yaml-cfg\", \"/c/gpt.yaml\","
                  " \"--micro-batch-size\", \"2\"]}",
     .nplans = 1,
     .fw = TG_PLAN_FW_MEGATRON,
     .v = {.tp = "?", .pp = "?", .micro = "2", .gbs = "?"}},
    {.name = "Megatron v1 --model-parallel-size and --batch-size",
     .container =
         "{\"command\": [\"python\", \"-m\", \"pretrain_gpt2\", \"--model-parallel-size\", "
         "\"2\", \"--batch-size\", \"8\"]}",
     .nplans = 1,
     .fw = TG_PLAN_FW_MEGATRON,
     .v = {.tp = "2", .micro = "8", .gbs = "-"},
     .extra = "v1"},
    {.name = "NeMo 1 overrides under mpirun, with + and ++ prefixes",
     .container =
         "{\"command\": [\"mpirun\", \"-np\", \"16\", \"--bind-to\", \"none\", \"python3\","
         " \"/opt/NeMo/examples/nlp/language_modeling/megatron_gpt_pretraining.py\","
         " \"trainer.devices=8\", \"trainer.num_nodes=2\", "
         "\"model.tensor_model_parallel_size=4\", \"++model.context_parallel_size=2\","
         " \"+model.expert_model_parallel_size='2'\", \"model.global_batch_size=32\","
         " \"trainer.accumulate_grad_batches=1\"]}",
     .nplans = 1,
     .fw = TG_PLAN_FW_NEMO1,
     .launcher = "mpi",
     .v = {.tp = "4",
           .pp = "=1",
           .cp = "2",
           .ep = "2",
           .micro = "=4",
           .gbs = "32",
           .accum = "1",
           .nodes = "2",
           .devices = "8"},
     .extra = "megatron_model"},
    {.name = "NeMo 1 Launcher: python with --config-path and one override",
     .container = "{\"command\": [\"python\", \"/opt/NeMo/examples/nlp/language_modeling/"
                  "megatron_gpt_pretraining.py\", \"--config-path=/config\", \"--config-name\","
                  " \"config.yaml\", \"model.tensor_model_parallel_size=8\"]}",
     .nplans = 1,
     .fw = TG_PLAN_FW_NEMO1,
     .v = {.tp = "8", .pp = "?", .cp = "?", .micro = "?", .gbs = "?", .devices = "?"}},
    {.name = "NeMo 2 CLI: the recipe hides what is not overridden",
     .container =
         "{\"command\": [\"nemo\", \"llm\", \"pretrain\", \"--factory\", \"llama3_8b\", "
         "\"-y\", \"trainer.num_nodes=1\", \"trainer.devices=8\", "
         "\"trainer.strategy.tensor_model_parallel_size=2\", \"data.global_batch_size=16\"]}",
     .nplans = 1,
     .fw = TG_PLAN_FW_NEMO2,
     .launcher = "nemo",
     .v =
         {.tp = "2", .pp = "?", .cp = "?", .micro = "?", .gbs = "16", .nodes = "1", .devices = "8"},
     .extra = "recipe=llama3_8b"},
    {.name = "Megatron-DeepSpeed under the DeepSpeed launcher with a here-document JSON",
     .container = "{\"workingDir\": \"/w\", \"command\": [\"bash\", \"-c\", \"GBS=16\\n"
                  "mkdir -p /fsx/r && cd /fsx/r\\n"
                  "cat <<EOF > ds_config.json\\n{\\\"train_batch_size\\\": $GBS, "
                  "\\\"train_micro_batch_size_per_gpu\\\": 2}\\nEOF\\n"
                  "deepspeed --hostfile /etc/mpi/hostfile --launcher openmpi --num_nodes 2 "
                  "--num_gpus=8 /w/pretrain_gpt.py --tensor-model-parallel-size 4 "
                  "--ds-sequence-parallel-size 2 --deepspeed --deepspeed_config ds_config.json\"]}",
     .nplans = 1,
     .fw = TG_PLAN_FW_MEGATRON_DS,
     .launcher = "deepspeed",
     .v = {.tp = "4", .sp = "2", .pp = "=1"},
     .ds = "16/2/-",
     .extra = "ds_nodes=2 ds_gpus=8 hostfile=/etc/mpi/hostfile"},
    {.name = "a relative DeepSpeed JSON path against workingDir, the file written before",
     .container =
         "{\"workingDir\": \"/workspace/mds\", \"command\": [\"bash\", \"-c\", "
         "\"DS=./tmp/ds.json\\ncat <<'EOT' > $DS\\n{\\\"train_batch_size\\\": \\\"auto\\\"}"
         "\\nEOT\\npython pretrain_gpt.py --deepspeed_config=tmp/../tmp/ds.json "
         "--micro-batch-size 1\"]}",
     .nplans = 1,
     .fw = TG_PLAN_FW_MEGATRON_DS,
     .ds = "auto/-/-"},
    {.name = "a DeepSpeed JSON the script did not write is unknown",
     .container = "{\"command\": [\"deepspeed\", \"--num_gpus\", \"8\", \"train.py\", "
                  "\"--deepspeed\", \"--deepspeed_config\", \"/etc/ds/ds.json\"]}",
     .nplans = 1,
     .fw = TG_PLAN_FW_DEEPSPEED,
     .launcher = "deepspeed",
     .ds = "?/?/?"},
    {.name = "accelerate launch with hyphens, HF flags and an inline --deepspeed JSON",
     .container = "{\"command\": [\"bash\", \"-c\", \"accelerate launch --num-processes=16 "
                  "--num_machines 2 --machine_rank \\\"$RANK\\\" --multi_gpu run_clm.py "
                  "--per_device_train_batch_size 4 --gradient_accumulation_steps 2 --deepspeed "
                  "'{\\\"train_batch_size\\\": 128, \\\"train_micro_batch_size_per_gpu\\\": "
                  "\\\"auto\\\", \\\"gradient_accumulation_steps\\\": 2}'\"]}",
     .nplans = 1,
     .fw = TG_PLAN_FW_HF,
     .launcher = "accelerate",
     .v = {.micro = "4", .accum = "2"},
     .ds = "128/auto/2",
     .extra = "acc_procs=16 acc_machines=2 program=run_clm.py"},
    {.name = "HF without --per_device_train_batch_size: the script's default is unknown",
     .container = "{\"command\": [\"python\", \"train.py\", \"--gradient-accumulation-steps=4\"]}",
     .nplans = 1,
     .fw = TG_PLAN_FW_HF,
     .v = {.micro = "?", .accum = "4"}},
    {.name = "a program without plan flags under a launcher is kept (for the world size)",
     .container = "{\"command\": [\"deepspeed\", \"--num_gpus\", \"4\", \"train.py\", \"--lr\", "
                  "\"1e-4\"]}",
     .nplans = 1,
     .fw = TG_PLAN_FW_NONE,
     .launcher = "deepspeed"},
    {.name = "torchrun: its options end where the script starts",
     .container =
         "{\"command\": [\"torchrun\", \"--nnodes=2\", \"--nproc_per_node\", \"8\", "
         "\"--rdzv_backend\", \"c10d\", \"pretrain_gpt.py\", \"--micro-batch-size\", \"1\", "
         "\"--nnodes\", \"9\"]}",
     .nplans = 1,
     .fw = TG_PLAN_FW_MEGATRON,
     .launcher = "torch",
     .v = {.micro = "1"},
     .extra = "torch_nnodes=2 torch_nproc=8 program=pretrain_gpt.py"},
    {.name = "python -m torch.distributed.launch with Megatron v1 flags",
     .container =
         "{\"command\": [\"python\", \"-m\", \"torch.distributed.launch\", "
         "\"--nproc_per_node\", \"8\", \"pretrain_gpt2.py\", \"--model-parallel-size\", \"2\"]}",
     .nplans = 1,
     .fw = TG_PLAN_FW_MEGATRON,
     .launcher = "torch",
     .v = {.tp = "2"},
     .extra = "torch_nproc=8"},
    {.name = "each mpirun rank runs torchrun",
     .container =
         "{\"command\": [\"mpirun\", \"-np\", \"8\", \"-N\", \"1\", \"torchrun\", "
         "\"--nproc_per_node\", \"8\", \"pretrain_gpt.py\", \"--tensor-model-parallel-size\", "
         "\"8\"]}",
     .nplans = 1,
     .fw = TG_PLAN_FW_MEGATRON,
     .launcher = "mpi",
     .v = {.tp = "8"},
     .extra = "torch_nproc=8"},
    {.name = "torchrun without a script is no plan",
     .container = "{\"command\": [\"torchrun\", \"--nnodes\", \"2\", \"--nproc_per_node\", \"8\"]}",
     .nplans = 0},
    {.name = "a plain python script without plan flags is no plan",
     .container = "{\"command\": [\"python\", \"train.py\", \"--batch\", \"4\"]}",
     .nplans = 0},
    {.name = "mpirun's own options are not the program's; MPMD is not read",
     .container = "{\"command\": [\"bash\", \"-c\", \"mpirun -np 2 hostname\\n"
                  "mpirun -np 4 --micro-batch-size 9 python pretrain_gpt.py --micro-batch-size 2\\n"
                  "mpirun -np 1 python a.py --micro-batch-size 1 : -np 1 python b.py\"]}",
     .nplans = 2,
     .plan = 1,
     .fw = TG_PLAN_FW_MEGATRON,
     .launcher = "mpi",
     .v = {.micro = "2"}},
};

static void check_value(const char *name, const char *what, const struct tg_plan_value *v,
                        const char *want)
{
    if (!want)
        return;
    if (!strcmp(want, "-")) {
        ck_assert_msg(v->state == TG_PV_ABSENT, "%s: %s state %d, want absent", name, what,
                      v->state);
    } else if (!strcmp(want, "?")) {
        ck_assert_msg(v->state == TG_PV_UNKNOWN && v->why[0], "%s: %s state %d, want unknown", name,
                      what, v->state);
    } else if (!strcmp(want, "auto")) {
        ck_assert_msg(v->state == TG_PV_AUTO, "%s: %s state %d, want auto", name, what, v->state);
    } else {
        bool dflt = want[0] == '=';
        ck_assert_msg(v->state == TG_PV_SET, "%s: %s state %d (%s), want set", name, what, v->state,
                      v->why);
        ck_assert_msg(v->value == atoll(want + dflt), "%s: %s is %lld, want %s", name, what,
                      v->value, want);
        ck_assert_msg(dflt == (strstr(v->src, "default") != NULL), "%s: %s source '%s'", name, what,
                      v->src);
    }
}

static void check_ds(const struct pcase *c, const struct tg_plan *p)
{
    char want[64];
    if (!c->ds)
        return;
    ck_assert_msg(p->dscfg.given, "%s: no DeepSpeed config", c->name);
    snprintf(want, sizeof(want), "%s", c->ds);
    char *micro = strchr(want, '/');
    char *gas = strchr(micro + 1, '/');
    *micro++ = '\0';
    *gas++ = '\0';
    check_value(c->name, "train_batch_size", &p->dscfg.train, want);
    check_value(c->name, "train_micro_batch_size_per_gpu", &p->dscfg.micro, micro);
    check_value(c->name, "gradient_accumulation_steps", &p->dscfg.gas, gas);
}

static void check_launcher(const struct pcase *c, const struct tg_plan *p)
{
    if (!c->launcher)
        return;
    bool ok = !strcmp(c->launcher, "mpi")          ? p->mpi
              : !strcmp(c->launcher, "deepspeed")  ? p->deepspeed
              : !strcmp(c->launcher, "accelerate") ? p->accelerate
              : !strcmp(c->launcher, "nemo")       ? p->nemo_cli
              : !strcmp(c->launcher, "torch")      ? p->torch && !p->mpi
                                                   : p->direct;
    ck_assert_msg(ok, "%s: launcher is not %s", c->name, c->launcher);
}

/* extra: space-separated checks: program=X decrease rampup=N v1 megatron_model recipe=X
 * ds_nodes=N ds_gpus=N hostfile=P acc_procs=N acc_machines=N why:VALUE=TEXT */
static void check_extra(const struct pcase *c, const struct tg_plan *p)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", c->extra ? c->extra : "");
    for (char *save, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(t, '=');
        const char *val = eq ? eq + 1 : "";
        if (!strncmp(t, "program=", 8))
            ck_assert_str_eq(p->program, val);
        else if (!strcmp(t, "decrease"))
            ck_assert(p->decrease_if_needed);
        else if (!strncmp(t, "rampup=", 7))
            check_value(c->name, "rampup", &p->rampup, val);
        else if (!strcmp(t, "v1"))
            ck_assert(p->v1_batch);
        else if (!strcmp(t, "megatron_model"))
            ck_assert(p->megatron_model);
        else if (!strncmp(t, "recipe=", 7))
            ck_assert_str_eq(p->recipe, val);
        else if (!strncmp(t, "ds_nodes=", 9))
            check_value(c->name, "--num_nodes", &p->ds.num_nodes, val);
        else if (!strncmp(t, "ds_gpus=", 8))
            check_value(c->name, "--num_gpus", &p->ds.num_gpus, val);
        else if (!strncmp(t, "hostfile=", 9))
            ck_assert_str_eq(p->ds.hostfile, val);
        else if (!strncmp(t, "acc_procs=", 10))
            check_value(c->name, "--num_processes", &p->acc.num_processes, val);
        else if (!strncmp(t, "acc_machines=", 13))
            check_value(c->name, "--num_machines", &p->acc.num_machines, val);
        else if (!strncmp(t, "torch_nnodes=", 13))
            ck_assert(p->torch && !strcmp(p->tr.nnodes.text, val));
        else if (!strncmp(t, "torch_nproc=", 12))
            ck_assert(p->torch && !strcmp(p->tr.nproc.text, val));
        else if (!strncmp(t, "why:pp=", 7))
            ck_assert_msg(strstr(p->pp.why, val), "%s: pp why '%s'", c->name, p->pp.why);
        else
            ck_abort_msg("%s: unknown check %s", c->name, t);
    }
}

START_TEST(plan_reads_the_launch_line)
{
    const struct pcase *c = &cases[_i];
    json_error_t err;
    json_t *ctr = json_loads(c->container, 0, &err);
    ck_assert_msg(ctr != NULL, "%s: %s", c->name, err.text);
    struct tg_launch l;
    tg_launch_init(&l);
    ck_assert_int_eq(tg_launch_parse_container(ctr, TG_MPI_OPENMPI, &l), 0);
    ck_assert_msg(l.nplans == (size_t)c->nplans, "%s: %zu plans, want %d", c->name, l.nplans,
                  c->nplans);
    if (c->nplans) {
        const struct tg_plan *p = &l.plans[c->plan];
        const struct pv *v = &c->v;
        ck_assert_msg(p->fw == c->fw, "%s: framework %d, want %d", c->name, p->fw, c->fw);
        check_launcher(c, p);
        check_value(c->name, "tp", &p->tp, v->tp);
        check_value(c->name, "pp", &p->pp, v->pp);
        check_value(c->name, "cp", &p->cp, v->cp);
        check_value(c->name, "ep", &p->ep, v->ep);
        check_value(c->name, "etp", &p->etp, v->etp);
        check_value(c->name, "ds_sp", &p->ds_sp, v->sp);
        check_value(c->name, "micro", &p->micro, v->micro);
        check_value(c->name, "gbs", &p->gbs, v->gbs);
        check_value(c->name, "accum", &p->accum, v->accum);
        check_value(c->name, "nodes", &p->nodes, v->nodes);
        check_value(c->name, "devices", &p->devices, v->devices);
        check_ds(c, p);
        check_extra(c, p);
    }
    tg_launch_release(&l);
    json_decref(ctr);
}
END_TEST

/* tg_plan_value_read keeps what snprintf into its buffers kept: the value's text (47 bytes, the
 * quotes of '4' taken off) is what is read as a number, and the source is cut at 95 bytes. */
START_TEST(plan_value_read_cuts_as_snprintf_did)
{
    struct tg_sh_word w = {.resolved = true};
    char value[128], want[160];
    for (size_t n = 40; n <= 100; n++) {
        for (int quoted = 0; quoted < 2; quoted++) {
            /* n zeros then 'x': a number only when the x falls past the 47 bytes kept */
            size_t at = 0;
            if (quoted)
                value[at++] = '\'';
            memset(value + at, '0', n);
            at += n;
            value[at++] = 'x';
            if (quoted)
                value[at++] = '\'';
            value[at] = '\0';
            w.text = value;
            struct tg_plan_value v;
            memset(&v, 0x5a, sizeof(v));
            tg_plan_value_read(&v, &w, value, "--global-batch-size");
            ck_assert_int_eq(v.state, n >= 47 ? TG_PV_SET : TG_PV_UNKNOWN);
            if (n >= 47)
                ck_assert_int_eq(v.value, 0);
            /* what snprintf(v.src, sizeof(v.src), "%s %s", ...) keeps */
            snprintf(want, sizeof(want), "%s %s", "--global-batch-size", value);
            want[sizeof(v.src) - 1] = '\0';
            ck_assert_str_eq(v.src, want);
            if (n < 47) {
                snprintf(want, sizeof(v.why), "%s '%.40s' is not a number", "--global-batch-size",
                         value);
                ck_assert_str_eq(v.why, want);
            } else {
                ck_assert_str_eq(v.why, "");
            }
        }
    }
}
END_TEST

/* A flag is its whole name (up to a '='): a longer or shorter spelling is not it, and the value
 * after '=' is all of the rest. */
START_TEST(plan_flags_are_whole_names)
{
    struct tg_sh_word argv[] = {
        {"pretrain_gpt.py", true, NULL},
        {"--batch-size=4", true, NULL},
        {"--global-batch-size", true, NULL},
        {"64", true, NULL},
        {"--tensor-model-parallel-size=8=9", true, NULL},
        {"--pipeline-model-parallel-sizes", true, NULL},
        {"3", true, NULL},
        {"--context-parallel-siz=2", true, NULL},
        {"--deepspeed_config={\"train_batch_size\": 64}", true, NULL},
        {"--config-name=gpt", true, NULL},
    };
    struct tg_plan p;
    memset(&p, 0, sizeof(p));
    ck_assert_int_eq(tg_plan_read_args(argv, sizeof(argv) / sizeof(argv[0]), NULL, NULL, &p), 0);
    ck_assert_int_eq(p.fw, TG_PLAN_FW_MEGATRON_DS);
    ck_assert_str_eq(p.program, "pretrain_gpt.py");
    ck_assert(p.v1_batch);
    ck_assert_int_eq(p.micro.state, TG_PV_SET);
    ck_assert_int_eq(p.micro.value, 4);
    ck_assert_str_eq(p.micro.src, "--batch-size 4");
    ck_assert_int_eq(p.gbs.value, 64);
    ck_assert_int_eq(p.tp.state, TG_PV_UNKNOWN);
    ck_assert_str_eq(p.tp.why, "--tensor-model-parallel-size '8=9' is not a number");
    ck_assert_str_eq(p.pp.src, "Megatron's default");
    ck_assert_str_eq(p.cp.src, "Megatron's default");
    ck_assert(p.dscfg.given);
    ck_assert_int_eq(p.dscfg.train.value, 64);
}
END_TEST

/* The flag index at its length threshold: the shortest flag (--yaml-cfg, 10 bytes) is read, in
 * both spellings, and a 9-byte prefix of it is not; the longest one is read too. */
START_TEST(plan_flag_index_at_its_ends)
{
    struct tg_sh_word a[] = {
        {"pretrain_gpt.py", true, NULL},
        {"--yaml-cf", true, NULL},
        {"x.yaml", true, NULL},
        {"--yaml-cfg", true, NULL},
        {"gpt.yaml", true, NULL},
        {"--encoder-pipeline-model-parallel-size", true, NULL},
        {"2", true, NULL},
    };
    struct tg_plan p;
    memset(&p, 0, sizeof(p));
    ck_assert_int_eq(tg_plan_read_args(a, sizeof(a) / sizeof(a[0]), NULL, NULL, &p), 0);
    ck_assert_str_eq(p.config, "--yaml-cfg gpt.yaml");
    ck_assert_str_eq(p.model_size_why, "--encoder-pipeline-model-parallel-size 2 changes the "
                                       "model-parallel size in a way trainguard does not read");
    struct tg_sh_word b[] = {
        {"pretrain_gpt.py", true, NULL},
        {"--yaml-cfg=c.yaml", true, NULL},
    };
    memset(&p, 0, sizeof(p));
    ck_assert_int_eq(tg_plan_read_args(b, 2, NULL, NULL, &p), 0);
    ck_assert_str_eq(p.config, "--yaml-cfg c.yaml");
    struct tg_sh_word c[] = {
        {"pretrain_gpt.py", true, NULL},
        {"--yaml-cf=c.yaml", true, NULL},
    };
    memset(&p, 0, sizeof(p));
    ck_assert_int_eq(tg_plan_read_args(c, 2, NULL, NULL, &p), 0);
    ck_assert_str_eq(p.config, "");
}
END_TEST

/* The launcher names of mpirun + torchrun: the outer one cut at 12 bytes. */
START_TEST(plan_names_the_launchers)
{
    static const char *const lines[][2] = {
        {"mpiexec.hydra -n 2 torchrun --nproc_per_node 8 t.py --micro-batch-size 1",
         "mpiexec.hydr + torchrun"},
        {"mpirun -np 2 python -m torch.distributed.run t.py --micro-batch-size 1",
         "mpirun + python -m torch.distributed.ru"}, /* cut at 30 bytes */
        {"torchrun t.py --micro-batch-size 1", "torchrun"},
        {"python3 -m torch.distributed.launch t.py --micro-batch-size 1",
         "python -m torch.distributed.la"},
    };
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        struct tg_sh_word argv[] = {
            {"sh", true, NULL}, {"-c", true, NULL}, {(char *)lines[i][0], true, NULL}};
        struct tg_sh_vars vs;
        struct tg_launch l;
        tg_sh_vars_init(&vs);
        tg_launch_init(&l);
        ck_assert_int_eq(tg_launch_parse_words(argv, 3, &vs, TG_MPI_OPENMPI, &l), 0);
        ck_assert_uint_eq(l.nplans, 1);
        ck_assert_str_eq(l.plans[0].launcher, lines[i][1]);
        tg_launch_release(&l);
        tg_sh_vars_release(&vs);
    }
}
END_TEST

/* Plans are kept in the order of their commands, commands that are no training launch in
 * between (python -c, a plain script) leave none, and the 17th launch is not kept. */
START_TEST(plan_keeps_sixteen_launches_in_order)
{
    char script[4096];
    size_t at = 0;
    for (int i = 1; i <= 17; i++)
        at += (size_t)snprintf(script + at, sizeof(script) - at,
                               "python -c 'print(%d)'\npython3 x%d.py\n"
                               "python pretrain_gpt.py --micro-batch-size %d\n",
                               i, i, i);
    struct tg_sh_word argv[] = {{"bash", true, NULL}, {"-c", true, NULL}, {script, true, NULL}};
    struct tg_sh_vars vs;
    struct tg_launch l;
    tg_sh_vars_init(&vs);
    tg_launch_init(&l);
    ck_assert_int_eq(tg_launch_parse_words(argv, 3, &vs, TG_MPI_OPENMPI, &l), 0);
    ck_assert_uint_eq(l.nplans, 16);
    for (size_t i = 0; i < 16; i++) {
        ck_assert_int_eq(l.plans[i].fw, TG_PLAN_FW_MEGATRON);
        ck_assert_str_eq(l.plans[i].program, "pretrain_gpt.py");
        ck_assert_int_eq(l.plans[i].micro.value, (long long)i + 1);
        ck_assert_int_eq(l.plans[i].line, (int)(3 * i + 3));
    }
    tg_launch_release(&l);
    tg_sh_vars_release(&vs);
}
END_TEST

/* The command words that may start a training launch, in any directory, and near names. */
START_TEST(plan_knows_its_commands)
{
    static const char *const yes[] = {
        "torchrun",      "/usr/bin/torchrun", "deepspeed", "accelerate", "nemo",   "t.py",
        ".py",           "/a/b/pretrain.py",  "python",    "python3.11", "mpirun", "/opt/mpiexec",
        "mpiexec.hydra", "orterun",           "prterun",   "horovodrun",
    };
    static const char *const no[] = {
        "torchrunx", "torchru", "deepspeed2", "accelerat", "nemo2",   "nem",
        "py",        "t.pyc",   "pythonx",    "mpiru",     "mpirun2", "mpiexec.hydr",
        "horovod",   "",        "/usr/bin/",  "sh",
    };
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        ck_assert_msg(tg_plan_is_command(yes[i]), "%s", yes[i]);
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        ck_assert_msg(!tg_plan_is_command(no[i]), "%s", no[i]);
    ck_assert(tg_launcher_is_mpi("/opt/amazon/openmpi/bin/mpirun"));
    ck_assert(tg_launcher_is_mpi("mpiexec.hydra"));
    ck_assert(!tg_launcher_is_mpi("mpiexec.hydra2"));
    ck_assert(!tg_launcher_is_mpi("mpi"));
    ck_assert(!tg_launcher_is_mpi("torchrun"));
}
END_TEST

/* Hydra's own flags, in both forms, and names that only start like them. */
START_TEST(plan_reads_hydra_flags)
{
    struct tg_sh_word argv[] = {
        {"megatron_gpt_pretraining.py", true, NULL},
        {"-cp", true, NULL},
        {"/conf", true, NULL},
        {"-cn=gpt", true, NULL},
        {"--config-dir=/d", true, NULL},
        {"-cd", true, NULL},
        {"/e", true, NULL},
        {"--config-nam", true, NULL},
        {"x", true, NULL},
        {"-c", true, NULL},
        {"y", true, NULL},
        {"--config-names=z", true, NULL},
        {"-cpu", true, NULL},
        {"model.tensor_model_parallel_size=2", true, NULL},
    };
    struct tg_plan p;
    memset(&p, 0, sizeof(p));
    ck_assert_int_eq(tg_plan_read_args(argv, sizeof(argv) / sizeof(argv[0]), NULL, NULL, &p), 0);
    ck_assert_int_eq(p.fw, TG_PLAN_FW_NEMO1);
    ck_assert_str_eq(p.config, "-cp=/conf -cn=gpt --config-dir=/d -cd=/e");
    ck_assert_int_eq(p.tp.value, 2);
    ck_assert_int_eq(p.pp.state, TG_PV_UNKNOWN);
}
END_TEST

Suite *tg_test_plan_suite(void);
Suite *tg_test_plan_suite(void)
{
    Suite *s = suite_create("plan");
    TCase *tc = tcase_create("reader");
    tcase_add_loop_test(tc, plan_reads_the_launch_line, 0, (int)(sizeof(cases) / sizeof(cases[0])));
    tcase_add_test(tc, plan_value_read_cuts_as_snprintf_did);
    tcase_add_test(tc, plan_flags_are_whole_names);
    tcase_add_test(tc, plan_flag_index_at_its_ends);
    tcase_add_test(tc, plan_names_the_launchers);
    tcase_add_test(tc, plan_keeps_sixteen_launches_in_order);
    tcase_add_test(tc, plan_knows_its_commands);
    tcase_add_test(tc, plan_reads_hydra_flags);
    suite_add_tcase(s, tc);
    return s;
}
