/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer harness: the configuration file parser (daemon/config.c on
 * top of libinih).  Input: the bytes of a file.  Besides the sanitizers,
 * it checks what the parser promises: a configuration it accepts is
 * within its documented ranges, and an error message is one line of
 * printable ASCII that names the file.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "daemon/config.h"
#include "lib/wl_shm.h"

#define CHECK(x) do { if (!(x)) abort(); } while (0)

static void check_str(const char *s, size_t size)
{
	CHECK(memchr(s, 0, size) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wld_config c;
	char err[512];
	gid_t gid;

	config_defaults(&c);
	err[0] = 0;
	if (config_load_text((const char *)data, size, "fuzz.conf", &c, err, sizeof(err))) {
		CHECK(!strncmp(err, "fuzz.conf", 9));
		for (const char *p = err; *p; p++)
			CHECK(*p >= 0x20 && *p < 0x7f);
		return 0;
	}
	check_str(c.state, sizeof(c.state));
	CHECK(!strcmp(c.state, "freeze") || !strcmp(c.state, "mem") || !strcmp(c.state, "disk"));
	check_str(c.mem_sleep, sizeof(c.mem_sleep));
	CHECK(c.backoff_factor <= 16 && c.backoff_max_ms <= 86400000u);
	CHECK(c.ndeny <= WLD_MAX_DENY);
	for (unsigned i = 0; i < c.ndeny; i++)
		CHECK(wl_name_check(c.deny[i]) == 0);
	check_str(c.group, sizeof(c.group));
	check_str(c.root, sizeof(c.root));
	CHECK(!c.root[0] || c.root[0] == '/');
	check_str(c.pre_suspend_hook, sizeof(c.pre_suspend_hook));
	/* A numeric group resolves to itself without a lookup. */
	if (c.group[0] && strspn(c.group, "0123456789") == strlen(c.group)) {
		CHECK(config_resolve_group(c.group, &gid, err, sizeof(err)) == 0);
		CHECK((unsigned long long)gid == strtoull(c.group, NULL, 10));
	}
	return 0;
}
