/*
 * kinds_owned.h — the job kinds whose results own memory (the library's
 * fill-mask and NER result structs): moved from owner to owner, packed
 * field by field. Rows of kinds.c's table.
 */
#ifndef RF_SERVE_KINDS_OWNED_H
#define RF_SERVE_KINDS_OWNED_H

#include "serve/kind.h"

extern const serve_kind_ops serve_kind_fill_mask, serve_kind_ner;

#endif
