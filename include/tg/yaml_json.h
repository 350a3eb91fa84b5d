/* yaml_json.h -- YAML 1.1 streams to JSON values exactly as kubectl converts them before sending to
 * the API server (booleans yes/no/on/off, integers vs strings, anchors, merge keys, duplicate keys
 * rejected). */
#ifndef TG_YAML_JSON_H
#define TG_YAML_JSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

struct tg_yaml_doc {
    json_t *value;   /* new reference; NULL when this document failed (see error) or is empty */
    size_t index;    /* 0-based document index in the stream */
    int line;        /* 1-based line where the document starts */
    int empty;       /* 1 when the document is empty (comments only, or a bare ---) */
    char error[256]; /* "line L, column C: reason" when value is NULL and !empty */
};

struct tg_yaml_docs {
    struct tg_yaml_doc *v;
    size_t n;
};

/* Splits and converts every document of a YAML (or JSON) stream. A document that does not convert
 * gets an error and the following documents are still read where the stream allows it.
 * Returns 0 (check each document), or -ENOMEM. */
int tg_yaml_parse_stream(const char *text, size_t len, struct tg_yaml_docs *out);
void tg_yaml_docs_release(struct tg_yaml_docs *docs);

/* Converts a stream that must hold exactly one non-empty document. NULL on error, with
 * "line L, column C: reason" in err. Returns a new reference. */
json_t *tg_yaml_parse_one(const char *text, size_t len, char *err, size_t errlen);

/* Reads a whole file (or stdin for "-") into a malloc'd NUL-terminated buffer. NULL on error, with
 * the reason in err. Refuses files over max_bytes. */
char *tg_read_file(const char *path, size_t max_bytes, size_t *len, char *err, size_t errlen);

#endif
