/*
 * jieba_dict.h — jieba's prefix dictionary: every word of dict.txt and
 * every prefix of it, with the word's log-probability.
 *
 * It is a trie over code points whose edges live in one hash table: a node
 * is the slot that holds the edge leading to it, and the edge key is
 * (parent node, code point). Walking a text forward from one position is
 * then one probe per character, with no string compares. The root's
 * children in the BMP (the first character of almost every word) are also
 * found directly through `root_child`. For the words 北京, 北京大学,
 * 大学, 学:
 *
 *     root --北--> n1 --京--> n2* --大--> n3 --学--> n4*
 *     root --大--> n5 --学--> n6*
 *     root --学--> n7*                      (* = a word: weight is set)
 *
 * weight(word) = ln(freq) - ln(total), the term jieba adds along a route;
 * total is the sum of the frequencies of the distinct words. A word listed
 * twice keeps its last frequency (jieba-rs load_dict). Prefix-only nodes
 * have weight NaN.
 */
#ifndef RF_JIEBA_DICT_H
#define RF_JIEBA_DICT_H

#include "roformer.h"

#include <math.h>

#define RF_JIEBA_NO_NODE UINT32_MAX

typedef struct {
    uint64_t key;  /* ((parent + 1) << 21) | code point; 0 = empty slot */
    double weight; /* ln(freq) - ln(total), NaN when only a prefix */
} rf_jieba_node;

typedef struct {
    rf_jieba_node *nodes;  /* [mask + 1] */
    uint64_t mask;
    uint32_t root;         /* a parent id no slot has: mask + 1 */
    uint32_t *root_child;  /* [0x10000] node of each BMP first character, or RF_JIEBA_NO_NODE */
    double unknown_weight; /* ln(1) - ln(total): a character on no edge */
    uint64_t total;
    int32_t n_words;       /* distinct words */
} rf_jieba_dict;

/* Builds the dictionary from `n` words (UTF-8, not NUL-terminated) and
 * their frequencies. */
rf_status rf_jieba_dict_init(rf_jieba_dict *d, const char *const *words, const uint32_t *len,
                             const uint32_t *freq, int32_t n, rf_error *err);
void rf_jieba_dict_release(rf_jieba_dict *d);
/* rf_jieba_dict_init in two steps: the checks that depend on the words
 * alone (size, UTF-8, the table's limit), then the build of words that
 * passed them, which can only run out of memory. */
rf_status rf_jieba_dict_check(const char *const *words, const uint32_t *len, int32_t n,
                              rf_error *err);
rf_status rf_jieba_dict_build(rf_jieba_dict *d, const char *const *words, const uint32_t *len,
                              const uint32_t *freq, int32_t n, rf_error *err);

static inline uint64_t rf_jieba_slot_of(uint64_t key, uint64_t mask)
{
    return (key * 0x9E3779B97F4A7C15ull) >> 20 & mask;
}

static inline uint64_t rf_jieba_key(uint32_t parent, int32_t cp)
{
    return ((uint64_t)parent + 1) << 21 | (uint64_t)cp;
}

/* The node reached from `node` by code point `cp`, or RF_JIEBA_NO_NODE. */
static inline uint32_t rf_jieba_dict_child(const rf_jieba_dict *d, uint32_t node, int32_t cp)
{
    if (node == d->root && cp < 0x10000)
        return d->root_child[cp];
    uint64_t key = rf_jieba_key(node, cp);
    for (uint64_t i = rf_jieba_slot_of(key, d->mask);; i = (i + 1) & d->mask) {
        uint64_t k = d->nodes[i].key;
        if (k == key)
            return (uint32_t)i;
        if (k == 0)
            return RF_JIEBA_NO_NODE;
    }
}

#endif
