/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Creating, validating, mapping and snapshotting the published segment. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "wl_shm.h"

/*
 * A client may be handed any file descriptor; check everything it relies
 * on, so a foreign or truncated file gives an error instead of a crash.
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
	    h->nholds != WAKELOCK_MAX_HOLDS_PER_CLIENT ||
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
	/* Read-only: the daemon sealed it against every other writer. */
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
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

/* Seals that leave the writer's own mapping as the only way to write. */
#define WL_SEG_SEALS (F_SEAL_FUTURE_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

static int new_memfd(const char *name, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)len) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

int wl_seg_create(struct wl_seg *seg, uint32_t nslots)
{
	size_t len = wl_shm_total_size(nslots);
	void *map;
	int fd, r;

	memset(seg, 0, sizeof(*seg));
	seg->fd = -1;
	if (nslots == 0 || nslots > WL_MAX_CLIENTS)
		return -EINVAL;
	fd = new_memfd("wakelockd", len);
	if (fd < 0)
		return fd;
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		r = -errno;
		close(fd);
		return r;
	}
	r = wl_seg_init(map, nslots);
	if (r == 0 && fcntl(fd, F_ADD_SEALS, WL_SEG_SEALS) < 0)
		r = -errno;
	if (r < 0) {
		munmap(map, len);
		close(fd);
		return r;
	}
	seg->hdr = map;
	seg->len = len;
	seg->fd = fd;
	return 0;
}

/*
 * The power thread writes header and slot words (atomically) while the
 * main thread snapshots them: copy word by word with relaxed atomic loads
 * rather than memcpy, which would be a data race.  A snapshot may mix
 * words of two moments, as any reader of the live segment sees them.
 */
static void copy_words(void *dst, const void *src, size_t len)
{
	uint32_t *d = dst;
	const uint32_t *s = src;

	for (size_t k = 0; k < len / sizeof(*d); k++)
		d[k] = __atomic_load_n(&s[k], __ATOMIC_RELAXED);
}

int wl_seg_snapshot(const struct wl_shm_header *hdr)
{
	size_t len = wl_shm_total_size(hdr->nslots);
	struct wl_shm_header *copy;
	int fd = new_memfd("wakelockd-snapshot", len), r = 0;

	if (fd < 0)
		return fd;
	copy = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (copy == MAP_FAILED) {
		r = -errno;
		close(fd);
		return r;
	}
	/* The header and the live slots: the rest reads as free. */
	_Static_assert(sizeof(*hdr) % sizeof(uint32_t) == 0 &&
	               sizeof(hdr->slots[0]) % sizeof(uint32_t) == 0, "word copies");
	copy_words(copy, hdr, sizeof(*hdr));
	memset(&copy->lock, 0, sizeof(copy->lock));
	for (uint32_t k = 0; k < hdr->nlive; k++)
		copy_words(&copy->slots[hdr->order[k]], &hdr->slots[hdr->order[k]],
		           sizeof(hdr->slots[0]));
	munmap(copy, len);
	if (fcntl(fd, F_ADD_SEALS, WL_SEG_SEALS | F_SEAL_WRITE) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
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
	int r;

	if (nslots == 0 || nslots > WL_MAX_CLIENTS)
		return -EINVAL;
	/* The mapping is zero-filled (see wl_shm.h): clear the header only,
	 * so that the slots' pages stay untouched until a client uses them. */
	memset(hdr, 0, sizeof(*hdr));
	/* Process-private: the daemon's threads are its only users. */
	r = pthread_mutex_init(&hdr->lock, NULL);
	if (r)
		return -r;
	hdr->abi_major = WL_ABI_MAJOR;
	hdr->abi_minor = WL_ABI_MINOR;
	hdr->size = (uint32_t)wl_shm_total_size(nslots);
	hdr->header_size = sizeof(struct wl_shm_header);
	hdr->slot_size = sizeof(struct wl_shm_slot);
	hdr->nslots = nslots;
	hdr->nholds = WAKELOCK_MAX_HOLDS_PER_CLIENT;
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
