/*
 * pickle.h — a restricted unpickler for PyTorch state dicts (the data.pkl
 * of a torch.save archive).
 *
 * It runs the pickle opcodes a state dict uses (protocols 2 to 5): dicts,
 * lists, tuples, strings, ints, floats, bools, None, the memo, and exactly
 * these globals: collections.OrderedDict, torch._utils._rebuild_tensor_v2,
 * torch._utils._rebuild_parameter and the typed storage classes
 * (torch.FloatStorage, HalfStorage, BFloat16Storage, DoubleStorage,
 * LongStorage, IntStorage, ShortStorage, CharStorage, ByteStorage,
 * BoolStorage). Nothing is ever imported or called: a global is only a
 * name matched against that list. Anything else is refused with a message
 * naming the opcode or the global.
 */
#ifndef RF_PICKLE_H
#define RF_PICKLE_H

#include "formats/checkpoint.h"

/* Most values (strings, ints, tuples, ...) one pickle may make. A value
 * takes ~250 bytes whatever its opcode's size, so a 16 MB pickle of 1-byte
 * opcodes would otherwise take 4 GB; a state dict needs ~25 per tensor,
 * and this allows 80000 tensors for ~500 MB at most. */
#define RF_PICKLE_MAX_VALUES (1 << 21)

/* Finds the bytes of storage `key` (the archive's data/<key>); returns
 * NULL when there is none. */
typedef const uint8_t *(*rf_storage_lookup)(void *ctx, const char *key, size_t key_len,
                                            uint64_t *size);

/* Unpickles a state dict and adds each tensor to `ck`: contiguous tensors
 * point into the storages, strided ones are copied. The copies may add up
 * to at most `copy_limit` bytes (RF_ERR_LIMIT past it): pass the archive's
 * size, which a real state dict never exceeds, so that many strided views
 * of one storage cannot turn a small file into unbounded memory. */
rf_status rf_unpickle_state_dict(const uint8_t *pkl, size_t size, rf_storage_lookup lookup,
                                 void *lookup_ctx, uint64_t copy_limit, const char *what,
                                 rf_checkpoint *ck, rf_error *err);

#endif
