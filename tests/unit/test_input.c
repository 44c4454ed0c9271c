/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Bad input at the edges: replies from the socket, names in JSON. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>
#include "lib/wl_json.h"
#include "lib/wl_proto.h"

/* A request answered by a "daemon" that has queued its reply already. */
static int exchange_with(int32_t status, const char *msg)
{
	struct wl_msg_rep rep, got;
	int sv[2], r;

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	memset(&rep, 0, sizeof(rep));
	rep.magic = WL_MSG_MAGIC;
	rep.status = status;
	rep.abi_major = 3;
	if (msg)
		memcpy(rep.msg, msg, strlen(msg) < sizeof(rep.msg) ? strlen(msg) : sizeof(rep.msg));
	assert_int_equal(wl_send_msg(sv[1], &rep, sizeof(rep), -1), 0);
	r = wl_request(sv[0], WL_OP_OBSERVE, NULL, &got, NULL);
	close(sv[0]);
	close(sv[1]);
	return r;
}

static void test_reply_status(void **st)
{
	char big[300];
	(void)st;

	assert_int_equal(exchange_with(0, NULL), 0);
	assert_int_equal(exchange_with(-ENOENT, NULL), -ENOENT);
	assert_string_equal(wakelock_last_error(), strerror(ENOENT));
	assert_int_equal(exchange_with(-EACCES, "go away"), -EACCES);
	assert_string_equal(wakelock_last_error(), "go away");
	/* Negating INT_MIN is undefined; no errno is that large or positive. */
	assert_int_equal(exchange_with(INT_MIN, NULL), -EPROTO);
	assert_non_null(strstr(wakelock_last_error(), "invalid status"));
	assert_int_equal(exchange_with(INT_MIN, "text"), -EPROTO);
	assert_int_equal(exchange_with(-4096, NULL), -EPROTO);
	assert_int_equal(exchange_with(-4095, "x"), -4095);
	assert_int_equal(exchange_with(1, NULL), -EPROTO);
	assert_int_equal(exchange_with(INT_MAX, NULL), -EPROTO);
	/* Text without a terminator, with control bytes: cut, made harmless. */
	memset(big, 'a', sizeof(big));
	big[3] = '\033';
	big[sizeof(big) - 1] = 0;
	assert_int_equal(exchange_with(-EIO, big), -EIO);
	assert_int_equal(strlen(wakelock_last_error()), WL_MSG_TEXT - 1);
	assert_int_equal(wakelock_last_error()[3], '?');
}

static void expect_json(const char *in, const char *out)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	wl_json_str(f, in);
	fclose(f);
	if (strcmp(buf, out))
		fail_msg("JSON of '%s' is '%s', expected '%s'", in, buf, out);
	free(buf);
}

/* Wakeup-source names come from drivers and need not be UTF-8. */
static void test_json_utf8(void **st)
{
	(void)st;
	expect_json("plain", "\"plain\"");
	expect_json("q\"b\\\n\x7f", "\"q\\\"b\\\\\\u000a\\u007f\"");
	expect_json("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	expect_json("a\xe9z", "\"a\\u00e9z\"");                      /* Latin-1 */
	expect_json("\xc0\xaf", "\"\\u00c0\\u00af\"");                /* overlong */
	expect_json("\xe0\x80\xaf", "\"\\u00e0\\u0080\\u00af\"");     /* overlong */
	expect_json("\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\"");     /* surrogate */
	expect_json("\xf4\x90\x80\x80", "\"\\u00f4\\u0090\\u0080\\u0080\""); /* > U+10FFFF */
	expect_json("\xf5\xff\xfe", "\"\\u00f5\\u00ff\\u00fe\"");
	expect_json("x\xe2\x82", "\"x\\u00e2\\u0082\"");              /* cut short */
	expect_json("\xe2\x82z", "\"\\u00e2\\u0082z\"");
	expect_json("\x80\xbf", "\"\\u0080\\u00bf\"");                /* stray continuation */
}

static void test_escape(void **st)
{
	char b[16];
	(void)st;

	assert_int_equal(wl_escape(b, sizeof(b), "ok"), 2);
	assert_string_equal(b, "ok");
	wl_escape(b, sizeof(b), "a\x1b[2J\\\xff");
	assert_string_equal(b, "a\\x1b[2J\\\\\\xff");
	/* Cut at a whole escape, always terminated. */
	wl_escape(b, 6, "ab\x01\x02");
	assert_string_equal(b, "ab");
	wl_escape(b, 1, "abc");
	assert_string_equal(b, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reply_status),
		cmocka_unit_test(test_json_utf8),
		cmocka_unit_test(test_escape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
