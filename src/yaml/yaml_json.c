/* yaml_json.c -- YAML 1.1 streams to jansson values, resolved the way kubectl's converter does. */
#include "tg/yaml_json.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/*
 * What kubectl sends is YAMLToJSON of sigs.k8s.io/yaml, which unmarshals with go-yaml v2 into
 * interface{} and converts keys to strings (kubernetes/kubernetes: vendor/sigs.k8s.io/yaml/yaml.go,
 * convertToJSONableObject). Plain scalars resolve as go-yaml v2 does (kubernetes/kubernetes:
 * vendor/gopkg.in/yaml.v2/resolve.go): the bool table includes y/Y/n/N, yes/no, on/off and
 * true/false in three case forms; null is "", ~, null, Null, NULL; integers go through Go's
 * strconv.ParseInt(s, 0, 64) after removing underscores (0x, 0o, 0b prefixes, leading-0 octal,
 * sign), then ParseUint, then a float regex; timestamps stay strings when decoded into
 * interface{}. Duplicate keys are rejected as kubectl does (k8up-io/k8up#452: "mapping key
 * ... already defined"). The API server then re-reads the JSON, so an integral float (1e3, 08)
 * arrives as the integer 1000 / 8: we store those as JSON integers.
 */

/* Billion-laughs guard: aliases are expanded by copying, so cap the nodes one document may
 * produce (a large real manifest has a few thousand) and the nesting depth (the JSON parser of the
 * API server stops at 10000; manifests nest < 30). */
#define TG_YAML_MAX_NODES 1000000
#define TG_YAML_MAX_DEPTH 1000

enum scalar_kind { SK_NULL, SK_BOOL, SK_INT, SK_UINT, SK_FLOAT, SK_STR };

struct scalar {
    enum scalar_kind kind;
    bool b;
    long long i;
    unsigned long long u;
    double f;
};

struct frame {
    json_t *node;     /* object or array being built */
    json_t *explicit; /* keys written in this mapping, once a merge key was seen; else NULL */
    char *anchor;
    size_t count_start;
    yaml_mark_t start; /* where the node starts */
    char *key;         /* pending key of a mapping; NULL when the next node is a key */
    bool key_is_merge;
    yaml_mark_t key_mark;
};

struct conv {
    struct frame *st;
    size_t depth, cap;
    json_t *anchors; /* name -> [value, node count] */
    size_t nodes;
    json_t *root;
    bool root_set;
    bool root_empty_scalar;
    int line_off;
    char *err;
    size_t errlen;
};

static void set_err(struct conv *c, yaml_mark_t m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(struct conv *c, yaml_mark_t m, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(c->err, c->errlen, "line %d, column %d: ", (int)m.line + 1 + c->line_off,
                     (int)m.column + 1);

    if (n < 0 || (size_t)n >= c->errlen)
        return;
    va_start(ap, fmt);
    vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

/* ---- scalar resolution (go-yaml v2 resolve) ---------------------------------------------- */

static bool in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return true;
    return false;
}

static const char *const yaml_true[] = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                        "True", "TRUE", "on",  "On",  "ON",  NULL};
static const char *const yaml_false[] = {"n",     "N",     "no",  "No",  "NO",  "false",
                                         "False", "FALSE", "off", "Off", "OFF", NULL};
static const char *const yaml_null[] = {"", "~", "null", "Null", "NULL", NULL};
static const char *const yaml_nan[] = {".nan", ".NaN", ".NAN", NULL};
static const char *const yaml_pinf[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL};
static const char *const yaml_ninf[] = {"-.inf", "-.Inf", "-.INF", NULL};

static int digit_val(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A' + 10;
    return 99;
}

/* Go strconv base-0 integer syntax: [sign] (0x|0o|0b|0)digits | decimal. Magnitude in *mag
 * (saturating flag in *big). Returns false on a syntax error. */
static bool go_int_syntax(const char *s, bool *neg, unsigned long long *mag, bool *big)
{
    int base = 10;
    const char *p = s;

    *neg = false;
    *mag = 0;
    *big = false;
    if (*p == '+' || *p == '-')
        *neg = *p++ == '-';
    if (p[0] == '0' && p[1] != '\0') {
        if (p[1] == 'x' || p[1] == 'X') {
            base = 16;
            p += 2;
        } else if (p[1] == 'o' || p[1] == 'O') {
            base = 8;
            p += 2;
        } else if (p[1] == 'b' || p[1] == 'B') {
            base = 2;
            p += 2;
        } else {
            base = 8;
            p += 1;
        }
    }
    if (*p == '\0')
        return false;
    for (; *p; p++) {
        int d = digit_val(*p);

        if (d >= base)
            return false;
        if (*mag > (ULLONG_MAX - (unsigned)d) / (unsigned)base)
            *big = true;
        else
            *mag = *mag * (unsigned)base + (unsigned)d;
    }
    return true;
}

/* yamlStyleFloat: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static bool yaml_style_float(const char *p)
{
    if (*p == '+' || *p == '-')
        p++;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    } else {
        if (*p < '0' || *p > '9')
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
        if (*p == '.') {
            p++;
            while (*p >= '0' && *p <= '9')
                p++;
        }
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (*p < '0' || *p > '9')
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == '\0';
}

/* Go's ParseFloat on text that passed the regex: overflow is an error there (the scalar then
 * stays a string); underflow to zero is not. */
static bool parse_float(const char *s, double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (*end != '\0' || isinf(v))
        return false;
    *out = v;
    return true;
}

static bool resolve_number(const char *in, struct scalar *sc)
{
    size_t n = strlen(in);
    char *plain = malloc(n + 1);
    size_t j = 0;
    bool neg, big, ok = false;
    unsigned long long mag;

    if (!plain)
        return false;
    for (size_t i = 0; i < n; i++)
        if (in[i] != '_')
            plain[j++] = in[i];
    plain[j] = '\0';
    if (go_int_syntax(plain, &neg, &mag, &big) && !big) {
        if (!neg && mag <= (unsigned long long)LLONG_MAX) {
            sc->kind = SK_INT;
            sc->i = (long long)mag;
            ok = true;
        } else if (neg && mag <= (unsigned long long)LLONG_MAX + 1ULL) {
            sc->kind = SK_INT;
            sc->i = mag == (unsigned long long)LLONG_MAX + 1ULL ? LLONG_MIN : -(long long)mag;
            ok = true;
        } else if (!neg && plain[0] != '+') {
            sc->kind = SK_UINT; /* ParseUint takes no sign */
            sc->u = mag;
            ok = true;
        }
    }
    if (!ok && yaml_style_float(plain) && parse_float(plain, &sc->f)) {
        sc->kind = SK_FLOAT;
        ok = true;
    }
    free(plain);
    return ok;
}

/* Resolves an untagged plain scalar (or the text under a resolvable tag). */
static void resolve_plain(const char *in, struct scalar *sc)
{
    char h = in[0];

    sc->kind = SK_STR;
    if (in_list(in, yaml_true)) {
        sc->kind = SK_BOOL;
        sc->b = true;
    } else if (in_list(in, yaml_false)) {
        sc->kind = SK_BOOL;
        sc->b = false;
    } else if (in_list(in, yaml_null)) {
        sc->kind = SK_NULL;
    } else if (in_list(in, yaml_nan)) {
        sc->kind = SK_FLOAT;
        sc->f = NAN;
    } else if (in_list(in, yaml_pinf)) {
        sc->kind = SK_FLOAT;
        sc->f = INFINITY;
    } else if (in_list(in, yaml_ninf)) {
        sc->kind = SK_FLOAT;
        sc->f = -INFINITY;
    } else if (h == '.') {
        /* Go ParseFloat on ".5", ".5e3": no underscores, no sign here. */
        if (yaml_style_float(in) && parse_float(in, &sc->f))
            sc->kind = SK_FLOAT;
    } else if (h == '+' || h == '-' || (h >= '0' && h <= '9')) {
        if (!resolve_number(in, sc))
            sc->kind = SK_STR;
    }
}

#define TAG_PREFIX "tag:yaml.org,2002:"

static const char *short_tag(const char *tag)
{
    static const size_t plen = sizeof(TAG_PREFIX) - 1;

    return strncmp(tag, TAG_PREFIX, plen) == 0 ? tag + plen : NULL;
}

static const char *kind_name(enum scalar_kind k)
{
    switch (k) {
    case SK_NULL:
        return "null";
    case SK_BOOL:
        return "bool";
    case SK_INT:
    case SK_UINT:
        return "int";
    case SK_FLOAT:
        return "float";
    default:
        return "str";
    }
}

/* Applies an explicit tag as go-yaml v2 does: !!str always a string, !!int/!!bool/!!null/!!float
 * must resolve to that type (!!float accepts an int), other tags leave the text a string.
 * Returns false with why filled when the text does not fit the tag. */
static bool resolve_tagged(const char *text, const char *tag, struct scalar *sc, char *why,
                           size_t whylen)
{
    const char *st = short_tag(tag);

    sc->kind = SK_STR;
    if (!st || strcmp(st, "str") == 0)
        return true;
    if (strcmp(st, "binary") == 0) {
        snprintf(why, whylen,
                 "!!binary scalars are not supported; write the base64 text as a "
                 "plain string");
        return false;
    }
    if (strcmp(st, "timestamp") == 0)
        return true; /* kept as text when decoded into interface{} */
    if (strcmp(st, "null") && strcmp(st, "bool") && strcmp(st, "int") && strcmp(st, "float"))
        return true;
    resolve_plain(text, sc);
    if (strcmp(st, kind_name(sc->kind)) == 0)
        return true;
    if (strcmp(st, "float") == 0 && (sc->kind == SK_INT || sc->kind == SK_UINT)) {
        sc->f = sc->kind == SK_INT ? (double)sc->i : (double)sc->u;
        sc->kind = SK_FLOAT;
        return true;
    }
    snprintf(why, whylen, "cannot decode !!%s `%.60s` as a !!%s", kind_name(sc->kind), text, st);
    return false;
}

/* An integral double that fits in int64 is what the API server reads back as an integer. */
static json_t *json_from_double(double f)
{
    if (f == trunc(f) && f >= -9223372036854775808.0 && f < 9223372036854775808.0)
        return json_integer((json_int_t)f);
    return json_real(f);
}

static json_t *scalar_to_json(const struct scalar *sc, const char *text, size_t len)
{
    switch (sc->kind) {
    case SK_NULL:
        return json_null();
    case SK_BOOL:
        return json_boolean(sc->b);
    case SK_INT:
        return json_integer(sc->i);
    case SK_UINT:
        return json_real((double)sc->u);
    case SK_FLOAT:
        return json_from_double(sc->f);
    default:
        return json_stringn(text, len);
    }
}

/* ---- mapping keys ------------------------------------------------------------------------ */

/* strconv.FormatFloat(f, 'g', -1, 32), as convertToJSONableObject formats float keys: the
 * shortest digits that read back as the same float32; exponent form when the decimal exponent is
 * below -4 or at least 6 (Go's %g rule with shortest precision, strconv/ftoa.go). */
static void go_format_float32(double d, char *buf, size_t len)
{
    float f = (float)d;
    char tmp[64], mant[40];
    int prec, exp10;
    char *e;
    size_t ml;

    if (isnan(f)) {
        snprintf(buf, len, ".nan");
        return;
    }
    if (isinf(f)) {
        snprintf(buf, len, f > 0 ? ".inf" : "-.inf");
        return;
    }
    for (prec = 1; prec < 9; prec++) {
        snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, (double)f);
        if (strtof(tmp, NULL) == f)
            break;
    }
    snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, (double)f);
    e = strchr(tmp, 'e');
    exp10 = e ? (int)strtol(e + 1, NULL, 10) : 0;
    if (exp10 < -4 || exp10 >= 6) {
        ml = e ? (size_t)(e - tmp) : strlen(tmp);
        if (ml >= sizeof(mant))
            ml = sizeof(mant) - 1;
        memcpy(mant, tmp, ml);
        mant[ml] = '\0';
        snprintf(buf, len, "%se%c%02d", mant, exp10 < 0 ? '-' : '+', abs(exp10));
        return;
    }
    snprintf(buf, len, "%.*f", prec - 1 - exp10 > 0 ? prec - 1 - exp10 : 0, (double)f);
}

