/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Clients that misbehave, and a daemon that dies under them: the trust
 * model of docs/design.md §4.
 * Each test runs the real daemon on a fake /sys (harness.c).
 *
 * Each attack runs beside a well-behaved client that holds and checks
 * four things: no suspend while it holds, the daemon alive and answering,
 * the victim listed as it registered, and the daemon's exit status.
 *
 *   the published segment cannot be written, by any route;
 *   regions that are not sealed memfds, or too small, are refused;
 *   a scribbler writes random bytes over all of its region for 10 s;
 *   stoppers are SIGSTOPped at random instants in acquire and release;
 *   malformed hold requests; names the daemon would have to escape;
 *   the daemon killed (-9) and restarted under holds and the modem client;
 *   a kill sweep of 2 000 clients.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "lib/wl_client.h"
#include "harness.h"

struct env {
	struct hd d;
	struct wl_seg seg;
};

static char self_exe[4096];

/*
 * A misbehaving client in a process of its own: this program again, run
 * as `--child MODE NAME FD` (a fresh exec, because the test process has
 * threads, and a forked child of a threaded process may not start any
 * under ThreadSanitizer).  FD, if not -1, is inherited.
 */
static pid_t spawn_child(const char *mode, const char *name, int fd)
{
	char fds[16];
	pid_t pid;

	snprintf(fds, sizeof(fds), "%d", fd);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl(self_exe, self_exe, "--child", mode, name, fds, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static int setup(void **st)
{
	struct env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	assert_int_equal(hd_prepare(&e->d), 0);
	if (hd_start(&e->d, NULL) < 0)
		fail_msg("daemon did not start (log in %s)", e->d.log);
	assert_int_equal(hd_observe(&e->d, &e->seg), 0);
	*st = e;
	return 0;
}

static int teardown(void **st)
{
	struct env *e = *st;

	wl_seg_unmap(&e->seg);
	hd_cleanup(&e->d);
	free(e);
	return 0;
}

/* The slot of the live client called name, or NULL (in a snapshot that
 * stays mapped for the next 31 looks). */
static const struct wl_shm_slot *find_slot(struct env *e, const char *name)
{
	const struct wl_shm_header *h = hd_snap(&e->d);

	for (uint32_t i = 0; i < h->nslots; i++) {
		const struct wl_shm_slot *s = &h->slots[i];

		if (s->state == WL_SLOT_LIVE && !strncmp(s->name, name, WAKELOCK_NAME_MAX))
			return s;
	}
	return NULL;
}

static uint64_t attempts(struct env *e)
{
	return __atomic_load_n(&hd_snap(&e->d)->dstats.attempts, __ATOMIC_SEQ_CST);
}

static int attempted(void *arg)
{
	return attempts(arg) > 0;
}

/* The well-behaved client every attack runs beside. */
struct victim {
	wakelock_client *c;
	wakelock_hold *h;
	uint64_t a0;     /* attempts before it held */
};

static void victim_hold(struct env *e, struct victim *v)
{
	assert_int_equal(wakelock_client_open(NULL, "victim", &v->c), 0);
	assert_int_equal(wakelock_hold_create(v->c, "call", &v->h), 0);
	assert_int_equal(wakelock_hold_acquire(v->h), 0);
	v->a0 = attempts(e);
}

/* The four assertions, while the victim holds. */
static void victim_unharmed(struct env *e, struct victim *v)
{
	const struct wl_shm_slot *s;
	wakelock_client *probe;

	assert_int_equal(attempts(e), v->a0);                    /* no suspend */
	assert_int_equal(kill(e->d.pid, 0), 0);                  /* alive ... */
	assert_int_equal(wakelock_client_open(NULL, "probe", &probe), 0);  /* ... answering */
	wakelock_client_close(probe);
	s = find_slot(e, "victim");                              /* listed as it is */
	assert_non_null(s);
	assert_int_equal(s->pid, getpid());
	assert_int_equal(s->uid, getuid());
	assert_true(s->allowed);
	assert_true(s->holding);
}

static int attempted_since_victim(void *arg);
static struct env *victim_env;
static struct victim *victim_cur;

static int attempted_since_victim(void *arg)
{
	(void)arg;
	return attempts(victim_env) > victim_cur->a0;
}

/* Release, see a suspend follow, and an honest exit status. */
static void victim_done(struct env *e, struct victim *v)
{
	assert_int_equal(wakelock_hold_release(v->h), 0);
	victim_env = e;
	victim_cur = v;
	assert_true(hd_wait_for(attempted_since_victim, NULL, 5000));
	wakelock_client_close(v->c);
	assert_int_equal(hd_stop(&e->d), 0);
}

/* A raw registration: our own region, the daemon's descriptors back
 * (the published segment, and nothing else: fds[1] must stay -1). */
static int raw_register(int region_fd, const char *name, int *pub)
{
	struct wl_msg_rep rep;
	int fds[2], s = wl_connect(NULL, 2000), r;

	if (s < 0)
		return s;
	r = wl_request_fds(s, WL_OP_REGISTER, name, region_fd, &rep, fds, 2);
	if (r == 0)
		assert_int_equal(fds[1], -1);
	if (r == 0 && pub) {
		*pub = fds[0];
		return s;
	}
	if (r == 0 && fds[0] >= 0)
		close(fds[0]);
	close(s);
	return r;
}

/*
 * The published segment is the daemon's alone: a client that has its
 * descriptor and a read-only mapping of it can neither map it writable,
 * nor make its mapping writable, nor write it through /proc, nor shrink
 * it.  The CLI's snapshot is sealed against writes altogether.
 */
static void test_published_segment_is_read_only(void **st)
{
	struct env *e = *st;
	struct victim v;
	struct wl_region *rg;
	char path[64];
	void *map;
	int rfd, pub = -1, s, fd;

	victim_hold(e, &v);
	assert_int_equal(wl_region_create(&rg, &rfd), 0);
	s = raw_register(rfd, "intruder", &pub);
	assert_true(s >= 0);
	assert_true(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, pub, 0) == MAP_FAILED);
	assert_int_equal(errno, EPERM);
	map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, pub, 0);
	assert_true(map != MAP_FAILED);
	assert_int_equal(mprotect(map, 4096, PROT_READ | PROT_WRITE), -1);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", pub);
	fd = open(path, O_RDWR);
	if (fd >= 0) {
		assert_int_equal(pwrite(fd, "x", 1, 0), -1);
		assert_int_equal(errno, EPERM);
		close(fd);
	}
	assert_int_equal(ftruncate(pub, 0), -1);
	/* Our own region cannot be shrunk under the daemon either. */
	assert_int_equal(ftruncate(rfd, 0), -1);
	assert_int_equal(errno, EPERM);
	/* The library's own mapping of it is read-only too. */
	assert_int_equal(mprotect((void *)v.c->pub, 4096, PROT_READ | PROT_WRITE), -1);
	/* The CLI's snapshot cannot be written at all. */
	assert_int_equal(hd_observe(&e->d, &e->seg), 0);
	assert_true(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, e->seg.fd, 0) ==
	            MAP_FAILED);
	victim_unharmed(e, &v);
	munmap(map, 4096);
	close(pub);
	close(s);
	munmap(rg, sizeof(*rg));
	close(rfd);
	victim_done(e, &v);
}

