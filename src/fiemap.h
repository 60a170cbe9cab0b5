/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fiemap.h - what the host filesystem says of an image file's extents
 */
#ifndef E2TRIM_FIEMAP_H
#define E2TRIM_FIEMAP_H

#include <stdint.h>

/*
 * From @off of file @fd, the run of extents up to *@run_end (at most
 * @end) that hold the file's own written data: allocated, written, and
 * shared with no other file.  1 when [off, *run_end) is such a run, 0
 * when it is not (unwritten extents, holes, blocks shared by a reflink
 * or a snapshot), -errno when the host cannot say (no FIEMAP).
 */
int fiemap_own_data(int fd, uint64_t off, uint64_t end, uint64_t *run_end);

#endif /* E2TRIM_FIEMAP_H */