/* The string form of a key as convertToJSONableObject makes it. NULL with why on error. */
static char *key_string(const json_t *k, char *why, size_t whylen)
{
    char buf[64];

    switch (json_typeof(k)) {
    case JSON_STRING:
        if (strlen(json_string_value(k)) != json_string_length(k)) {
            snprintf(why, whylen, "mapping key contains a NUL character");
            return NULL;
        }
        return strdup(json_string_value(k));
    case JSON_INTEGER:
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(k));
        return strdup(buf);
    case JSON_REAL:
        go_format_float32(json_real_value(k), buf, sizeof(buf));
        return strdup(buf);
    case JSON_TRUE:
        return strdup("true");
    case JSON_FALSE:
        return strdup("false");
    case JSON_NULL:
        snprintf(why, whylen, "a null mapping key cannot be converted to JSON");
        return NULL;
    default:
        snprintf(why, whylen, "a mapping key is itself a %s",
                 json_is_object(k) ? "mapping" : "list");
        return NULL;
    }
}

/* ---- tree building ----------------------------------------------------------------------- */

static void frame_release(struct frame *f)
{
    json_decref(f->node);
    json_decref(f->explicit);
    free(f->anchor);
    free(f->key);
    memset(f, 0, sizeof(*f));
}

static void conv_release(struct conv *c)
{
    while (c->depth > 0)
        frame_release(&c->st[--c->depth]);
    free(c->st);
    c->st = NULL;
    c->cap = 0;
    json_decref(c->anchors);
    c->anchors = NULL;
    json_decref(c->root);
    c->root = NULL;
}

