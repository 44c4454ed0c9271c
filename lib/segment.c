/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Creating, validating and mapping the shared segment. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "wl_shm.h"

/*
 * A client may be handed any file descriptor; check everything it relies
 * on before touching the mutex, so a foreign or truncated file gives an
 * error instead of a crash or a hang.
 */
int wl_seg_validate(const void *map, size_t maplen)
{
	const struct wl_shm_header *h = map;

	if (maplen < sizeof(h->magic) + 2 * sizeof(uint16_t))
		return -EBADMSG;
	if (h->magic != WL_SHM_MAGIC)
		return -EPROTO;
	if (h->abi_major != WL_ABI_MAJOR)
		return -EPROTONOSUPPORT;
	if (maplen < sizeof(*h))
		return -EBADMSG;
	if (h->header_size != sizeof(struct wl_shm_header) ||
	    h->slot_size != sizeof(struct wl_shm_slot) ||
	    h->nholds != WL_MAX_HOLDS_PER_CLIENT ||
	    h->nslots == 0 || h->nslots > WL_MAX_CLIENTS ||
	    h->size != wl_shm_total_size(h->nslots) || h->size > maplen ||
	    h->nlive > h->nslots)
		return -EBADMSG;
	return 0;
}

int wl_seg_map_fd(int fd, struct wl_seg *seg)
{
	struct stat st;
	void *map;
	int r;

	memset(seg, 0, sizeof(*seg));
	seg->fd = -1;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(uint64_t) ||
	    st.st_size > (off_t)wl_shm_total_size(WL_MAX_CLIENTS) * 4) {
		close(fd);
		return -EBADMSG;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		r = -errno;
		close(fd);
		return r;
	}
	r = wl_seg_validate(map, (size_t)st.st_size);
	if (r < 0) {
		munmap(map, (size_t)st.st_size);
		close(fd);
		return r;
	}
	seg->hdr = map;
	seg->len = (size_t)st.st_size;
	seg->fd = fd;
	return 0;
}

void wl_seg_unmap(struct wl_seg *seg)
{
	if (seg->hdr)
		munmap(seg->hdr, seg->len);
	if (seg->fd >= 0)
		close(seg->fd);
	seg->hdr = NULL;
	seg->fd = -1;
}

/* Initialise a zeroed mapping of wl_shm_total_size(nslots) bytes. */
int wl_seg_init(struct wl_shm_header *hdr, uint32_t nslots)
{
	pthread_mutexattr_t ma;
	int r;

	if (nslots == 0 || nslots > WL_MAX_CLIENTS)
		return -EINVAL;
	/* The mapping is zero-filled (see wl_shm.h): clear the header only,
	 * so that the slots' pages stay untouched until a client uses them. */
	memset(hdr, 0, sizeof(*hdr));
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	r = pthread_mutex_init(&hdr->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	if (r)
		return -r;
	hdr->abi_major = WL_ABI_MAJOR;
	hdr->abi_minor = WL_ABI_MINOR;
	hdr->size = (uint32_t)wl_shm_total_size(nslots);
	hdr->header_size = sizeof(struct wl_shm_header);
	hdr->slot_size = sizeof(struct wl_shm_slot);
	hdr->nslots = nslots;
	hdr->nholds = WL_MAX_HOLDS_PER_CLIENT;
	hdr->next_client_id = 1;
	hdr->daemon_pid = (int32_t)getpid();
	hdr->daemon_start_rt = wl_now_real();
	wl_table_update_rt_offset(hdr);
	/* The live-slot list: empty; free slots in index order. */
	hdr->nlive = 0;
	for (uint32_t i = 0; i < nslots; i++)
		hdr->order[i] = i;
	/* Magic last: a reader that sees it sees an initialised segment. */
	__atomic_store_n(&hdr->magic, WL_SHM_MAGIC, __ATOMIC_RELEASE);
	return 0;
}
