/* rendezvous.c -- the rendezvous host a container hands to torchrun or torch.distributed, read
 * from its env and its command line (include/tg/rendezvous.h has the contract). A small reader of
 * words, not a shell: the JobSet decoder only needs to know whether two replicated jobs name the
 * same literal host. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tg/rendezvous.h"

/* Variables kept: the container's env and the assignments of its command line. A container with
 * more is read with the first ones only (a name past the table is unknown, so nothing is guessed).
 */
#define MAX_VARS 64
#define VALUE_MAX 256
/* Words and values longer than this are not addresses. */
#define WORD_MAX 512

struct var {
    char name[64];
    char value[VALUE_MAX];
    bool known;
};

struct reader {
    struct var vars[MAX_VARS];
    size_t nvars;
    char flag[WORD_MAX]; /* the first address flag's value */
    bool has_flag;
    bool want_value; /* the previous word was an address flag without =value */
    bool standalone;
};

static struct var *var_find(struct reader *r, const char *name, size_t len)
{
    for (size_t i = r->nvars; i-- > 0;) {
        if (strlen(r->vars[i].name) == len && !strncmp(r->vars[i].name, name, len))
            return &r->vars[i];
    }
    return NULL;
}

/* Expands $(NAME), ${NAME} and $NAME in s from the known variables into out. False when a
 * variable is unknown or not defined, or the result does not fit: the value varies. */
static bool expand(struct reader *r, const char *s, char *out, size_t len)
{
    size_t at = 0;
    while (*s) {
        if (*s != '$') {
            if (at + 1 >= len)
                return false;
            out[at++] = *s++;
            continue;
        }
        const char *name = s + 1;
        char close = 0;
        if (*name == '(' || *name == '{') {
            close = *name == '(' ? ')' : '}';
            name++;
        }
        size_t n = 0;
        while (isalnum((unsigned char)name[n]) || name[n] == '_')
            n++;
        if (n == 0 || (close && name[n] != close))
            return false; /* $$, $(cmd), ${x:-y}: not a literal */
        struct var *v = var_find(r, name, n);
        if (!v || !v->known || at + strlen(v->value) >= len)
            return false;
        memcpy(out + at, v->value, strlen(v->value));
        at += strlen(v->value);
        s = name + n + (close ? 1 : 0);
    }
    out[at] = '\0';
    return true;
}

static void var_set(struct reader *r, const char *name, size_t nlen, const char *raw, bool known)
{
    struct var *v = var_find(r, name, nlen);
    if (!v) {
        if (r->nvars == MAX_VARS || nlen >= sizeof(v->name))
            return;
        v = &r->vars[r->nvars++];
        memcpy(v->name, name, nlen);
        v->name[nlen] = '\0';
    }
    char tmp[VALUE_MAX];
    v->known = known && raw && expand(r, raw, tmp, sizeof(tmp));
    snprintf(v->value, sizeof(v->value), "%s", v->known ? tmp : "");
}

/* Is a downward-API fieldPath metadata.annotations['KEY'] or metadata.labels['KEY'] (either
 * quote)? */
static bool names_key(const char *path, const char *key)
{
    static const char *const maps[] = {"metadata.annotations[", "metadata.labels["};
    size_t klen = key ? strlen(key) : 0;
    for (size_t i = 0; path && key && i < 2; i++) {
        size_t m = strlen(maps[i]);
        const char *p = path + m;
        if (strncmp(path, maps[i], m) || (*p != '\'' && *p != '"'))
            continue;
        if (!strncmp(p + 1, key, klen) && p[1 + klen] == *p && p[2 + klen] == ']' && !p[3 + klen])
            return true;
    }
    return false;
}

static void read_env(struct reader *r, json_t *container, const char *key, const char *fvalue)
{
    size_t i;
    json_t *e;
    json_array_foreach (json_object_get(container, "env"), i, e) {
        const char *name = json_string_value(json_object_get(e, "name"));
        const char *value = json_string_value(json_object_get(e, "value"));
        json_t *from = json_object_get(e, "valueFrom");
        if (!name)
            continue;
        const char *path =
            json_string_value(json_object_get(json_object_get(from, "fieldRef"), "fieldPath"));
        if (from && fvalue && names_key(path, key))
            var_set(r, name, strlen(name), fvalue, true);
        else
            var_set(r, name, strlen(name), value ? value : "", !from);
    }
}

static const char *const addr_flags[] = {"--master_addr", "--master-addr", "--rdzv_endpoint",
                                         "--rdzv-endpoint"};