static int add_nodes(struct conv *c, size_t n, yaml_mark_t m)
{
    if (n > TG_YAML_MAX_NODES || c->nodes > TG_YAML_MAX_NODES - n) {
        set_err(c, m, "document expands to more than %d nodes (alias bomb?)", TG_YAML_MAX_NODES);
        return -EINVAL;
    }
    c->nodes += n;
    return 0;
}

static int remember_anchor(struct conv *c, const char *anchor, json_t *v, size_t count)
{
    json_t *entry;

    if (!anchor)
        return 0;
    entry = json_pack("[O,I]", v, (json_int_t)count);
    if (!entry || json_object_set_new(c->anchors, anchor, entry) < 0)
        return -ENOMEM;
    return 0;
}

/* Copies the keys of one merge source into the mapping, overwriting. */
static int merge_one(struct conv *c, struct frame *p, json_t *src, size_t count, yaml_mark_t m)
{
    const char *k;
    json_t *val;

    if (add_nodes(c, count, m) < 0)
        return -EINVAL;
    json_object_foreach (src, k, val) {
        if (json_object_set_new(p->node, k, json_deep_copy(val)) < 0)
            return -ENOMEM;
    }
    return 0;
}

/*
 * A merge key, applied where it stands as go-yaml v2 does (decode.go mapping() and merge(), the
 * decoder behind kubectl's YAMLToJSON): the merged keys overwrite keys written before the <<,
 * keys written after it overwrite merged ones, and in a list the earlier mappings win (the list
 * is applied backwards). go-yaml v3 and the YAML merge draft let explicit keys win wherever they
 * stand; kubectl sends the v2 result, so that is what the webhook sees.
 */
