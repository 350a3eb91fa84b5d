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
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/shell.h"

/* ---- small growable string ---------------------------------------------------------------- */
struct sbuf {
    char *s;
    size_t n, cap;
    bool oom;
    bool fixed; /* s is the caller's buffer (cap bytes): the first growth moves it to malloc */
};

static void sb_putn(struct sbuf *b, const char *s, size_t len)
{
    if (b->oom)
        return;
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 32;
        while (cap < b->n + len + 1)
            cap *= 2;
        char *ns = b->fixed ? malloc(cap) : realloc(b->s, cap);
        if (!ns) {
            b->oom = true;
            return;
        }
        if (b->fixed && b->n)
            memcpy(ns, b->s, b->n);
        b->fixed = false;
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

/* Takes the string out of b ("" when empty), malloc'd; NULL on ENOMEM. */
static char *sb_take(struct sbuf *b)
{
    if (b->oom) {
        if (!b->fixed)
            free(b->s);
        b->s = NULL;
        b->fixed = false;
        return NULL;
    }
    char *s = b->fixed ? strndup(b->s, b->n) : b->s ? b->s : strdup("");
    b->s = NULL;
    b->n = b->cap = 0;
    b->fixed = false;
    return s;
}

/* ---- variables ---------------------------------------------------------------------------- */
void tg_sh_vars_init(struct tg_sh_vars *vs)
{
    vs->v = NULL;
    vs->n = vs->cap = 0;
    vs->bytes = 0;
}

/* The bytes a variable holds towards TG_SH_VARS_MAX: its value and its elements. */
static size_t var_bytes(const struct tg_sh_var *v)
{
    size_t n = v->value ? strlen(v->value) : 0;
    for (size_t i = 0; i < v->nelems; i++)
        n += strlen(v->elems[i].text);
    return n;
}

static struct tg_sh_var *vars_find(const struct tg_sh_vars *vs, const char *name)
{
    for (size_t i = 0; i < vs->n; i++)
        if (strcmp(vs->v[i].name, name) == 0)
            return &vs->v[i];
    return NULL;
}

/* Why a value of len bytes is not held in place of a variable holding old bytes, or NULL. */
static const char *over_bound(const struct tg_sh_vars *vs, size_t len, size_t old)
{
    if (len > TG_SH_VALUE_MAX)
        return "a value longer than 131072 bytes, the longest string execve passes, is not "
               "followed";
    if (vs->bytes - old + len > TG_SH_VARS_MAX)
        return "the script's variables would hold more than 4 MiB: not followed";
    return NULL;
}

static void elems_free(struct tg_sh_var *v)
{
    for (size_t i = 0; i < v->nelems; i++) {
        free(v->elems[i].text);
        free(v->elems[i].reason);
    }
    free(v->elems);
    v->elems = NULL;
    v->nelems = 0;
}

void tg_sh_vars_release(struct tg_sh_vars *vs)
{
    for (size_t i = 0; i < vs->n; i++) {
        free(vs->v[i].name);
        free(vs->v[i].value);
        free(vs->v[i].why);
        elems_free(&vs->v[i]);
    }
    free(vs->v);
    tg_sh_vars_init(vs);
}

const struct tg_sh_var *tg_sh_vars_get(const struct tg_sh_vars *vs, const char *name)
{
    return vars_find(vs, name);
}

int tg_sh_vars_set(struct tg_sh_vars *vs, const char *name, const char *value, const char *why)
{
    struct tg_sh_var *old = vars_find(vs, name);
    size_t oldn = old ? var_bytes(old) : 0, len = value ? strlen(value) : 0;
    const char *over = value ? over_bound(vs, len, oldn) : NULL;
    if (over) {
        value = NULL;
        why = over;
        len = 0;
    }
    char *nv = value ? strdup(value) : NULL;
    char *nw = value ? NULL : strdup(why ? why : "value unknown");
    if ((value && !nv) || (!value && !nw))
        goto out_nomem;
    if (old) {
        free(old->value);
        free(old->why);
        elems_free(old);
        old->value = nv;
        old->why = nw;
        vs->bytes = vs->bytes - oldn + len;
        return 0;
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
    vs->v[vs->n].elems = NULL;
    vs->v[vs->n].nelems = 0;
    vs->n++;
    vs->bytes += len;
    return 0;
out_nomem:
    free(nv);
    free(nw);
    return -ENOMEM;
}

int tg_sh_vars_set_array(struct tg_sh_vars *vs, const char *name, const struct tg_sh_word *elems,
                         size_t n, const char *why)
{
    if (elems) {
        const struct tg_sh_var *old = vars_find(vs, name);
        size_t total = 0;
        for (size_t i = 0; i < n && total <= TG_SH_VALUE_MAX; i++)
            total += strlen(elems[i].text);
        /* the first element is held twice: as the value and as elems[0] */
        size_t first_len = n ? strlen(elems[0].text) : 0;
        const char *over = n > TG_SH_ARRAY_MAX
                               ? "an array of more than 1024 elements is not followed"
                               : over_bound(vs, total + first_len, old ? var_bytes(old) : 0);
        if (over) {
            elems = NULL;
            why = over;
        }
    }
    /* $NAME of an array is its first element (an empty array: empty) */
    const struct tg_sh_word *first = elems && n ? &elems[0] : NULL;
    int rc = !elems                      ? tg_sh_vars_set(vs, name, NULL, why)
             : first && !first->resolved ? tg_sh_vars_set(vs, name, NULL, first->reason)
                                         : tg_sh_vars_set(vs, name, first ? first->text : "", NULL);
    if (rc < 0)
        return -ENOMEM;
    struct tg_sh_var *v = (struct tg_sh_var *)tg_sh_vars_get(vs, name);
    if (!elems)
        return 0;
    v->elems = calloc(n ? n : 1, sizeof(*v->elems));
    if (!v->elems)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        struct tg_sh_word *e = &v->elems[i];
        e->text = strdup(elems[i].text);
        e->resolved = elems[i].resolved;
        e->reason = elems[i].reason ? strdup(elems[i].reason) : NULL;
        v->nelems = i + 1;
        if (!e->text || (elems[i].reason && !e->reason))
            return -ENOMEM;
        vs->bytes += strlen(e->text);
    }
    return 0;
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
        const struct tg_sh_var *v = &src->v[i];
        int rc = v->elems ? tg_sh_vars_set_array(dst, v->name, v->elems, v->nelems, v->why)
                          : tg_sh_vars_set(dst, v->name, v->value, v->why);
        if (rc < 0) {
            tg_sh_vars_release(dst);
            return -ENOMEM;
        }
        dst->v[dst->n - 1].exported = v->exported;
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

/* ---- raw words ------------------------------------------------------------------------------
 * The segments of the words being read, and their text, are carved from a scratch area of the
 * script's walk (struct walk), which is emptied between commands: reading a word costs no malloc
 * and releasing it no free. */
enum seg_kind {
    SEG_LIT,   /* text */
    SEG_PARAM, /* $NAME, ${NAME}, ${NAME:-dflt}: text = NAME */
    SEG_ARITH, /* $((text)) */
    SEG_ARRAY, /* ${NAME[@]}, ${NAME[*]}: text = NAME */
    SEG_BAD,   /* command substitution or an expansion we do not read: text = as written */
};

struct seg {
    enum seg_kind kind;
    bool quoted;   /* came from inside quotes (SEG_LIT: or after a backslash): no field
                      splitting */
    bool has_dflt; /* SEG_PARAM: ${NAME-dflt} / ${NAME:-dflt} */
    bool colon;    /* ... the ':-' form: an empty value also takes the default */
    bool star;     /* SEG_ARRAY: ${NAME[*]} (the elements joined by a blank when quoted) */
    size_t len;    /* SEG_LIT: strlen(text) */
    char *text;
    char *dflt;
    char *why; /* SEG_BAD: the reason */
};

/* Segments and text live in the walk's scratch area: a raw word owns no memory of its own. */
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
    w->v = NULL;
    w->n = w->cap = 0;
}

/* The array of a command's raw words is scratch too: it is let go with them, and the scratch
 * area is emptied after it (parse_script). */
static void rwords_clear(struct rwords *ws)
{
    ws->v = NULL;
    ws->n = ws->cap = 0;
}

/* A block of the scratch area. */
struct chunk {
    struct chunk *prev;
    size_t cap, used;
    size_t size; /* the bytes of the whole block, header included (also keeps data 16-byte
                    aligned) */
    char data[];
};

/* A block's data at the least: the block with its header is 1 KiB, which malloc serves from its
 * per-thread cache. */
#define SCRATCH_FIRST (1024 - sizeof(struct chunk))
/* The most a script's length makes its first block hold (parse_script). */
#define SCRATCH_HINT_MAX (16 * 1024)

/* The scratch area: blocks that only grow until scratch_reset(); the newest is written to. */
struct scratch {
    struct chunk *top;
    char *last;         /* the latest allocation (it can grow in place) */
    struct chunk *base; /* a script's first block, which holds the script's copy after its data:
                           kept until scratch_release (NULL: none) */
};

/* The walk: state shared by the lexer and the command reader of one script. */
struct walk {
    struct tg_sh_walk *wk;
    struct tg_sh_vars *vars; /* read through this; written through vars_mut() */
    bool borrowed;           /* vars are the outer shell's: copied into own on the first write */
    struct tg_sh_vars own;
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
    /* the redirections of the command being run (NULL: none) */
    const struct tg_sh_word *stdout_file;
    const struct tg_sh_word *heredoc;
    struct scratch sc; /* the raw words of the command being read */
    /* the script being read (NULL: none, the exec-form words) and a copy of it that lives as long
     * as the walk: the usual word's text is the copy's bytes at the word's place, ended by a NUL
     * written over the copy's byte after it (parse_script) */
    const char *src;
    char *copy;
    size_t words_hint; /* the room a command's array of raw words starts with (0: 16) */
    int err;           /* -ENOMEM or the callback's error: the walk stops */
};

static size_t align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* Grows the latest allocation p (old bytes) to n bytes in place when its block has room, else
 * moves it (p NULL: a new allocation). NULL and w->err set on ENOMEM or overflow. */
static void *sc_grow(struct walk *w, void *p, size_t old, size_t n)
{
    struct scratch *sc = &w->sc;
    struct chunk *c = sc->top;
    if (n > SIZE_MAX / 4) {
        w->err = -ENOMEM;
        return NULL;
    }
    if (p && p == sc->last && c && (size_t)((char *)p - c->data) + align8(n) <= c->cap) {
        c->used = (size_t)((char *)p - c->data) + align8(n);
        return p;
    }
    if (!c || c->used + align8(n) > c->cap) {
        size_t cap = c ? c->cap * 2 : SCRATCH_FIRST;
        while (cap < align8(n))
            cap *= 2;
        struct chunk *nc = malloc(sizeof(*nc) + cap);
        if (!nc) {
            w->err = -ENOMEM;
            return NULL;
        }
        nc->prev = c;
        nc->cap = cap;
        nc->used = 0;
        nc->size = sizeof(*nc) + cap;
        sc->top = c = nc;
    }
    char *q = c->data + c->used;
    c->used += align8(n);
    if (p && old)
        memcpy(q, p, old < n ? old : n);
    sc->last = q;
    return q;
}

/* Empties the scratch area, keeping its newest (largest) block; a script's first block (base)
 * is only unlinked, as it holds the script's copy. */
static void scratch_reset(struct scratch *sc)
{
    struct chunk *c = sc->top;
    if (!c)
        return;
    for (struct chunk *o = c->prev; o;) {
        struct chunk *prev = o->prev;
        if (o != sc->base)
            free(o);
        o = prev;
    }
    c->prev = NULL;
    c->used = 0;
    sc->last = NULL;
}

/* ---- a script's first block, kept for the next script -------------------------------------
 * A launch line's first block is several KiB, which malloc serves neither from its per-thread
 * cache nor cheaply: the block a script was read with is kept, one per thread and at most
 * SPARE_MAX bytes, for the next script the thread reads (a request reads one or two), and freed
 * when the thread ends. */
#define SPARE_MAX (64 * 1024)

static _Thread_local struct chunk *spare;
static _Thread_local bool spare_keyed; /* the thread's exit frees its spare */
static pthread_key_t spare_key;
static bool spare_key_made;
static pthread_once_t spare_once = PTHREAD_ONCE_INIT;

static void spare_drop(void *unused)
{
    (void)unused;
    free(spare);
    spare = NULL;
}

static void spare_key_make(void)
{
    spare_key_made = pthread_key_create(&spare_key, spare_drop) == 0;
}

/* A block of at least size bytes: the spare when it is large enough, else malloc'd. */
static struct chunk *base_take(size_t size)
{
    struct chunk *c = spare;
    if (c && c->size >= size) {
        spare = NULL;
        return c;
    }
    c = malloc(size);
    if (c)
        c->size = size;
    return c;
}

/* Keeps c as the spare (the larger of it and the spare, within SPARE_MAX), or frees it. */
static void base_give(struct chunk *c)
{
    if (!c)
        return;
    if (c->size > SPARE_MAX || (spare && spare->size >= c->size)) {
        free(c);
        return;
    }
    if (!spare_keyed) {
        pthread_once(&spare_once, spare_key_make);
        spare_keyed = spare_key_made && pthread_setspecific(spare_key, &spare) == 0;
        if (!spare_keyed) {
            free(c);
            return;
        }
    }
    free(spare);
    spare = c;
}

/* n bytes of scratch: from the newest block when it has room (the usual case), else
 * sc_grow's new block. */
static inline void *sc_alloc(struct walk *w, size_t n)
{
    struct chunk *c = w->sc.top;
    if (c && n < c->cap && align8(n) <= c->cap - c->used) {
        char *q = c->data + c->used;
        c->used += align8(n);
        w->sc.last = q;
        return q;
    }
    return sc_grow(w, NULL, 0, n);
}

static void scratch_release(struct scratch *sc)
{
    scratch_reset(sc);
    if (sc->top != sc->base)
        free(sc->top);
    base_give(sc->base);
    sc->top = sc->base = NULL;
}

static struct seg *rword_new_seg(struct walk *w, struct rword *rw, enum seg_kind kind)
{
    if (rw->n == rw->cap) {
        size_t cap = rw->cap ? rw->cap * 2 : 1; /* most words are one segment */
        struct seg *v = rw->v ? sc_grow(w, rw->v, rw->cap * sizeof(*v), cap * sizeof(*v))
                              : sc_alloc(w, sizeof(*v));
        if (!v)
            return NULL;
        rw->v = v;
        rw->cap = cap;
    }
    struct seg *s = &rw->v[rw->n++];
    memset(s, 0, sizeof(*s));
    s->kind = kind;
    return s;
}

static char *dupn(struct walk *w, const char *s, size_t len)
{
    char *d = sc_alloc(w, len + 1);
    if (d) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

/* A word's first segment (most words are one literal): the segment and its text in one piece of
 * scratch, the text last so that it can still grow in place (a later segment moves the array of
 * segments elsewhere, as sc_grow does when it is not the latest). rw is empty. */
static inline void rword_first_lit(struct walk *w, struct rword *rw, const char *s, size_t len,
                                   bool quoted)
{
    size_t hs = align8(sizeof(struct seg));
    char *q = len < SIZE_MAX / 4 ? sc_alloc(w, hs + len + 1) : NULL;
    if (!q) {
        if (!w->err)
            w->err = -ENOMEM;
        return;
    }
    struct seg *g = (struct seg *)(void *)q;
    *g = (struct seg){.kind = SEG_LIT, .quoted = quoted, .len = len, .text = q + hs};
    memcpy(g->text, s, len);
    g->text[len] = '\0';
    w->sc.last = g->text;
    rw->v = g;
    rw->n = rw->cap = 1;
}

static void rword_lit(struct walk *w, struct rword *rw, const char *s, size_t len, bool quoted)
{
    if (!rw->v) {
        rword_first_lit(w, rw, s, len, quoted);
        return;
    }
    struct seg *last = rw->n ? &rw->v[rw->n - 1] : NULL;
    if (!last || last->kind != SEG_LIT || last->quoted != quoted) {
        last = rword_new_seg(w, rw, SEG_LIT);
        if (!last)
            return;
        last->quoted = quoted;
        last->text = dupn(w, s, len);
        last->len = len;
        return;
    }
    if (!last->text)
        return; /* ENOMEM already */
    char *nt = sc_grow(w, last->text, last->len + 1, last->len + len + 1);
    if (!nt)
        return;
    memcpy(nt + last->len, s, len);
    last->len += len;
    nt[last->len] = '\0';
    last->text = nt;
}

static void rword_bad(struct walk *w, struct rword *rw, const char *s, size_t len, const char *why)
{
    struct seg *g = rword_new_seg(w, rw, SEG_BAD);
    if (!g)
        return;
    g->text = dupn(w, s, len);
    g->len = len;
    char buf[TG_SH_REASON_MAX];
    int bl = snprintf(buf, sizeof(buf), "%.*s %s", (int)(len > 60 ? 60 : len), s, why);
    g->why = dupn(w, buf, bl < 0 ? 0 : (size_t)bl < sizeof(buf) ? (size_t)bl : sizeof(buf) - 1);
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
    bool to_stdout;     /* the last TOK_REDIR sends standard output to a file (>, >>, >|, &>) */
    int io_number;      /* the IO number before the last TOK_REDIR (2>file), or -1 */
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
            if (g) {
                g->text = dupn(w, p + 3, (size_t)(end - (p + 3)));
                g->quoted = quoted;
            }
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
            if (g) {
                g->text = dupn(w, p + 2, n);
                g->quoted = quoted;
            }
        } else if (n > 0 && after + 3 == end && after[0] == '[' &&
                   (after[1] == '@' || after[1] == '*') && after[2] == ']') {
            struct seg *g = rword_new_seg(w, rw, SEG_ARRAY);
            if (g) {
                g->text = dupn(w, p + 2, n);
                g->quoted = quoted;
                g->star = after[1] == '*'; /* "${A[*]}" is one word, "${A[@]}" one per element */
            }
        } else if (n > 0 && (after[0] == '-' || (after[0] == ':' && after[1] == '-') ||
                             after[0] == '=' || (after[0] == ':' && after[1] == '='))) {
            struct seg *g = rword_new_seg(w, rw, SEG_PARAM);
            bool colon = after[0] == ':';
            const char *d = after + (colon ? 2 : 1);
            if (g) {
                g->text = dupn(w, p + 2, n);
                g->quoted = quoted;
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
        if (g) {
            g->text = dupn(w, p + 1, n);
            g->quoted = quoted;
        }
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

/* Inside double quotes: the bytes that end a run of ordinary characters. */
static const bool dquote_special[256] = {['"'] = true, ['\\'] = true, ['$'] = true, ['`'] = true};

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
        /* A run of ordinary characters goes in at once: the same segment as one by one. */
        size_t n = 0;
        while (lx->p[n] && (n == 0 || !dquote_special[(unsigned char)lx->p[n]]))
            lx->line += lx->p[n++] == '\n';
        rword_lit(w, rw, lx->p, n, true);
        lx->p += n;
    }
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* Bytes that end a word (1, 3 for the operators ; & | ( ), and 4 for the redirections < >,
 * before which a word of digits is an IO number), and those a word treats specially (2):
 * backslash, quotes, $ and `. */
static const unsigned char word_class[256] = {
    ['\0'] = 1, [' '] = 1,  ['\t'] = 1, ['\r'] = 1, ['\n'] = 1, [';'] = 3,
    ['&'] = 3,  ['|'] = 3,  ['('] = 3,  [')'] = 3,  ['<'] = 4,  ['>'] = 4,
    ['\\'] = 2, ['\''] = 2, ['"'] = 2,  ['$'] = 2,  ['`'] = 2,
};

static bool ends_word(char c)
{
    unsigned char k = word_class[(unsigned char)c];
    return k == 1 || k >= 3;
}

/* The first byte at or after e that word_class marks (the script's NUL is one), four bytes a
 * turn: each is looked at only after the one before it is not marked, so no byte past the
 * script is read. */
static inline const char *to_word_class(const char *e)
{
    while (!word_class[(unsigned char)e[0]] && !word_class[(unsigned char)e[1]] &&
           !word_class[(unsigned char)e[2]] && !word_class[(unsigned char)e[3]])
        e += 4;
    while (!word_class[(unsigned char)*e])
        e++;
    return e;
}

/* lex_next past the usual word. */
static enum tok lex_token(struct lex *lx, struct walk *w, struct rword *rw)
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
        lx->to_stdout = true;
        lx->io_number = -1;
        return TOK_REDIR;
    }
    if (word_class[(unsigned char)*p] == 3) { /* ; & | ( ) */
        lx->p += (p[1] == p[0] && *p != '(' && *p != ')') || (p[0] == '|' && p[1] == '&') ? 2 : 1;
        return TOK_SEP;
    }
    if (*p == '<' || *p == '>') {
        lx->heredoc = p[0] == '<' && p[1] == '<';
        lx->heredoc_strip = lx->heredoc && p[2] == '-';
        lx->p++;
        while (*lx->p && strchr("<>&|-", *lx->p) && lx->p - p < 3)
            lx->p++;
        /* > >> >| write a file; >& and <> do not (2>&1 duplicates a descriptor) */
        lx->to_stdout = p[0] == '>' && !memchr(p + 1, '&', (size_t)(lx->p - p - 1));
        lx->io_number = -1;
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
            /* A run of plain characters goes in at once: the same segment as one by one. */
            size_t n = 1;
            while (!word_class[(unsigned char)lx->p[n]])
                n++; /* up to an end (1, 3, 4) or a special byte (2) */
            rword_lit(w, rw, lx->p, n, false);
            lx->p += n;
        }
    }
    /* an IO number (2>file) is part of the redirection, not a word */
    if ((*lx->p == '<' || *lx->p == '>') && rw->n == 1 && rw->v[0].kind == SEG_LIT &&
        !rw->v[0].quoted && rw->v[0].text && rw->v[0].text[0] &&
        strspn(rw->v[0].text, "0123456789") == rw->v[0].len) {
        int io = rw->v[0].text[1] ? 10 : rw->v[0].text[0] - '0';
        rword_release(rw);
        enum tok t = lex_token(lx, w, rw);
        lx->io_number = io;
        return t;
    }
    return TOK_WORD;
}

