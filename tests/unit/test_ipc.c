/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Library <-> daemon over the real socket and segment (wakelockd runs
 * against a fake /sys under a temp dir). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "lib/wl_client.h"
#include "harness.h"

static char self_exe[4096];

struct env {
	struct hd d;
	struct wl_seg seg;
};

static int start_with(void **st, const char *const *extra)
{
	struct env *e = calloc(1, sizeof(*e));

	assert_int_equal(hd_prepare(&e->d), 0);
	if (hd_start(&e->d, extra) < 0)
		fail_msg("daemon did not start (log in %s)", e->d.log);
	assert_int_equal(hd_observe(&e->d, &e->seg), 0);
	*st = e;
	return 0;
}

static int setup(void **st)
{
	return start_with(st, NULL);
}

static int teardown(void **st)
{
	struct env *e = *st;

	wl_seg_unmap(&e->seg);
	hd_cleanup(&e->d);
	free(e);
	return 0;
}

static uint32_t counter(struct env *e)
{
	return __atomic_load_n(&hd_snap(&e->d)->counter, __ATOMIC_SEQ_CST);
}

static unsigned live_slots(struct env *e)
{
	unsigned n = 0;
	const struct wl_shm_header *h = hd_snap(&e->d);

	for (uint32_t i = 0; i < h->nslots; i++)
		n += h->slots[i].state == WL_SLOT_LIVE;
	return n;
}

static int no_live_slots(void *arg)
{
	return live_slots(arg) == 0;
}

static void test_basic(void **st)
{
	struct env *e = *st;
	wakelock_client *c;
	wakelock_hold *a, *b;

	assert_int_equal(wakelock_client_open(NULL, "basic", &c), 0);
	assert_int_equal(wakelock_hold_create(c, "a", &a), 0);
	assert_int_equal(wakelock_hold_create(c, "b", &b), 0);
	assert_int_equal(wakelock_hold_is_held(a), 0);
	assert_int_equal(wakelock_hold_acquire(a), 0);
	assert_int_equal(wakelock_hold_acquire(a), 0);
	assert_int_equal(wakelock_hold_acquire(b), 0);
	assert_int_equal(counter(e), 2);
	assert_int_equal(wakelock_hold_is_held(a), 1);
	assert_int_equal(wakelock_hold_release(a), 0);
	assert_int_equal(wakelock_hold_release(a), 0);
	assert_int_equal(wakelock_hold_release(a), -EINVAL);
	assert_int_equal(counter(e), 1);
	wakelock_hold_destroy(b);                         /* destroy releases */
	assert_int_equal(counter(e), 0);
	assert_int_equal(wakelock_hold_create(c, "bad name", &b), -EINVAL);
	wakelock_hold_destroy(a);
	wakelock_client_close(c);
	assert_true(hd_wait_for(no_live_slots, e, 2000));
	assert_int_equal(wakelock_client_open(NULL, "", &c), -EINVAL);
	assert_int_equal(wakelock_client_open(NULL, "0123456789012345678901234567890123", &c),
	                 -ENAMETOOLONG);
}

/* Mappings of the daemon's published segment in this process. */
static int pub_mappings(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "/memfd:wakelockd (deleted)") != NULL;
	fclose(f);
	return n;
}

/*
 * The clients of one process share one mapping of the daemon's segment
 * (lib/pubmap.c), whose last client unmaps it; each hold is a line of its
 * own client's region, and clients stay independent of each other.
 */
static void test_clients_share_the_published_segment(void **st)
{
	struct env *e = *st;
	wakelock_client *c1, *c2;
	wakelock_hold *a, *b;
	int n0 = pub_mappings();

	assert_int_equal(wakelock_client_open(NULL, "one", &c1), 0);
	assert_int_equal(pub_mappings(), n0 + 1);
	assert_int_equal(wakelock_client_open(NULL, "two", &c2), 0);
	assert_int_equal(pub_mappings(), n0 + 1);
	assert_ptr_equal(c1->pub, c2->pub);
	assert_ptr_not_equal(c1->watched, c2->watched);
	assert_int_equal(wakelock_hold_create(c1, "a", &a), 0);
	assert_int_equal(wakelock_hold_create(c2, "a", &b), 0);
	/* The handle is the hold's line in its client's region. */
	assert_ptr_equal(a, &c1->region->holds[wl_hold_index(a)]);
	assert_ptr_equal(b, &c2->region->holds[wl_hold_index(b)]);
	assert_int_equal(wakelock_hold_acquire(a), 0);
	assert_int_equal(c1->region->holds[wl_hold_index(a)].depth, 1);
	assert_int_equal(c2->region->holds[wl_hold_index(b)].depth, 0);
	assert_int_equal(counter(e), 1);
	wakelock_client_close(c1);                /* its hold goes with it */
	assert_int_equal(pub_mappings(), n0 + 1);
	assert_int_equal(counter(e), 0);
	assert_int_equal(wakelock_hold_acquire(b), 0);
	assert_int_equal(counter(e), 1);
	assert_int_equal(wakelock_hold_release(b), 0);
	assert_int_equal(counter(e), 0);
	wakelock_client_close(c2);
	assert_int_equal(pub_mappings(), n0);
}