static int merge_source(struct conv *c, struct frame *p, json_t *v, size_t count, yaml_mark_t m)
{
    size_t i;
    int rc;

    if (!p->explicit) {
        /* From now on a key is a duplicate only if it was written, not merged. */
        const char *k;
        json_t *val;

        if (!(p->explicit = json_object()))
            return -ENOMEM;
        json_object_foreach (p->node, k, val) {
            if (json_object_set_new(p->explicit, k, json_true()) < 0)
                return -ENOMEM;
        }
    }
    if (json_is_object(v))
        return merge_one(c, p, v, count, m);
    if (!json_is_array(v)) {
        set_err(c, m, "the value of a merge key << must be a mapping or a list of mappings");
        return -EINVAL;
    }
    for (i = 0; i < json_array_size(v); i++) {
        if (!json_is_object(json_array_get(v, i))) {
            set_err(c, m, "merge key << list item %zu is not a mapping", i);
            return -EINVAL;
        }
    }
    for (i = json_array_size(v); i-- > 0;) {
        if ((rc = merge_one(c, p, json_array_get(v, i), count, m)) < 0)
            return rc;
    }
    return 0;
}

static bool is_duplicate(const struct frame *p)
{
    return json_object_get(p->explicit ? p->explicit : p->node, p->key) != NULL;
}

/* Places a finished node (stolen) into its parent, or makes it the document root. */
static int place(struct conv *c, json_t *v, const char *anchor, size_t count, bool is_merge_key,
                 yaml_mark_t m)
{
    struct frame *p;
    int rc = remember_anchor(c, anchor, v, count);
    char why[200];

    if (rc < 0)
        goto out;
    if (c->depth == 0) {
        c->root = v;
        c->root_set = true;
        return 0;
    }
    p = &c->st[c->depth - 1];
    if (json_is_array(p->node))
        return json_array_append_new(p->node, v) ? -ENOMEM : 0;
    if (!p->key) {
        if (!(p->key = key_string(v, why, sizeof(why)))) {
            set_err(c, m, "%s", why);
            rc = -EINVAL;
            goto out;
        }
        p->key_is_merge = is_merge_key;
        p->key_mark = m;
        goto out;
    }
    if (p->key_is_merge) {
        rc = merge_source(c, p, v, count, m);
    } else if (is_duplicate(p)) {
        set_err(c, p->key_mark, "duplicate mapping key \"%.80s\"", p->key);
        rc = -EINVAL;
    } else if (json_object_set(p->node, p->key, v) < 0 ||
               (p->explicit && json_object_set_new(p->explicit, p->key, json_true()) < 0)) {
        rc = -ENOMEM;
    }
    free(p->key);
    p->key = NULL;
out:
    json_decref(v);
    return rc;
}

