/*
 * block_post.h — work a product's caller adds to its epilogue. The thread
 * that computed a block of the output calls it on that block once its
 * values are final (bias and activation applied), while the block is
 * still in its cache: a pass over the output fused into the product, with
 * no parallel region of its own.
 */
#ifndef RF_BLOCK_POST_H
#define RF_BLOCK_POST_H

#include <stddef.h>

/* fn(arg, Y, ldy, m0, m1, n0, n1) on rows [m0, m1) and columns [n0, n1)
 * of the whole output Y (rows ldy apart). n0 is even and n1 even or N:
 * blocks are whole panels of 16 columns or more, so pairs of columns stay
 * together. Blocks cover the output once each, in any order, on any
 * thread. */
typedef struct {
    void (*fn)(const void *arg, float *Y, int ldy, int m0, int m1, int n0, int n1);
    const void *arg;
} rf_block_post;

/* Columns of a row block a product hands to post at a time, where its
 * tiles are narrower: still in cache, and wide enough that post's per-row
 * work (RoPE's tables of a position) is not paid for every tile. */
#define RF_BLOCK_POST_COLS 64

/* Runs post (NULL: nothing) on a block. */
static inline void rf_block_post_run(const rf_block_post *post, float *Y, int ldy, int m0, int m1,
                                     int n0, int n1)
{
    if (post)
        post->fn(post->arg, Y, ldy, m0, m1, n0, n1);
}

/* For a product that finishes its columns in order, a panel at a time,
 * over rows [m0, m1): called after the panel that ends at column n_end
 * (of n1), it runs post on the columns since *from once they are
 * RF_BLOCK_POST_COLS or the last, and moves *from on. */
static inline void rf_block_post_columns(const rf_block_post *post, float *Y, int ldy, int m0,
                                         int m1, int *from, int n_end, int n1)
{
    if (n_end - *from >= RF_BLOCK_POST_COLS || n_end == n1) {
        rf_block_post_run(post, Y, ldy, m0, m1, *from, n_end);
        *from = n_end;
    }
}

#endif