/* The usual word [p, e) of the script as a raw word: one literal segment from the scratch area
 * whose text is the script copy's bytes at the word's place, NUL-terminated there (the byte after
 * the word, a blank or an operator, is read from the script itself). w->err set on ENOMEM. rw
 * is empty. */
static inline void rword_plain(struct walk *w, struct rword *rw, const char *p, const char *e)
{
    struct seg *g = sc_alloc(w, sizeof(struct seg));
    if (!g) {
        if (!w->err)
            w->err = -ENOMEM;
        return;
    }
    char *t = w->copy + (p - w->src);
    t[e - p] = '\0';
    *g = (struct seg){.kind = SEG_LIT, .len = (size_t)(e - p), .text = t};
    rw->v = g;
    rw->n = rw->cap = 1;
}

/* The next token. For TOK_WORD the word is in rw (which the caller owns and clears). The usual
 * word, plain bytes after blanks up to a blank or an operator (not '<' or '>', which may make it
 * an IO number), is read here as the one literal lex_token makes of it (its text in the script's
 * copy, rword_plain), with no call. */
static inline enum tok lex_next(struct lex *lx, struct walk *w, struct rword *rw)
{
    const char *p = lx->p;
    while (is_blank(*p))
        p++;
    lx->p = p;
    if (!word_class[(unsigned char)*p] && *p != '#' && !rw->v && !lx->error) {
        const char *e = to_word_class(p + 1);
        unsigned char k = word_class[(unsigned char)*e];
        if (k == 1 || k == 3) {
            lx->newline = false;
            rword_plain(w, rw, p, e);
            lx->p = e;
            return TOK_WORD;
        }
    }
    return lex_token(lx, w, rw);
}