static int push(struct conv *c, json_t *node, const yaml_char_t *anchor, yaml_mark_t m)
{
    struct frame *f;

    if (!node)
        return -ENOMEM;
    if (c->depth >= TG_YAML_MAX_DEPTH) {
        json_decref(node);
        set_err(c, m, "nesting deeper than %d levels", TG_YAML_MAX_DEPTH);
        return -EINVAL;
    }
    if (add_nodes(c, 1, m) < 0) {
        json_decref(node);
        return -EINVAL;
    }
    if (c->depth == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 16;
        struct frame *ns = realloc(c->st, ncap * sizeof(*ns));

        if (!ns) {
            json_decref(node);
            return -ENOMEM;
        }
        c->st = ns;
        c->cap = ncap;
    }
    f = &c->st[c->depth++];
    memset(f, 0, sizeof(*f));
    f->node = node;
    f->count_start = c->nodes - 1;
    f->start = m;
    if (anchor && !(f->anchor = strdup((const char *)anchor)))
        return -ENOMEM;
    return 0;
}

static int pop(struct conv *c, yaml_mark_t m)
{
    struct frame f = c->st[--c->depth];
    json_t *node = f.node;
    int rc = 0;

    if (f.key) {
        /* A key without a value cannot come from libyaml; keep the invariant anyway. */
        set_err(c, m, "mapping key without a value");
        rc = -EINVAL;
    }
    f.node = NULL;
    if (rc == 0) {
        rc = place(c, node, f.anchor, c->nodes - f.count_start, false, f.start);
        node = NULL;
    }
    json_decref(node);
    frame_release(&f);
    return rc;
}

static int on_scalar(struct conv *c, const yaml_event_t *ev)
{
    const char *text = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    struct scalar sc = {.kind = SK_STR};
    char why[200];
    bool merge_key = false;
    json_t *v;

    if (add_nodes(c, 1, ev->start_mark) < 0)
        return -EINVAL;
    if (tag && strcmp(tag, "!") != 0) {
        if (strlen(text) == len && !resolve_tagged(text, tag, &sc, why, sizeof(why))) {
            set_err(c, ev->start_mark, "%s", why);
            return -EINVAL;
        }
        merge_key = strcmp(tag, TAG_PREFIX "merge") == 0 && strcmp(text, "<<") == 0;
    } else if (!tag && ev->data.scalar.plain_implicit && strlen(text) == len) {
        resolve_plain(text, &sc);
        merge_key = strcmp(text, "<<") == 0;
    }
    if (sc.kind == SK_FLOAT && !isfinite(sc.f)) {
        set_err(c, ev->start_mark, "%.20s cannot be represented in JSON", text);
        return -EINVAL;
    }
    if (c->depth == 0 && sc.kind == SK_NULL && len == 0 && !tag)
        c->root_empty_scalar = true;
    /* A float key keeps its float form: Go formats it with FormatFloat(f, 'g', -1, 32), so
     * 1e7 is "1e+07" while the integer 10000000 is "10000000". */
    if (sc.kind == SK_FLOAT && c->depth > 0 && json_is_object(c->st[c->depth - 1].node) &&
        !c->st[c->depth - 1].key)
        v = json_real(sc.f);
    else
        v = scalar_to_json(&sc, text, len);
    if (!v) {
        /* jansson refuses invalid UTF-8 and fails on OOM alike: tell them apart. */
        json_t *probe = sc.kind == SK_STR ? json_string("") : NULL;

        if (!probe)
            return -ENOMEM;
        json_decref(probe);
        set_err(c, ev->start_mark, "string is not valid UTF-8");
        return -EINVAL;
    }
    /* Only a key position makes << a merge key. */
    if (merge_key &&
        !(c->depth > 0 && json_is_object(c->st[c->depth - 1].node) && !c->st[c->depth - 1].key))
        merge_key = false;
    return place(c, v, (const char *)ev->data.scalar.anchor, 1, merge_key, ev->start_mark);
}

