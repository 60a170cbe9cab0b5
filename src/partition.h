/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * partition.h - find a partition inside a whole-disk image
 */
#ifndef E2TRIM_PARTITION_H
#define E2TRIM_PARTITION_H

#include <stdint.h>

#include "e2trim_int.h"

/*
 * Where partition @partno (1-based, as in /dev/sda1) of the MBR or GPT
 * table in @fd starts and how long it is, in bytes.  Returns 0, or the
 * refusal (E2TRIM_ERR_PARTITION_TABLE, _NO_PARTITION_TABLE,
 * _NO_PARTITION) with its particulars in @t.
 */
errcode_t partition_locate(struct e2trim *t, int fd, unsigned int partno,
			   uint64_t *start_bytes, uint64_t *size_bytes);

#endif /* E2TRIM_PARTITION_H */
