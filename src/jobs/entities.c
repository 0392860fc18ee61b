/*
 * entities.c — grouping per-token labels into entities, the "simple"
 * aggregation of HF's TokenClassificationPipeline extended to BIOES/BMES:
 *
 *   tags:    B-PER I-PER O  S-LOC B-ORG E-ORG I-LOC
 *   tokens:  张    三    说  京    中    大    沪
 *   groups:  [PER 0..1]     [LOC 3] [ORG 4..5] [LOC 6]
 *
 * A continuation (I-/M-/E-) of a type other than the open entity's opens a
 * new entity, as HF does for a stray I- tag. Character offsets are filled in
 * by the caller from the tokens' spans.
 */
#include "roformer.h"

#include <string.h>

typedef enum { TAG_OUTSIDE, TAG_BEGIN, TAG_INSIDE, TAG_END, TAG_SINGLE } tag_kind;

/* Splits "B-PER" into TAG_BEGIN and "PER"; "O" (or NULL) is outside; a
 * label without a known prefix ("PER") is its own type, continued. */
static tag_kind parse_tag(const char *label, const char **type, int32_t *type_len)
{
    if (!label || !strcmp(label, "O"))
        return TAG_OUTSIDE;
    tag_kind kind = TAG_INSIDE;
    *type = label;
    if (label[0] && strchr("BIEMS", label[0]) && (label[1] == '-' || label[1] == '_')) {
        switch (label[0]) {
        case 'B': kind = TAG_BEGIN; break;
        case 'E': kind = TAG_END; break;
        case 'S': kind = TAG_SINGLE; break;
        default: kind = TAG_INSIDE; break; /* I, M */
        }
        *type = label + 2;
    }
    *type_len = (int32_t)strlen(*type);
    return kind;
}

static bool same_type(const rf_entity *e, const char *type, int32_t len)
{
    return e->type_len == len && !memcmp(e->type, type, (size_t)len);
}

int32_t rf_group_entities(const char *const *labels, int32_t num_labels, const int32_t *tags,
                          const float *scores, int32_t n, rf_entity *out)
{
    int32_t count = 0;
    rf_entity *open = NULL; /* the entity the next continuation may extend */
    double score_sum = 0.0;

    for (int32_t i = 0; i < n; i++) {
        const char *label = tags[i] >= 0 && tags[i] < num_labels ? labels[tags[i]] : NULL;
        const char *type = NULL;
        int32_t type_len = 0;
        tag_kind kind = parse_tag(label, &type, &type_len);

        bool extend = open && (kind == TAG_INSIDE || kind == TAG_END) &&
                      same_type(open, type, type_len);
        if (open && !extend) { /* close the open entity */
            open->score = (float)(score_sum / (open->last - open->first + 1));
            open = NULL;
        }
        if (kind == TAG_OUTSIDE)
            continue;
        if (!extend) {
            open = &out[count++];
            *open = (rf_entity){.type = type, .type_len = type_len, .first = i, .last = i};
            score_sum = 0.0;
        }
        open->last = i;
        score_sum += scores ? scores[i] : 0.0f;
        if (kind == TAG_END || kind == TAG_SINGLE) {
            open->score = (float)(score_sum / (open->last - open->first + 1));
            open = NULL;
        }
    }
    if (open)
        open->score = (float)(score_sum / (open->last - open->first + 1));
    return count;
}