static int on_alias(struct conv *c, const yaml_event_t *ev)
{
    const char *name = (const char *)ev->data.alias.anchor;
    json_t *entry = json_object_get(c->anchors, name);
    size_t count;
    json_t *copy;

    if (!entry) {
        set_err(c, ev->start_mark, "unknown anchor '%.60s' referenced", name);
        return -EINVAL;
    }
    count = (size_t)json_integer_value(json_array_get(entry, 1));
    if (add_nodes(c, count, ev->start_mark) < 0)
        return -EINVAL;
    copy = json_deep_copy(json_array_get(entry, 0));
    if (!copy)
        return -ENOMEM;
    return place(c, copy, NULL, count, false, ev->start_mark);
}

/* ---- documents ------------------------------------------------------------------------- */

struct docs_builder {
    struct tg_yaml_docs *out;
    size_t cap;
};

static struct tg_yaml_doc *new_doc(struct docs_builder *b)
{
    struct tg_yaml_doc *d;

    if (b->out->n == b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : 8;
        struct tg_yaml_doc *nv = realloc(b->out->v, ncap * sizeof(*nv));

        if (!nv)
            return NULL;
        b->out->v = nv;
        b->cap = ncap;
    }
    d = &b->out->v[b->out->n];
    memset(d, 0, sizeof(*d));
    d->index = b->out->n++;
    return d;
}

