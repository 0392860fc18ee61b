/*
 * sorted_find.c — see sorted_find.h.
 */
#include "sorted_find.h"

int64_t rf_sorted_find(int64_t n, rf_sorted_cmp cmp, const void *ctx)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        int c = cmp(ctx, mid);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}
