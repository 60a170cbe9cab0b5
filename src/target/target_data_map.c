// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * target_data_map.c - where a file holds data: its holes are left alone
 *
 * The plan asks in ascending order and punching (or zeroing) only turns
 * data into holes behind the position asked for, so one lookup answers
 * every extent up to the segment's end: on an image that is sparse
 * already, most extents cost no system call at all.
 *
 * ramfs keeps no holes on record: SEEK_DATA calls all of a file data,
 * yet reading a hole there allocates a page for good (--zero-fill reads
 * what it cannot punch, and grew a sparse image by what it read).  Its
 * files live only in the page cache, so there a page that mincore() does
 * not find resident is a hole.
 *
 * Used by the image file back end (target_file.c) and for the backing
 * file of a loop device (target_blkdev.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "target_data_map.h"

#ifndef RAMFS_MAGIC
#define RAMFS_MAGIC 0x858458f6
#endif
/* pages asked of mincore() at a time */
#define RESIDENT_BATCH 4096

/* The first page at or after @page that is (@want 1) or is not resident. */
static uint64_t resident_find(const struct data_map *m, uint64_t page,
			      int want)
{
	uint64_t ps = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t pages = (m->resident_len + ps - 1) / ps, n, i;
	unsigned char vec[RESIDENT_BATCH];

	while (page < pages) {
		n = pages - page < RESIDENT_BATCH ? pages - page :
						    RESIDENT_BATCH;
		if (mincore((char *)m->resident + page * ps, n * ps, vec))
			return pages;	/* cannot tell: treat as all data */
		for (i = 0; i < n; i++)
			if ((vec[i] & 1) == want)
				return page + i;
		page += n;
	}
	return pages;
}

/* data_map_next()'s lookup on a host without holes on record */
static void resident_segment(struct data_map *m, off_t pos)
{
	uint64_t ps = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t first = resident_find(m, (uint64_t)pos / ps, 1), end;

	if (first * ps >= m->resident_len) {
		m->ds = m->de = INT64_MAX;
		return;
	}
	end = resident_find(m, first + 1, 0) * ps;
	m->ds = (int64_t)first * (int64_t)ps;
	if (m->ds < pos)
		m->ds = pos;
	m->de = (int64_t)(end < m->resident_len ? end : m->resident_len);
}

errcode_t data_map_next(struct data_map *m, int fd, uint64_t base,
			uint64_t start_bytes, uint64_t end_bytes,
			uint64_t *data_start, uint64_t *data_end)
{
	off_t pos = (off_t)(base + start_bytes), lim = (off_t)(base + end_bytes);

	if ((!m->valid || pos >= m->de) && m->resident) {
		resident_segment(m, pos);
		m->valid = 1;
	} else if (!m->valid || pos >= m->de) {
		m->ds = lseek(fd, pos, SEEK_DATA);
		if (m->ds < 0) {
			if (errno != ENXIO)
				return errno;
			m->ds = m->de = INT64_MAX;	/* hole to EOF */
		} else {
			m->de = lseek(fd, m->ds, SEEK_HOLE);
			if (m->de < 0)
				return errno;
		}
		m->valid = 1;
	}
	if (m->ds >= lim) {
		*data_start = *data_end = end_bytes;
		return 0;
	}
	*data_start = (uint64_t)(m->ds > pos ? m->ds : pos) - base;
	*data_end = (uint64_t)(m->de < lim ? m->de : lim) - base;
	return 0;
}

/*
 * A sparse file (fewer blocks than its size) on ramfs, which says it has
 * no hole: map it, for resident_segment().  Nothing to do elsewhere.
 */
void data_map_resident_init(struct data_map *m, int fd,
			    const struct statfs *sfs)
{
	struct stat st;
	void *p;

	if ((unsigned long)sfs->f_type != RAMFS_MAGIC || fstat(fd, &st) ||
	    st.st_size <= 0 || (uint64_t)st.st_blocks * 512 >= (uint64_t)st.st_size ||
	    lseek(fd, 0, SEEK_HOLE) < st.st_size)
		return;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return;
	m->resident = p;
	m->resident_len = (uint64_t)st.st_size;
	/* the kernel's readahead past a data segment would fill holes too */
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
}

void data_map_free(struct data_map *m)
{
	if (m && m->resident)
		munmap(m->resident, m->resident_len);
}