/*
 * A region must be a memfd sealed against shrinking, at least as large as
 * the layout: anything else could fault the daemon (SIGBUS) when the
 * client truncates it.  Each is refused with EINVAL and a reason.
 */
static void test_bad_regions_refused(void **st)
{
	struct env *e = *st;
	struct victim v;
	char tmpl[] = "/tmp/wl-region-XXXXXX";
	int p[2], fd, s;

	victim_hold(e, &v);
	/* None at all. */
	s = wl_connect(NULL, 2000);
	assert_true(s >= 0);
	{
		struct wl_msg_rep rep;

		assert_int_equal(wl_request(s, WL_OP_REGISTER, "bare", &rep, NULL), -EINVAL);
		assert_non_null(strstr(wakelock_last_error(), "region"));
	}
	close(s);
	/* A regular file of the right size. */
	fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	unlink(tmpl);
	assert_int_equal(ftruncate(fd, sizeof(struct wl_region)), 0);
	assert_int_equal(raw_register(fd, "file", NULL), -EINVAL);
	close(fd);
	/* A memfd without the seal. */
	fd = memfd_create("unsealed", MFD_ALLOW_SEALING);
	assert_int_equal(ftruncate(fd, sizeof(struct wl_region)), 0);
	assert_int_equal(raw_register(fd, "unsealed", NULL), -EINVAL);
	/* Sealed, but too small. */
	assert_int_equal(ftruncate(fd, 64), 0);
	assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
	assert_int_equal(raw_register(fd, "small", NULL), -EINVAL);
	close(fd);
	/* A pipe, an eventfd. */
	assert_int_equal(pipe(p), 0);
	assert_int_equal(raw_register(p[0], "pipe", NULL), -EINVAL);
	close(p[0]);
	close(p[1]);
	fd = eventfd(0, 0);
	assert_int_equal(raw_register(fd, "eventfd", NULL), -EINVAL);
	close(fd);
	victim_unharmed(e, &v);
	victim_done(e, &v);
}

/* Hold requests with indices and names a client made up. */
static void test_malformed_hold_requests(void **st)
{
	struct env *e = *st;
	struct victim v;
	struct wl_msg_arg m;
	struct wl_msg_rep rep;
	struct wl_region *rg;
	wakelock_alarm *a;
	int rfd, pub, s, taken;

	victim_hold(e, &v);
	/* Not registered on this connection. */
	s = wl_connect(NULL, 2000);
	memset(&m, 0, sizeof(m));
	m.req.op = WL_OP_HOLD_CREATE;
	strcpy(m.req.name, "x");
	m.index = 0;
	assert_int_equal(wl_request_arg(s, &m, -1, &rep), -EINVAL);
	close(s);
	assert_int_equal(wl_region_create(&rg, &rfd), 0);
	s = raw_register(rfd, "liar", &pub);
	assert_true(s >= 0);
	m.index = WAKELOCK_MAX_HOLDS_PER_CLIENT;                  /* out of range */
	assert_int_equal(wl_request_arg(s, &m, -1, &rep), -EINVAL);
	m.index = 0x7fffffffu;
	assert_int_equal(wl_request_arg(s, &m, -1, &rep), -EINVAL);
	m.index = 3;
	assert_int_equal(wl_request_arg(s, &m, -1, &rep), 0);
	assert_int_equal(wl_request_arg(s, &m, -1, &rep), -EEXIST);   /* taken */
	strcpy(m.req.name, "\033[2J");
	m.index = 4;
	assert_int_equal(wl_request_arg(s, &m, -1, &rep), -EINVAL);   /* escape */
	m.req.op = WL_OP_HOLD_DESTROY;
	m.index = WL_INDEX_ANY;
	assert_int_equal(wl_request_arg(s, &m, -1, &rep), -EINVAL);
	close(pub);
	close(s);
	munmap(rg, sizeof(*rg));
	close(rfd);
	/* An alarm's hold is the daemon's: a client cannot destroy it. */
	assert_int_equal(wakelock_alarm_create(v.c, "ring", &a), 0);
	taken = -1;
	{
		const struct wl_shm_slot *sl = find_slot(e, "victim");

		for (uint32_t j = 0; sl && j < WAKELOCK_MAX_HOLDS_PER_CLIENT; j++)
			if (sl->holds[j].in_use && sl->holds[j].owner == WL_HOLD_DAEMON)
				taken = (int)j;
	}
	assert_true(taken >= 0);
	memset(&m, 0, sizeof(m));
	m.req.op = WL_OP_HOLD_DESTROY;
	m.index = (uint32_t)taken;
	assert_int_equal(wl_request_arg(wakelock_client_fd(v.c), &m, -1, &rep), -EINVAL);
	wakelock_alarm_destroy(a);
	victim_unharmed(e, &v);
	victim_done(e, &v);
}