static void reader_error_pos(const char *text, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

static bool has_template(const char *text, size_t len)
{
    for (size_t i = 0; i + 1 < len; i++)
        if (text[i] == '{' && text[i + 1] == '{')
            return true;
    return false;
}

#define TMPL_HINT " (a Go/Helm template? render it first, e.g. with helm template)"

static void parser_error(const yaml_parser_t *p, const char *text, size_t len, int line_off,
                         char *err, size_t errlen)
{
    int line, col, n;
    const char *tmpl = has_template(text, len) ? TMPL_HINT : "";

    if (p->error == YAML_READER_ERROR) {
        reader_error_pos(text, p->problem_offset < len ? p->problem_offset : len, &line, &col);
        line += line_off;
    } else {
        line = (int)p->problem_mark.line + 1 + line_off;
        col = (int)p->problem_mark.column + 1;
    }
    if (p->error == YAML_MEMORY_ERROR) {
        snprintf(err, errlen, "out of memory");
        return;
    }
    n = snprintf(err, errlen, "line %d, column %d: %s", line, col,
                 p->problem ? p->problem : "syntax error");
    if (n > 0 && (size_t)n < errlen && p->context)
        n += snprintf(err + n, errlen - (size_t)n, " (%s at line %d, column %d)", p->context,
                      (int)p->context_mark.line + 1 + line_off, (int)p->context_mark.column + 1);
    if (n > 0 && (size_t)n < errlen)
        snprintf(err + n, errlen - (size_t)n, "%s", tmpl);
}

/* Conversion errors of a templated chunk get the same hint as syntax errors. */
static void add_template_hint(struct docs_builder *b, size_t first, const char *text, size_t len)
{
    if (!has_template(text, len))
        return;
    for (size_t i = first; i < b->out->n; i++) {
        char *e = b->out->v[i].error;
        size_t n = strlen(e);

        if (n && !strstr(e, "template") && n < sizeof(b->out->v[i].error))
            snprintf(e + n, sizeof(b->out->v[i].error) - n, "%s", TMPL_HINT);
    }
}

/* The API server reads 2.0 back as the integer 2 (and re-encodes it as 2): do the same for JSON
 * input, as the YAML path does. Returns 0 or -ENOMEM. */
static int integral_reals(json_t *v)
{
    size_t i;
    const char *k;
    json_t *item;
    void *tmp;

    if (json_is_array(v)) {
        json_array_foreach (v, i, item) {
            if (json_is_real(item)) {
                if (json_array_set_new(v, i, json_from_double(json_real_value(item))) < 0)
                    return -ENOMEM;
            } else if (integral_reals(item) < 0) {
                return -ENOMEM;
            }
        }
    } else if (json_is_object(v)) {
        json_object_foreach_safe (v, tmp, k, item) {
            if (json_is_real(item)) {
                if (json_object_set_new(v, k, json_from_double(json_real_value(item))) < 0)
                    return -ENOMEM;
            } else if (integral_reals(item) < 0) {
                return -ENOMEM;
            }
        }
    }
    return 0;
}

/* JSON text takes the JSON path as in kubectl's YAMLOrJSONDecoder; NULL when it is not JSON. */
static json_t *try_json(const char *text, size_t len)
{
    size_t i = 0;
    json_error_t jerr;

    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
        i++;
    if (i >= len || text[i] != '{' || (i + 1 < len && text[i + 1] == '{'))
        return NULL;
    return json_loadb(text + i, len - i, JSON_REJECT_DUPLICATES, &jerr);
}

/* After a conversion error: consume events up to the end of the current document. Returns false
 * when the parser failed (the stream cannot go on), and sets *done at the end of the stream. */
static bool skip_document(yaml_parser_t *parser, bool *done)
{
    yaml_event_t ev;

    for (;;) {
        yaml_event_type_t t;

        if (!yaml_parser_parse(parser, &ev))
            return false;
        t = ev.type;
        yaml_event_delete(&ev);
        if (t == YAML_DOCUMENT_END_EVENT)
            return true;
        if (t == YAML_STREAM_END_EVENT) {
            *done = true;
            return true;
        }
    }
}

/* Parses one chunk (a piece of the stream that starts at a --- line, or the prologue) and
 * appends its documents. Returns the number of documents found, or -ENOMEM. */
static int parse_chunk(const char *text, size_t len, int line_off, struct docs_builder *b)
{
    yaml_parser_t parser;
    yaml_event_t ev;
    struct conv c = {0};
    struct tg_yaml_doc *d = NULL;
    json_t *js;
    int ndocs = 0, rc = 0;
    bool done = false;

    if ((js = try_json(text, len))) {
        if (!(d = new_doc(b))) {
            json_decref(js);
            return -ENOMEM;
        }
        d->value = js;
        d->line = line_off + 1;
        if (integral_reals(js) < 0)
            return -ENOMEM;
        return 1;
    }
    if (!yaml_parser_initialize(&parser))
        return -ENOMEM;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    c.line_off = line_off;
    while (!done) {
        if (!yaml_parser_parse(&parser, &ev)) {
            if (!d) {
                if (!(d = new_doc(b))) {
                    rc = -ENOMEM;
                    break;
                }
                d->line = (int)parser.mark.line + 1 + line_off;
                ndocs++;
            }
            parser_error(&parser, text, len, line_off, d->error, sizeof(d->error));
            break;
        }
        /* A document "starts" where its content does, not at its --- line. */
        if (d && c.depth == 0 && !c.root_set &&
            (ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_SEQUENCE_START_EVENT ||
             ev.type == YAML_SCALAR_EVENT || ev.type == YAML_ALIAS_EVENT))
            d->line = (int)ev.start_mark.line + 1 + line_off;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (!(d = new_doc(b))) {
                rc = -ENOMEM;
                break;
            }
            ndocs++;
            d->line = (int)ev.start_mark.line + 1 + line_off;
            if (!(c.anchors = json_object()))
                rc = -ENOMEM;
            c.err = d->error;
            c.errlen = sizeof(d->error);
            break;
        case YAML_DOCUMENT_END_EVENT:
            if (c.root_empty_scalar || json_is_null(c.root)) {
                d->empty = 1;
            } else if (c.root && !d->error[0]) {
                d->value = c.root;
                c.root = NULL;
            }
            conv_release(&c);
            c = (struct conv){.line_off = line_off};
            d = NULL;
            break;
        case YAML_MAPPING_START_EVENT:
            rc = push(&c, json_object(), ev.data.mapping_start.anchor, ev.start_mark);
            break;
        case YAML_SEQUENCE_START_EVENT:
            rc = push(&c, json_array(), ev.data.sequence_start.anchor, ev.start_mark);
            break;
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT:
            rc = pop(&c, ev.start_mark);
            break;
        case YAML_SCALAR_EVENT:
            rc = on_scalar(&c, &ev);
            break;
        case YAML_ALIAS_EVENT:
            rc = on_alias(&c, &ev);
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
        if (rc == -ENOMEM)
            break;
        if (rc < 0) {
            /* The document is lost; libyaml's stream position is still sound, but our tree is
             * not: skip to the end of this document. */
            rc = 0;
            conv_release(&c);
            c = (struct conv){.line_off = line_off};
            if (d && !d->error[0])
                snprintf(d->error, sizeof(d->error), "conversion failed");
            d = NULL;
            if (!skip_document(&parser, &done))
                break;
        }
    }
    conv_release(&c);
    yaml_parser_delete(&parser);
    if (rc == 0)
        add_template_hint(b, b->out->n - (size_t)ndocs, text, len);
    return rc < 0 ? rc : ndocs;
}

/* A line that is exactly "---" or "---" followed by blank: a document marker at column 0 (the YAML
 * spec forbids such a line inside any scalar, so splitting there is safe). kubectl's YAMLReader
 * splits multi-document files on the same lines (kubernetes/apimachinery:
 * pkg/util/yaml/decoder.go), so one broken document never hides the next. */
static bool is_marker(const char *p, const char *end)
{
    if (end - p < 3 || p[0] != '-' || p[1] != '-' || p[2] != '-')
        return false;
    return end - p == 3 || p[3] == ' ' || p[3] == '\t' || p[3] == '\n' || p[3] == '\r';
}

int tg_yaml_parse_stream(const char *text, size_t len, struct tg_yaml_docs *out)
{
    struct docs_builder b = {.out = out};
    const char *end = text + len, *p = text, *chunk = text;
    int chunk_line = 0, line = 0, dir_line = -1, rc = 0;
    const char *dir_start = NULL;

    out->v = NULL;
    out->n = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl + 1 : end;

        if (p > chunk && is_marker(p, end)) {
            const char *cut = dir_start ? dir_start : p;
            int cut_line = dir_start ? dir_line : line;

            if (cut > chunk && (rc = parse_chunk(chunk, (size_t)(cut - chunk), chunk_line, &b)) < 0)
                goto fail;
            chunk = cut;
            chunk_line = cut_line;
        }
        /* %YAML / %TAG directives belong to the document that follows them. */
        if (*p == '%') {
            if (!dir_start) {
                dir_start = p;
                dir_line = line;
            }
        } else if (!(*p == '#' || *p == '\n' || (*p == '\r' && p + 1 < end && p[1] == '\n'))) {
            dir_start = NULL;
        }
        p = eol;
        line++;
    }
    if (chunk < end && (rc = parse_chunk(chunk, (size_t)(end - chunk), chunk_line, &b)) < 0)
        goto fail;
    return 0;
fail:
    tg_yaml_docs_release(out);
    return rc;
}

