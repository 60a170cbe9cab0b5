/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * partition.h - find a partition inside a whole-disk image
 */
#ifndef E2TRIM_PARTITION_H
#define E2TRIM_PARTITION_H

#include <stdint.h>

/*
 * Where partition @partno (1-based, as in /dev/sda1) of the MBR or GPT
 * table in @fd starts and how long it is, in bytes.  Returns 0, or -1
 * after printing why not.
 */
int partition_locate(const char *name, int fd, unsigned int partno,
		     uint64_t *start_bytes, uint64_t *size_bytes);

#endif /* E2TRIM_PARTITION_H */
