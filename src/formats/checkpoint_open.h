/*
 * checkpoint_open.h — opening a checkpoint file of either format (the
 * readers' dispatch, kept apart from the tensor set they fill).
 */
#ifndef RF_CHECKPOINT_OPEN_H
#define RF_CHECKPOINT_OPEN_H

#include "formats/checkpoint.h"

/* Opens a .safetensors file or a torch.save zip (pytorch_model.bin),
 * chosen by the file's first bytes. */
rf_status rf_checkpoint_open(const char *path, rf_checkpoint **out, rf_error *err);

#endif
