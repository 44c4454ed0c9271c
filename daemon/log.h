/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef WLD_LOG_H
#define WLD_LOG_H

enum log_level { LOG_L_DEBUG = 0, LOG_L_INFO, LOG_L_WARN, LOG_L_ERROR };

void log_setup(int level, int use_syslog);
void log_set_level(int level);
int log_level_parse(const char *s);      /* -1 if unknown */
const char *log_level_name(int level);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_debug(...) log_msg(LOG_L_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_L_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_L_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_L_ERROR, __VA_ARGS__)

#endif
