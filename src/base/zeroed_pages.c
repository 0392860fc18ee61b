/*
 * zeroed_pages.c — see zeroed_pages.h.
 */
#include "zeroed_pages.h"

#include <sys/mman.h>

void *rf_zeroed_pages(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE); /* advice only: failure is harmless */
#endif
    return p;
}

void rf_zeroed_pages_free(void *p, size_t bytes)
{
    if (p)
        munmap(p, bytes);
}