/* Skips a here-document body (the lexer stands at the start of the line after <<DELIM), and
 * keeps its lines (without the leading tabs of <<-) in body when body is not NULL. */
static void skip_heredoc(struct lex *lx, const char *delim, bool strip, struct sbuf *body)
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
        if (body) {
            sb_putn(body, s, len);
            sb_puts(body, "\n");
        }
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

/* The words one raw word expands to: several with field splitting, exactly one without. */
struct wordlist {
    struct tg_sh_word *v;
    size_t n, cap;
    bool scratch;   /* the array (unless own_array), texts and reasons live in the walk's scratch
                       area (the words of the command being run, which live no longer than its raw
                       words): releasing the list frees no word; else all are malloc'd */
    bool own_array; /* a scratch list's array is malloc'd (its block had no room) */
};

static void wordlist_release(struct wordlist *wl)
{
    for (size_t i = 0; i < wl->n && !wl->scratch; i++) {
        free(wl->v[i].text);
        if (wl->v[i].reason) /* most words have none */
            free(wl->v[i].reason);
    }
    if (!wl->scratch || wl->own_array)
        free(wl->v);
    wl->v = NULL;
    wl->n = wl->cap = 0;
}

/* Room for one more word in wl. false and w->err set on ENOMEM. */
static bool wordlist_room(struct walk *w, struct wordlist *wl)
{
    if (wl->n < wl->cap)
        return true;
    size_t cap = wl->cap ? wl->cap * 2 : 8;
    struct tg_sh_word *v = wl->scratch && !wl->own_array
                               ? sc_grow(w, wl->v, wl->cap * sizeof(*v), cap * sizeof(*v))
                               : realloc(wl->v, cap * sizeof(*v));
    if (!v) {
        w->err = -ENOMEM;
        return false;
    }
    wl->v = v;
    wl->cap = cap;
    return true;
}

