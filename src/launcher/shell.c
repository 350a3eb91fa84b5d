/* shell.c -- POSIX sh words, lists and variables, read far enough to hand each simple command of
 * a container's command line to a callback (include/tg/shell.h). */
/*
 * What is read (POSIX.1-2017 XCU 2.2-2.6, 2.9; the grammar a `sh -c` script is parsed with):
 * quoting ('...', "...", backslash, backslash-newline), comments, the list operators ; & && ||
 * | and newlines, ( ) { } and the reserved words around simple commands, redirections (their
 * target word is dropped, here-document bodies are skipped), leading NAME=value assignments,
 * $NAME ${NAME} ${NAME:-word} ${NAME-word}, $((arithmetic)) with + - * / % and parentheses, and
 * command substitution ($(...) and backquotes), which is never run: it is unresolved.
 * Field splitting and pathname expansion are not done: a word stays one word.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/shell.h"

/* ---- small growable string ---------------------------------------------------------------- */
struct sbuf {
    char *s;
    size_t n, cap;
    bool oom;
};

static void sb_putn(struct sbuf *b, const char *s, size_t len)
{
    if (b->oom)
        return;
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 32;
        while (cap < b->n + len + 1)
            cap *= 2;
        char *ns = realloc(b->s, cap);
        if (!ns) {
            b->oom = true;
            return;
        }
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, len);
    b->n += len;
    b->s[b->n] = '\0';
}

static void sb_puts(struct sbuf *b, const char *s)
{
    sb_putn(b, s, strlen(s));
}

/* Takes the string out of b ("" when empty); NULL on ENOMEM. */
static char *sb_take(struct sbuf *b)
{
    if (b->oom) {
        free(b->s);
        b->s = NULL;
        return NULL;
    }
    char *s = b->s ? b->s : strdup("");
    b->s = NULL;
    b->n = b->cap = 0;
    return s;
}

/* ---- variables ---------------------------------------------------------------------------- */
void tg_sh_vars_init(struct tg_sh_vars *vs)
{
    vs->v = NULL;
    vs->n = vs->cap = 0;
}

void tg_sh_vars_release(struct tg_sh_vars *vs)
{
    for (size_t i = 0; i < vs->n; i++) {
        free(vs->v[i].name);
        free(vs->v[i].value);
        free(vs->v[i].why);
    }
    free(vs->v);
    tg_sh_vars_init(vs);
}

const struct tg_sh_var *tg_sh_vars_get(const struct tg_sh_vars *vs, const char *name)
{
    for (size_t i = 0; i < vs->n; i++)
        if (strcmp(vs->v[i].name, name) == 0)
            return &vs->v[i];
    return NULL;
}

int tg_sh_vars_set(struct tg_sh_vars *vs, const char *name, const char *value, const char *why)
{
    char *nv = value ? strdup(value) : NULL;
    char *nw = value ? NULL : strdup(why ? why : "value unknown");
    if ((value && !nv) || (!value && !nw))
        goto out_nomem;
    for (size_t i = 0; i < vs->n; i++) {
        if (strcmp(vs->v[i].name, name) == 0) {
            free(vs->v[i].value);
            free(vs->v[i].why);
            vs->v[i].value = nv;
            vs->v[i].why = nw;
            return 0;
        }
    }
    if (vs->n == vs->cap) {
        size_t cap = vs->cap ? vs->cap * 2 : 16;
        struct tg_sh_var *v = realloc(vs->v, cap * sizeof(*v));
        if (!v)
            goto out_nomem;
        vs->v = v;
        vs->cap = cap;
    }
    vs->v[vs->n].name = strdup(name);
    if (!vs->v[vs->n].name)
        goto out_nomem;
    vs->v[vs->n].value = nv;
    vs->v[vs->n].why = nw;
    vs->v[vs->n].exported = false;
    vs->n++;
    return 0;
out_nomem:
    free(nv);
    free(nw);
    return -ENOMEM;
}

void tg_sh_vars_export(struct tg_sh_vars *vs, const char *name)
{
    for (size_t i = 0; i < vs->n; i++)
        if (strcmp(vs->v[i].name, name) == 0)
            vs->v[i].exported = true;
}

static int vars_copy(struct tg_sh_vars *dst, const struct tg_sh_vars *src)
{
    tg_sh_vars_init(dst);
    for (size_t i = 0; i < src->n; i++) {
        if (tg_sh_vars_set(dst, src->v[i].name, src->v[i].value, src->v[i].why) < 0) {
            tg_sh_vars_release(dst);
            return -ENOMEM;
        }
        dst->v[dst->n - 1].exported = src->v[i].exported;
    }
    return 0;
}

