/* handler.c -- AdmissionReview bytes -> decode -> pipeline -> encoded answer with HTTP status. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/arena.h"
#include "tg/handler.h"
#include "tg/response.h"

static void fail(struct tg_admission_out *out, int status, const char *msg)
{
    snprintf(out->error, sizeof(out->error), "%s", msg);
    out->http_status = status;
    out->verdict = "error";
    free(out->body);
    out->body = tg_error_body(status, msg, &out->len);
    if (!out->body)
        out->len = 0;
}

void tg_admission_handle(const struct tg_policy *policy, const struct tg_pipeline_opts *base,
                         bool mutating, const char *body, size_t len, struct tg_admission_out *out)
{
    struct tg_pipeline_opts opts = {0};
    char err[TG_REVIEW_ERR_MAX];
    memset(out, 0, sizeof(*out));
    /* Every JSON value of this request is released in tg_admission_out_release. */
    tg_arena_begin();
    if (base)
        opts = *base;
    opts.mutate = mutating;
    opts.skip_validation = mutating;
    opts.offline = false;
    opts.no_plan_view = true; /* the response carries no plan view */
    int rc = tg_review_parse(body, len, &out->review, err, sizeof(err));
    if (rc == -ENOMEM) {
        fail(out, 500, "out of memory decoding the review");
        return;
    }
    if (rc < 0) {
        fail(out, 400, err);
        return;
    }
    out->decoded = true;
    rc = tg_pipeline_run(policy, &out->review, &opts, &out->result);
    if (rc < 0) {
        snprintf(err, sizeof(err), "could not evaluate the object: %s", strerror(-rc));
        fail(out, 500, err);
        return;
    }
    out->body = tg_response_encode(&out->review, &out->result, mutating, &out->len);
    if (!out->body) {
        tg_result_release(&out->result);
        fail(out, 500, "out of memory encoding the response");
        return;
    }
    out->http_status = 200;
    out->verdict = out->result.allowed ? "allowed" : "denied";
}

void tg_admission_out_release(struct tg_admission_out *out)
{
    free(out->body);
    if (out->decoded) {
        if (out->http_status == 200)
            tg_result_release(&out->result);
        tg_review_release(&out->review);
    }
    memset(out, 0, sizeof(*out));
    tg_arena_end();
}
