/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef WL_JSON_H
#define WL_JSON_H

#include <stdio.h>
#include "wl_shm.h"

/* Write s as a JSON string literal: always valid UTF-8 (a byte that is
 * not part of a well-formed UTF-8 sequence is written as \u00XX). */
void wl_json_str(FILE *f, const char *s);
/* Copy src for an error message or a log line: bytes outside printable
 * ASCII become \xHH and a backslash \\; truncated to fit len (> 0).
 * Returns the length written. */
size_t wl_escape(char *dst, size_t len, const char *src);
/* The daemon's statistics as one JSON object (no trailing newline). */
void wl_json_dstats(FILE *f, const struct wl_shm_dstats *st);
/* Symbolic name of an errno value ("EIO"), or its number. */
const char *wl_errno_name(int err, char *buf, size_t len);

#endif