static void test_no_daemon(void **st)
{
	wakelock_client *c;
	(void)st;

	assert_int_equal(wakelock_client_open("/tmp/wl-nonexistent/sock", "x", &c), -ENOTCONN);
	assert_non_null(strstr(wakelock_last_error(), "not running"));
	assert_non_null(strstr(wakelock_strerror(-ENOTCONN), "not running"));
}

struct hammer {
	wakelock_client *c;
	int iters;
	int errors;
};

static void *hammer_thread(void *arg)
{
	struct hammer *hm = arg;
	wakelock_hold *h;

	if (wakelock_hold_create(hm->c, "t", &h) < 0) {
		hm->errors++;
		return NULL;
	}
	for (int i = 0; i < hm->iters; i++) {
		if (wakelock_hold_acquire(h) < 0 || (i % 3 == 0 && wakelock_hold_acquire(h) < 0))
			hm->errors++;
		if (i % 3 == 0 && wakelock_hold_release(h) < 0)
			hm->errors++;
		if (wakelock_hold_release(h) < 0)
			hm->errors++;
	}
	wakelock_hold_destroy(h);
	return NULL;
}

static void test_threads_and_processes_hammering(void **st)
{
	struct env *e = *st;
	enum { THREADS = 6, PROCS = 3, ITERS = 3000 };
	struct hammer hm[THREADS];
	pthread_t t[THREADS];
	pid_t pids[PROCS];
	wakelock_client *c;
	int status;

	/* Processes first, while this process has a single thread. */
	for (int p = 0; p < PROCS; p++) {
		pids[p] = fork();
		if (pids[p] == 0) {
			struct hammer h1 = { .iters = ITERS };
			char name[16];

			/* A name is one live client's. */
			snprintf(name, sizeof(name), "proc%d", p);
			if (wakelock_client_open(NULL, name, &h1.c) < 0)
				_exit(2);
			hammer_thread(&h1);
			_exit(h1.errors ? 1 : 0);
		}
	}
	assert_int_equal(wakelock_client_open(NULL, "threads", &c), 0);
	for (int i = 0; i < THREADS; i++) {
		hm[i] = (struct hammer){ .c = c, .iters = ITERS };
		pthread_create(&t[i], NULL, hammer_thread, &hm[i]);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(hm[i].errors, 0);
	}
	for (int p = 0; p < PROCS; p++) {
		assert_int_equal(waitpid(pids[p], &status, 0), pids[p]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	assert_int_equal(counter(e), 0);
	wakelock_client_close(c);
	assert_true(hd_wait_for(no_live_slots, e, 2000));
}

static void test_exit_while_holding_is_reaped(void **st)
{
	struct env *e = *st;
	int p[2], status;
	char ch;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		wakelock_client *c;
		wakelock_hold *h;
		if (wakelock_client_open(NULL, "quitter", &c) || wakelock_hold_create(c, "h", &h) ||
		    wakelock_hold_acquire(h))
			_exit(1);
		if (write(p[1], "r", 1) != 1)
			_exit(1);
		_exit(0);     /* no release, no close */
	}
	assert_int_equal(read(p[0], &ch, 1), 1);
	waitpid(pid, &status, 0);
	/* Reaping is driven by the socket's hang-up, not a poll: the bound is
	 * only a liveness limit, generous for a loaded host under TSan. */
	assert_true(hd_wait_for(no_live_slots, e, 2000));
	assert_int_equal(counter(e), 0);
	close(p[0]);
	close(p[1]);
}

static void test_deny_allow_at_run_time(void **st)
{
	struct env *e = *st;
	char cmd[1024];
	wakelock_client *c;
	wakelock_hold *h;

	assert_int_equal(wakelock_client_open(NULL, "noisy", &c), 0);
	assert_int_equal(wakelock_hold_create(c, "h", &h), 0);
	assert_int_equal(wakelock_hold_acquire(h), 0);
	assert_int_equal(counter(e), 1);
	snprintf(cmd, sizeof(cmd), "%s deny noisy", hd_bin("wakelock"));
	assert_int_equal(system(cmd), 0);
	assert_int_equal(counter(e), 0);                   /* recorded, not counted */
	assert_int_equal(wakelock_hold_is_held(h), 1);
	snprintf(cmd, sizeof(cmd), "%s allow noisy", hd_bin("wakelock"));
	assert_int_equal(system(cmd), 0);
	assert_int_equal(counter(e), 1);
	wakelock_client_close(c);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int slot_allowed(struct env *e, const char *name)
{
	const struct wl_shm_header *h = hd_snap(&e->d);

	for (uint32_t i = 0; i < h->nslots; i++) {
		const struct wl_shm_slot *s = &h->slots[i];
		if (s->state == WL_SLOT_LIVE && !strcmp(s->name, name))
			return (int)__atomic_load_n(&s->allowed, __ATOMIC_SEQ_CST);
	}
	return -1;
}

struct allowed_arg { struct env *e; const char *name; int want; };

static int allowed_is(void *arg)
{
	struct allowed_arg *a = arg;
	return slot_allowed(a->e, a->name) == a->want;
}

static int counter_is_one(void *arg)
{
	return counter(arg) == 1;
}

static void test_reload(void **st)
{
	struct env *e = calloc(1, sizeof(*e));
	const char *extra[] = { "--config", NULL, NULL };
	struct allowed_arg aa;
	wakelock_client *c;
	wakelock_hold *h;
	char log[8192];
	int fd;
	ssize_t n;

	assert_int_equal(hd_prepare(&e->d), 0);
	extra[1] = e->d.conf;
	write_text(e->d.conf, "[access]\ndeny = x\n");
	assert_int_equal(hd_start(&e->d, extra), 0);
	assert_int_equal(hd_observe(&e->d, &e->seg), 0);
	*st = e;
	assert_int_equal(wakelock_client_open(NULL, "x", &c), 0);
	assert_int_equal(wakelock_hold_create(c, "h", &h), 0);
	assert_int_equal(wakelock_hold_acquire(h), 0);
	assert_int_equal(slot_allowed(e, "x"), 0);
	assert_int_equal(counter(e), 0);
	/* A good new file takes effect on SIGHUP. */
	write_text(e->d.conf, "[access]\ndeny = y\n");
	kill(e->d.pid, SIGHUP);
	aa = (struct allowed_arg){ e, "x", 1 };
	assert_true(hd_wait_for(allowed_is, &aa, 5000));
	assert_true(hd_wait_for(counter_is_one, e, 1000));
	/* A bad one is refused and the running config stays. */
	write_text(e->d.conf, "[access]\ndeny = x\n[suspend]\nstate = nap\n");
	kill(e->d.pid, SIGHUP);
	hd_sleep_ms(150);
	assert_int_equal(slot_allowed(e, "x"), 1);
	assert_int_equal(kill(e->d.pid, 0), 0);
	fd = open(e->d.log, O_RDONLY);
	n = read(fd, log, sizeof(log) - 1);
	close(fd);
	log[n > 0 ? n : 0] = 0;
	assert_non_null(strstr(log, "wakelockd.conf:4: [suspend] state: expected freeze, mem or disk"));
	assert_non_null(strstr(log, "keeping the previous configuration"));
	wakelock_client_close(c);
}

struct attempts_arg { struct env *e; uint64_t above; };

static int attempts_above(void *arg)
{
	struct attempts_arg *a = arg;
	return __atomic_load_n(&hd_snap(&a->e->d)->dstats.attempts, __ATOMIC_SEQ_CST) > a->above;
}

static void test_timed_hold_expires_in_daemon(void **st)
{
	struct env *e = *st;
	struct attempts_arg aa = { e, 0 };
	wakelock_client *c;
	wakelock_hold *h;

	assert_int_equal(wakelock_client_open(NULL, "timed", &c), 0);
	assert_int_equal(wakelock_hold_create(c, "h", &h), 0);
	assert_int_equal(wakelock_hold_acquire_timeout(h, 80), 0);
	assert_int_equal(counter(e), 1);
	hd_sleep_ms(20);
	aa.above = __atomic_load_n(&hd_snap(&e->d)->dstats.attempts, __ATOMIC_SEQ_CST);
	hd_sleep_ms(20);
	/* While held, no suspend attempt. */
	assert_int_equal(__atomic_load_n(&hd_snap(&e->d)->dstats.attempts, __ATOMIC_SEQ_CST), aa.above);
	/* The daemon expires it although this process does nothing. */
	assert_true(hd_wait_for(attempts_above, &aa, 1000));
	assert_int_equal(counter(e), 0);
	assert_int_equal(wakelock_hold_is_held(h), 0);
	assert_int_equal(wakelock_hold_release(h), -EINVAL);
	wakelock_client_close(c);
}

/* pid reuse: exec keeps the pid but closes the old connection; the new
 * program registering under the same pid must be a new client. */
static void test_same_pid_new_client(void **st)
{
	struct env *e = *st;
	int p[2], status;
	uint64_t ids[2];
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		wakelock_client *c;
		wakelock_hold *h;
		char fdarg[16];
		if (wakelock_client_open(NULL, "gen1", &c) || wakelock_hold_create(c, "h", &h) ||
		    wakelock_hold_acquire(h))
			_exit(1);
		if (write(p[1], &c->client_id, 8) != 8)
			_exit(1);
		snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
		execl(self_exe, self_exe, "--exec-child", fdarg, (char *)NULL);
		_exit(1);
	}
	assert_int_equal(read(p[0], &ids[0], 8), 8);
	assert_int_equal(read(p[0], &ids[1], 8), 8);
	assert_true(ids[1] != ids[0]);
	/* Exactly one live slot for that pid: gen2, holding; gen1 reaped. */
	hd_sleep_ms(50);
	unsigned found = 0;
	const struct wl_shm_header *h = hd_snap(&e->d);

	for (uint32_t i = 0; i < h->nslots; i++) {
		const struct wl_shm_slot *s = &h->slots[i];
		if (s->state != WL_SLOT_LIVE || s->pid != pid)
			continue;
		found++;
		assert_string_equal(s->name, "gen2");
		assert_int_equal(s->client_id, ids[1]);
	}
	assert_int_equal(found, 1);
	assert_int_equal(counter(e), 1);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	assert_true(hd_wait_for(no_live_slots, e, 2000));
	assert_int_equal(counter(e), 0);
	close(p[0]);
	close(p[1]);
}

static int exec_child(const char *fdarg)
{
	wakelock_client *c;
	wakelock_hold *h;
	int fd = atoi(fdarg);

	if (wakelock_client_open(NULL, "gen2", &c) || wakelock_hold_create(c, "h", &h) || wakelock_hold_acquire(h))
		return 1;
	if (write(fd, &c->client_id, 8) != 8)
		return 1;
	pause();
	return 0;
}

static void test_permission_denied(void **st)
{
	int p[2], status;
	char buf[256] = "";
	pid_t pid;
	(void)st;

	if (geteuid() != 0) {
		/* As non-root, the daemon's own uid is always allowed. */
		print_message("needs root: only root can run a client as another uid\n");
		skip();
	}
	assert_int_equal(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		wakelock_client *c;
		int r;
		gid_t none[1] = { 65534 };
		if (setgroups(1, none) || setgid(65534) || setuid(65534))
			_exit(2);
		r = wakelock_client_open(NULL, "intruder", &c);
		if (write(p[1], wakelock_last_error(), strlen(wakelock_last_error()) + 1) < 0)
			_exit(3);
		_exit(r == -EACCES ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	assert_true(read(p[0], buf, sizeof(buf) - 1) > 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_non_null(strstr(buf, "permission denied"));
	close(p[0]);
	close(p[1]);
}

/* A clean restart (SIGTERM, start): the client's hold moves to the new
 * daemon on its own (lib/watch.c), and the new daemon waits for it. */
static void test_daemon_restart(void **st)
{
	struct env *e = *st;
	wakelock_client *c, *c2;
	wakelock_hold *h;

	assert_int_equal(wakelock_client_open(NULL, "survivor", &c), 0);
	assert_int_equal(wakelock_hold_create(c, "h", &h), 0);
	assert_int_equal(hd_stop(&e->d), 0);
	/* No daemon: the hold is kept, to be moved to the next one. */
	assert_int_equal(wakelock_hold_acquire(h), 0);
	assert_int_equal(wakelock_client_open(NULL, "late", &c2), -ENOTCONN);
	wl_seg_unmap(&e->seg);
	assert_int_equal(hd_start(&e->d, NULL), 0);
	assert_int_equal(hd_observe(&e->d, &e->seg), 0);
	assert_true(hd_wait_for(counter_is_one, e, 5000));
	hd_sleep_ms(300);
	assert_int_equal(__atomic_load_n(&hd_snap(&e->d)->dstats.attempts, __ATOMIC_SEQ_CST), 0);
	assert_int_equal(wakelock_hold_release(h), 0);
	assert_int_equal(counter(e), 0);
	assert_int_equal(wakelock_client_open(NULL, "fresh", &c2), 0);
	wakelock_client_close(c2);
	wakelock_hold_destroy(h);
	wakelock_client_close(c);
}

static void test_refuses_second_instance_and_missing_sysfs(void **st)
{
	struct env *e = *st;
	char cmd[2048];
	int r;

	snprintf(cmd, sizeof(cmd), "%s --foreground --root %s --run-dir %s/run "
	         "2>%s/second.log", hd_bin("wakelockd"), e->d.dir, e->d.dir, e->d.dir);
	r = system(cmd);
	assert_true(WIFEXITED(r) && WEXITSTATUS(r) == 1);
	snprintf(cmd, sizeof(cmd), "grep -q 'another wakelockd is running' %s/second.log", e->d.dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s --foreground --root /nonexistent --run-dir %s/run3 "
	         "2>%s/third.log", hd_bin("wakelockd"), e->d.dir, e->d.dir);
	r = system(cmd);
	assert_true(WIFEXITED(r) && WEXITSTATUS(r) == 1);
	snprintf(cmd, sizeof(cmd), "grep -q 'wakeup_count' %s/third.log", e->d.dir);
	assert_int_equal(system(cmd), 0);
	/* Our daemon is unharmed. */
	assert_int_equal(kill(e->d.pid, 0), 0);
}

/* A fake daemon handing out a segment of our choosing. */
struct fake_srv {
	char path[108];
	int lfd;
	int seg_fd;
	int garbage;
};

static void *fake_srv_main(void *arg)
{
	struct fake_srv *fs = arg;
	struct wl_msg_req req;
	struct wl_msg_rep rep;
	int c = accept(fs->lfd, NULL, NULL);

	if (c < 0)
		return NULL;
	int fds[2] = { fs->seg_fd, eventfd(0, EFD_NONBLOCK) }, region = -1;

	wl_recv_msg(c, &req, sizeof(req), &region);
	if (region >= 0)
		close(region);
	memset(&rep, 0, sizeof(rep));
	rep.magic = fs->garbage ? 0xdeadbeef : WL_MSG_MAGIC;
	wl_send_msg_fds(c, &rep, sizeof(rep), fds, 2);
	close(fds[1]);
	hd_sleep_ms(50);
	close(c);
	return NULL;
}

static int open_via_fake(const void *data, size_t len, int garbage)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct fake_srv fs = { .garbage = garbage };
	char fpath[] = "/tmp/wl-fake-seg-XXXXXX";
	pthread_t t;
	wakelock_client *c = NULL;
	int r;

	snprintf(fs.path, sizeof(fs.path), "/tmp/wl-fake-%d.sock", (int)getpid());
	unlink(fs.path);
	strcpy(sa.sun_path, fs.path);
	fs.lfd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	assert_int_equal(bind(fs.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fs.lfd, 1), 0);
	fs.seg_fd = mkstemp(fpath);
	unlink(fpath);
	assert_int_equal(write(fs.seg_fd, data, len), (ssize_t)len);
	pthread_create(&t, NULL, fake_srv_main, &fs);
	r = wakelock_client_open(fs.path, "victim", &c);
	pthread_join(t, NULL);
	if (c)
		wakelock_client_close(c);
	close(fs.lfd);
	close(fs.seg_fd);
	unlink(fs.path);
	return r;
}

static void test_foreign_and_corrupt_segments(void **st)
{
	size_t len = wl_shm_total_size(4);
	struct wl_shm_header *h = calloc(1, len);
	(void)st;

	wl_seg_init(h, 4);
	assert_int_equal(open_via_fake(h, len, 0), 0);
	assert_int_equal(open_via_fake(h, len, 1), -EPROTO);      /* not our protocol */
	h->abi_major = 0;
	assert_int_equal(open_via_fake(h, len, 0), -EPROTONOSUPPORT);
	assert_non_null(strstr(wakelock_last_error(), "ABI"));
	h->abi_major = WL_ABI_MAJOR;
	h->size = 99;
	assert_int_equal(open_via_fake(h, len, 0), -EBADMSG);
	h->magic = 0x7f454c46;
	assert_int_equal(open_via_fake(h, len, 0), -EPROTO);
	assert_int_equal(open_via_fake("short", 5, 0), -EBADMSG);
	free(h);
}

static void test_epoll_handoff(void **st)
{
	struct env *e = *st;
	struct epoll_event ev[4];
	wakelock_client *c;
	wakelock_hold *h;
	int ep = epoll_create1(0), efd = eventfd(0, EFD_NONBLOCK);
	uint64_t one = 1;

	assert_int_equal(wakelock_client_open(NULL, "poller", &c), 0);
	assert_int_equal(wakelock_hold_create(c, "rx", &h), 0);
	assert_int_equal(wakelock_epoll_add(ep, efd, EPOLLIN | EPOLLET, 1), -EINVAL);
	assert_int_equal(wakelock_epoll_add(ep, efd, EPOLLIN | EPOLLONESHOT, 1), -EINVAL);
	assert_int_equal(wakelock_epoll_add(ep, efd, EPOLLIN, 1), 0);
	assert_int_equal(wakelock_epoll_wait(h, ep, ev, 4, 0), 0);
	assert_int_equal(counter(e), 0);
	assert_int_equal(write(efd, &one, 8), 8);
	assert_int_equal(wakelock_epoll_wait(h, ep, ev, 4, 1000), 1);
	assert_int_equal(counter(e), 1);               /* held on return */
	assert_int_equal(read(efd, &one, 8), 8);
	assert_int_equal(wakelock_epoll_wait(h, ep, ev, 4, 0), 0);
	assert_int_equal(counter(e), 0);               /* released at the next wait */
	wakelock_client_close(c);
	close(ep);
	close(efd);
}

/* Programs with awkward names, bad options, names that are not UTF-8. */
static void test_cli_bad_input(void **st)
{
	struct env *e = *st;
	char cmd[4096], path[512];
	FILE *f;
	int r;

	/* The default name comes from the base name, made valid. */
	snprintf(path, sizeof(path), "%s/my prog,\"x\"", e->d.dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n%s list | grep -q '^run:my_prog__x_ '\n", hd_bin("wakelock"));
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
	snprintf(cmd, sizeof(cmd), "%s run -- '%s'", hd_bin("wakelock"), path);
	assert_int_equal(system(cmd), 0);
	/* A bad --name says what a good one is. */
	snprintf(cmd, sizeof(cmd), "%s run --name 'my prog' -- true 2>%s/err; r=$?; "
	         "grep -q 'invalid client name .my prog.: --name takes' %s/err && exit $r",
	         hd_bin("wakelock"), e->d.dir, e->d.dir);
	r = system(cmd);
	assert_true(WIFEXITED(r) && WEXITSTATUS(r) == 2);
	/* An empty socket path is not the default one. */
	snprintf(cmd, sizeof(cmd), "%s --socket '' status 2>%s/err; r=$?; "
	         "grep -q -- '--socket needs a path' %s/err && exit $r",
	         hd_bin("wakelock"), e->d.dir, e->d.dir);
	r = system(cmd);
	assert_true(WIFEXITED(r) && WEXITSTATUS(r) == 2);
	/* A kernel wakeup source whose name is not UTF-8: stats --json stays
	 * valid JSON in valid UTF-8. */
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/sys/class/wakeup/wakeup0 && "
	         "printf 'caf\\351 \\377\\300\\n' >%s/sys/class/wakeup/wakeup0/name && "
	         "echo 3 >%s/sys/class/wakeup/wakeup0/event_count",
	         e->d.dir, e->d.dir, e->d.dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s --root %s stats --json | python3 -c '"
	         "import json, sys; d = json.loads(sys.stdin.buffer.read().decode(\"utf-8\")); "
	         "k = d[\"kernel\"][0]; "
	         "sys.exit(k[\"name\"] != \"caf\\u00e9 \\u00ff\\u00c0\" or k[\"event_count\"] != 3)'",
	         hd_bin("wakelock"), e->d.dir);
	assert_int_equal(system(cmd), 0);
}

static void test_cli(void **st)
{
	struct env *e = *st;
	char cmd[2048];
	int r;

	snprintf(cmd, sizeof(cmd), "%s run --name runner -- sh -c 'exit 3'", hd_bin("wakelock"));
	r = system(cmd);
	assert_true(WIFEXITED(r) && WEXITSTATUS(r) == 3);
	snprintf(cmd, sizeof(cmd), "%s run -- sh -c '%s list --json | grep -q \"\\\"client\\\":\\\"run:sh\\\"\"'",
	         hd_bin("wakelock"), hd_bin("wakelock"));
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s stats --json | grep -q '\"attempts\":[1-9]'", hd_bin("wakelock"));
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s status --json | grep -q '\"daemon_pid\":%d'", hd_bin("wakelock"),
	         (int)e->d.pid);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "WAKELOCK_SOCKET=/nonexistent %s status 2>/dev/null", hd_bin("wakelock"));
	r = system(cmd);
	assert_true(WIFEXITED(r) && WEXITSTATUS(r) == 3);
	kill(e->d.pid, SIGUSR1);
	hd_sleep_ms(100);
	snprintf(cmd, sizeof(cmd), "grep -q '\"successes\":[1-9]' %s", e->d.stats);
	assert_int_equal(system(cmd), 0);
}

/* In a child as uid with groups: one request on a fresh connection;
 * exits with the negated status (0 = accepted). */
static int request_as(uid_t uid, const gid_t *groups, int ngroups, uint16_t op,
                      const char *name)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		struct wl_msg_rep rep;
		int s, r;

		if (setgroups((size_t)ngroups, groups) || setgid(groups[0]) || setuid(uid))
			_exit(200);
		s = wl_connect(NULL, 2000);
		if (s < 0)
			_exit(201);
		r = wl_request(s, op, name, &rep, NULL);
		_exit(r < 0 ? -r : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return -WEXITSTATUS(status);
}

/* Registers n clients as uid in one child; exits with the status of the
 * last open (negated), 0 if all succeeded. */
static int register_as(uid_t uid, gid_t gid, int n)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		gid_t g[1] = { gid };
		wakelock_client *c;
		char name[16];
		int r = 0;

		if (setgroups(1, g) || setgid(gid) || setuid(uid))
			_exit(200);
		for (int i = 0; i < n && r == 0; i++) {
			snprintf(name, sizeof(name), "quota%d", i);
			r = wakelock_client_open(NULL, name, &c);
		}
		_exit(r < 0 ? -r : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return -WEXITSTATUS(status);
}

/* As uid, open n connections, each answering an OBSERVE, then one more:
 * 0 if that one is served too, else its (negated) error; 100 + i if the
 * i-th of the n failed. */
static int conns_as(uid_t uid, gid_t gid, int n)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		gid_t g[1] = { gid };
		struct wl_msg_rep rep;
		int fd, r;

		if (setgroups(1, g) || setgid(gid) || setuid(uid))
			_exit(200);
		for (int i = 0; i <= n; i++) {
			int s = wl_connect(NULL, 2000);

			r = s < 0 ? s : wl_request(s, WL_OP_OBSERVE, NULL, &rep, &fd);
			if (r == 0)
				close(fd);
			if (r < 0 && i < n)
				_exit(100 + i);
		}
		_exit(r < 0 ? (-r > 99 ? 99 : -r) : 0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status) >= 100 ? WEXITSTATUS(status) : -WEXITSTATUS(status);
}

