/*
 * kinds.h — the table of job kinds: a row (kind.h) per serve_kind, read
 * by the routes (what a job allocates) and the runner (what it runs, and
 * how its results are moved, cached and freed).
 */
#ifndef RF_SERVE_KINDS_H
#define RF_SERVE_KINDS_H

#include "serve/kind.h"

/* The row of `kind`. */
const serve_kind_ops *serve_kind_ops_of(serve_kind kind);

#endif