/* One word of the command line. */
static void on_word(struct reader *r, const char *w)
{
    if (r->want_value) {
        r->want_value = false;
        snprintf(r->flag, sizeof(r->flag), "%s", w);
        r->has_flag = true;
        return;
    }
    if (!strcmp(w, "--standalone"))
        r->standalone = true;
    for (size_t i = 0; i < sizeof(addr_flags) / sizeof(addr_flags[0]); i++) {
        size_t n = strlen(addr_flags[i]);
        if (strncmp(w, addr_flags[i], n) || (w[n] && w[n] != '='))
            continue;
        if (r->has_flag)
            return;
        if (w[n] == '=') {
            snprintf(r->flag, sizeof(r->flag), "%s", w + n + 1);
            r->has_flag = true;
        } else {
            r->want_value = true;
        }
        return;
    }
    /* NAME=VALUE: an assignment (alone, after export, or as a command prefix). */
    size_t n = 0;
    while (isalnum((unsigned char)w[n]) || w[n] == '_')
        n++;
    if (n > 0 && w[n] == '=' && !isdigit((unsigned char)w[0]))
        var_set(r, w, n, w + n + 1, true);
}

static bool separator(char c)
{
    return isspace((unsigned char)c) || c == ';' || c == '&' || c == '|' || c == '(' || c == ')';
}

/* Splits one command/args item into words (quotes removed, a word ends at whitespace or a shell
 * operator outside quotes) and hands each to on_word. */
static void read_item(struct reader *r, const char *s)
{
    char w[WORD_MAX];
    size_t at = 0;
    char quote = 0;
    bool any = false;
    for (;; s++) {
        char c = *s;
        if (c && quote) {
            if (c == quote)
                quote = 0;
            else if (at + 1 < sizeof(w))
                w[at++] = c;
            continue;
        }
        if (c == '\'' || c == '"') {
            quote = c;
            any = true;
            continue;
        }
        if (c == '\\' && s[1]) {
            s++;
            if (*s != '\n' && at + 1 < sizeof(w))
                w[at++] = *s;
            any = true;
            continue;
        }
        if (!c || separator(c)) {
            if (any || at) {
                w[at] = '\0';
                on_word(r, w);
            }
            at = 0;
            any = false;
            if (!c)
                return;
            continue;
        }
        if (at + 1 < sizeof(w))
            w[at++] = c;
        any = true;
    }
}

static bool is_ipv4(const char *h)
{
    for (; *h; h++) {
        if (!isdigit((unsigned char)*h) && *h != '.')
            return false;
    }
    return true;
}

/* host[:port] -> the normalized host; NONE for a local address. */
static enum tg_rdzv normalize(const char *value, char *host, size_t len)
{
    char h[WORD_MAX];
    snprintf(h, sizeof(h), "%s", value);
    char *colon = strrchr(h, ':');
    if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1))
        *colon = '\0';
    for (char *p = h; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    if (!h[0] || h[0] == '[' || strchr(h, ':') || !strcmp(h, "localhost") ||
        !strncmp(h, "127.", 4) || !strcmp(h, "0.0.0.0"))
        return TG_RDZV_NONE;
    if (!is_ipv4(h) && strchr(h, '.'))
        *strchr(h, '.') = '\0';
    if (strlen(h) >= len)
        return TG_RDZV_VARIES;
    snprintf(host, len, "%s", h);
    return TG_RDZV_LITERAL;
}

static enum tg_rdzv resolve(struct reader *r, const char *raw, char *host, size_t len)
{
    char v[WORD_MAX];
    if (!expand(r, raw, v, sizeof(v)))
        return TG_RDZV_VARIES;
    return normalize(v, host, len);
}

enum tg_rdzv tg_rendezvous_host(json_t *container, char *host, size_t len)
{
    return tg_rendezvous_host_field(container, NULL, NULL, host, len);
}

enum tg_rdzv tg_rendezvous_host_field(json_t *container, const char *key, const char *value,
                                      char *host, size_t len)
{
    static const char *const envs[] = {"MASTER_ADDR", "PET_MASTER_ADDR", "PET_RDZV_ENDPOINT"};
    static struct reader zero;
    struct reader r = zero;
    size_t i;
    json_t *item;
    if (len)
        host[0] = '\0';
    read_env(&r, container, key, value);
    static const char *const lists[] = {"command", "args"};
    for (size_t l = 0; l < 2; l++) {
        json_array_foreach (json_object_get(container, lists[l]), i, item) {
            if (json_is_string(item))
                read_item(&r, json_string_value(item));
        }
    }
    if (r.has_flag)
        return resolve(&r, r.flag, host, len);
    if (r.standalone)
        return TG_RDZV_NONE;
    for (i = 0; i < sizeof(envs) / sizeof(envs[0]); i++) {
        struct var *v = var_find(&r, envs[i], strlen(envs[i]));
        if (v)
            return v->known ? normalize(v->value, host, len) : TG_RDZV_VARIES;
    }
    return TG_RDZV_NONE;
}
