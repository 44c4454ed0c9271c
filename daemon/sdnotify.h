/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef WLD_SDNOTIFY_H
#define WLD_SDNOTIFY_H
void sd_notify_send(const char *msg);
#endif
