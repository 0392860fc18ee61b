/*
 * elementwise_baseline.c — the element-wise kernels built for whatever
 * the compile flags give (elementwise.h): SSE2 on x86-64, NEON on ARM64, two
 * registers per 8-float vector; the build every CPU runs.
 */
#define RF_ELEMENTWISE_TARGET

#include "kernels/elementwise_build.h"

const rf_elementwise_ops rf_elementwise_baseline = RF_ELEMENTWISE_OPS;
