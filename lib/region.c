/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A client's region: creating it (client) and mapping it (daemon). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "wl_region.h"

int wl_region_create(struct wl_region **out, int *fdp)
{
	struct wl_region *rg;
	int fd = memfd_create("wakelock-region", MFD_CLOEXEC | MFD_ALLOW_SEALING), r;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, sizeof(*rg)) < 0)
		goto fail;
	rg = mmap(NULL, sizeof(*rg), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (rg == MAP_FAILED)
		goto fail;
	rg->abi_major = WL_ABI_MAJOR;
	rg->abi_minor = WL_ABI_MINOR;
	rg->size = sizeof(*rg);
	rg->nholds = WAKELOCK_MAX_HOLDS_PER_CLIENT;
	rg->magic = WL_REGION_MAGIC;
	/* What the daemon requires before it maps it: it can never shrink
	 * under the daemon's mapping (a read past the end would kill the
	 * daemon with SIGBUS). */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		munmap(rg, sizeof(*rg));
		goto fail;
	}
	*out = rg;
	*fdp = fd;
	return 0;
fail:
	r = -errno;
	close(fd);
	return r;
}

int wl_region_map(int fd, const struct wl_region **out)
{
	struct stat st;
	void *map;
	int seals, r;

	*out = NULL;
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(fd, &st) < 0 ||
	    !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(struct wl_region))
		return -EBADF;
	map = mmap(NULL, sizeof(struct wl_region), PROT_READ, MAP_SHARED, fd, 0);
	r = map == MAP_FAILED ? -errno : 0;
	if (r < 0)
		return r;
	*out = map;
	return 0;
}

void wl_region_unmap(const struct wl_region *rg)
{
	if (rg)
		munmap((void *)rg, sizeof(*rg));
}
