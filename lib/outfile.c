/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Output files replaced atomically, never through a symlink (wl_outfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include "wl_outfile.h"
#include "wl_proto.h"

int wl_outfile_open(struct wl_outfile *o, const char *path, mode_t mode)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	int fd = -1, r;

	memset(o, 0, sizeof(*o));
	o->dirfd = -1;
	if (!slash) {
		snprintf(dir, sizeof(dir), ".");
		slash = path - 1;
	} else if ((size_t)(slash - path) >= sizeof(dir)) {
		wl_set_error("%s: path too long", path);
		return -ENAMETOOLONG;
	} else {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
		if (!dir[0])
			strcpy(dir, "/");
	}
	if (!slash[1] || strlen(slash + 1) >= sizeof(o->base) - 24) {
		wl_set_error("%s: not a file name", path);
		return -EINVAL;
	}
	snprintf(o->base, sizeof(o->base), "%s", slash + 1);
	o->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (o->dirfd < 0) {
		r = -errno;
		wl_set_error("%s: %s", dir, strerror(errno));
		return r;
	}
	/* A guess that is taken (someone's file, or a crash's) is only
	 * another try. */
	for (int i = 0; i < 64 && fd < 0; i++) {
		uint64_t x;

		if (getrandom(&x, sizeof(x), GRND_NONBLOCK) != sizeof(x))
			x = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)getpid() << 32 ^ (uint64_t)i;
		snprintf(o->tmp, sizeof(o->tmp), ".%s.%016llx.tmp", o->base, (unsigned long long)x);
		fd = openat(o->dirfd, o->tmp,
		            O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, mode);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		r = -errno;
		wl_set_error("%s/%s: %s", dir, o->tmp, strerror(errno));
		close(o->dirfd);
		o->dirfd = -1;
		return r;
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		r = -errno;
		wl_set_error("%s: %s", path, strerror(errno));
		close(fd);
		unlinkat(o->dirfd, o->tmp, 0);
		close(o->dirfd);
		o->dirfd = -1;
		return r;
	}
	return 0;
}

int wl_outfile_commit(struct wl_outfile *o)
{
	int r = 0;

	if (fclose(o->f) != 0)
		r = -errno;
	o->f = NULL;
	if (!r && renameat(o->dirfd, o->tmp, o->dirfd, o->base) < 0)
		r = -errno;
	if (r < 0) {
		wl_set_error("%s: %s", o->base, strerror(-r));
		unlinkat(o->dirfd, o->tmp, 0);
	}
	close(o->dirfd);
	o->dirfd = -1;
	return r;
}

void wl_outfile_abort(struct wl_outfile *o)
{
	if (o->f)
		fclose(o->f);
	o->f = NULL;
	if (o->dirfd >= 0) {
		unlinkat(o->dirfd, o->tmp, 0);
		close(o->dirfd);
	}
	o->dirfd = -1;
}
