/*
 * instr_select.c - selecting instructions of the table by pattern.
 */
#include "instr_select.h"

#include <stdio.h>
#include <string.h>

int instr_selects(const char *pattern, const char *name)
{
    if (!pattern)
        return 1;
    if (strpbrk(pattern, "*?["))
        return mf_glob_match(pattern, name);
    if (mf_instr_find(pattern))
        return !strcmp(pattern, name);
    return strstr(name, pattern) != NULL;
}

int instr_selects_any(const char *const *patterns, int npat, const char *name)
{
    if (npat == 0)
        return 1;
    for (int p = 0; p < npat; p++)
        if (instr_selects(patterns[p], name))
            return 1;
    return 0;
}

int instr_select_check(const char *cmd, const char *what, const char *const *patterns, int npat)
{
    int bad = 0;
    for (int p = 0; p < npat; p++) {
        if (patterns[p] && !patterns[p][0]) {  /* as a part of a name it would select every row */
            fprintf(stderr, "mmafuzz %s: %s'': empty pattern (give a name, a part of one, or a glob such as "
                            "'hopper/*')\n", cmd, what);
            bad++;
            continue;
        }
        int any = 0;
        for (size_t i = 0; i < mf_instr_count && !any; i++)
            any = instr_selects(patterns[p], mf_instr_table[i].name);
        if (any)
            continue;
        bad++;
        const mf_instr *near[3];
        size_t n = mf_instr_closest(patterns[p], near, 3);
        fprintf(stderr, "mmafuzz %s: %s'%s' matches no instruction", cmd, what, patterns[p]);
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, "%s%s", i ? ", " : "; closest: ", near[i]->name);
        fprintf(stderr, "\n");
    }
    return bad;
}
