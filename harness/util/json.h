/*
 * json.h - the one JSON string writer and reader of the harness: every
 * string that goes into JSON output (stats.jsonl, stats/RUNID.jsonl, report
 * --json, triage --json, devices --json) is written by json_put_str, and
 * the report reads the stats records' strings back with json_get_str.
 * Numbers, true/false/null and the punctuation are printed by the callers.
 */
#ifndef MMAFUZZ_JSON_H
#define MMAFUZZ_JSON_H

#include <stddef.h>
#include <stdio.h>

/* Write s as a JSON string, quotes included: " and \ escaped, control
 * characters (below 0x20, and 0x7f) as \u00XX, and each byte that is not
 * part of well-formed UTF-8 as \ufffd, so that the output is valid JSON
 * in UTF-8 whatever s holds.  s NULL: the empty string. */
void json_put_str(FILE *f, const char *s);

/* Read the JSON string that starts at p (its opening quote) into out (at
 * most len - 1 bytes, UTF-8, always terminated; longer strings are cut at
 * a character boundary).  @return the character after the closing quote,
 * or NULL when p does not hold a well-formed JSON string (out is then ""). */
const char *json_get_str(const char *p, char *out, size_t len);

/* Check that text (NUL-terminated) is one JSON object (RFC 8259), white
 * space around it allowed, its strings as json_get_str reads them, nesting
 * at most 64 deep.  @return 0, or the 1-based column where it is not. */
long json_check_object(const char *text);

/* The value of member key of the object at obj (its top level only; the
 * first such member), or NULL.  obj should have passed json_check_object. */
const char *json_member(const char *obj, const char *key);

/* The end of the JSON number at p (RFC 8259's grammar), or NULL. */
const char *json_number_end(const char *p);

#endif
