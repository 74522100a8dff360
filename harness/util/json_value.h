/*
 * json_value.h - a small strict JSON reader (RFC 8259) into a tree, for the
 * JSON that tools hand to mmafuzz (the header of a recording,
 * docs/recordings.md).  Strings are read by json_get_str (json.h); numbers
 * keep their text, and integers their value when they are whole and fit an
 * int64.  Depth, size and count are bounded; anything else is an error with
 * the byte offset where reading stopped.
 */
#ifndef MMAFUZZ_JSON_VALUE_H
#define MMAFUZZ_JSON_VALUE_H

#include <stddef.h>
#include <stdint.h>

typedef enum jv_kind { JV_NULL, JV_FALSE, JV_TRUE, JV_NUMBER, JV_STRING, JV_ARRAY, JV_OBJECT } jv_kind;

typedef struct jv jv;
struct jv {
    jv_kind kind;
    char *str;        /* JV_STRING: the text (UTF-8); JV_NUMBER: the number as written */
    int is_int;       /* JV_NUMBER: a whole number that fits int64 */
    int64_t i;        /* its value */
    size_t n;         /* JV_ARRAY, JV_OBJECT: the count */
    char **keys;      /* JV_OBJECT: the keys */
    jv *items;        /* the elements (arrays) or values (objects) */
};

/* Parse text[0..len) as one JSON value (whitespace around it allowed).
 * @return 0, or -1 with "offset N: what was expected" in err. */
int jv_parse(const char *text, size_t len, jv *out, char *err, size_t errlen);
void jv_free(jv *v);

/* The value of key in object o (the last one when repeated), or NULL. */
const jv *jv_get(const jv *o, const char *key);

#endif
