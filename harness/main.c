/*
 * main.c - `mmafuzz`: differential fuzzing of GPU matrix-multiply-accumulate
 * instructions against a bit-accurate reference model.
 */
#include "cli.h"
#include "mmafuzz_model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"list", cmd_list, "list [PATTERN]            instructions of the table (name, shape, formats, family)"},
    {"eval", cmd_eval, "eval INSTR c=.. a=.. b=.. [sa=.. sb=..] [--trace]   evaluate one case"},
    {"check", cmd_check, "check [--skip-unknown] [-errors N] FILE...   check the model against .vec files"},
    {"bench", cmd_bench, "bench [--instr PATTERN] [-runs N]   model dot products per second, one core"},
    {"devices", cmd_devices, "devices [PATTERN]         GPUs present and which instructions run on each"},
    {"record", cmd_record, "record --device cuda[:N] --instr PATTERN -runs N -seed S --out FILE.vec   record device outputs"},
    {"gemm", cmd_gemm, "gemm M N K TYPE [--algos] [--record OUT [--algo I|all] [--check]]   GEMM calls through cuBLASLt"},
    {"run", cmd_run, "run [--instr PATTERN] [--device SPEC] [-seed N] [-runs N] ...   fuzz device against model"},
    {"replay", cmd_replay, "replay [--device SPEC] PATH...   re-run saved cases (mismatch files, corpora)"},
    {"shrink", cmd_shrink, "shrink FILE [--device SPEC]   minimize a saved case again"},
    {"triage", cmd_triage, "triage [--json] DIR...   buckets of mismatches: explanation, exemplar, first/last seen"},
    {"probe", cmd_probe, "probe --device SPEC [--instr PATTERN]   the papers' experiments: a feature table per instruction"},
    {"fit", cmd_fit, "fit INSTR [--start ARCH] [--device SPEC] FILE|DIR...   the table row that explains the data"},
    {"campaign", cmd_campaign, "campaign init DIR --device SPEC -runs N ...   define a campaign to run in shards"},
    {"merge", cmd_merge, "merge DST SRC...          combine campaign and shard folders"},
    {"report", cmd_report, "report DIR... [-o FILE.html] [--json]   a campaign's numbers, plots"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: mmafuzz COMMAND [OPTIONS]\n\n"
               "mmafuzz %s: differential fuzzing of GPU MMA instructions against a bit-accurate model.\n\n"
               "commands:\n",
            MF_VERSION);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %s\n", commands[i].help);
    fprintf(f, "\n`mmafuzz COMMAND --help` describes a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("mmafuzz %s\n", MF_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "mmafuzz: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