/* Names with control characters never reach the table (nor a terminal). */
static void test_names_checked_by_daemon(void **st)
{
	struct env *e = *st;
	struct victim v;
	struct wl_region *rg;
	int rfd;

	victim_hold(e, &v);
	assert_int_equal(wl_region_create(&rg, &rfd), 0);
	assert_int_equal(raw_register(rfd, "\033[2J", NULL), -EINVAL);
	assert_int_equal(raw_register(rfd, "a\"b", NULL), -EINVAL);
	munmap(rg, sizeof(*rg));
	close(rfd);
	victim_unharmed(e, &v);
	victim_done(e, &v);
}

#define SCRIBBLE_MS 10000u

/* The scribbler's child: register, say so on fd, then scribble for ever. */
static void scribble(const char *name, int fd)
{
	unsigned seed = 7;
	wakelock_client *c;
	uint32_t *w;
	size_t n = sizeof(struct wl_region) / 4;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (wakelock_client_open(NULL, name, &c))
		_exit(1);
	if (write(fd, "r", 1) != 1)
		_exit(2);
	w = (uint32_t *)c->region;
	for (;;) {
		for (size_t i = 0; i < n; i++)
			w[i] = (uint32_t)rand_r(&seed) * 2654435761u;
		wl_client_kick(c);
	}
}

/*
 * A client writes random bytes over every byte of its region, over and
 * over, for 10 s: the only memory it shares with the daemon.  The worst
 * it may do is keep the system awake under its own name (it shows as
 * holding), which denying it ends.
 */
static void test_scribbler(void **st)
{
	struct env *e = *st;
	struct victim v;
	pid_t pid;
	int status, p[2];
	uint64_t end;
	char x;

	victim_hold(e, &v);
	assert_int_equal(pipe(p), 0);
	pid = spawn_child("scribble", "scribbler", p[1]);
	assert_int_equal(read(p[0], &x, 1), 1);
	end = hd_now_ns() + (uint64_t)SCRIBBLE_MS * 1000000u;
	while (hd_now_ns() < end) {
		victim_unharmed(e, &v);
		hd_sleep_ms(250);
	}
	/* Keeping the system awake under its own name: deny ends it. */
	assert_int_equal(wakelock_hold_release(v.h), 0);
	{
		struct wl_msg_rep rep;
		int s = wl_connect(NULL, 2000);

		assert_int_equal(wl_request(s, WL_OP_DENY, "scribbler", &rep, NULL), 0);
		close(s);
	}
	victim_env = e;
	victim_cur = &v;
	assert_true(hd_wait_for(attempted_since_victim, NULL, 5000));
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	close(p[0]);
	close(p[1]);
	wakelock_client_close(v.c);
	assert_int_equal(hd_stop(&e->d), 0);
}

#define STOPPERS 16

/* Acquire and release as fast as possible until killed. */
static void hammer(const char *name);

/*
 * Clients SIGSTOPped at random instants inside acquire and release: the
 * daemon never waits for them.  Others register and are reaped at once,
 * and with the stoppers denied (each may have stopped holding) the system
 * suspends as soon as nobody else holds.
 */