/* The expansion of one raw word in progress: the field being built and where fields go. */
struct xp {
    struct walk *w;
    struct wordlist *out;
    bool split; /* field splitting (a command's words); off for assignments and here-documents */
    struct sbuf b;
    bool has;      /* b holds a field, possibly an empty one from quotes */
    bool resolved; /* every part of the field is known */
    char *reason;  /* malloc'd, or in the scratch area for a scratch list (out->scratch) */
};

/* w->err when the expansions went past TG_SH_EXPAND_MAX: the walk stops without an error. */
#define WALK_STOPPED 1

/* Counts n bytes of expansion towards TG_SH_EXPAND_MAX; false (the walk stopped, script_error
 * set) past it. */
static bool expand_budget(struct walk *w, size_t n)
{
    struct tg_sh_walk *wk = w->wk;
    if (n <= TG_SH_EXPAND_MAX - wk->expanded) {
        wk->expanded += n;
        return true;
    }
    if (!wk->script_error) {
        wk->script_error = true;
        snprintf(wk->error, sizeof(wk->error),
                 "the script expands to more than 16 MiB of words: read no further");
    }
    if (!w->err)
        w->err = WALK_STOPPED;
    return false;
}

static void xp_unresolved(struct xp *x, const char *why)
{
    if (!x->resolved)
        return;
    x->resolved = false;
    /* a scratch list's words keep their reasons in the scratch area (xp_end_field) */
    x->reason = x->out->scratch ? dupn(x->w, why, strlen(why)) : strdup(why);
    if (!x->reason)
        x->w->err = -ENOMEM;
}

/* Appends to the field; a field longer than TG_SH_VALUE_MAX (no command can receive it) keeps
 * its first bytes and is unresolved. */
static void xp_put(struct xp *x, const char *s, size_t len)
{
    x->has = true;
    if (x->b.n + len > TG_SH_VALUE_MAX) {
        xp_unresolved(x, "the word expands to more than 131072 bytes, the longest string execve "
                         "passes: not followed");
        return;
    }
    if (!expand_budget(x->w, len))
        return;
    sb_putn(&x->b, s, len);
}

/* Ends the field being built (when there is one, or always when force). */
static void xp_end_field(struct xp *x, bool force)
{
    if (!x->has && !force)
        return;
    struct wordlist *wl = x->out;
    if (!expand_budget(x->w, sizeof(struct tg_sh_word)) || !wordlist_room(x->w, wl))
        return;
    sb_puts(&x->b, "");
    struct tg_sh_word *o = &wl->v[wl->n];
    if (wl->scratch) {
        o->text = x->b.oom ? NULL : dupn(x->w, x->b.s, x->b.n);
        if (x->b.s) { /* the buffer is kept for the next field */
            x->b.n = 0;
            x->b.s[0] = '\0';
        }
    } else {
        o->text = sb_take(&x->b);
    }
    if (!o->text) {
        x->w->err = -ENOMEM;
        return;
    }
    o->resolved = x->resolved;
    o->reason = x->reason;
    wl->n++;
    x->has = false;
    x->resolved = true;
    x->reason = NULL;
}

/* Text an expansion produced: split into fields on blanks and newlines (the default IFS) unless
 * it was quoted or splitting is off (POSIX XCU 2.6.5). */
static void xp_expanded(struct xp *x, const char *s, bool quoted)
{
    if (quoted || !x->split) {
        xp_put(x, s, strlen(s));
        return;
    }
    for (; *s; s++) {
        if (*s == ' ' || *s == '\t' || *s == '\n')
            xp_end_field(x, false);
        else
            xp_put(x, s, 1);
    }
}

/* Writes n bytes of s at why + at (a TG_SH_REASON_MAX buffer) and terminates it, cut where
 * snprintf would cut; returns the new length. The reasons of the usual unresolved words, written
 * without a format string. */