/*
 * deny, allow and reload are for root and the admin group, not for every
 * client; one uid cannot take every client slot; a name too long is an
 * error, never cut to another client's name.
 */
static void test_admin_and_limits(void **st)
{
	struct env *e = calloc(1, sizeof(*e));
	const char *extra[] = { "--config", NULL, NULL };
	const gid_t member[] = { 4242 }, admin[] = { 4242, 4343 };
	char longname[41], dir[320], *slash;
	struct wl_msg_req req;
	struct wl_msg_rep rep;
	int s, fd = -1;

	if (geteuid() != 0) {
		print_message("needs root: only root can run clients as other uids\n");
		skip();
	}
	assert_int_equal(hd_prepare(&e->d), 0);
	extra[1] = e->d.conf;
	write_text(e->d.conf, "[access]\ngroup = 4242\nadmin_group = 4343\n"
	                      "max_clients_per_uid = 2\n");
	assert_int_equal(hd_start(&e->d, extra), 0);
	assert_int_equal(hd_observe(&e->d, &e->seg), 0);
	*st = e;
	/* Let other uids reach the socket (the daemon restricts it itself). */
	snprintf(dir, sizeof(dir), "%s", e->d.sock);
	slash = strrchr(dir, '/');
	*slash = 0;
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(chmod(e->d.dir, 0755), 0);

	/* A plain group member may register (with a region: a bare request
	 * is refused) but not change policy. */
	assert_int_equal(request_as(1000, member, 1, WL_OP_REGISTER, "member"), -EINVAL);
	assert_int_equal(register_as(1000, 4242, 1), 0);
	assert_int_equal(request_as(1000, member, 1, WL_OP_DENY, "member"), -EPERM);
	assert_int_equal(request_as(1000, member, 1, WL_OP_ALLOW, "member"), -EPERM);
	assert_int_equal(request_as(1000, member, 1, WL_OP_RELOAD, ""), -EPERM);
	assert_int_equal(e->d.pid > 0 && kill(e->d.pid, 0) == 0, 1);
	/* The admin group may. */
	assert_int_equal(request_as(1001, admin, 2, WL_OP_DENY, "someone"), 0);
	assert_int_equal(request_as(1001, admin, 2, WL_OP_ALLOW, "someone"), 0);
	assert_int_equal(request_as(1001, admin, 2, WL_OP_RELOAD, ""), 0);

	/* Two clients per uid: the third is refused, other uids unaffected. */
	assert_int_equal(register_as(1002, 4242, 2), 0);
	assert_int_equal(register_as(1002, 4242, 3), -EDQUOT);
	assert_int_equal(register_as(1003, 4242, 2), 0);
	/* Connections too: 2 clients + 16 spare, the next one is closed. */
	assert_true(conns_as(1004, 4242, 18) < 0);
	assert_int_equal(register_as(1005, 4242, 2), 0);

	/* Too long: refused by the library and, sent raw, by the daemon. */
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	s = wl_connect(NULL, 2000);
	assert_true(s >= 0);
	assert_int_equal(wl_request(s, WL_OP_DENY, longname, &rep, NULL), -ENAMETOOLONG);
	memset(&req, 0, sizeof(req));
	req.magic = WL_MSG_MAGIC;
	req.abi_major = WL_ABI_MAJOR;
	req.op = WL_OP_DENY;
	memset(req.name, 'n', sizeof(req.name));       /* no NUL at all */
	assert_int_equal(wl_send_msg(s, &req, sizeof(req), -1), 0);
	assert_int_equal(wl_recv_msg(s, &rep, sizeof(rep), &fd), 0);
	assert_int_equal(wl_check_reply(&rep), -ENAMETOOLONG);
	close(s);
	assert_int_equal(kill(e->d.pid, 0), 0);
}