void tg_yaml_docs_release(struct tg_yaml_docs *docs)
{
    if (!docs)
        return;
    for (size_t i = 0; i < docs->n; i++)
        json_decref(docs->v[i].value);
    free(docs->v);
    docs->v = NULL;
    docs->n = 0;
}

json_t *tg_yaml_parse_one(const char *text, size_t len, char *err, size_t errlen)
{
    struct tg_yaml_docs docs;
    json_t *v = NULL;
    size_t nonempty = 0, which = 0;

    if (tg_yaml_parse_stream(text, len, &docs) < 0) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < docs.n; i++) {
        if (!docs.v[i].empty) {
            if (nonempty++ == 0)
                which = i;
        }
    }
    if (nonempty == 0) {
        snprintf(err, errlen, "line 1, column 1: empty document");
    } else if (nonempty > 1) {
        size_t second = which + 1;

        while (docs.v[second].empty)
            second++;
        snprintf(err, errlen, "line %d, column 1: expected one document, found another",
                 docs.v[second].line);
    } else if (!docs.v[which].value) {
        snprintf(err, errlen, "%s", docs.v[which].error);
    } else {
        v = json_incref(docs.v[which].value);
    }
    tg_yaml_docs_release(&docs);
    return v;
}

char *tg_read_file(const char *path, size_t max_bytes, size_t *len, char *err, size_t errlen)
{
    bool is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0;

    if (!f) {
        snprintf(err, errlen, "%s", strerror(errno));
        return NULL;
    }
    for (;;) {
        size_t got;

        if (cap - n < 65536 + 1) {
            size_t ncap = cap ? cap * 2 : 65536 + 1;
            char *nb;

            if (ncap > max_bytes + 65536 + 1)
                ncap = max_bytes + 65536 + 1;
            if (ncap <= cap) {
                ncap = cap;
            } else if (!(nb = realloc(buf, ncap))) {
                snprintf(err, errlen, "out of memory");
                goto fail;
            } else {
                buf = nb;
                cap = ncap;
            }
        }
        got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (n > max_bytes) {
            snprintf(err, errlen, "larger than %zu bytes", max_bytes);
            goto fail;
        }
        if (got == 0) {
            if (ferror(f)) {
                snprintf(err, errlen, "%s", strerror(errno ? errno : EIO));
                goto fail;
            }
            break;
        }
    }
    if (!buf && !(buf = malloc(1))) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    buf[n] = '\0';
    *len = n;
    if (!is_stdin)
        fclose(f);
    return buf;
fail:
    free(buf);
    if (!is_stdin)
        fclose(f);
    return NULL;
}