static size_t why_put(char *why, size_t at, const char *s, size_t n)
{
    if (at >= TG_SH_REASON_MAX - 1)
        return at;
    if (n > TG_SH_REASON_MAX - 1 - at)
        n = TG_SH_REASON_MAX - 1 - at;
    memcpy(why + at, s, n);
    why[at + n] = '\0';
    return at + n;
}

/* $NAME, ${NAME}, ${NAME:-default}. */
static void xp_param(struct xp *x, const struct seg *g)
{
    char why[TG_SH_REASON_MAX];
    const struct tg_sh_var *v = tg_sh_vars_get(x->w->vars, g->text);
    bool empty = v && v->value && !v->value[0];
    if (g->has_dflt && (!v || (g->colon && empty))) {
        if (strpbrk(g->dflt, "$`")) {
            snprintf(why, sizeof(why), "${%s:-%.40s} has a default that is not literal", g->text,
                     g->dflt);
            xp_unresolved(x, why);
        }
        xp_expanded(x, g->dflt, g->quoted);
    } else if (v && v->value) {
        xp_expanded(x, v->value, g->quoted);
    } else {
        static const char unset[] = " is not set in the container env or script";
        if (v) {
            why_put(why, 0, v->why, strlen(v->why));
        } else {
            size_t at = why_put(why, 0, "$", 1);
            at = why_put(why, at, g->text, strlen(g->text));
            why_put(why, at, unset, sizeof(unset) - 1);
        }
        xp_unresolved(x, why);
        xp_put(x, "$", 1);
        xp_put(x, g->text, strlen(g->text));
    }
}

/* ${NAME[@]}, ${NAME[*]} (bash): "${A[@]}" is one field per element, "${A[*]}" one field of the
 * elements joined by a blank; unquoted, every element is split in turn. */
static void xp_array(struct xp *x, const struct seg *g)
{
    const struct tg_sh_var *v = tg_sh_vars_get(x->w->vars, g->text);
    if (v && !v->elems && v->value) {
        xp_expanded(x, v->value, g->quoted); /* a scalar is an array of one */
        return;
    }
    if (!v || !v->elems) {
        char why[TG_SH_REASON_MAX];
        snprintf(why, sizeof(why), "%s", v ? v->why : "");
        if (!v)
            snprintf(why, sizeof(why), "%s is not set in the container env or script", g->text);
        xp_unresolved(x, why);
        xp_put(x, "${", 2);
        xp_put(x, g->text, strlen(g->text));
        xp_put(x, g->star ? "[*]}" : "[@]}", 4);
        return;
    }
    for (size_t i = 0; i < v->nelems; i++) {
        if (i > 0 && g->quoted && !g->star && x->split)
            xp_end_field(x, true);
        else if (i > 0)
            xp_expanded(x, " ", g->quoted);
        if (g->quoted)
            x->has = true;
        if (!v->elems[i].resolved)
            xp_unresolved(x, v->elems[i].reason ? v->elems[i].reason : "not known");
        xp_expanded(x, v->elems[i].text, g->quoted);
    }
}

static void xp_arith(struct xp *x, const struct seg *g)
{
    struct arith a = {.p = g->text, .vars = x->w->vars};
    long long v = ar_expr(&a, 0);
    ar_ws(&a);
    if (!a.bad && *a.p)
        ar_fail(&a, "$((%.40s)): arithmetic trainguard does not read", g->text);
    if (a.bad) {
        xp_unresolved(x, a.why);
        xp_put(x, "$((", 3);
        xp_put(x, g->text, strlen(g->text));
        xp_put(x, "))", 2);
        return;
    }
    char num[32];
    snprintf(num, sizeof(num), "%lld", v);
    xp_expanded(x, num, g->quoted);
}

/* A command substitution, or an expansion not read: unresolved, kept as written. */
static void xp_bad(struct xp *x, const struct seg *g)
{
    /* $(NAME) that Kubernetes could not expand because NAME comes from valueFrom */
    size_t nl = g->text[0] == '$' && g->text[1] == '(' ? name_len(g->text + 2) : 0;
    const struct tg_sh_var *v = NULL;
    if (nl && g->text[2 + nl] == ')' && !g->text[3 + nl]) {
        char name[128];
        snprintf(name, sizeof(name), "%.*s", (int)nl, g->text + 2);
        v = tg_sh_vars_get(x->w->vars, name);
    }
    xp_unresolved(x, v && v->why ? v->why : g->why);
    xp_put(x, g->text, strlen(g->text));
}

/* Appends a resolved word to out: text itself when the list's texts live in the scratch area
 * (text is scratch too, NUL-terminated at len, and outlives the list), else a copy. */
static inline void wordlist_push(struct walk *w, struct wordlist *out, char *text, size_t len)
{
    if (!wordlist_room(w, out))
        return;
    struct tg_sh_word *o = &out->v[out->n];
    o->text = out->scratch ? text : strndup(text, len);
    if (!o->text) {
        w->err = -ENOMEM;
        return;
    }
    o->resolved = true;
    o->reason = NULL;
    out->n++;
}

/* expand_word of a word that is one literal segment (most words of a launch line): the literal
 * is the word, unsplit (splitting applies to expansions only); an empty unquoted literal makes
 * a word only without splitting, as the general path's final field does. A scratch list takes
 * the segment's text itself: a command's raw words live as long as its expanded ones, and no
 * word's text is written once read. */
static inline void expand_lit(struct walk *w, const struct seg *g, size_t skip, bool split,
                              struct wordlist *out)
{
    if (!g->text)
        return; /* ENOMEM while reading it: w->err is set */
    if (g->len > skip || g->quoted || !split)
        wordlist_push(w, out, g->text + skip, g->len - skip);
}

/* expand_word of any word: the field builder. */
static void expand_fields(struct walk *w, const struct rword *rw, size_t from, size_t skip,
                          bool split, struct wordlist *out)
{
    /* the field is built in a buffer on the stack, moved to malloc if it outgrows it */
    char field[128];
    struct xp x = {.w = w,
                   .out = out,
                   .split = split,
                   .resolved = true,
                   .b = {.s = field, .cap = sizeof(field), .fixed = true}};
    sb_puts(&x.b, "");
    for (size_t i = from; i < rw->n && !w->err; i++) {
        const struct seg *g = &rw->v[i];
        switch (g->kind) {
        case SEG_LIT: {
            size_t at = i == from ? skip : 0;
            if (g->len > at || g->quoted)
                xp_put(&x, g->text + at, g->len - at);
            break;
        }
        case SEG_PARAM:
            xp_param(&x, g);
            break;
        case SEG_ARRAY:
            xp_array(&x, g);
            break;
        case SEG_ARITH:
            xp_arith(&x, g);
            break;
        case SEG_BAD:
            xp_bad(&x, g);
            break;
        }
    }
    xp_end_field(&x, !split);
    if (!x.b.fixed)
        free(x.b.s);
    if (!out->scratch)
        free(x.reason);
}

/* Expands segments [from, n) of rw (the first one starting at byte skip) into out: the fields,
 * with splitting, or exactly one word without it. A word of one literal is expanded inline. */
static inline void expand_word(struct walk *w, const struct rword *rw, size_t from, size_t skip,
                               bool split, struct wordlist *out)
{
    if (rw->n == from + 1 && rw->v[from].kind == SEG_LIT)
        expand_lit(w, &rw->v[from], skip, split, out);
    else
        expand_fields(w, rw, from, skip, split, out);
}

