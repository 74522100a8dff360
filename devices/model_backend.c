/*
 * model_backend.c - "model:ARCH": the model of architecture ARCH as a device.
 * An instruction runs on it when ARCH's table has the same qualifier; the
 * cases are evaluated with ARCH's row.  Used for differential runs between
 * generations and to exercise the whole driver without a GPU.  The wgmma
 * operand-form variants ("neg_a", "no_c", "trans_a", ...) run as the model's
 * row for the form (mf_backend_form_row), the default tile shape.
 */
#include "backend.h"

#include <stdio.h>
#include <string.h>

/* The row of `arch` with the qualifier of `in`, or NULL. */
static const mf_instr *model_row(const mf_device *dev, const mf_instr *in)
{
    return mf_instr_on_arch(in, dev->info.model_arch);
}

static void model_close(mf_device *dev) { (void)dev; }

/* @return 1 if `variant` is an operand form of the row (the variants whose
 * tile shape is the row's), as the backend that wraps the row defines it. */
static int model_form(const mf_instr *row, const char *variant)
{
    mf_instr tmp;
    return mf_backend_form_row(row, variant, &tmp) == 0;
}

static int model_supports(const mf_device *dev, const mf_instr *in, const char *variant)
{
    const mf_instr *row = model_row(dev, in);
    return row != NULL && (variant == NULL || !*variant || model_form(row, variant));   /* "": the default */
}

static int model_tile_shape(const mf_device *dev, const mf_instr *in, const char *variant, int *m, int *n, int *k)
{
    (void)dev;
    (void)variant;
    *m = in->m;
    *n = in->n;
    *k = in->k;
    return MF_DEV_OK;
}

static int model_run_tiles(mf_device *dev, const mf_instr *in, const char *variant, size_t ntiles, const void *A,
                           const void *B, const void *C, const void *SA, const void *SB, void *D, char *err,
                           size_t errlen)
{
    const mf_instr *row = model_row(dev, in);
    if (!row) {
        snprintf(err, errlen, "%s: %s has no such instruction", in->name, dev->info.name);
        return MF_DEV_ERR_UNSUPPORTED;
    }
    mf_instr form;
    if (variant && *variant) {
        if (mf_backend_form_row(row, variant, &form)) {
            snprintf(err, errlen, "%s: %s has no variant '%s'", in->name, dev->info.name, variant);
            return MF_DEV_ERR_UNSUPPORTED;
        }
        row = &form;
    }
    /* the layouts are the same (mf_device.h and mmafuzz_model.h), and the
     * two rows have the same formats and shape: only the arithmetic differs */
    mf_eval_tiles(row, in->m, in->n, in->k, ntiles, A, B, C, SA, SB, D);
    return MF_DEV_OK;
}

static int model_can_verify(const mf_device *dev, const mf_instr *in, const char *variant, const mf_instr *model,
                            const char **why)
{
    (void)dev, (void)in, (void)variant, (void)model;
    if (why)
        *why = "a model:ARCH device runs on the host: --verify host";
    return 0;
}

static void model_describe(const mf_device *dev, char *buf, size_t len)
{
    snprintf(buf, len, "%s (a model, no hardware)", dev->info.name);
}

static const mf_device_ops model_ops = {model_close, model_supports,   model_tile_shape, model_run_tiles, NULL,
                                       NULL,        model_can_verify, NULL,             NULL,            NULL,
                                       model_describe};

int mf_model_backend_open(const char *arch, mf_device *dev, char *err, size_t errlen)
{
    mf_arch a = mf_arch_by_name(arch);
    if (a == MF_ARCH_COUNT) {
        char names[256];
        snprintf(err, errlen, "model:%s: unknown architecture (%s)", arch, mf_arch_list(-1, names, sizeof names));
        return MF_DEV_ERR_NO_DEVICE;
    }
    dev->ops = &model_ops;
    dev->impl = NULL;
    dev->info.backend = MF_BACKEND_MODEL;
    dev->info.index = 0;
    dev->info.model_arch = a;
    snprintf(dev->info.name, sizeof dev->info.name, "model:%s", arch);
    snprintf(dev->info.arch, sizeof dev->info.arch, "%s", arch);
    snprintf(dev->info.driver, sizeof dev->info.driver, "mmafuzz %s", MF_VERSION);
    snprintf(dev->info.runtime, sizeof dev->info.runtime, "model");
    snprintf(dev->info.uuid, sizeof dev->info.uuid, "model");
    snprintf(dev->info.pci_bus_id, sizeof dev->info.pci_bus_id, "model");
    return MF_DEV_OK;
}
