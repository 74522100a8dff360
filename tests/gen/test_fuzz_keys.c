/*
 * test_fuzz_keys.c - fuzz_model's inputs name their instruction by the hash
 * of its name, not by its row number (harness/fuzz/fuzz_input.h).
 *
 * Expected values: FNV-1a's published test vectors (the 64-bit hash of ""
 * is 0xcbf29ce484222325 and of "a" 0xaf63dc4c8601ec8c; Fowler, Noll, Vo),
 * from which the key of every name is computed here; a case encoded and
 * decoded again is the same case.
 */
#include "fuzz_input.h"

#include <stdio.h>
#include <string.h>

#include "test_check.h"


/* FNV-1a, 64 bits, written from its definition. */
static uint64_t fnv1a(const char *s)
{
    uint64_t h = 14695981039346656037ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

int main(void)
{
    CHECK(fnv1a("") == 0xcbf29ce484222325ull && fnv1a("a") == 0xaf63dc4c8601ec8cull, "FNV-1a test vectors");
    size_t n = fz_select("all", NULL);
    CHECK(n == mf_instr_count, "all rows selected: %zu of %zu", n, mf_instr_count);
    uint8_t buf[FZ_MAX_SIZE];
    for (size_t i = 0; i < mf_instr_count; i++) {
        const mf_instr *in = &mf_instr_table[i];
        mf_case cs, back;
        memset(&cs, 0, sizeof cs);
        cs.c = 1;
        for (int k = 0; k < in->k; k++)
            cs.a[k] = cs.b[k] = (uint64_t)k & 0xF;
        for (int g = 0; g < in->n_meta; g++)   /* sparse rows: legal metadata ((1, 2); tf32 e), pruned a = +0 */
            cs.meta[g] = in->sp_group == 2 ? 0xE : 0x9;
        mf_sparse_canon(in, &cs);
        size_t len = fz_encode(in, &cs, buf, sizeof buf);
        uint32_t key = (uint32_t)buf[0] | (uint32_t)buf[1] << 8 | (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 24;
        CHECK(key == (uint32_t)fnv1a(in->name), "%s: key %08x, FNV-1a of the name %08x", in->name, key,
              (uint32_t)fnv1a(in->name));
        const mf_instr *got = fz_decode(buf, len, &back);
        CHECK(got == in && !memcmp(&back, &cs, sizeof cs), "%s does not decode to itself", in->name);
    }
    /* the same bytes under another selection: still the same row when it is
       selected, whatever its position among the selected rows */
    const mf_instr *in = mf_instr_find("hopper/mma.m16n8k16.f32.f16.f16.f32");
    mf_case cs, back;
    memset(&cs, 0, sizeof cs);
    size_t len = fz_encode(in, &cs, buf, sizeof buf);
    CHECK(fz_select("nvidia", "hopper/*") > 1, "hopper rows");
    CHECK(fz_decode(buf, len, &back) == in, "hopper row not found among hopper rows");
    CHECK(fz_select(NULL, "*m16n8k16.f32.f16.f16.f32") > 1, "m16n8k16 rows");
    CHECK(fz_decode(buf, len, &back) == in, "hopper row not found among m16n8k16 rows");
    /* a key of no selected row maps to a selected one */
    CHECK(fz_select("amd", NULL) > 0, "amd rows");
    const mf_instr *o = fz_decode(buf, len, &back);
    CHECK(o && mf_arch_is_amd(o->arch), "an unselected row's input decodes to %s", o ? o->name : "nothing");
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("fuzz input keys: %zu rows, each keyed by its name's FNV-1a\n", mf_instr_count);
    return 0;
}
