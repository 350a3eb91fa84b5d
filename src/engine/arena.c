/* arena.c -- thread-local bump allocator behind jansson (see include/tg/arena.h). */
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tg/arena.h"

/* The first block serves a typical review (a 7 KB Pod builds about 40 KB of values); it is kept
 * between requests. Larger requests chain extra blocks, freed at the end of the request. Each new
 * block is twice the previous one (up to MAX_BLOCK): arena_free walks the chain on every free, so
 * the chain must stay short (a 7 MiB body of tiny values made ~1000 equal blocks, and releasing
 * its tree took seconds of CPU). */
#define FIRST_BLOCK ((size_t)128 * 1024)
#define MAX_BLOCK ((size_t)16 * 1024 * 1024)
#define ALIGN 16

struct block {
    struct block *next;
    size_t size;
    unsigned char *data;
};

/* cur and limit bound the free part of the current block while the arena is active (both NULL
 * before the first block and while inactive, so that every allocation then takes the slow path):
 * the bump reads them straight from the thread's storage, not through the block. Blocks and
 * their sizes are multiples of ALIGN, so limit - cur always is one too. */
struct arena {
    unsigned char *cur, *limit;
    bool active;
    struct block *head; /* current block; the first block is last in the chain */
};

static _Thread_local struct arena arena;

/* A thread that used its arena frees its blocks when it exits (MHD's worker threads at daemon
 * stop): the key's destructor runs before the thread's storage goes. */
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static void free_blocks(void *p)
{
    struct arena *a = p;
    struct block *b = a->head;
    while (b) {
        struct block *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
    a->cur = a->limit = NULL;
}

static void make_exit_key(void)
{
    pthread_key_create(&exit_key, free_blocks);
}

static struct block *block_new(size_t size)
{
    struct block *b =
        size <= SIZE_MAX - sizeof(*b) - ALIGN ? malloc(sizeof(*b) + size + ALIGN) : NULL;
    if (!b)
        return NULL;
    b->next = NULL;
    b->size = size;
    uintptr_t p = (uintptr_t)(b + 1);
    b->data = (unsigned char *)((p + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1));
    return b;
}

static bool in_arena(const void *ptr)
{
    for (const struct block *b = arena.head; b; b = b->next) {
        if ((const unsigned char *)ptr >= b->data && (const unsigned char *)ptr < b->data + b->size)
            return true;
    }
    return false;
}

/* A new block for a request of need bytes (the current one is full, or there is none yet). */
static void *arena_grow(size_t need)
{
    struct block *b = arena.head;
    if (!b) {
        pthread_once(&exit_once, make_exit_key);
        pthread_setspecific(exit_key, &arena);
    }
    size_t grow = !b ? FIRST_BLOCK : b->size < MAX_BLOCK / 2 ? b->size * 2 : MAX_BLOCK;
    struct block *nb = block_new(need > grow ? need : grow);
    if (!nb)
        return NULL;
    nb->next = b;
    arena.head = nb;
    arena.cur = nb->data + need;
    arena.limit = nb->data + nb->size;
    return nb->data;
}

/* Everything the bump does not serve: the arena is inactive (malloc), the block is full or there
 * is none yet (a new block), size is 0, or size is so large that rounding it up would wrap
 * (NULL). */
static __attribute__((noinline)) void *arena_slow(size_t size)
{
    if (!arena.active)
        return malloc(size);
    /* size 0 takes ALIGN bytes: an area at the very end of a block would be no block's, and
     * arena_free would hand it to free() */
    size_t need = size ? (size + ALIGN - 1) & ~(size_t)(ALIGN - 1) : ALIGN;
    if (need < size)
        return NULL;
    if (arena.cur && need <= (size_t)(arena.limit - arena.cur)) { /* size 0, in a block */
        void *p = arena.cur;
        arena.cur += need;
        return p;
    }
    return arena_grow(need);
}

/* jansson's allocator (a review makes about 400 allocations): one compare against what is left
 * in the current block, then the bump. size - 1 wraps for 0, which goes the slow way; any size
 * up to what is left rounds up to at most what is left, that being a multiple of ALIGN. */
static void *arena_malloc(size_t size)
{
    unsigned char *p = arena.cur;
    if (__builtin_expect(size - 1 >= (size_t)(arena.limit - p), 0))
        return arena_slow(size);
    arena.cur = p + ((size + ALIGN - 1) & ~(size_t)(ALIGN - 1));
    return p;
}

static void arena_free(void *ptr)
{
    if (!ptr)
        return;
    /* Values made before the arena started (the policy, a review parsed elsewhere) are real. */
    if (arena.head && in_arena(ptr))
        return;
    free(ptr);
}

void *tg_arena_malloc(size_t size)
{
    return arena_malloc(size);
}

void *tg_arena_realloc(void *p, size_t old, size_t size)
{
    if (p ? !(arena.head && in_arena(p)) : !arena.active)
        return realloc(p, size);
    void *q = arena_malloc(size);
    if (q && p)
        memcpy(q, p, old < size ? old : size);
    return q;
}

void tg_arena_free(void *p)
{
    arena_free(p);
}

void tg_arena_install(void)
{
    json_set_alloc_funcs(arena_malloc, arena_free);
}

void tg_arena_begin(void)
{
    if (arena.active)
        return;
    arena.active = true;
    /* the kept block is empty: tg_arena_end left only it */
    if (arena.head) {
        arena.cur = arena.head->data;
        arena.limit = arena.head->data + arena.head->size;
    }
}

void tg_arena_end(void)
{
    struct block *b = arena.head;
    arena.active = false;
    arena.cur = arena.limit = NULL;
    /* Keep the oldest (first) block for the next request; free the overflow blocks. */
    while (b && b->next) {
        struct block *next = b->next;
        free(b);
        b = next;
    }
    arena.head = b;
}

bool tg_arena_holds(const void *p)
{
    return p && arena.active && in_arena(p);
}

void tg_json_free(void *p)
{
    json_free_t f = NULL;
    json_get_alloc_funcs(NULL, &f);
    (f ? f : free)(p);
}

size_t tg_arena_blocks(void)
{
    size_t n = 0;
    for (const struct block *b = arena.head; b; b = b->next)
        n++;
    return n;
}

size_t tg_arena_retained(void)
{
    size_t n = 0;
    for (const struct block *b = arena.head; b; b = b->next)
        n += b->size;
    return n;
}
