/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * target_data_map.h - a file's data segments, looked up in ascending order
 */
#ifndef E2TRIM_TARGET_DATA_MAP_H
#define E2TRIM_TARGET_DATA_MAP_H

#include <stdint.h>
#include <et/com_err.h>

struct statfs;

/* The last data segment SEEK_DATA/SEEK_HOLE found, [ds, de) in file bytes. */
struct data_map {
	int64_t ds, de;
	int valid;
	/*
	 * A host that keeps no holes on record (ramfs): the file mapped,
	 * and its data is what the page cache holds (mincore); else NULL.
	 */
	void *resident;
	uint64_t resident_len;
};

/*
 * next_data() over @fd, where the filesystem starts at @base: the first
 * data segment of [start, end) in bytes of the filesystem, both @end_bytes
 * when it is all a hole; 0, or the errno value of a lookup that failed.
 */
errcode_t data_map_next(struct data_map *m, int fd, uint64_t base,
			uint64_t start_bytes, uint64_t end_bytes,
			uint64_t *data_start, uint64_t *data_end);

/*
 * On ramfs, which keeps no holes on record, map a sparse @fd so that its
 * resident pages tell its data; nothing elsewhere.
 */
void data_map_resident_init(struct data_map *m, int fd,
			    const struct statfs *sfs);

/* Unmap what data_map_resident_init() mapped; @m itself is the caller's. */
void data_map_free(struct data_map *m);

#endif /* E2TRIM_TARGET_DATA_MAP_H */
