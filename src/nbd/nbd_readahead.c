// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nbd_readahead.c - reads asked ahead through NBD, many in flight
 *
 * Over a raw image or a device the fast readers keep many reads in
 * flight (bitmap_read.c and range_read.c through io_uring, verify_dirs.c
 * through readahead).  Through NBD they read through libext2fs, one request at a
 * time, a round trip each; but they tell libext2fs what comes next
 * (io_channel_cache_readahead()).  Here that is an asynchronous NBD read
 * (nbd_aio_pread) into a buffer of its own, up to RA_SLOTS of them, each
 * of at most RA_CHUNK bytes; a later read that lies inside one is served
 * from it, waiting for it if it is still in flight.  A buffer is dropped
 * once read to its end, or when a new readahead needs its slot; a read
 * that finds nothing, or a readahead that failed, goes to the server
 * directly as before.  So readahead can make reads faster, never
 * different.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libnbd.h>

#include "nbd_dl.h"
#include "nbd_conn.h"
#include "nbd_readahead.h"

#define RA_SLOTS 8
#define RA_CHUNK (1U << 20)

enum ra_state { RA_FREE, RA_FLIGHT, RA_DONE, RA_FAILED };

struct ra_slot {
	enum ra_state state;
	uint64_t off, len;	/* export bytes */
	unsigned char *buf;
};

struct nbd_ra {
	struct nbd_conn *c;
	struct ra_slot slot[RA_SLOTS];
	unsigned int next;	/* the slot the next readahead takes */
};

struct nbd_ra *e2t_nbd_ra_new(struct nbd_conn *c)
{
	struct nbd_ra *ra = calloc(1, sizeof(*ra));

	if (ra)
		ra->c = c;
	return ra;
}

static int ra_done(void *user_data, int *error)
{
	struct ra_slot *s = user_data;

	s->state = *error ? RA_FAILED : RA_DONE;
	return 1;	/* retire the command */
}

/* Until @s is no longer in flight (or the connection is gone). */
static void wait_slot(struct nbd_ra *ra, struct ra_slot *s)
{
	while (s->state == RA_FLIGHT)
		if (nbd_poll(ra->c->h, -1) == -1) {
			/* a dead connection retires its commands: once more */
			if (s->state == RA_FLIGHT && nbd_aio_in_flight(ra->c->h) <= 0)
				s->state = RA_FAILED;
			if (s->state == RA_FLIGHT)
				return;
		}
}

static void drop(struct nbd_ra *ra, struct ra_slot *s)
{
	wait_slot(ra, s);
	if (s->state == RA_FLIGHT)
		return;		/* never free what the server may still fill */
	free(s->buf);
	s->buf = NULL;
	s->state = RA_FREE;
}

/* Is [off, off + len) asked for already? */
static int asked(const struct nbd_ra *ra, uint64_t off, uint64_t len)
{
	const struct ra_slot *s;
	unsigned int i;

	for (i = 0; i < RA_SLOTS; i++) {
		s = &ra->slot[i];
		if (s->state != RA_FREE && s->state != RA_FAILED &&
		    off >= s->off && off + len <= s->off + s->len)
			return 1;
	}
	return 0;
}

static void start_one(struct nbd_ra *ra, uint64_t off, uint64_t len)
{
	struct ra_slot *s = &ra->slot[ra->next];
	nbd_completion_callback cb = { .callback = ra_done, .user_data = s };

	if (asked(ra, off, len))
		return;
	drop(ra, s);
	if (s->state != RA_FREE)
		return;
	s->buf = malloc(len);
	if (!s->buf)
		return;
	s->off = off;
	s->len = len;
	s->state = RA_FLIGHT;
	if (nbd_aio_pread(ra->c->h, s->buf, len, off, cb, 0) == -1) {
		free(s->buf);
		s->buf = NULL;
		s->state = RA_FREE;
		return;
	}
	ra->next = (ra->next + 1) % RA_SLOTS;
}

void e2t_nbd_ra_start(struct nbd_ra *ra, uint64_t off, uint64_t len)
{
	uint64_t chunk = RA_CHUNK, mb = ra->c->srv.min_block, n;

	if (ra->c->srv.max_block && ra->c->srv.max_block < chunk)
		chunk = ra->c->srv.max_block;
	/* whole blocks of the server's minimum, inside the export */
	if (mb > 1) {
		chunk -= chunk % mb;
		len += off % mb;
		off -= off % mb;
		if (len % mb)
			len += mb - len % mb;
	}
	if (!chunk || off >= ra->c->srv.size_bytes)
		return;
	if (len > ra->c->srv.size_bytes - off)
		len = ra->c->srv.size_bytes - off;
	while (len) {
		n = len < chunk ? len : chunk;
		start_one(ra, off, n);
		off += n;
		len -= n;
	}
}

int e2t_nbd_ra_take(struct nbd_ra *ra, void *buf, uint64_t off, uint64_t len)
{
	struct ra_slot *s;
	unsigned int i;

	for (i = 0; i < RA_SLOTS; i++) {
		s = &ra->slot[i];
		if (s->state == RA_FREE || off < s->off ||
		    off + len > s->off + s->len)
			continue;
		wait_slot(ra, s);
		if (s->state != RA_DONE)
			return 0;
		memcpy(buf, s->buf + (off - s->off), len);
		/* read to its end: the reader has moved on */
		if (off + len == s->off + s->len)
			drop(ra, s);
		return 1;
	}
	return 0;
}

void e2t_nbd_ra_free(struct nbd_ra *ra)
{
	unsigned int i;

	if (!ra)
		return;
	for (i = 0; i < RA_SLOTS; i++)
		drop(ra, &ra->slot[i]);
	/* a slot the server may still fill is left to it, never freed */
	for (i = 0; i < RA_SLOTS; i++)
		if (ra->slot[i].state == RA_FLIGHT)
			return;
	free(ra);
}
