/*
 * sorted_find.h — a binary search over a table's index sorted by its key
 * (a GGUF file's tensors, a checkpoint's): the caller says how the entry
 * at each sorted position compares with the key it looks for, so that one
 * search serves whatever the key and the entries are.
 */
#ifndef RF_SORTED_FIND_H
#define RF_SORTED_FIND_H

#include <stdint.h>

/* How the entry at sorted position i compares with the key: < 0, 0 or
 * > 0 as it sorts before, equal to or after it. */
typedef int (*rf_sorted_cmp)(const void *ctx, int64_t i);

/* The sorted position in [0, n) of the entry equal to the key, or -1. */
int64_t rf_sorted_find(int64_t n, rf_sorted_cmp cmp, const void *ctx);

#endif