/* Returns wakelock_epoll_add's result on a pipe in a fresh epoll set. */
static int epoll_add_pipe(void)
{
	int p[2], ep = epoll_create1(EPOLL_CLOEXEC), r;

	assert_true(ep >= 0);
	assert_int_equal(pipe(p), 0);
	r = wakelock_epoll_add(ep, p[0], EPOLLIN, 1);
	close(p[0]);
	close(p[1]);
	close(ep);
	return r;
}

/* Without CAP_BLOCK_SUSPEND the kernel drops EPOLLWAKEUP silently:
 * wakelock_epoll_add says so instead of returning 0. */
static void test_epoll_add_without_capability(void **st)
{
	int status;
	pid_t pid;

	(void)st;
	if (access("/sys/power/wakeup_count", F_OK) < 0) {
		/* No CONFIG_PM_SLEEP: the flag is dropped for everyone and the
		 * system never suspends, so there is nothing to refuse. */
		assert_int_equal(epoll_add_pipe(), 0);
		print_message("this kernel cannot suspend: the refusal is checked in the "
		              "guest (tests/guest/daemon-epoll-cap.sh)\n");
		skip();
	}
	if (geteuid() != 0) {
		assert_int_equal(epoll_add_pipe(), -EPERM);
		assert_non_null(strstr(wakelock_last_error(), "CAP_BLOCK_SUSPEND"));
		return;
	}
	assert_int_equal(epoll_add_pipe(), 0);          /* root keeps it */
	pid = fork();
	if (pid == 0) {
		gid_t none[1] = { 65534 };

		if (setgroups(1, none) || setgid(65534) || setuid(65534))
			_exit(2);
		_exit(epoll_add_pipe() == -EPERM && strstr(wakelock_last_error(), "CAP_BLOCK_SUSPEND") ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(int argc, char **argv)
{
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	self_exe[n > 0 ? n : 0] = 0;
	if (argc == 3 && !strcmp(argv[1], "--exec-child"))
		return exec_child(argv[2]);
	signal(SIGPIPE, SIG_IGN);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_basic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clients_share_the_published_segment, setup, teardown),
		cmocka_unit_test(test_no_daemon),
		cmocka_unit_test_setup_teardown(test_threads_and_processes_hammering, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exit_while_holding_is_reaped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deny_allow_at_run_time, setup, teardown),
		cmocka_unit_test_teardown(test_reload, teardown),
		cmocka_unit_test_setup_teardown(test_timed_hold_expires_in_daemon, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_pid_new_client, setup, teardown),
		cmocka_unit_test_setup_teardown(test_permission_denied, setup, teardown),
		cmocka_unit_test_setup_teardown(test_daemon_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_second_instance_and_missing_sysfs, setup, teardown),
		cmocka_unit_test(test_foreign_and_corrupt_segments),
		cmocka_unit_test_setup_teardown(test_epoll_handoff, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cli_bad_input, setup, teardown),
		cmocka_unit_test_teardown(test_admin_and_limits, teardown),
		cmocka_unit_test(test_epoll_add_without_capability),
	};
	/* WL_TEST=pattern runs the matching tests only (debugging). */
	if (getenv("WL_TEST"))
		cmocka_set_test_filter(getenv("WL_TEST"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
