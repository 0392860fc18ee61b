/*
 * clock.h — the monotonic clock the library times durations with.
 */
#ifndef RF_BASE_CLOCK_H
#define RF_BASE_CLOCK_H

/* Seconds on CLOCK_MONOTONIC: differences are durations. */
double rf_clock_seconds(void);

#endif