static void test_stoppers(void **st)
{
	struct env *e = *st;
	struct victim v;
	pid_t pid[STOPPERS];
	unsigned seed = 3;
	int status;

	victim_hold(e, &v);
	for (int i = 0; i < STOPPERS; i++) {
		char name[16];

		/* A name is one live client's. */
		snprintf(name, sizeof(name), "stopper%d", i);
		pid[i] = spawn_child("hammer", name, -1);
	}
	hd_sleep_ms(200);
	for (int i = 0; i < STOPPERS; i++) {
		usleep(rand_r(&seed) % 2000);
		kill(pid[i], SIGSTOP);
	}
	for (int k = 0; k < 20; k++) {
		uint64_t t0 = hd_now_ns();
		wakelock_client *c;

		assert_int_equal(wakelock_client_open(NULL, "passer-by", &c), 0);
		wakelock_client_close(c);
		/* Registration and reaping do not wait for anyone. */
		assert_true(hd_now_ns() - t0 < 500000000ull);
	}
	victim_unharmed(e, &v);
	{
		struct wl_msg_rep rep;
		int s = wl_connect(NULL, 2000);

		for (int i = 0; i < STOPPERS; i++) {
			char name[16];

			snprintf(name, sizeof(name), "stopper%d", i);
			assert_int_equal(wl_request(s, WL_OP_DENY, name, &rep, NULL), 0);
		}
		close(s);
	}
	assert_int_equal(wakelock_hold_release(v.h), 0);
	victim_env = e;
	victim_cur = &v;
	assert_true(hd_wait_for(attempted_since_victim, NULL, 5000));
	for (int i = 0; i < STOPPERS; i++) {
		kill(pid[i], SIGKILL);
		assert_int_equal(waitpid(pid[i], &status, 0), pid[i]);
	}
	wakelock_client_close(v.c);
	assert_int_equal(hd_stop(&e->d), 0);
}

/* Read from fd until want appears or timeout_ms passes; 1 if it did. */
static int expect(int fd, const char *want, unsigned timeout_ms)
{
	char buf[512];
	size_t n = 0;
	uint64_t end = hd_now_ns() + (uint64_t)timeout_ms * 1000000u;

	while (hd_now_ns() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t k;

		if (poll(&p, 1, 50) <= 0)
			continue;
		k = read(fd, buf + n, sizeof(buf) - 1 - n);
		if (k <= 0)
			continue;
		n += (size_t)k;
		buf[n] = 0;
		if (strstr(buf, want))
			return 1;
		if (n == sizeof(buf) - 1)
			n = 0;
	}
	return 0;
}

static int has_modem_client(void *arg)
{
	return find_slot(arg, "modem-client") != NULL;
}

/*
 * kill -9 of the daemon and a restart: the reference modem client
 * re-registers on its own and goes on answering (before: it died on
 * -ENOTCONN at its next event).
 */
static void test_modem_client_survives_daemon_restart(void **st)
{
	struct env *e = *st;
	const char *client = hd_bin("modem-client");
	char pts[128];
	int master, status;
	pid_t pid;

	if (access(client, X_OK) < 0) {
		print_message("%s not built (make examples)\n", client);
		skip();
	}
	master = posix_openpt(O_RDWR | O_NOCTTY);
	assert_true(master >= 0);
	assert_int_equal(grantpt(master), 0);
	assert_int_equal(unlockpt(master), 0);
	assert_int_equal(ptsname_r(master, pts, sizeof(pts)), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		if (devnull >= 0)
			dup2(devnull, 2);   /* its EPERM notice on this kernel */
		execl(client, client, "--tty", pts, "--work-ms", "1", (char *)NULL);
		_exit(127);
	}
	assert_true(hd_wait_for(has_modem_client, e, 5000));
	assert_int_equal(write(master, "PING\n", 5), 5);
	assert_true(expect(master, "PONG", 5000));

	/* The daemon dies without a word and comes back. */
	assert_int_equal(kill(e->d.pid, SIGKILL), 0);
	assert_int_equal(waitpid(e->d.pid, &status, 0), e->d.pid);
	e->d.pid = 0;
	wl_seg_unmap(&e->seg);
	assert_int_equal(hd_start(&e->d, NULL), 0);
	assert_int_equal(hd_observe(&e->d, &e->seg), 0);

	/* Its next event finds the old daemon gone: it re-registers. */
	assert_int_equal(write(master, "PING\n", 5), 5);
	assert_true(expect(master, "PONG", 10000));
	assert_int_equal(waitpid(pid, &status, WNOHANG), 0);
	assert_true(hd_wait_for(has_modem_client, e, 5000));
	assert_int_equal(write(master, "CALL 1\n", 7), 7);
	assert_true(expect(master, "ANSWER 1", 5000));

	assert_int_equal(write(master, "EXIT\n", 5), 5);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(master);
	assert_int_equal(hd_stop(&e->d), 0);
}

/*
 * kill -9 of the daemon while a client holds, and a restart: the new
 * daemon must not suspend until the client releases, although the client
 * makes no call in between (its library re-registers the hold, and the
 * daemon waits for that after an unclean exit).  Before: the new daemon
 * suspended at once, about 50 times a second.
 */
static void test_hold_survives_daemon_kill(void **st)
{
	struct env *e = *st;
	wakelock_client *c;
	wakelock_hold *h, *t;
	int status;

	assert_int_equal(wakelock_client_open(NULL, "victim", &c), 0);
	assert_int_equal(wakelock_hold_create(c, "call", &h), 0);
	assert_int_equal(wakelock_hold_create(c, "timed", &t), 0);
	assert_int_equal(wakelock_hold_acquire(h), 0);
	assert_int_equal(wakelock_hold_acquire(h), 0);        /* depth 2 */
	assert_int_equal(wakelock_hold_acquire_timeout(t, 60000), 0);
	assert_int_equal(kill(e->d.pid, SIGKILL), 0);
	assert_int_equal(waitpid(e->d.pid, &status, 0), e->d.pid);
	e->d.pid = 0;
	wl_seg_unmap(&e->seg);
	assert_int_equal(hd_start(&e->d, NULL), 0);
	assert_int_equal(hd_observe(&e->d, &e->seg), 0);

	/* Longer than the daemon's grace period: the hold, not the grace,
	 * keeps it awake. */
	hd_sleep_ms(4000);
	assert_int_equal(attempts(e), 0);
	assert_non_null(find_slot(e, "victim"));
	assert_int_equal(hd_snap(&e->d)->counter, 2);
	assert_int_equal(kill(e->d.pid, 0), 0);

	/* Depth and timeout came along: two releases, then the cancel. */
	assert_int_equal(wakelock_hold_release(h), 0);
	assert_int_equal(wakelock_hold_release(h), 0);
	hd_sleep_ms(200);
	assert_int_equal(attempts(e), 0);
	assert_int_equal(wakelock_hold_release(t), 0);
	assert_true(hd_wait_for(attempted, e, 5000));
	wakelock_client_close(c);
	assert_int_equal(hd_stop(&e->d), 0);
}

