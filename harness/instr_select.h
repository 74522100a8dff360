/*
 * instr_select.h - the one rule by which every command (list, devices,
 * record, run, bench, replay) selects instructions of the table from a
 * pattern:
 *   - a pattern with * ? or [ is a shell glob over ARCH/QUALIFIER names;
 *   - else a name of the table selects exactly that row;
 *   - else the rows whose names contain the pattern.
 * A pattern that selects nothing is reported with the closest names; an
 * empty pattern is an error (it is a part of every name).
 */
#ifndef MMAFUZZ_INSTR_SELECT_H
#define MMAFUZZ_INSTR_SELECT_H

#include "mmafuzz_model.h"

/* 1 if `pattern` selects instruction `name` (NULL selects every row). */
int instr_selects(const char *pattern, const char *name);

/* 1 if any of the npat patterns selects `name` (npat 0: every row). */
int instr_selects_any(const char *const *patterns, int npat, const char *name);

/* Check that each pattern is not empty and selects at least one row of the
 * table; for an empty one print "mmafuzz CMD: WHAT'': empty pattern ...", for one
 * that selects nothing print "mmafuzz CMD: WHAT'PATTERN' matches no instruction;
 * closest: ..." (what: e.g. "--instr ").  @return the number of such patterns. */
int instr_select_check(const char *cmd, const char *what, const char *const *patterns, int npat);

#endif
