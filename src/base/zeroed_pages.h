/*
 * zeroed_pages.h — large zero-filled buffers mapped straight from the
 * kernel, which hands out zeroed pages: nothing to clear, no pass that
 * touches every page before the real writes do, and 2 MB pages where the
 * system allows (fewer page faults and TLB misses). For buffers of
 * megabytes written once (the jieba table, the packed int8 weights).
 */
#ifndef RF_ZEROED_PAGES_H
#define RF_ZEROED_PAGES_H

#include <stddef.h>

/* `bytes` of zeroes, page-aligned; NULL when the mapping fails. */
void *rf_zeroed_pages(size_t bytes);
/* Unmaps a buffer of rf_zeroed_pages (the same `bytes`); NULL is a no-op. */
void rf_zeroed_pages_free(void *p, size_t bytes);

#endif
