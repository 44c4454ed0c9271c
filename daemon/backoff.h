/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef WLD_BACKOFF_H
#define WLD_BACKOFF_H

#include <stdint.h>

/* Exponential backoff: initial, ×factor, capped at max (milliseconds). */
struct backoff {
	uint64_t initial_ms, max_ms, cur_ms;
	unsigned factor;
};

void backoff_init(struct backoff *b, uint64_t initial_ms, unsigned factor, uint64_t max_ms);
/* The delay to wait now; the next one grows. */
uint64_t backoff_next(struct backoff *b);
void backoff_reset(struct backoff *b);

#endif