/* Expands segments [from, n) of rw (the first one starting at byte skip) into one word. */
static void expand_segs(struct walk *w, const struct rword *rw, size_t from, size_t skip,
                        struct tg_sh_word *out)
{
    struct wordlist wl = {0};
    expand_word(w, rw, from, skip, false, &wl);
    if (wl.n == 1) {
        *out = wl.v[0];
        wl.n = 0;
    } else {
        out->text = NULL;
        out->resolved = false;
        out->reason = NULL;
        if (!w->err)
            w->err = -ENOMEM;
    }
    wordlist_release(&wl);
}

/* ---- simple commands ------------------------------------------------------------------------ */
static const char *const reserved_skip[] = {"if",    "then",  "else", "elif", "fi", "do",   "done",
                                            "while", "until", "!",    "{",    "}",  "esac", NULL};
static const char *const reserved_stop[] = {"for", "case", "select", "function", NULL};

static bool in_list(const char *s, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (s[0] == list[i][0] && strcmp(s, list[i]) == 0)
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
                        bool borrowed, int depth, size_t argv_index);

/* The variables, for writing. An inner shell (sh -c) starts with the outer shell's variables,
 * and its assignments do not come back out: it reads the outer ones until its first write,
 * which copies them. NULL (w->err set) on ENOMEM. */
static struct tg_sh_vars *vars_mut(struct walk *w)
{
    if (w->borrowed) {
        if (vars_copy(&w->own, w->vars) < 0) {
            w->err = -ENOMEM;
            return NULL;
        }
        w->vars = &w->own;
        w->borrowed = false;
    }
    return w->vars;
}

