/* A small strict JSON reader for nvtxcorr-tool (render: the summaries the library and the
 * report write, docs/profile.md). The whole text becomes a tree of values; numbers are kept as
 * counts when they are integers from 0 to 2^64-1 (all a summary holds), any other number is
 * JSON_NUMBER without a count. Strings are decoded to UTF-8 (\uXXXX, surrogate pairs
 * included). Not for the preload library: it allocates. */
#ifndef NVTXCORR_CLI_JSON_H
#define NVTXCORR_CLI_JSON_H
#include <stddef.h>
#include <stdint.h>

typedef enum {
    JSON_NULL,
    JSON_BOOL,
    JSON_NUMBER,
    JSON_COUNT,
    JSON_STRING,
    JSON_ARRAY,
    JSON_OBJECT
} json_kind_t;

typedef struct json_value {
    json_kind_t kind;
    uint64_t count;     /* JSON_COUNT; JSON_BOOL: 0 or 1 */
    const char *string; /* JSON_STRING; an object member's key in `key` */
    const char *key;
    size_t n; /* JSON_ARRAY, JSON_OBJECT: its members, items[0..n) */
    struct json_value *items;
} json_value_t;

/* Parses text[0..len) into *root; 0, or -1 with why (static text) and the byte offset. The
 * tree lives until json_free. */
int json_parse(const char *text, size_t len, json_value_t *root, const char **why, size_t *at);
void json_free(json_value_t *root);
/* An object's member by key, or NULL; one of a kind, or NULL when absent or of another kind. */
const json_value_t *json_get(const json_value_t *object, const char *key);
const json_value_t *json_get_kind(const json_value_t *object, const char *key, json_kind_t kind);

#endif