static bool is_name_start(char c)
{
    return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool is_name_char(char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9');
}

/* Length of the NAME at s (0 when s does not start with one). */
static size_t name_len(const char *s)
{
    size_t n = 0;
    if (!is_name_start(s[0]))
        return 0;
    while (is_name_char(s[n]))
        n++;
    return n;
}

/* ---- raw words ------------------------------------------------------------------------------ */
enum seg_kind {
    SEG_LIT,   /* text */
    SEG_PARAM, /* $NAME, ${NAME}, ${NAME:-dflt}: text = NAME */
    SEG_ARITH, /* $((text)) */
    SEG_BAD,   /* command substitution or an expansion we do not read: text = as written */
};

struct seg {
    enum seg_kind kind;
    bool quoted;   /* SEG_LIT: came from inside quotes or after a backslash */
    bool has_dflt; /* SEG_PARAM: ${NAME-dflt} / ${NAME:-dflt} */
    bool colon;    /* ... the ':-' form: an empty value also takes the default */
    char *text;
    char *dflt;
    char *why; /* SEG_BAD: the reason */
};

struct rword {
    struct seg *v;
    size_t n, cap;
};

struct rwords {
    struct rword *v;
    size_t n, cap;
};

static void rword_release(struct rword *w)
{
    for (size_t i = 0; i < w->n; i++) {
        free(w->v[i].text);
        free(w->v[i].dflt);
        free(w->v[i].why);
    }
    free(w->v);
    w->v = NULL;
    w->n = w->cap = 0;
}

static void rwords_clear(struct rwords *ws)
{
    for (size_t i = 0; i < ws->n; i++)
        rword_release(&ws->v[i]);
    ws->n = 0;
}

static void rwords_release(struct rwords *ws)
{
    rwords_clear(ws);
    free(ws->v);
    ws->v = NULL;
    ws->cap = 0;
}

/* The walk: state shared by the lexer and the command reader of one script. */
struct walk {
    struct tg_sh_walk *wk;
    struct tg_sh_vars *vars;
    int depth;
    size_t index;      /* simple commands seen so far */
    size_t argv_index; /* the container argv item this script came from */
    /* NAME=VALUE words that reach the current command's environment only: prefix assignments
     * and `env NAME=VALUE` arguments (set while one simple command is read) */
    const struct tg_sh_word *cmd_env;
    size_t ncmd_env;
    const struct tg_sh_word *env_args;
    size_t nenv_args;
    bool env_cleared; /* env -i: the container env does not reach the command */
    int err;          /* -ENOMEM or the callback's error: the walk stops */
};

static struct seg *rword_new_seg(struct walk *w, struct rword *rw, enum seg_kind kind)
{
    if (rw->n == rw->cap) {
        size_t cap = rw->cap ? rw->cap * 2 : 4;
        struct seg *v = realloc(rw->v, cap * sizeof(*v));
        if (!v) {
            w->err = -ENOMEM;
            return NULL;
        }
        rw->v = v;
        rw->cap = cap;
    }
    struct seg *s = &rw->v[rw->n++];
    memset(s, 0, sizeof(*s));
    s->kind = kind;
    return s;
}

static void rword_lit(struct walk *w, struct rword *rw, const char *s, size_t len, bool quoted)
{
    struct seg *last = rw->n ? &rw->v[rw->n - 1] : NULL;
    if (!last || last->kind != SEG_LIT || last->quoted != quoted) {
        last = rword_new_seg(w, rw, SEG_LIT);
        if (!last)
            return;
        last->quoted = quoted;
        last->text = strdup("");
        if (!last->text) {
            w->err = -ENOMEM;
            return;
        }
    }
    size_t old = strlen(last->text);
    char *nt = realloc(last->text, old + len + 1);
    if (!nt) {
        w->err = -ENOMEM;
        return;
    }
    memcpy(nt + old, s, len);
    nt[old + len] = '\0';
    last->text = nt;
}

static char *dupn(struct walk *w, const char *s, size_t len)
{
    char *d = strndup(s, len);
    if (!d)
        w->err = -ENOMEM;
    return d;
}

static void rword_bad(struct walk *w, struct rword *rw, const char *s, size_t len, const char *why)
{
    struct seg *g = rword_new_seg(w, rw, SEG_BAD);
    if (!g)
        return;
    g->text = dupn(w, s, len);
    char buf[TG_SH_REASON_MAX];
    snprintf(buf, sizeof(buf), "%.*s %s", (int)(len > 60 ? 60 : len), s, why);
    g->why = strdup(buf);
    if (!g->why)
        w->err = -ENOMEM;
}

/* ---- lexer ---------------------------------------------------------------------------------- */
enum tok {
    TOK_EOF,
    TOK_WORD,
    TOK_SEP,   /* ; & && || | |& ( ) ;; newline */
    TOK_REDIR, /* < > >> <& >& <> >| <<  <<- &> */
};

struct lex {
    const char *p;
    int line;
    bool newline;       /* the last TOK_SEP was a newline */
    bool heredoc;       /* the last TOK_REDIR was << or <<- */
    bool heredoc_strip; /* <<- */
    bool error;
    char err[TG_SH_REASON_MAX];
};

/* Finds the end of a $( ... ) or $(( ... )) body that starts at p (just after the opening
 * parentheses), with nesting and quotes skipped. Returns the pointer to the closing ')', or
 * NULL when there is none. */
static const char *match_paren(const char *p, int *lines)
{
    int depth = 1;
    for (; *p; p++) {
        if (*p == '\n')
            (*lines)++;
        if (*p == '\\' && p[1]) {
            p++;
            continue;
        }
        if (*p == '\'') {
            const char *q = strchr(p + 1, '\'');
            if (!q)
                return NULL;
            for (const char *r = p; r < q; r++)
                *lines += *r == '\n';
            p = q;
            continue;
        }
        if (*p == '(')
            depth++;
        else if (*p == ')' && --depth == 0)
            return p;
    }
    return NULL;
}

static void lex_fail(struct lex *lx, const char *what)
{
    if (!lx->error)
        snprintf(lx->err, sizeof(lx->err), "line %d: %s; the rest of the script was not read",
                 lx->line, what);
    lx->error = true;
}

/* Reads a $-expansion at lx->p (pointing at '$') into rw. */
static void lex_dollar(struct lex *lx, struct walk *w, struct rword *rw, bool quoted)
{
    const char *p = lx->p;
    if (p[1] == '(' && p[2] == '(') {
        int lines = 0;
        const char *end = match_paren(p + 3, &lines);
        if (end && end[1] == ')') {
            struct seg *g = rword_new_seg(w, rw, SEG_ARITH);
            if (g)
                g->text = dupn(w, p + 3, (size_t)(end - (p + 3)));
            lx->line += lines;
            lx->p = end + 2;
            return;
        }
        /* $( (...) ) is a command substitution of a subshell: fall through */
    }
    if (p[1] == '(') {
        int lines = 0;
        const char *end = match_paren(p + 2, &lines);
        if (!end) {
            lex_fail(lx, "unterminated $(");
            lx->p += strlen(lx->p);
            return;
        }
        rword_bad(w, rw, p, (size_t)(end - p + 1), "is a command substitution");
        lx->line += lines;
        lx->p = end + 1;
        return;
    }
    if (p[1] == '{') {
        const char *end = strchr(p + 2, '}');
        if (!end) {
            lex_fail(lx, "unterminated ${");
            lx->p += strlen(lx->p);
            return;
        }
        size_t n = name_len(p + 2);
        const char *after = p + 2 + n;
        if (n > 0 && after == end) {
            struct seg *g = rword_new_seg(w, rw, SEG_PARAM);
            if (g)
                g->text = dupn(w, p + 2, n);
        } else if (n > 0 && (after[0] == '-' || (after[0] == ':' && after[1] == '-') ||
                             after[0] == '=' || (after[0] == ':' && after[1] == '='))) {
            struct seg *g = rword_new_seg(w, rw, SEG_PARAM);
            bool colon = after[0] == ':';
            const char *d = after + (colon ? 2 : 1);
            if (g) {
                g->text = dupn(w, p + 2, n);
                g->has_dflt = true;
                g->colon = colon;
                g->dflt = dupn(w, d, (size_t)(end - d));
            }
        } else {
            rword_bad(w, rw, p, (size_t)(end - p + 1), "is an expansion trainguard does not read");
        }
        for (const char *r = p; r < end; r++)
            lx->line += *r == '\n';
        lx->p = end + 1;
        return;
    }
    size_t n = name_len(p + 1);
    if (n > 0) {
        struct seg *g = rword_new_seg(w, rw, SEG_PARAM);
        if (g)
            g->text = dupn(w, p + 1, n);
        lx->p = p + 1 + n;
        return;
    }
    if (p[1] && strchr("0123456789@*#?$!-", p[1])) {
        rword_bad(w, rw, p, 2, "is a positional or special parameter");
        lx->p = p + 2;
        return;
    }
    rword_lit(w, rw, "$", 1, quoted);
    lx->p = p + 1;
}

static void lex_backquote(struct lex *lx, struct walk *w, struct rword *rw)
{
    const char *p = lx->p;
    const char *q = p + 1;
    while (*q && *q != '`') {
        if (*q == '\\' && q[1])
            q++;
        lx->line += *q == '\n';
        q++;
    }
    if (!*q) {
        lex_fail(lx, "unterminated `");
        lx->p = q;
        return;
    }
    rword_bad(w, rw, p, (size_t)(q - p + 1), "is a command substitution");
    lx->p = q + 1;
}

static void lex_dquote(struct lex *lx, struct walk *w, struct rword *rw)
{
    lx->p++;
    rword_lit(w, rw, "", 0, true); /* "" is a word even when empty */
    for (;;) {
        char c = *lx->p;
        if (!c) {
            lex_fail(lx, "unterminated double quote");
            return;
        }
        if (c == '"') {
            lx->p++;
            return;
        }
        if (c == '\\' && lx->p[1] && strchr("$`\"\\\n", lx->p[1])) {
            if (lx->p[1] == '\n')
                lx->line++;
            else
                rword_lit(w, rw, lx->p + 1, 1, true);
            lx->p += 2;
            continue;
        }
        if (c == '$') {
            lex_dollar(lx, w, rw, true);
            continue;
        }
        if (c == '`') {
            lex_backquote(lx, w, rw);
            continue;
        }
        lx->line += c == '\n';
        rword_lit(w, rw, lx->p, 1, true);
        lx->p++;
    }
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

static bool ends_word(char c)
{
    return !c || is_blank(c) || strchr("\n;&|()<>", c);
}

/* The next token. For TOK_WORD the word is in rw (which the caller owns and clears). */
static enum tok lex_next(struct lex *lx, struct walk *w, struct rword *rw)
{
    for (;;) {
        while (is_blank(*lx->p))
            lx->p++;
        if (lx->p[0] == '\\' && lx->p[1] == '\n') {
            lx->p += 2;
            lx->line++;
            continue;
        }
        if (*lx->p == '#') {
            while (*lx->p && *lx->p != '\n')
                lx->p++;
            continue;
        }
        break;
    }
    const char *p = lx->p;
    lx->newline = false;
    if (!*p || lx->error)
        return TOK_EOF;
    if (*p == '\n') {
        lx->p++;
        lx->line++;
        lx->newline = true;
        return TOK_SEP;
    }
    if (p[0] == '&' && p[1] == '>') {
        lx->p += p[2] == '>' ? 3 : 2;
        lx->heredoc = false;
        return TOK_REDIR;
    }
    if (strchr(";&|()", *p)) {
        lx->p += (p[1] == p[0] && *p != '(' && *p != ')') || (p[0] == '|' && p[1] == '&') ? 2 : 1;
        return TOK_SEP;
    }
    if (*p == '<' || *p == '>') {
        lx->heredoc = p[0] == '<' && p[1] == '<';
        lx->heredoc_strip = lx->heredoc && p[2] == '-';
        lx->p++;
        while (*lx->p && strchr("<>&|-", *lx->p) && lx->p - p < 3)
            lx->p++;
        return TOK_REDIR;
    }
    /* a word */
    while (!ends_word(*lx->p) && !lx->error) {
        char c = *lx->p;
        if (c == '\\') {
            if (lx->p[1] == '\n') {
                lx->p += 2;
                lx->line++;
            } else if (lx->p[1]) {
                rword_lit(w, rw, lx->p + 1, 1, true);
                lx->p += 2;
            } else {
                rword_lit(w, rw, "\\", 1, false);
                lx->p++;
            }
        } else if (c == '\'') {
            const char *q = strchr(lx->p + 1, '\'');
            if (!q) {
                lex_fail(lx, "unterminated single quote");
                lx->p += strlen(lx->p);
                break;
            }
            rword_lit(w, rw, lx->p + 1, (size_t)(q - lx->p - 1), true);
            for (const char *r = lx->p; r < q; r++)
                lx->line += *r == '\n';
            lx->p = q + 1;
        } else if (c == '"') {
            lex_dquote(lx, w, rw);
        } else if (c == '$') {
            lex_dollar(lx, w, rw, false);
        } else if (c == '`') {
            lex_backquote(lx, w, rw);
        } else {
            rword_lit(w, rw, lx->p, 1, false);
            lx->p++;
        }
    }
    /* an IO number (2>file) is part of the redirection, not a word */
    if ((*lx->p == '<' || *lx->p == '>') && rw->n == 1 && rw->v[0].kind == SEG_LIT &&
        !rw->v[0].quoted && rw->v[0].text[0] &&
        strspn(rw->v[0].text, "0123456789") == strlen(rw->v[0].text)) {
        rword_release(rw);
        return lex_next(lx, w, rw);
    }
    return TOK_WORD;
}

/* Skips a here-document body (the lexer stands at the start of the line after <<DELIM). */
static void skip_heredoc(struct lex *lx, const char *delim, bool strip)
{
    size_t dl = strlen(delim);
    while (*lx->p) {
        const char *s = lx->p;
        const char *eol = strchr(s, '\n');
        size_t len = eol ? (size_t)(eol - s) : strlen(s);
        lx->p = eol ? eol + 1 : s + len;
        lx->line += eol != NULL;
        if (strip)
            while (len && *s == '\t') {
                s++;
                len--;
            }
        if (len == dl && strncmp(s, delim, dl) == 0)
            return;
    }
}

/* ---- arithmetic ------------------------------------------------------------------------------
 * POSIX XCU 2.6.4: signed long arithmetic; variables are read by name with or without $. Only
 * + - * / % ( ) and unary minus are read; anything else is unresolved. */
struct arith {
    const char *p;
    const struct tg_sh_vars *vars;
    bool bad;
    char why[TG_SH_REASON_MAX];
};

static void ar_fail(struct arith *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ar_fail(struct arith *a, const char *fmt, ...)
{
    if (!a->bad) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(a->why, sizeof(a->why), fmt, ap);
        va_end(ap);
    }
    a->bad = true;
}

static void ar_ws(struct arith *a)
{
    while (isspace((unsigned char)*a->p))
        a->p++;
}

static bool parse_ll(const char *s, long long *out)
{
    char *end;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return false;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

static long long ar_expr(struct arith *a, int depth);

static long long ar_factor(struct arith *a, int depth)
{
    ar_ws(a);
    if (a->bad)
        return 0;
    if (depth > 32) {
        ar_fail(a, "%s: arithmetic nested too deep", "$((...))");
        return 0;
    }
    if (*a->p == '-' || *a->p == '+') {
        bool neg = *a->p == '-';
        a->p++;
        long long v = ar_factor(a, depth + 1);
        if (neg && v == LLONG_MIN) {
            ar_fail(a, "%s: arithmetic overflow", "$((...))");
            return 0;
        }
        return neg ? -v : v;
    }
    if (*a->p == '(') {
        a->p++;
        long long v = ar_expr(a, depth + 1);
        ar_ws(a);
        if (*a->p != ')')
            ar_fail(a, "%s: unbalanced parentheses in arithmetic", "$((...))");
        else
            a->p++;
        return v;
    }
    if (isdigit((unsigned char)*a->p)) {
        char *end;
        errno = 0;
        long long v = strtoll(a->p, &end, 10);
        if (errno || is_name_char(*end)) {
            ar_fail(a, "%s: not a decimal number in arithmetic", "$((...))");
            return 0;
        }
        a->p = end;
        return v;
    }
    bool braced = false;
    if (*a->p == '$') {
        a->p++;
        if (*a->p == '{') {
            braced = true;
            a->p++;
        }
    }
    size_t n = name_len(a->p);
    if (!n) {
        ar_fail(a, "%s: arithmetic trainguard does not read", "$((...))");
        return 0;
    }
    char name[128];
    snprintf(name, sizeof(name), "%.*s", (int)n, a->p);
    a->p += n;
    if (braced) {
        if (*a->p != '}') {
            ar_fail(a, "%s: arithmetic trainguard does not read", "$((...))");
            return 0;
        }
        a->p++;
    }
    const struct tg_sh_var *v = tg_sh_vars_get(a->vars, name);
    long long val = 0;
    if (!v)
        ar_fail(a, "$%.60s is not set in the container env or script", name);
    else if (!v->value)
        ar_fail(a, "%s", v->why);
    else if (!parse_ll(v->value, &val))
        ar_fail(a, "$%.60s is not a number", name);
    return val;
}

static long long ar_term(struct arith *a, int depth)
{
    long long v = ar_factor(a, depth);
    for (;;) {
        ar_ws(a);
        char op = *a->p;
        if (a->bad || (op != '*' && op != '/' && op != '%'))
            return v;
        a->p++;
        long long r = ar_factor(a, depth);
        if (a->bad)
            return 0;
        if (op == '*') {
            if (__builtin_mul_overflow(v, r, &v))
                ar_fail(a, "%s: arithmetic overflow", "$((...))");
        } else if (r == 0 || (v == LLONG_MIN && r == -1)) {
            ar_fail(a, "%s: division by zero", "$((...))");
        } else {
            v = op == '/' ? v / r : v % r;
        }
    }
}

static long long ar_expr(struct arith *a, int depth)
{
    long long v = ar_term(a, depth);
    for (;;) {
        ar_ws(a);
        char op = *a->p;
        if (a->bad || (op != '+' && op != '-'))
            return v;
        a->p++;
        long long r = ar_term(a, depth);
        if (a->bad)
            return 0;
        bool ovf = op == '+' ? __builtin_add_overflow(v, r, &v) : __builtin_sub_overflow(v, r, &v);
        if (ovf)
            ar_fail(a, "%s: arithmetic overflow", "$((...))");
    }
}

/* ---- expansion -------------------------------------------------------------------------------*/
static void word_release(struct tg_sh_word *w)
{
    free(w->text);
    free(w->reason);
    w->text = w->reason = NULL;
}

static void set_reason(struct walk *w, struct tg_sh_word *out, const char *why)
{
    if (out->reason || !out->resolved)
        return;
    out->resolved = false;
    out->reason = strdup(why);
    if (!out->reason)
        w->err = -ENOMEM;
}

/* Expands segments [from, n) of rw (the first one starting at byte skip) into out. */
static void expand_segs(struct walk *w, const struct rword *rw, size_t from, size_t skip,
                        struct tg_sh_word *out)
{
    struct sbuf b = {0};
    out->resolved = true;
    out->reason = NULL;
    sb_puts(&b, "");
    for (size_t i = from; i < rw->n; i++) {
        const struct seg *g = &rw->v[i];
        char why[TG_SH_REASON_MAX];
        switch (g->kind) {
        case SEG_LIT:
            sb_puts(&b, g->text + (i == from ? skip : 0));
            break;
        case SEG_PARAM: {
            const struct tg_sh_var *v = tg_sh_vars_get(w->vars, g->text);
            bool empty = v && v->value && !v->value[0];
            if (g->has_dflt && (!v || (g->colon && empty))) {
                if (strpbrk(g->dflt, "$`")) {
                    snprintf(why, sizeof(why), "${%s:-%.40s} has a default that is not literal",
                             g->text, g->dflt);
                    set_reason(w, out, why);
                }
                sb_puts(&b, g->dflt);
            } else if (v && v->value) {
                sb_puts(&b, v->value);
            } else {
                if (v)
                    snprintf(why, sizeof(why), "%s", v->why);
                else
                    snprintf(why, sizeof(why), "$%s is not set in the container env or script",
                             g->text);
                set_reason(w, out, why);
                sb_puts(&b, "$");
                sb_puts(&b, g->text);
            }
            break;
        }
        case SEG_ARITH: {
            struct arith a = {.p = g->text, .vars = w->vars};
            long long v = ar_expr(&a, 0);
            ar_ws(&a);
            if (!a.bad && *a.p)
                ar_fail(&a, "$((%.40s)): arithmetic trainguard does not read", g->text);
            if (a.bad) {
                set_reason(w, out, a.why);
                sb_puts(&b, "$((");
                sb_puts(&b, g->text);
                sb_puts(&b, "))");
            } else {
                char num[32];
                snprintf(num, sizeof(num), "%lld", v);
                sb_puts(&b, num);
            }
            break;
        }
        case SEG_BAD: {
            /* $(NAME) that Kubernetes could not expand because NAME comes from valueFrom */
            size_t nl = g->text[0] == '$' && g->text[1] == '(' ? name_len(g->text + 2) : 0;
            const struct tg_sh_var *v = NULL;
            if (nl && g->text[2 + nl] == ')' && !g->text[3 + nl]) {
                char name[128];
                snprintf(name, sizeof(name), "%.*s", (int)nl, g->text + 2);
                v = tg_sh_vars_get(w->vars, name);
            }
            set_reason(w, out, v && v->why ? v->why : g->why);
            sb_puts(&b, g->text);
            break;
        }
        }
    }
    out->text = sb_take(&b);
    if (!out->text)
        w->err = -ENOMEM;
}

/* ---- simple commands ------------------------------------------------------------------------ */
static const char *const reserved_skip[] = {"if",    "then",  "else", "elif", "fi", "do",   "done",
                                            "while", "until", "!",    "{",    "}",  "esac", NULL};
static const char *const reserved_stop[] = {"for", "case", "select", "function", NULL};

static bool in_list(const char *s, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (strcmp(s, list[i]) == 0)
            return true;
    return false;
}

/* The word as plain unquoted literal text, or NULL. */
static const char *plain_word(const struct rword *rw)
{
    if (rw->n == 1 && rw->v[0].kind == SEG_LIT && !rw->v[0].quoted)
        return rw->v[0].text;
    return NULL;
}

/* Length of "NAME=" when rw is an assignment word, else 0. */
static size_t assignment_len(const struct rword *rw)
{
    if (rw->n == 0 || rw->v[0].kind != SEG_LIT || rw->v[0].quoted)
        return 0;
    size_t n = name_len(rw->v[0].text);
    return n && rw->v[0].text[n] == '=' ? n + 1 : 0;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static bool starts_opt(const struct tg_sh_word *w)
{
    return w->text[0] == '-' && w->text[1];
}

static int process_words(struct walk *w, const struct tg_sh_word *words, size_t n, int line);
static int parse_script(struct tg_sh_walk *wk, const char *script, struct tg_sh_vars *vars,
                        int depth, size_t argv_index);

static void set_from_word(struct walk *w, const char *name, const struct tg_sh_word *val)
{
    int rc = val->resolved ? tg_sh_vars_set(w->vars, name, val->text, NULL)
                           : tg_sh_vars_set(w->vars, name, NULL, val->reason);
    if (rc < 0)
        w->err = -ENOMEM;
}

/* export/readonly/declare NAME=value ... (export and declare -x also export NAME) */
static void run_export(struct walk *w, const struct tg_sh_word *words, size_t n)
{
    bool exp = strcmp(base_name(words[0].text), "export") == 0;
    for (size_t i = 1; i < n; i++) {
        const char *t = words[i].text;
        size_t len = name_len(t);
        if (strcmp(t, "-x") == 0)
            exp = true;
        if (!len || (t[len] != '=' && t[len] != '\0'))
            continue;
        char name[128];
        snprintf(name, sizeof(name), "%.*s", (int)len, t);
        if (t[len] == '=') {
            struct tg_sh_word val = {.text = (char *)t + len + 1,
                                     .resolved = words[i].resolved,
                                     .reason = words[i].reason};
            set_from_word(w, name, &val);
        }
        if (exp)
            tg_sh_vars_export(w->vars, name);
    }
}

/* Hands the command that starts at words[0] (argv item `at` at depth 0) to the callback. */
static void hand_over(struct walk *w, const struct tg_sh_word *words, size_t n, int line, size_t at)
{
    struct tg_sh_cmd cmd = {
        .words = words,
        .nwords = n,
        .depth = w->depth,
        .line = line,
        .index = w->index,
        .argv_index = w->depth == 0 ? at : w->argv_index,
        .vars = w->vars,
        .prefix = w->cmd_env,
        .nprefix = w->ncmd_env,
        .env_args = w->env_args,
        .nenv_args = w->nenv_args,
        .env_cleared = w->env_cleared,
    };
    int rc = w->wk->on_command ? w->wk->on_command(w->wk->ctx, &cmd) : 0;
    if (rc < 0)
        w->err = rc;
}

static void push_env(struct tg_sh_env *env, const char *name, size_t namelen, const char *value)
{
    env->v[env->n].name = name;
    env->v[env->n].namelen = namelen;
    env->v[env->n].value = value;
    env->n++;
}

int tg_sh_cmd_env(const struct tg_sh_cmd *cmd, struct tg_sh_env *out)
{
    const struct tg_sh_word *lists[2] = {cmd->prefix, cmd->env_args};
    size_t counts[2] = {cmd->nprefix, cmd->nenv_args};
    size_t nvars = cmd->env_cleared ? 0 : cmd->vars->n;
    out->n = 0;
    out->v = NULL;
    if (nvars + counts[0] + counts[1] == 0)
        return 0;
    out->v = calloc(nvars + counts[0] + counts[1], sizeof(*out->v));
    if (!out->v)
        return -ENOMEM;
    for (size_t i = 0; i < nvars; i++) {
        const struct tg_sh_var *v = &cmd->vars->v[i];
        if (v->exported)
            push_env(out, v->name, strlen(v->name), v->value);
    }
    for (size_t k = 0; k < 2; k++) {
        for (size_t i = 0; i < counts[k]; i++) {
            const char *t = lists[k][i].text;
            size_t len = name_len(t);
            if (len && t[len] == '=')
                push_env(out, t, len, lists[k][i].resolved ? t + len + 1 : NULL);
        }
    }
    return 0;
}

void tg_sh_env_release(struct tg_sh_env *env)
{
    free(env->v);
    env->v = NULL;
    env->n = 0;
}

static void run_shell(struct walk *w, const struct tg_sh_word *words, size_t n, size_t i)
{
    bool c = false;
    size_t j = i + 1;
    while (j < n && (words[j].text[0] == '-' || words[j].text[0] == '+') && words[j].text[1]) {
        const char *t = words[j].text;
        if (strcmp(t, "--") == 0) {
            j++;
            break;
        }
        if (t[1] == '-') { /* --login, --norc, --noprofile */
            j++;
            continue;
        }
        if (strcmp(t + 1, "o") == 0) { /* -o pipefail */
            j += 2;
            continue;
        }
        if (strchr(t + 1, 'c'))
            c = true;
        j++;
    }
    /* An unresolved script word still is a script: Kubernetes left a $(NAME) in it, which the
     * shell then reads as a command substitution (unresolved where it is used). */
    if (!c || j >= n)
        return;
    if (w->depth + 1 >= TG_SH_MAX_DEPTH) {
        if (!w->wk->script_error)
            snprintf(w->wk->error, sizeof(w->wk->error),
                     "shell scripts nested more than %d deep were not read", TG_SH_MAX_DEPTH);
        w->wk->script_error = true;
        return;
    }
    /* the inner shell's assignments do not come back out */
    struct tg_sh_vars inner;
    if (vars_copy(&inner, w->vars) < 0) {
        w->err = -ENOMEM;
        return;
    }
    int rc =
        parse_script(w->wk, words[j].text, &inner, w->depth + 1, w->depth == 0 ? j : w->argv_index);
    if (rc < 0)
        w->err = rc;
    tg_sh_vars_release(&inner);
}

/* Reads one simple command of expanded words: the wrappers and builtins the shell reader
 * interprets, `sh -c` scripts; any other command goes to the callback. */
static int process_words(struct walk *w, const struct tg_sh_word *words, size_t n, int line)
{
    size_t i = 0;
    while (i < n && !w->err) {
        const struct tg_sh_word *cur = &words[i];
        if (!cur->resolved)
            break; /* $MPIRUN: what runs is unknown (the callback is told so) */
        const char *b = base_name(cur->text);
        if (strcmp(b, "exec") == 0) {
            i++;
            while (i < n && starts_opt(&words[i]))
                i += strcmp(words[i].text, "-a") == 0 ? 2 : 1;
        } else if (strcmp(b, "time") == 0) {
            i++;
            while (i < n && starts_opt(&words[i]))
                i++;
        } else if (strcmp(b, "nohup") == 0 || strcmp(b, "command") == 0 ||
                   strcmp(b, "builtin") == 0 || strcmp(b, "xargs") == 0) {
            i++;
        } else if (strcmp(b, "timeout") == 0) {
            /* GNU coreutils timeout [OPTION] DURATION COMMAND */
            i++;
            while (i < n && starts_opt(&words[i])) {
                const char *t = words[i].text;
                i += (strcmp(t, "-s") == 0 || strcmp(t, "-k") == 0 || strcmp(t, "--signal") == 0 ||
                      strcmp(t, "--kill-after") == 0)
                         ? 2
                         : 1;
            }
            i++;
        } else if (strcmp(b, "env") == 0) {
            /* env [-i] [-u NAME] [NAME=VALUE]... COMMAND: the assignments reach the command's
             * environment, not the words the shell already expanded. */
            i++;
            /* a second env starts its own list (the count too: `env A=1 env mpirun` once read
             * a NULL list with the first one's count) */
            w->env_args = NULL;
            w->nenv_args = 0;
            while (i < n) {
                const char *t = words[i].text;
                size_t nl = name_len(t);
                if (nl && t[nl] == '=' && !w->env_args)
                    w->env_args = &words[i];
                if (nl && t[nl] == '=')
                    w->nenv_args = (size_t)(&words[i] - w->env_args) + 1;
                if (strcmp(t, "-i") == 0 || strcmp(t, "-") == 0 ||
                    strcmp(t, "--ignore-environment") == 0)
                    w->env_cleared = true;
                if (starts_opt(&words[i]) || strcmp(t, "-") == 0)
                    i += (strcmp(t, "-u") == 0 || strcmp(t, "-C") == 0) ? 2 : 1;
                else if (nl && t[nl] == '=')
                    i++;
                else
                    break;
            }
        } else if (strcmp(b, "nice") == 0 || strcmp(b, "stdbuf") == 0 || strcmp(b, "sudo") == 0 ||
                   strcmp(b, "numactl") == 0 || strcmp(b, "taskset") == 0) {
            /* short options that take a separate value, per wrapper */
            const char *withval = !strcmp(b, "nice")      ? "n"
                                  : !strcmp(b, "stdbuf")  ? "ioe"
                                  : !strcmp(b, "sudo")    ? "ugCph"
                                  : !strcmp(b, "numactl") ? "NmCpi"
                                                          : "";
            bool ts = strcmp(b, "taskset") == 0;
            i++;
            while (i < n && starts_opt(&words[i])) {
                const char *t = words[i].text;
                i += (strlen(t) == 2 && strchr(withval, t[1])) ? 2 : 1;
            }
            if (ts)
                i++; /* the CPU mask */
        } else if (strcmp(b, "export") == 0 || strcmp(b, "readonly") == 0 ||
                   strcmp(b, "declare") == 0 || strcmp(b, "typeset") == 0 ||
                   strcmp(b, "local") == 0) {
            run_export(w, words + i, n - i);
            return 0;
        } else if (strcmp(b, "sh") == 0 || strcmp(b, "bash") == 0 || strcmp(b, "dash") == 0 ||
                   strcmp(b, "ash") == 0 || strcmp(b, "zsh") == 0 || strcmp(b, "ksh") == 0) {
            run_shell(w, words, n, i);
            return 0;
        } else {
            break;
        }
    }
    if (i < n && !w->err)
        hand_over(w, words + i, n - i, line, i);
    return 0;
}

/* A simple command of raw words: reserved words, assignments, then the command. */
static void run_simple(struct walk *w, struct rwords *cmd, int line)
{
    size_t i = 0;
    while (i < cmd->n) {
        const char *pw = plain_word(&cmd->v[i]);
        if (!pw)
            break;
        if (in_list(pw, reserved_stop))
            return;
        if (!in_list(pw, reserved_skip))
            break;
        i++;
    }
    size_t first = i;
    while (i < cmd->n && assignment_len(&cmd->v[i]))
        i++;
    if (i == cmd->n) {
        /* NAME=value alone: shell variables for the following commands */
        for (size_t k = first; k < cmd->n; k++) {
            size_t al = assignment_len(&cmd->v[k]);
            char name[128];
            snprintf(name, sizeof(name), "%.*s", (int)(al - 1), cmd->v[k].v[0].text);
            struct tg_sh_word val;
            expand_segs(w, &cmd->v[k], 0, al, &val);
            if (val.text)
                set_from_word(w, name, &val);
            word_release(&val);
        }
        w->index++;
        return;
    }
    /* words [first, cmd->n): the prefix assignments, then the command */
    size_t n = cmd->n - first;
    struct tg_sh_word *words = calloc(n, sizeof(*words));
    if (!words) {
        w->err = -ENOMEM;
        return;
    }
    for (size_t k = 0; k < n; k++)
        expand_segs(w, &cmd->v[first + k], 0, 0, &words[k]);
    w->cmd_env = words;
    w->ncmd_env = i - first;
    if (!w->err)
        process_words(w, words + (i - first), n - (i - first), line);
    w->cmd_env = w->env_args = NULL;
    w->ncmd_env = w->nenv_args = 0;
    w->env_cleared = false;
    for (size_t k = 0; k < n; k++)
        word_release(&words[k]);
    free(words);
    w->index++;
}

static bool rwords_push(struct walk *w, struct rwords *ws, struct rword *rw)
{
    if (ws->n == ws->cap) {
        size_t cap = ws->cap ? ws->cap * 2 : 16;
        struct rword *v = realloc(ws->v, cap * sizeof(*v));
        if (!v) {
            w->err = -ENOMEM;
            return false;
        }
        ws->v = v;
        ws->cap = cap;
    }
    ws->v[ws->n++] = *rw;
    memset(rw, 0, sizeof(*rw));
    return true;
}

static int parse_script(struct tg_sh_walk *wk, const char *script, struct tg_sh_vars *vars,
                        int depth, size_t argv_index)
{
    struct walk w = {.wk = wk, .vars = vars, .depth = depth, .argv_index = argv_index};
    struct lex lx = {.p = script, .line = 1};
    struct rwords cmd = {0};
    struct rword rw = {0};
    char *heredoc = NULL; /* delimiter of a pending here-document */
    bool heredoc_strip = false;
    bool drop_next = false, want_delim = false;
    int cmd_line = 1;
    for (;;) {
        int line = lx.line;
        enum tok t = lex_next(&lx, &w, &rw);
        if (w.err || lx.error)
            break; /* sh refuses a command it cannot parse: it never runs */
        if (t == TOK_WORD) {
            if (want_delim) {
                struct tg_sh_word d;
                expand_segs(&w, &rw, 0, 0, &d);
                free(heredoc);
                heredoc = d.text;
                free(d.reason);
                want_delim = false;
                drop_next = false;
                rword_release(&rw);
                continue;
            }
            if (drop_next) {
                drop_next = false;
                rword_release(&rw);
                continue;
            }
            if (cmd.n == 0)
                cmd_line = line;
            rwords_push(&w, &cmd, &rw);
            continue;
        }
        if (t == TOK_REDIR) {
            drop_next = true;
            want_delim = lx.heredoc;
            heredoc_strip = lx.heredoc_strip;
            continue;
        }
        if (cmd.n)
            run_simple(&w, &cmd, cmd_line);
        rwords_clear(&cmd);
        drop_next = want_delim = false;
        if (t == TOK_SEP && lx.newline && heredoc) {
            skip_heredoc(&lx, heredoc, heredoc_strip);
            free(heredoc);
            heredoc = NULL;
        }
        if (t == TOK_EOF)
            break;
    }
    if (lx.error && !wk->script_error) {
        wk->script_error = true;
        snprintf(wk->error, sizeof(wk->error), "%s", lx.err);
    }
    free(heredoc);
    rword_release(&rw);
    rwords_release(&cmd);
    return w.err;
}

int tg_sh_walk_script(struct tg_sh_walk *wk, const char *script, struct tg_sh_vars *vars, int depth)
{
    return parse_script(wk, script, vars, depth, 0);
}

int tg_sh_walk_words(struct tg_sh_walk *wk, const struct tg_sh_word *argv, size_t argc,
                     struct tg_sh_vars *vars)
{
    struct walk w = {.wk = wk, .vars = vars, .depth = 0};
    process_words(&w, argv, argc, 1);
    return w.err;
}
