/* nvtxcorr-tool's strict JSON reader (src/cli/json.c), which render reads summaries with: what
 * it accepts, what it refuses, and counts to 2^64-1. CTest unit.json. */
#include <stdio.h>
#include <string.h>
#include "json.h"

static int failures;
#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond), failures++;        \
    } while (0)

static int parses(const char *text)
{
    json_value_t v;
    const char *why;
    size_t at;
    if (json_parse(text, strlen(text), &v, &why, &at)) return 0;
    json_free(&v);
    return 1;
}

int main(void)
{
    json_value_t v;
    const char *why = NULL;
    size_t at = 0;
    const char *text = "{\"a\": [1, 18446744073709551615, 18446744073709551616, -1, 1.5, 2e3],"
                       " \"s\": \"x\\u00e9\\ud83d\\ude00\\n\", \"t\": true, \"n\": null}";
    CHECK(json_parse(text, strlen(text), &v, &why, &at) == 0);
    const json_value_t *a = json_get_kind(&v, "a", JSON_ARRAY);
    CHECK(a && a->n == 6);
    if (a && a->n == 6) {
        CHECK(a->items[0].kind == JSON_COUNT && a->items[0].count == 1);
        CHECK(a->items[1].kind == JSON_COUNT && a->items[1].count == UINT64_MAX);
        for (int i = 2; i < 6; i++)
            CHECK(a->items[i].kind == JSON_NUMBER); /* too big, negative, fractions */
    }
    const json_value_t *s = json_get_kind(&v, "s", JSON_STRING);
    CHECK(s && strcmp(s->string, "x\xc3\xa9\xf0\x9f\x98\x80\n") == 0);
    CHECK(json_get_kind(&v, "t", JSON_BOOL) && json_get_kind(&v, "t", JSON_BOOL)->count == 1);
    CHECK(json_get_kind(&v, "n", JSON_NULL) && !json_get(&v, "missing"));
    json_free(&v);

    static const char *const refused[] = {"",         "[1,]",    "{\"a\":1,}",  "01",
                                          "1.",       "-",       "NaN",         "Infinity",
                                          "[1] 2",    "\"\\x\"", "\"\\ud800\"", "\"\\u0000\"",
                                          "\"a\tb\"", "{1: 2}",  "'a'",         "[\"a\" \"b\"]",
                                          "tru"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        if (parses(refused[i])) fprintf(stderr, "accepted: %s\n", refused[i]), failures++;
    char deep[201] = {0};
    memset(deep, '[', 100), memset(deep + 100, ']', 100);
    CHECK(!parses(deep) && parses("[[[[[[[[1]]]]]]]]")); /* 64 levels at most */
    CHECK(parses(" {\"a\" : { } , \"b\" : [ ] } \n"));
    if (failures) return 1;
    puts("json: ok");
    return 0;
}