static struct env *sweep_env;

static int attempted_since(void *arg)
{
	return attempts(sweep_env) > *(uint64_t *)arg;
}

static uint32_t nlive(struct env *e)
{
	return __atomic_load_n(&hd_snap(&e->d)->nlive, __ATOMIC_ACQUIRE);
}

static int three_live(void *arg)
{
	return nlive(arg) >= 3;
}

/* A client that acquires and releases as fast as it can until killed. */
static void hammer(const char *name)
{
	wakelock_client *c;
	wakelock_hold *h;

	/* Never outlive the test, whatever way it ends. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (wakelock_client_open(NULL, name, &c) || wakelock_hold_create(c, "h", &h))
		_exit(1);
	for (;;) {
		wakelock_hold_acquire(h);
		wakelock_hold_release(h);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#define SWEEP_VICTIMS 2000

/*
 * The kill sweep: 2 000 client processes SIGKILLed at random instants
 * (before, during and after registration, inside acquire and release),
 * with two more hammering all along
 * and a canary holding.  Every victim must be reaped, no suspend may
 * happen while the canary holds, and the daemon must still answer and
 * stop on SIGTERM.  Prints the reap latency (victim dead -> slot freed).
 */
static void test_kill_sweep(void **st)
{
	struct env *e = *st;
	static uint64_t lat[SWEEP_VICTIMS];
	pid_t bg[2];
	wakelock_client *canary, *late;
	wakelock_hold *h;
	uint32_t base;
	uint64_t a0;
	unsigned seed = 16;
	int status;

	sweep_env = e;
	assert_int_equal(wakelock_client_open(NULL, "canary", &canary), 0);
	assert_int_equal(wakelock_hold_create(canary, "keep", &h), 0);
	assert_int_equal(wakelock_hold_acquire(h), 0);
	for (int i = 0; i < 2; i++) {
		bg[i] = spawn_child("hammer", i ? "hammer1" : "hammer0", -1);
	}
	/* Canary and both hammers registered (a TSan build under load takes
	 * a while to exec). */
	assert_true(hd_wait_for(three_live, e, 10000));
	base = nlive(e);
	assert_int_equal(base, 3);
	/* Attempts made before the canary held (the daemon starts idle). */
	a0 = attempts(e);
	for (unsigned i = 0; i < SWEEP_VICTIMS; i++) {
		uint64_t dead, end;
		pid_t pid = spawn_child("hammer", "victim", -1);

		/* 0-3 ms: from before the connect to deep in the loop. */
		usleep(rand_r(&seed) % 3000);
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		dead = hd_now_ns();
		end = dead + 5000000000ull;
		while (nlive(e) != base && hd_now_ns() < end)
			usleep(20);
		lat[i] = hd_now_ns() - dead;
		if (nlive(e) != base) {
			wakelock_client *probe;
			int answers = wakelock_client_open(NULL, "probe", &probe);

			if (answers == 0)
				wakelock_client_close(probe);
			fail_msg("victim %u (pid %d) not reaped within 5 s (nlive %u); daemon %s",
			         i, (int)pid, nlive(e), answers == 0 ? "answers" : "does not answer");
		}
		assert_int_equal(attempts(e), a0);
	}
	qsort(lat, SWEEP_VICTIMS, sizeof(lat[0]), cmp_u64);
	print_message("kill sweep: %u victims, reap latency p50 %.3f ms, p99 %.3f ms, max %.3f ms\n",
	              SWEEP_VICTIMS, lat[SWEEP_VICTIMS / 2] / 1e6,
	              lat[SWEEP_VICTIMS * 99 / 100] / 1e6, lat[SWEEP_VICTIMS - 1] / 1e6);
	for (int i = 0; i < 2; i++) {
		kill(bg[i], SIGKILL);
		assert_int_equal(waitpid(bg[i], &status, 0), bg[i]);
	}
	/* The daemon answers, the canary is listed and still counts. */
	assert_int_equal(wakelock_client_open(NULL, "late", &late), 0);
	wakelock_client_close(late);
	assert_non_null(find_slot(e, "canary"));
	assert_int_equal(hd_snap(&e->d)->counter, 1);
	assert_int_equal(attempts(e), a0);
	assert_int_equal(wakelock_hold_release(h), 0);
	assert_true(hd_wait_for(attempted_since, &a0, 5000) || attempts(e) > a0);
	wakelock_client_close(canary);
	assert_int_equal(hd_stop(&e->d), 0);
}


/* The daemon answers a registration within 1 s. */
static void answers_within_1s(void)
{
	uint64_t t0 = hd_now_ns();
	wakelock_client *c;

	assert_int_equal(wakelock_client_open(NULL, "pinger", &c), 0);
	wakelock_client_close(c);
	assert_true(hd_now_ns() - t0 < 1000000000ull);
}

/*
 * The doorbells a client gets (an alarm's, the resume notifications) are
 * the read ends of the daemon's pipes: a client that clears O_NONBLOCK
 * on its end and tries to fill it, as it could an eventfd it shared with
 * the daemon (whose next write then blocked under the segment lock),
 * cannot write it at all, and the daemon's rings go on without blocking.
 */
static void test_doorbells_are_the_daemons(void **st)
{
	struct env *e = *st;
	uint64_t full = 0xfffffffffffffffeull;
	struct victim v;
	wakelock_client *c;
	wakelock_alarm *a;
	struct stat sb;
	int fds[2];

	victim_hold(e, &v);
	assert_int_equal(wakelock_client_open(NULL, "filler", &c), 0);
	assert_int_equal(wakelock_alarm_create(c, "tick", &a), 0);
	fds[0] = wakelock_alarm_fd(a);
	fds[1] = wakelock_resume_fd(c);
	for (int i = 0; i < 2; i++) {
		assert_true(fds[i] >= 0);
		assert_int_equal(fstat(fds[i], &sb), 0);
		assert_true(S_ISFIFO(sb.st_mode));
		assert_int_equal(fcntl(fds[i], F_GETFL) & O_ACCMODE, O_RDONLY);
		assert_int_equal(fcntl(fds[i], F_SETFL, 0), 0);          /* blocking, ours */
		assert_int_equal(write(fds[i], &full, sizeof(full)), -1);
		assert_int_equal(errno, EBADF);
		/* The smallest pipe it can make of it. */
		(void)fcntl(fds[i], F_SETPIPE_SZ, 4096);
	}
	/* Fires every 10 ms, never read: 4096 rings fill the smaller pipe. */
	assert_int_equal(wakelock_alarm_set(a, 0, 10, 0), 0);
	for (int k = 0; k < 10; k++) {
		hd_sleep_ms(100);
		answers_within_1s();
	}
	victim_unharmed(e, &v);
	wakelock_alarm_destroy(a);
	wakelock_client_close(c);
	victim_done(e, &v);
}

/*
 * The kick reaches the daemon on the client's own connection: the
 * registration hands out no descriptor of the daemon's but the sealed
 * published segment (raw_register checks), and a client flooding kicks
 * for 2 s neither stops the daemon answering nor steals the victim's
 * release (the power loop's eventfd is the daemon's own).
 */
static void test_kick_flood(void **st)
{
	struct env *e = *st;
	struct wl_msg_req k = { .magic = WL_MSG_MAGIC, .abi_major = WL_ABI_MAJOR,
	                        .op = WL_OP_KICK };
	struct wl_region *rg;
	struct victim v;
	uint64_t end;
	int rfd, pub, s;
	long sent = 0;

	victim_hold(e, &v);
	assert_int_equal(wl_region_create(&rg, &rfd), 0);
	s = raw_register(rfd, "kicker", &pub);
	assert_true(s >= 0);
	end = hd_now_ns() + 2000000000ull;
	while (hd_now_ns() < end) {
		for (int i = 0; i < 1000; i++)
			if (send(s, &k, sizeof(k), MSG_DONTWAIT) == (ssize_t)sizeof(k))
				sent++;
		if (sent % 20000 < 1000)
			answers_within_1s();
	}
	print_message("kicker: %ld kicks sent in 2 s\n", sent);
	assert_true(sent > 1000);
	answers_within_1s();
	victim_unharmed(e, &v);
	close(pub);
	close(s);
	munmap(rg, sizeof(*rg));
	close(rfd);
	victim_done(e, &v);
}

/*
 * A loopback TCP socket with unsent data and SO_LINGER of an hour: its
 * last close() waits for the data to go, up to an hour.  Passed as a
 * region, with a request that takes no descriptor, or 200 of them at
 * once, it reaches the daemon's closer (daemon/closer.c), never a close()
 * in the main thread: the daemon answers within 1 s throughout.
 */
static int lingering_socket(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct linger lg = { .l_onoff = 1, .l_linger = 3600 };
	socklen_t sl = sizeof(sa);
	char buf[65536];
	int l, c, one = 1;

	memset(buf, 'x', sizeof(buf));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&sa, &sl) < 0)
		return -1;
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (c < 0 || (connect(c, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS))
		return -1;
	hd_sleep_ms(20);
	/* The listener never accepts nor reads: the data stays unsent. */
	while (send(c, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	/* The listener lives on (leaked) so that the data cannot go. */
	return c;
}

static void test_lingering_descriptors(void **st)
{
	struct env *e = *st;
	struct wl_msg_rep rep;
	struct victim v;
	int fds[200], s, fd;

	victim_hold(e, &v);
	/* As a region. */
	fd = lingering_socket();
	if (fd < 0)
		fail_msg("no loopback TCP: %s", strerror(errno));
	assert_int_equal(raw_register(fd, "linger", NULL), -EINVAL);
	close(fd);
	answers_within_1s();
	/* With a request that takes none. */
	fd = lingering_socket();
	assert_true(fd >= 0);
	s = wl_connect(NULL, 2000);
	assert_true(s >= 0);
	assert_int_equal(wl_request_fds(s, WL_OP_OBSERVE, NULL, fd, &rep, NULL, 0), 0);
	close(fd);
	answers_within_1s();
	/* 200 in one message, then hang up with them still queued. */
	for (int i = 0; i < 200; i++) {
		fds[i] = lingering_socket();
		assert_true(fds[i] >= 0);
	}
	{
		struct wl_msg_req m = { .magic = WL_MSG_MAGIC, .abi_major = WL_ABI_MAJOR,
		                        .op = WL_OP_OBSERVE };
		char cbuf[CMSG_SPACE(sizeof(fds))];
		struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
		                     .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(fds));
		memcpy(CMSG_DATA(cm), fds, sizeof(fds));
		assert_int_equal(sendmsg(s, &mh, 0), (ssize_t)sizeof(m));
		m.op = 0x7777;                       /* unknown: closes nothing early */
		assert_int_equal(sendmsg(s, &mh, 0), (ssize_t)sizeof(m));
	}
	for (int i = 0; i < 200; i++)
		close(fds[i]);
	close(s);
	for (int k = 0; k < 5; k++) {
		answers_within_1s();
		hd_sleep_ms(100);
	}
	victim_unharmed(e, &v);
	victim_done(e, &v);
}

/*
 * A client stopped at each instruction of wakelock_hold_release, while the
 * daemon watches it (it registered and held first, so a daemon watching
 * one holder watches it) and a victim holds.  Stopped before its release
 * took effect, it still holds: no suspend.  Stopped anywhere after (its
 * depth is 0, whether or not it kicked), it must not keep the system
 * awake once the victim lets go: a suspend within 1 s of that release.
 * The stepper is ptraced (PTRACE_TRACEME, then single steps) and left
 * SIGSTOPped after k instructions, for k = 0, 1, ... until it is past the
 * release.  In sanitizer builds, whose release is instrumented, k moves
 * in strides so that the test keeps its time (every instruction of the
 * plain build is covered).
 */
static void stepper(const char *name, int fd)
{
	wakelock_client *c;
	wakelock_hold *h;
	uint64_t addr;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (wakelock_client_open(NULL, name, &c) || wakelock_hold_create(c, "h", &h) ||
	    wakelock_hold_acquire(h))
		_exit(1);
	addr = (uint64_t)(uintptr_t)&((struct wl_region_hold *)(void *)h)->depth;
	if (write(fd, &addr, sizeof(addr)) != sizeof(addr))
		_exit(2);
	raise(SIGSTOP);             /* the tracer steps from here */
	wakelock_hold_release(h);
	__builtin_trap();           /* the end marker (SIGILL) */
}

struct stepped {
	pid_t pid;
	uint64_t depth_addr;
};

/* Start a stepper, traced, stopped just before its release. */
static void stepper_start(struct stepped *sp, long k)
{
	int p[2], status;
	char fds[16], name[32];

	assert_int_equal(pipe(p), 0);
	snprintf(fds, sizeof(fds), "%d", p[1]);
	snprintf(name, sizeof(name), "stepper%ld", k);
	sp->pid = fork();
	assert_true(sp->pid >= 0);
	if (sp->pid == 0) {
		close(p[0]);
		/* No lazy binding inside the release: its instructions are the
		 * library's, not the dynamic linker's. */
		setenv("LD_BIND_NOW", "1", 1);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execl(self_exe, self_exe, "--child", "stepper", name, fds, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	/* The exec's trap, then on to the first SIGSTOP. */
	assert_int_equal(waitpid(sp->pid, &status, 0), sp->pid);
	assert_true(WIFSTOPPED(status));
	assert_int_equal(ptrace(PTRACE_CONT, sp->pid, NULL, NULL), 0);
	assert_int_equal(read(p[0], &sp->depth_addr, sizeof(sp->depth_addr)),
	                 (ssize_t)sizeof(sp->depth_addr));
	close(p[0]);
	for (;;) {
		assert_int_equal(waitpid(sp->pid, &status, 0), sp->pid);
		assert_true(WIFSTOPPED(status));
		if (WSTOPSIG(status) == SIGSTOP)
			return;
		/* Any other signal on the way (none expected) is passed on. */
		assert_int_equal(ptrace(PTRACE_CONT, sp->pid, NULL,
		                        (void *)(intptr_t)WSTOPSIG(status)), 0);
	}
}

/* The stepper's instruction pointer (0 where we cannot tell). */
static uint64_t stepper_pc(struct stepped *sp)
{
#if defined(__x86_64__)
	return (uint64_t)ptrace(PTRACE_PEEKUSER, sp->pid,
	                        (void *)offsetof(struct user_regs_struct, rip), NULL);
#else
	(void)sp;
	return 0;
#endif
}

/* Single-step k instructions; 1 if the end marker came first.  pcs, if
 * not NULL, gets each instruction's address (room for k). */
static int stepper_step(struct stepped *sp, long k, uint64_t *pcs)
{
	int status;

	for (long i = 0; i < k; i++) {
		if (pcs)
			pcs[i] = stepper_pc(sp);
		assert_int_equal(ptrace(PTRACE_SINGLESTEP, sp->pid, NULL, NULL), 0);
		assert_int_equal(waitpid(sp->pid, &status, 0), sp->pid);
		assert_true(WIFSTOPPED(status));
		if (WSTOPSIG(status) == SIGILL || WSTOPSIG(status) == SIGTRAP + 0x100)
			return 1;
		assert_int_equal(WSTOPSIG(status), SIGTRAP);
	}
	return 0;
}

static uint32_t stepper_depth(struct stepped *sp)
{
	uint32_t d = 0xffffffffu;
	struct iovec l = { .iov_base = &d, .iov_len = sizeof(d) };
	struct iovec r = { .iov_base = (void *)(uintptr_t)sp->depth_addr, .iov_len = sizeof(d) };

	assert_int_equal(process_vm_readv(sp->pid, &l, 1, &r, 1, 0), (ssize_t)sizeof(d));
	return d;
}

static void stepper_kill(struct stepped *sp)
{
	int status;

	kill(sp->pid, SIGKILL);
	assert_int_equal(waitpid(sp->pid, &status, 0), sp->pid);
}

/* Of the distinct instructions, every one (plain build), or about this
 * many spread evenly over them (instrumented builds: TSan turns each
 * atomic into calls of its own, some 40 000 instructions, and each stop
 * steps its client from the start). */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define STEP_POINTS 24
#else
#define STEP_POINTS 0
#endif
#define STEP_MAX 100000

static void test_stopped_at_each_instruction_of_release(void **st)
{
	struct env *e = *st;
	uint64_t *pcs = calloc(STEP_MAX, sizeof(*pcs));
	long n, npoints = 0, held_points = 0, released_points = 0, *points;
	struct stepped sp;

	/* A survey: the path of the release, one address per instruction. */
	assert_non_null(pcs);
	stepper_start(&sp, -1);
	assert_int_equal(stepper_step(&sp, STEP_MAX, pcs), 1);
	stepper_kill(&sp);
	for (n = 0; n < STEP_MAX && pcs[n]; n++)
		;
	if (!n)
		n = STEP_MAX;
	/* Each instruction once, where it is first reached (a loop's later
	 * rounds stop at the same places). */
	points = calloc((size_t)n + 1, sizeof(*points));
	assert_non_null(points);
	for (long k = 0; k < n; k++) {
		int dup = 0;

		for (long j = 0; pcs[k] && j < k && !dup; j++)
			dup = pcs[j] == pcs[k];
		if (!dup)
			points[npoints++] = k;
	}
	long want = STEP_POINTS;

	if (want && npoints > want) {
		long stride = npoints / want, m = 0;

		for (long p = 0; p < npoints; p += stride)
			points[m++] = points[p];
		npoints = m;
	}
	points[npoints++] = n;          /* and past the end */
	print_message("release: %ld instructions, %ld distinct stops tested\n", n, npoints);
	for (long p = 0; p < npoints; p++) {
		long k = points[p];
		struct victim v;
		uint32_t depth;

		stepper_start(&sp, k);
		/* The daemon has seen it hold before the victim comes. */
		hd_sleep_ms(10);
		victim_hold(e, &v);
		hd_sleep_ms(10);
		stepper_step(&sp, k, NULL);
		depth = stepper_depth(&sp);
		/* Left stopped, as by SIGSTOP: all its threads. */
		assert_int_equal(ptrace(PTRACE_DETACH, sp.pid, NULL, (void *)(intptr_t)SIGSTOP), 0);
		assert_true(depth <= 1);
		victim_unharmed(e, &v);
		assert_int_equal(wakelock_hold_release(v.h), 0);
		victim_env = e;
		victim_cur = &v;
		if (depth == 0) {
			if (!hd_wait_for(attempted_since_victim, NULL, 1000))
				fail_msg("stopped %ld instructions into its release (depth 0): no "
				         "suspend within 1 s of the victim's release", k);
			released_points++;
		} else {
			hd_sleep_ms(50);
			assert_int_equal(attempts(e), v.a0);     /* it still holds */
			held_points++;
		}
		stepper_kill(&sp);
		assert_true(hd_wait_for(attempted_since_victim, NULL, 2000));
		wakelock_client_close(v.c);
		/* Its name is free once it is reaped. */
		for (int i = 0; i < 200 && find_slot(e, "victim"); i++)
			hd_sleep_ms(5);
	}
	print_message("release: %ld stops holding, %ld stops released\n", held_points,
	              released_points);
	assert_true(held_points >= 1);
	assert_true(released_points >= 1);
	free(points);
	free(pcs);
	answers_within_1s();
	assert_int_equal(hd_stop(&e->d), 0);
}

static void scribble(const char *name, int fd);

int main(int argc, char **argv)
{
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);

	self_exe[n > 0 ? n : 0] = 0;
	if (argc == 5 && !strcmp(argv[1], "--child")) {
		if (!strcmp(argv[2], "scribble"))
			scribble(argv[3], atoi(argv[4]));
		if (!strcmp(argv[2], "stepper"))
			stepper(argv[3], atoi(argv[4]));
		hammer(argv[3]);
	}

	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_published_segment_is_read_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_regions_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_hold_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(test_names_checked_by_daemon, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scribbler, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stoppers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_modem_client_survives_daemon_restart,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_hold_survives_daemon_kill, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill_sweep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_doorbells_are_the_daemons, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kick_flood, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lingering_descriptors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stopped_at_each_instruction_of_release,
		                                setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	/* WL_TEST=pattern runs the matching tests only (debugging). */
	if (getenv("WL_TEST"))
		cmocka_set_test_filter(getenv("WL_TEST"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