static void set_from_word(struct walk *w, const char *name, const struct tg_sh_word *val)
{
    struct tg_sh_vars *vs = vars_mut(w);
    if (!vs)
        return;
    int rc = val->resolved ? tg_sh_vars_set(vs, name, val->text, NULL)
                           : tg_sh_vars_set(vs, name, NULL, val->reason);
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
        if (exp && vars_mut(w))
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
        .stdout_file = w->stdout_file,
        .heredoc = w->heredoc,
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

bool tg_sh_cmd_getenv(const struct tg_sh_cmd *cmd, const char *name, const char **value)
{
    const struct tg_sh_word *lists[2] = {cmd->prefix, cmd->env_args};
    size_t counts[2] = {cmd->nprefix, cmd->nenv_args};
    size_t nl = strlen(name);
    /* the last entry: env(1) arguments, then prefix assignments, each from its end */
    for (size_t k = 2; k-- > 0;) {
        for (size_t i = counts[k]; i-- > 0;) {
            const char *t = lists[k][i].text;
            size_t len = name_len(t);
            if (len && t[len] == '=' && len == nl && !memcmp(t, name, nl)) {
                *value = lists[k][i].resolved ? t + len + 1 : NULL;
                return true;
            }
        }
    }
    if (cmd->env_cleared)
        return false;
    for (size_t i = cmd->vars->n; i-- > 0;) {
        const struct tg_sh_var *v = &cmd->vars->v[i];
        if (v->exported && !strcmp(v->name, name)) {
            *value = v->value;
            return true;
        }
    }
    return false;
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
    /* the inner shell's assignments do not come back out (vars_mut) */
    int rc = parse_script(w->wk, words[j].text, w->vars, true, w->depth + 1,
                          w->depth == 0 ? j : w->argv_index);
    if (rc < 0)
        w->err = rc;
}

/* The commands process_words interprets, by kind. */
enum wrapper {
    W_NONE, /* any other command: the callback's */
    W_EXEC,
    W_TIME,
    W_PLAIN, /* nohup, command, builtin, xargs: the command follows */
    W_TIMEOUT,
    W_ENV,
    W_OPTS, /* nice, stdbuf, sudo, numactl, taskset: options, then the command */
    W_EXPORT,
    W_SHELL,
};

struct wrapper_name {
    const char *name;
    size_t len;
    enum wrapper kind;
};

#define WRAPPER(name, kind)                                                                        \
    {                                                                                              \
        name, sizeof(name) - 1, kind                                                               \
    }

static const struct wrapper_name wrappers[] = {
    WRAPPER("exec", W_EXEC),       WRAPPER("time", W_TIME),      WRAPPER("nohup", W_PLAIN),
    WRAPPER("command", W_PLAIN),   WRAPPER("builtin", W_PLAIN),  WRAPPER("xargs", W_PLAIN),
    WRAPPER("timeout", W_TIMEOUT), WRAPPER("env", W_ENV),        WRAPPER("nice", W_OPTS),
    WRAPPER("stdbuf", W_OPTS),     WRAPPER("sudo", W_OPTS),      WRAPPER("numactl", W_OPTS),
    WRAPPER("taskset", W_OPTS),    WRAPPER("export", W_EXPORT),  WRAPPER("readonly", W_EXPORT),
    WRAPPER("declare", W_EXPORT),  WRAPPER("typeset", W_EXPORT), WRAPPER("local", W_EXPORT),
    WRAPPER("sh", W_SHELL),        WRAPPER("bash", W_SHELL),     WRAPPER("dash", W_SHELL),
    WRAPPER("ash", W_SHELL),       WRAPPER("zsh", W_SHELL),      WRAPPER("ksh", W_SHELL),
};

/* What the command named b (a base name) is to the reader. */
static enum wrapper wrapper_of(const char *b)
{
    size_t len = strlen(b);
    for (size_t k = 0; k < sizeof(wrappers) / sizeof(wrappers[0]); k++)
        if (wrappers[k].len == len && memcmp(wrappers[k].name, b, len) == 0)
            return wrappers[k].kind;
    return W_NONE;
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
        enum wrapper kind = wrapper_of(b);
        if (kind == W_EXEC) {
            i++;
            while (i < n && starts_opt(&words[i]))
                i += strcmp(words[i].text, "-a") == 0 ? 2 : 1;
        } else if (kind == W_TIME) {
            i++;
            while (i < n && starts_opt(&words[i]))
                i++;
        } else if (kind == W_PLAIN) {
            i++;
        } else if (kind == W_TIMEOUT) {
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
        } else if (kind == W_ENV) {
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
        } else if (kind == W_OPTS) {
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
        } else if (kind == W_EXPORT) {
            run_export(w, words + i, n - i);
            return 0;
        } else if (kind == W_SHELL) {
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
    /* the prefix assignments as they are, then the command's words split into fields */
    struct wordlist words = {.scratch = true};
    /* room for a word per raw word up front (more only when expansions split into fields) */
    /* from the scratch area when its block has room (a launch line's first block is sized for
     * it), else malloc'd */
    size_t need = (cmd->n - first) * sizeof(*words.v);
    const struct chunk *top = w->sc.top;
    words.own_array = !top || align8(need) > top->cap - top->used;
    words.v = words.own_array ? malloc(need) : sc_alloc(w, need);
    if (!words.v) {
        w->err = -ENOMEM;
        return;
    }
    words.cap = cmd->n - first;
    size_t k = first;
    while (k < cmd->n && !w->err) {
        /* a run of the usual words, each one literal read whole: its text itself, in the room
         * made above (as expand_lit would push it) */
        struct tg_sh_word *o = words.v + words.n, *end = words.v + words.cap;
        for (; k < cmd->n && o < end; k++) {
            const struct rword *rw = &cmd->v[k];
            const struct seg *g = rw->v;
            if (rw->n != 1 || g->kind != SEG_LIT || !g->text || !(g->len || g->quoted || k < i))
                break;
            o->text = g->text;
            o->resolved = true;
            o->reason = NULL;
            o++;
        }
        words.n = (size_t)(o - words.v);
        if (k < cmd->n) {
            expand_word(w, &cmd->v[k], 0, 0, k >= i, &words);
            k++;
        }
    }
    size_t nassign = i - first;
    w->cmd_env = words.v;
    w->ncmd_env = nassign;
    if (!w->err && words.n > nassign)
        process_words(w, words.v + nassign, words.n - nassign, line);
    w->cmd_env = w->env_args = NULL;
    w->ncmd_env = w->nenv_args = 0;
    w->env_cleared = false;
    wordlist_release(&words);
    w->index++;
}

static bool rwords_push(struct walk *w, struct rwords *ws, struct rword *rw)
{
    if (ws->n == ws->cap) {
        size_t cap = ws->cap ? ws->cap * 2 : w->words_hint > 16 ? w->words_hint : 16;
        struct rword *v = sc_grow(w, ws->v, ws->cap * sizeof(*v), cap * sizeof(*v));
        if (!v)
            return false;
        ws->v = v;
        ws->cap = cap;
    }
    ws->v[ws->n++] = *rw;
    memset(rw, 0, sizeof(*rw));
    return true;
}

/* A here-document body as sh reads it: with an unquoted delimiter, parameter expansion,
 * arithmetic and command substitution (unresolved) apply, and a backslash quotes only $ ` \ and
 * newline (POSIX XCU 2.7.4); with a quoted one the body is literal. */
static void expand_heredoc(struct walk *w, const char *body, bool quoted, struct tg_sh_word *out)
{
    struct lex tl = {.p = body, .line = 1};
    struct rword rw = {0};
    if (quoted) {
        rword_lit(w, &rw, body, strlen(body), true);
    } else {
        while (*tl.p && !tl.error && !w->err) {
            if (tl.p[0] == '\\' && tl.p[1] && strchr("$`\\\n", tl.p[1])) {
                if (tl.p[1] != '\n')
                    rword_lit(w, &rw, tl.p + 1, 1, true);
                tl.p += 2;
            } else if (*tl.p == '$') {
                lex_dollar(&tl, w, &rw, true);
            } else if (*tl.p == '`') {
                lex_backquote(&tl, w, &rw);
            } else {
                rword_lit(w, &rw, tl.p++, 1, true);
            }
        }
    }
    if (tl.error)
        rword_bad(w, &rw, "", 0, tl.err);
    expand_segs(w, &rw, 0, 0, out);
    rword_release(&rw);
}

/* Is the word a plain NAME= or NAME+= (the start of a bash array assignment NAME=(...))? Returns
 * the length of NAME (0: no) and sets *append for +=. */
static size_t array_assignment(const struct rword *rw, bool *append)
{
    const char *t = plain_word(rw);
    size_t n = t ? name_len(t) : 0;
    *append = n && t[n] == '+';
    if (!n || strcmp(t + n + *append, "=") != 0)
        return 0;
    return n;
}

/* Skips blanks, newlines, comments and line continuations (inside NAME=( ... )). */
static void skip_space(struct lex *lx)
{
    for (;;) {
        if (is_blank(*lx->p)) {
            lx->p++;
        } else if (*lx->p == '\n') {
            lx->p++;
            lx->line++;
        } else if (lx->p[0] == '\\' && lx->p[1] == '\n') {
            lx->p += 2;
            lx->line++;
        } else if (*lx->p == '#') {
            lx->p += strcspn(lx->p, "\n");
        } else {
            return;
        }
    }
}

/* The elements of the array name (appended to for +=), for read_array. */
static void array_start(struct walk *w, const char *name, bool append, struct wordlist *elems,
                        const char **why)
{
    const struct tg_sh_var *old = tg_sh_vars_get(w->vars, name);
    if (!append || !old)
        return;
    if (!old->elems) {
        *why = old->why ? old->why : "an array trainguard does not read";
        return;
    }
    for (size_t i = 0; i < old->nelems && !w->err; i++) {
        struct rword lit = {0};
        rword_lit(w, &lit, old->elems[i].text, strlen(old->elems[i].text), true);
        expand_word(w, &lit, 0, 0, false, elems);
        rword_release(&lit);
        struct tg_sh_word *e = elems->n ? &elems->v[elems->n - 1] : NULL;
        if (e && !old->elems[i].resolved) {
            e->resolved = false;
            free(e->reason);
            e->reason = old->elems[i].reason ? strdup(old->elems[i].reason) : NULL;
        }
    }
}

/* Reads the elements of NAME=( ... ) (the lexer stands at '(') and sets the array; an element that
 * is not known stays unknown, with its reason, where it is used. */
static void read_array(struct lex *lx, struct walk *w, const char *name, bool append)
{
    struct wordlist elems = {0};
    struct rword rw = {0};
    const char *why = NULL;
    array_start(w, name, append, &elems, &why);
    lx->p++;
    for (;;) {
        skip_space(lx);
        if (*lx->p == ')') {
            lx->p++;
            break;
        }
        if (!*lx->p || lex_next(lx, w, &rw) != TOK_WORD) {
            why = "an array assignment trainguard does not read";
            rword_release(&rw);
            break;
        }
        expand_word(w, &rw, 0, 0, true, &elems);
        rword_release(&rw);
    }
    char buf[TG_SH_REASON_MAX];
    snprintf(buf, sizeof(buf), "%s", why ? why : "");
    if (!w->err && vars_mut(w) &&
        tg_sh_vars_set_array(w->vars, name, why ? NULL : elems.v, elems.n, buf) < 0)
        w->err = -ENOMEM;
    wordlist_release(&elems);
}

/* One command of a script being read: its raw words and what its redirections say. */
struct pending {
    struct rwords words;
    int line;
    bool drop_next;        /* the next word is a redirection target */
    bool want_delim;       /* ... of <<: a here-document delimiter */
    bool want_out;         /* ... of a redirection of standard output */
    struct tg_sh_word out; /* the standard output file (text NULL: none) */
    bool own_heredoc;      /* the pending here-document was opened by this command */
    bool heredoc_quoted;   /* its delimiter was quoted: the body is literal */
};

static void pending_clear(struct pending *pc)
{
    rwords_clear(&pc->words);
    word_release(&pc->out);
    pc->drop_next = pc->want_delim = pc->want_out = pc->own_heredoc = false;
}

/* Any part of the word quoted (a quoted here-document delimiter). */
static bool any_quoted(const struct rword *rw)
{
    for (size_t i = 0; i < rw->n; i++)
        if (rw->v[i].kind != SEG_LIT || rw->v[i].quoted)
            return true;
    return false;
}

/* Runs the pending command; when it opened a here-document that starts on the next line (the
 * command ends its line), the body is read first and handed over with it. */
static void finish_command(struct walk *w, struct lex *lx, struct pending *pc, char **heredoc,
                           bool strip, bool at_newline)
{
    struct tg_sh_word body = {0};
    if (pc->own_heredoc && *heredoc && at_newline) {
        struct sbuf b = {0};
        sb_puts(&b, "");
        skip_heredoc(lx, *heredoc, strip, &b);
        char *text = sb_take(&b);
        if (!text)
            w->err = -ENOMEM;
        else
            expand_heredoc(w, text, pc->heredoc_quoted, &body);
        free(text);
        free(*heredoc);
        *heredoc = NULL;
    }
    w->stdout_file = pc->out.text ? &pc->out : NULL;
    w->heredoc = body.text ? &body : NULL;
    if (!w->err)
        run_simple(w, &pc->words, pc->line);
    w->stdout_file = w->heredoc = NULL;
    word_release(&body);
}

/* A word of the script: a redirection target, the start of an array, or a word of the command. */
static void take_word(struct walk *w, struct lex *lx, struct pending *pc, struct rword *rw,
                      char **heredoc, int line)
{
    bool append;
    size_t an;
    if (pc->want_delim) {
        struct tg_sh_word d;
        expand_segs(w, rw, 0, 0, &d);
        free(*heredoc);
        *heredoc = d.text;
        free(d.reason);
        pc->own_heredoc = true;
        pc->heredoc_quoted = any_quoted(rw);
    } else if (pc->drop_next && pc->want_out) {
        word_release(&pc->out);
        expand_segs(w, rw, 0, 0, &pc->out);
    } else if (!pc->drop_next && pc->words.n == 0 && *lx->p == '(' &&
               (an = array_assignment(rw, &append)) > 0) {
        char name[128];
        snprintf(name, sizeof(name), "%.*s", (int)an, rw->v[0].text);
        read_array(lx, w, name, append);
    } else if (!pc->drop_next) {
        if (pc->words.n == 0)
            pc->line = line;
        rwords_push(w, &pc->words, rw);
    }
    pc->drop_next = pc->want_delim = pc->want_out = false;
    rword_release(rw);
}

/* The run of usual words that follows a command's word: each read as lex_next reads it and put
 * onto the command's words as parse_script's loop would, in one loop that keeps the scratch
 * block's state at hand. Stops before a word that is not the usual one (a quote, a $, an IO
 * number, a comment, an operator or a newline ahead), when the command's array of words or the
 * scratch block is full (the loop's general path takes over there), and returns where the lexer
 * goes on. */
static const char *plain_run(struct walk *w, const char *p, struct rwords *ws)
{
    struct chunk *c = w->sc.top;
    const size_t gs = align8(sizeof(struct seg));
    if (!c || c->cap <= gs) /* as sc_alloc: a piece smaller than the block */
        return p;
    /* what the loop reads, in locals: its stores (a NUL in the copy) could otherwise be taken to
     * change them */
    const size_t room = c->cap - gs, wcap = ws->cap;
    char *const data = c->data, *const copy = w->copy;
    const char *const src = w->src;
    struct rword *const v = ws->v;
    size_t used = c->used, n = ws->n;
    struct seg *g = NULL;
    for (;;) {
        const char *s = p;
        while (is_blank(*s))
            s++;
        if (word_class[(unsigned char)*s] || *s == '#')
            break;
        const char *e = to_word_class(s + 1);
        unsigned char k = word_class[(unsigned char)*e];
        if ((k != 1 && k != 3) || n == wcap || used > room)
            break;
        g = (struct seg *)(void *)(data + used);
        used += gs;
        char *t = copy + (s - src);
        t[e - s] = '\0';
        *g = (struct seg){.kind = SEG_LIT, .len = (size_t)(e - s), .text = t};
        v[n++] = (struct rword){.v = g, .n = 1, .cap = 1};
        p = e;
    }
    if (g) {
        c->used = used;
        w->sc.last = (char *)g;
        ws->n = n;
    }
    return p;
}

static int parse_script(struct tg_sh_walk *wk, const char *script, struct tg_sh_vars *vars,
                        bool borrowed, int depth, size_t argv_index)
{
    /* The scratch area's first block is sized for a command as long as the script, so that a
     * launch line is read without its growing: a word every eight bytes or so (16 at the least,
     * 256 at the most) for the arrays of its raw and its expanded words, and some six bytes of
     * scratch per byte for their segments and texts; no more than 16 KiB, and SCRATCH_FIRST at
     * the least. The script's copy follows its data in the same block. */
    size_t len = strlen(script);
    size_t words = len / 8 < 16 ? 16 : len / 8 > 256 ? 256 : len / 8;
    size_t first =
        len < SCRATCH_HINT_MAX / 6 ? len * 6 + words * sizeof(struct rword) : SCRATCH_HINT_MAX;
    if (first > SCRATCH_FIRST)
        first += words * sizeof(struct tg_sh_word);
    first = first < SCRATCH_FIRST      ? SCRATCH_FIRST
            : first < SCRATCH_HINT_MAX ? align8(first)
                                       : SCRATCH_HINT_MAX;
    struct chunk *base =
        len < SIZE_MAX / 2 ? base_take(sizeof(struct chunk) + first + len + 1) : NULL;
    if (!base)
        return -ENOMEM;
    base->prev = NULL;
    base->cap = first;
    base->used = 0;
    struct walk w = {.wk = wk,
                     .vars = vars,
                     .borrowed = borrowed,
                     .depth = depth,
                     .argv_index = argv_index,
                     .words_hint = words,
                     .sc = {.top = base, .base = base},
                     .src = script,
                     .copy = base->data + first};
    memcpy(w.copy, script, len + 1);
    struct lex lx = {.p = script, .line = 1};
    struct pending pc = {.line = 1};
    struct rword rw = {0};
    char *heredoc = NULL; /* delimiter of a pending here-document */
    bool heredoc_strip = false;
    for (;;) {
        int line = lx.line;
        enum tok t = lex_next(&lx, &w, &rw);
        if (w.err || lx.error)
            break; /* sh refuses a command it cannot parse: it never runs */
        if (t == TOK_WORD) {
            if (!pc.drop_next && pc.words.n && pc.words.n < pc.words.cap) {
                /* the usual word, not a command's first nor a redirection's: onto the command's
                 * words, as take_word would put it */
                pc.words.v[pc.words.n++] = rw;
                rw = (struct rword){0};
                lx.p = plain_run(&w, lx.p, &pc.words);
                continue;
            }
            take_word(&w, &lx, &pc, &rw, &heredoc, line);
            if (!pc.drop_next && pc.words.n && !w.err)
                lx.p = plain_run(&w, lx.p, &pc.words);
            continue;
        }
        if (t == TOK_REDIR) {
            pc.drop_next = true;
            pc.want_delim = lx.heredoc;
            pc.want_out = lx.to_stdout && (lx.io_number < 0 || lx.io_number == 1);
            if (lx.heredoc)
                heredoc_strip = lx.heredoc_strip;
            continue;
        }
        if (pc.words.n)
            finish_command(&w, &lx, &pc, &heredoc, heredoc_strip, t == TOK_SEP && lx.newline);
        pending_clear(&pc);
        if (rw.n == 0)
            scratch_reset(&w.sc); /* no raw word is held between commands */
        if (t == TOK_SEP && lx.newline && heredoc) {
            skip_heredoc(&lx, heredoc, heredoc_strip, NULL);
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
    pending_clear(&pc);
    scratch_release(&w.sc);
    if (w.vars == &w.own)
        tg_sh_vars_release(&w.own);
    return w.err;
}

int tg_sh_walk_script(struct tg_sh_walk *wk, const char *script, struct tg_sh_vars *vars, int depth)
{
    int rc = parse_script(wk, script, vars, false, depth, 0);
    return rc == WALK_STOPPED ? 0 : rc;
}

int tg_sh_walk_words(struct tg_sh_walk *wk, const struct tg_sh_word *argv, size_t argc,
                     struct tg_sh_vars *vars)
{
    struct walk w = {.wk = wk, .vars = vars, .depth = 0};
    process_words(&w, argv, argc, 1);
    scratch_release(&w.sc);
    return w.err == WALK_STOPPED ? 0 : w.err;
}
