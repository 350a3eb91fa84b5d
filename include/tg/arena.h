/* arena.h -- a per-request bump allocator for jansson on the request path. Building a review's
 * tree costs about three malloc/free pairs per JSON member; with the arena a request's values are
 * carved from one reused block and dropped together when the request ends. The launch-line reader
 * takes the allocations a launch keeps until the evaluation ends from it too (tg_arena_malloc: the
 * arrays of a launch, an MPI run's strings, the memo entries); what the reader frees as it goes
 * (scratch, expansions) stays on malloc, lest a request of many scripts hold all of it.
 *
 * Contract: tg_arena_install() routes jansson's allocations through the arena (once, at server
 * start, before threads). Between tg_arena_begin() and tg_arena_end() on a thread, jansson
 * allocations on that thread come from the thread's arena and their frees do nothing; every JSON
 * value made in between must be released before tg_arena_end(). Outside that window, and on
 * other threads, jansson uses malloc and free as before. */
#ifndef TG_ARENA_H
#define TG_ARENA_H

#include <stdbool.h>
#include <stddef.h>

void tg_arena_install(void);
void tg_arena_begin(void);
void tg_arena_end(void);
/* Frees memory that jansson returned (json_dumps): through jansson's current allocator, so it is
 * right both inside and outside the arena. Never free() a json_dumps result on the request path. */
void tg_json_free(void *p);
/* For the request path's own small allocations (the launch-line reader's): size bytes from the
 * calling thread's arena while it is active, else malloc'd. NULL on ENOMEM. */
void *tg_arena_malloc(size_t size);
/* Grows or shrinks p (old bytes, allocated by tg_arena_malloc or tg_arena_realloc) to size bytes:
 * memory of the arena is moved to new memory of the arena (the old stays until tg_arena_end),
 * malloc'd memory is realloc'd, and p NULL is a new allocation. NULL on ENOMEM (p kept). */
void *tg_arena_realloc(void *p, size_t old, size_t size);
/* Frees p unless it is the arena's (reclaimed by tg_arena_end); NULL is a no-op. Memory from the
 * arena must be let go before tg_arena_end. */
void tg_arena_free(void *p);
/* True when the calling thread's arena is active and p was allocated from it: such a value is
 * reclaimed by tg_arena_end, so releasing its whole tree value by value can be skipped. */
bool tg_arena_holds(const void *p);
/* Bytes the calling thread's arena keeps between requests (for tests and metrics). */
size_t tg_arena_retained(void);
/* Blocks in the calling thread's arena (tests: the chain grows geometrically, so it stays short).
 */
size_t tg_arena_blocks(void);

#endif
