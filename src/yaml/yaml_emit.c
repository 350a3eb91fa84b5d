/* yaml_emit.c -- JSON values out as block YAML that reads back (kubectl, go-yaml v2) unchanged. */
#include "tg/yaml_emit.h"
#include "tg/yaml_json.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* Deep enough for any manifest; JSON deeper than this came from somewhere hostile. */
#define TG_EMIT_MAX_DEPTH 1000

/* A string needs quotes when the plain scalar would read back as something else. The converter
 * (yaml_json.c) is the authority: resolve the text the same way. */
static bool reads_back_as_string(const char *s, size_t len)
{
    json_t *v;
    char err[64];
    char *doc;
    bool same;

    if (len == 0 || strlen(s) != len)
        return false;
    /* Timestamps stay strings in go-yaml v2 but not in every YAML reader; << is a merge key. */
    if (strcmp(s, "<<") == 0)
        return false;
    if (len >= 5 && s[0] >= '0' && s[0] <= '9' && s[4] == '-')
        return false;
    /* Parse "k: <text>" with the converter; only a plain string value round-trips. */
    doc = malloc(len + 4);
    if (!doc)
        return false;
    memcpy(doc, "k: ", 3);
    memcpy(doc + 3, s, len);
    doc[len + 3] = '\0';
    v = tg_yaml_parse_one(doc, len + 3, err, sizeof(err));
    free(doc);
    same = v && json_is_object(v) && json_object_size(v) == 1 &&
           json_is_string(json_object_get(v, "k")) &&
           strcmp(json_string_value(json_object_get(v, "k")), s) == 0;
    json_decref(v);
    return same;
}

static int emit(yaml_emitter_t *e, yaml_event_t *ev)
{
    return yaml_emitter_emit(e, ev) ? 0 : -EIO;
}

static int emit_scalar(yaml_emitter_t *e, const char *text, size_t len, yaml_scalar_style_t style)
{
    yaml_event_t ev;

    if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)len, 1, 1, style))
        return -ENOMEM;
    return emit(e, &ev);
}

static int emit_string(yaml_emitter_t *e, const char *s, size_t len)
{
    yaml_scalar_style_t style = YAML_ANY_SCALAR_STYLE;

    if (memchr(s, '\n', len) && strlen(s) == len)
        style = YAML_LITERAL_SCALAR_STYLE; /* libyaml falls back to quotes when it must */
    else if (!reads_back_as_string(s, len))
        style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    return emit_scalar(e, s, len, style);
}

static int emit_number(yaml_emitter_t *e, const json_t *v)
{
    char buf[40];

    if (json_is_integer(v)) {
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    } else {
        double x = json_real_value(v);

        for (int prec = 15; prec <= 17; prec++) {
            snprintf(buf, sizeof(buf), "%.*g", prec, x);
            if (strtod(buf, NULL) == x)
                break;
        }
    }
    return emit_scalar(e, buf, strlen(buf), YAML_PLAIN_SCALAR_STYLE);
}

static int emit_value(yaml_emitter_t *e, const json_t *v, int depth)
{
    yaml_event_t ev;
    int rc;

    if (depth > TG_EMIT_MAX_DEPTH)
        return -EINVAL;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const char *k;
        json_t *item;

        if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE))
            return -ENOMEM;
        if ((rc = emit(e, &ev)) < 0)
            return rc;
        json_object_foreach ((json_t *)v, k, item) {
            if ((rc = emit_string(e, k, strlen(k))) < 0 ||
                (rc = emit_value(e, item, depth + 1)) < 0)
                return rc;
        }
        if (!yaml_mapping_end_event_initialize(&ev))
            return -ENOMEM;
        return emit(e, &ev);
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *item;

        if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE))
            return -ENOMEM;
        if ((rc = emit(e, &ev)) < 0)
            return rc;
        json_array_foreach (v, i, item) {
            if ((rc = emit_value(e, item, depth + 1)) < 0)
                return rc;
        }
        if (!yaml_sequence_end_event_initialize(&ev))
            return -ENOMEM;
        return emit(e, &ev);
    }
    case JSON_STRING:
        return emit_string(e, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
    case JSON_REAL:
        return emit_number(e, v);
    case JSON_TRUE:
        return emit_scalar(e, "true", 4, YAML_PLAIN_SCALAR_STYLE);
    case JSON_FALSE:
        return emit_scalar(e, "false", 5, YAML_PLAIN_SCALAR_STYLE);
    default:
        return emit_scalar(e, "null", 4, YAML_PLAIN_SCALAR_STYLE);
    }
}

int tg_yaml_emit(const json_t *v, FILE *out)
{
    yaml_emitter_t e;
    yaml_event_t ev;
    int rc = -ENOMEM;

    if (!v || !out)
        return -EINVAL;
    if (!yaml_emitter_initialize(&e))
        return -ENOMEM;
    yaml_emitter_set_output_file(&e, out);
    yaml_emitter_set_unicode(&e, 1);
    yaml_emitter_set_indent(&e, 2);
    yaml_emitter_set_width(&e, -1);
    if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING))
        goto out;
    if ((rc = emit(&e, &ev)) < 0)
        goto out;
    rc = -ENOMEM;
    if (!yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1))
        goto out;
    if ((rc = emit(&e, &ev)) < 0 || (rc = emit_value(&e, v, 0)) < 0)
        goto out;
    rc = -ENOMEM;
    if (!yaml_document_end_event_initialize(&ev, 1))
        goto out;
    if ((rc = emit(&e, &ev)) < 0)
        goto out;
    rc = -ENOMEM;
    if (!yaml_stream_end_event_initialize(&ev))
        goto out;
    if ((rc = emit(&e, &ev)) < 0)
        goto out;
    rc = yaml_emitter_flush(&e) && !ferror(out) ? 0 : -EIO;
out:
    if (rc == -EIO && e.error == YAML_MEMORY_ERROR)
        rc = -ENOMEM;
    yaml_emitter_delete(&e);
    return rc;
}
