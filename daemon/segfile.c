/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "segfile.h"

static void mark_gone(struct wl_shm_header *hdr)
{
	/* No lock: the previous owner may have died holding it.  'gone' is a
	 * plain flag that clients read after locking. */
	__atomic_store_n(&hdr->gone, 1, __ATOMIC_RELEASE);
	wl_notify(hdr);
}

static void retire_old(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	struct wl_seg old;

	if (fd < 0)
		return;
	if (wl_seg_map_fd(fd, &old) == 0) {
		mark_gone(old.hdr);
		wl_seg_unmap(&old);
	}
}

int segfile_create(const char *path, gid_t gid, int have_gid, struct wl_seg *seg,
                   char *err, size_t errlen)
{
	size_t len = wl_shm_total_size(WL_MAX_CLIENTS);
	char tmp[4200];
	void *map;
	int fd, r;

	retire_old(path);
	snprintf(tmp, sizeof(tmp), "%s.new.%d", path, (int)getpid());
	unlink(tmp);
	fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
		return r;
	}
	/* Readable and writable by root and one group only: blocking
	 * suspend is a privilege. */
	if ((have_gid && fchown(fd, (uid_t)-1, gid) < 0) ||
	    fchmod(fd, have_gid ? 0660 : 0600) < 0 || ftruncate(fd, (off_t)len) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot set up %s: %s", tmp, strerror(errno));
		goto fail;
	}
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		r = -errno;
		snprintf(err, errlen, "mmap %s: %s", tmp, strerror(errno));
		goto fail;
	}
	r = wl_seg_init(map, WL_MAX_CLIENTS);
	if (r < 0 || rename(tmp, path) < 0) {
		r = r < 0 ? r : -errno;
		snprintf(err, errlen, "cannot install %s: %s", path, strerror(-r));
		munmap(map, len);
		goto fail;
	}
	seg->hdr = map;
	seg->len = len;
	seg->fd = fd;
	return 0;
fail:
	close(fd);
	unlink(tmp);
	return r;
}

void segfile_retire(const char *path, struct wl_seg *seg)
{
	if (!seg->hdr)
		return;
	if (wl_lock_timeout(seg->hdr, 1000) == 0) {
		__atomic_store_n(&seg->hdr->dstate, WL_D_STOPPED, __ATOMIC_RELAXED);
		mark_gone(seg->hdr);
		wl_unlock(seg->hdr);
	} else {
		mark_gone(seg->hdr);
	}
	unlink(path);
	wl_seg_unmap(seg);
}
