/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "backoff.h"

void backoff_init(struct backoff *b, uint64_t initial_ms, unsigned factor, uint64_t max_ms)
{
	b->initial_ms = initial_ms;
	b->factor = factor ? factor : 1;
	b->max_ms = max_ms < initial_ms ? initial_ms : max_ms;
	b->cur_ms = 0;
}

uint64_t backoff_next(struct backoff *b)
{
	if (b->cur_ms == 0)
		b->cur_ms = b->initial_ms;
	else if (b->cur_ms >= b->max_ms / b->factor)
		b->cur_ms = b->max_ms;
	else
		b->cur_ms *= b->factor;
	return b->cur_ms;
}

void backoff_reset(struct backoff *b)
{
	b->cur_ms = 0;
}
