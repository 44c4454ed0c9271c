// SPDX-License-Identifier: GPL-2.0-or-later
/* A build without sd-bus (the static guest programs): logind cannot be
 * followed, and one line says so when the configuration asks for it. */
#include "daemon.h"
#include "log.h"
#include "logind.h"

int logind_open(struct daemon *d)
{
	logind_presence_bus(d->presence, LP_BUS_BUILT_WITHOUT);
	if (d->cfg.logind_mode != LOGIND_OFF && d->cfg.logind_explicit)
		log_warn("[logind] mode: this wakelockd was built without sd-bus (libsystemd); "
		         "logind's inhibitors are not followed");
	return 0;
}

void logind_close(struct daemon *d) { (void)d; }
void logind_dispatch(struct daemon *d) { (void)d; }
void logind_policy_changed(struct daemon *d) { (void)d; }
int logind_timeout_ms(struct daemon *d) { (void)d; return -1; }
int logind_last_look(void *arg) { (void)arg; return 0; }

int logind_suspend(void *arg, const char *state)
{
	struct daemon *d = arg;

	return d->be->suspend(d->be, state);
}
