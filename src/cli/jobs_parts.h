/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobs_parts.h - -p all: a target becomes its ext2/3/4 partitions
 */
#ifndef E2TRIM_JOBS_PARTS_H
#define E2TRIM_JOBS_PARTS_H

#include "job_list.h"

/*
 * -p all: each target becomes one entry per ext2/3/4 partition of its
 * table (a block device: the partitions' own devices).  Returns -1 when
 * out of memory.
 */
int jobs_expand_all(struct job_list *l);

#endif /* E2TRIM_JOBS_PARTS_H */
