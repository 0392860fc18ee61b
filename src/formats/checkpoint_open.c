/*
 * checkpoint_open.c — opens a checkpoint file and hands it to the reader its
 * first bytes name: a torch.save zip (torch_zip.c) or safetensors
 * (safetensors.c). The readers fill the tensor set of checkpoint.c.
 */
#include "formats/checkpoint_open.h"

#include "base/error.h"
#include "formats/safetensors.h"
#include "formats/torch_zip.h"

#include <stdlib.h>
#include <string.h>

rf_status rf_checkpoint_open(const char *path, rf_checkpoint **out, rf_error *err)
{
    rf_checkpoint *ck = calloc(1, sizeof *ck);
    rf_status st;
    *out = NULL;
    if (!ck)
        return rf_fail(err, RF_ERR_NOMEM, "%s: out of memory", path);
    if ((st = rf_map_file(path, &ck->map, err)))
        goto done;
    const uint8_t *head = ck->map.data;
    if (ck->map.size >= 4 && !memcmp(head, "PK\x03\x04", 4))
        st = rf_torch_read(head, ck->map.size, path, ck, err);
    else if (ck->map.size >= 2 && head[0] == 0x80 && head[1] <= 5)
        /* a bare pickle: torch.save's format before PyTorch 1.6 */
        st = rf_fail(err, RF_ERR_UNSUPPORTED,
                     "%s: legacy (pre-1.6, non-zip) torch.save format; re-save it with a current PyTorch",
                     path);
    else
        st = rf_safetensors_read(ck->map.data, ck->map.size, path, ck, err);
done:
    if (st)
        rf_checkpoint_free(ck);
    else
        *out = ck;
    return st;
}
