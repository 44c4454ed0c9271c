/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's published segment, mapped once per process.  Every client
 * gets the segment's descriptor when it registers; mapping it once per
 * client would give each client its own virtual pages of the same words
 * (the phase every acquire reads, the watched flags every last release
 * reads), and a process with many clients would pay a TLB entry per
 * client on its fast path.  The same file (device and inode) maps to the
 * same pages here, counted by reference; a daemon's successor has a new
 * file and a mapping of its own.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "wl_client.h"

struct pub_ref {
	dev_t dev;
	ino_t ino;
	struct wl_seg seg;
	unsigned long refs;
	struct pub_ref *next;
};

static pthread_mutex_t pubs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pub_ref *pubs;

int wl_pub_get(int fd, const struct wl_shm_header **hdr)
{
	struct pub_ref *p;
	struct stat st;
	int r;

	*hdr = NULL;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	pthread_mutex_lock(&pubs_lock);
	for (p = pubs; p; p = p->next) {
		if (p->dev == st.st_dev && p->ino == st.st_ino) {
			p->refs++;
			*hdr = p->seg.hdr;
			pthread_mutex_unlock(&pubs_lock);
			close(fd);
			return 0;
		}
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		pthread_mutex_unlock(&pubs_lock);
		close(fd);
		return -ENOMEM;
	}
	r = wl_seg_map_fd(fd, &p->seg);
	if (r < 0) {
		pthread_mutex_unlock(&pubs_lock);
		free(p);
		return r;
	}
	/* The mapping is all we need of it: one descriptor less. */
	close(p->seg.fd);
	p->seg.fd = -1;
	p->dev = st.st_dev;
	p->ino = st.st_ino;
	p->refs = 1;
	p->next = pubs;
	pubs = p;
	*hdr = p->seg.hdr;
	pthread_mutex_unlock(&pubs_lock);
	return 0;
}

void wl_pub_put(const struct wl_shm_header *hdr)
{
	struct pub_ref **pp, *p;

	if (!hdr)
		return;
	pthread_mutex_lock(&pubs_lock);
	for (pp = &pubs; (p = *pp); pp = &p->next) {
		if (p->seg.hdr != hdr)
			continue;
		if (--p->refs == 0) {
			*pp = p->next;
			wl_seg_unmap(&p->seg);
			free(p);
		}
		break;
	}
	pthread_mutex_unlock(&pubs_lock);
}
