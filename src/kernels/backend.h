/*
 * backend.h — the one table of the kernels' builds (backend.c): a row per
 * build of an operation, naming it, what the CPU must have to run it, the
 * rule that makes the CPU's choice pick it and why, whether it is the
 * tests' own, and its operations. The operations are three:
 *
 *   int8         the int8 product (rf_int8_ops, gemm_int8_backend.h)
 *   bf16         the bf16 product (rf_bf16_ops, gemm_bf16_backend.h)
 *   elementwise  activations, softmax, the norms and the f16 / bf16
 *                widening (rf_elementwise_ops, elementwise_ops.h)
 *
 * One choice per operation, made once per process: the first row of the
 * operation (the table is best first) whose rule set this CPU has, unless
 * set (ROFORMER_KERNEL, rf_kernels_select, tests). The products' drivers
 * and the element-wise entry points read it; kernel_choice.c reads the
 * user's words into it, and `roformer info`, `bench` and docs/compute.md
 * list its rows. Adding an instruction set is its file and a row here.
 */
#ifndef RF_BACKEND_H
#define RF_BACKEND_H

#include "kernels/cpu.h"

#include <stdbool.h>

typedef enum {
    RF_OP_INT8,
    RF_OP_BF16,
    RF_OP_ELEMENTWISE,
    RF_OP_COUNT
} rf_op;

/* Each operation's members, in the headers above (which do not include
 * this one: the table names them, they do not name the table). */
struct rf_int8_ops;
struct rf_bf16_ops;
struct rf_elementwise_ops;

/* A rule no CPU meets: the CPU's choice never picks the row (a feature
 * bit past the last, which rf_cpu_has_all never grants). */
#define RF_RULE_NEVER RF_CPU_NEEDS(RF_CPU_FEATURE_COUNT)

typedef struct {
    const char *name;  /* ROFORMER_KERNEL=OP=NAME, info, bench; one row per name in an op */
    rf_op op;
    rf_cpu_set needs;  /* what the CPU must have to run it (cpu.h) */
    rf_cpu_set rule;   /* what makes the CPU's choice pick it (RF_RULE_NEVER: never);
                          an int8 or element-wise row's is its needs */
    const char *why;   /* the rule's reason, for info */
    bool tests_only;   /* never chosen by the CPU nor by a user's word */
    /* the op's operations; the other two NULL */
    const struct rf_int8_ops *int8;
    const struct rf_bf16_ops *bf16;
    const struct rf_elementwise_ops *elementwise;
} rf_backend;

/* The table, in each op's order of choice, the tests' own last. */
extern const rf_backend rf_backends[];
extern const int rf_backend_count;

/* "int8", "bf16", "elementwise"; and back (RF_OP_COUNT: none). */
const char *rf_op_name(rf_op op);
rf_op rf_op_find(const char *name);

/* True when this CPU runs the row. */
bool rf_backend_runs(const rf_backend *b);
/* True when the CPU's choice finds a row of the op (the product's
 * compute type is available). */
bool rf_backend_supported(rf_op op);
/* The row in use: the CPU's choice on the first call, unless set.
 * Without a row the CPU's choice takes, the op's first row, which nothing
 * runs then (NULL only for an op with no row in this architecture's
 * table). */
const rf_backend *rf_backend_get(rf_op op);
/* Uses `b` for its op from now on, in every thread; false (and no change)
 * where the CPU does not run it. */
bool rf_backend_set(const rf_backend *b);
/* The op's row of this name, NULL where there is none. */
const rf_backend *rf_backend_find(rf_op op, const char *name);
/* One line on why the row in use was picked, derived from the table: the
 * rule's reason where the row in use is the CPU's choice, else "set by the
 * caller"; why none is where the CPU's choice finds no row. */
const char *rf_backend_reason(rf_op op);

#endif
