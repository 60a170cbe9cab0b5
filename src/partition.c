// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * partition.c - find a partition inside a whole-disk image
 *
 * Image pipelines trim a Raspberry Pi or VM disk image as a whole file,
 * without root and so without loop devices.  libblkid reads the partition
 * table (MBR, GPT and the rest) exactly as util-linux tools do.
 */
#include <blkid.h>

#include "partition.h"

errcode_t partition_locate(struct e2trim *t, int fd, unsigned int partno,
			   uint64_t *start_bytes, uint64_t *size_bytes)
{
	blkid_probe pr = blkid_new_probe();
	blkid_partlist parts;
	blkid_partition par;
	errcode_t ret;

	if (!pr || blkid_probe_set_device(pr, fd, 0, 0)) {
		ret = lib_fail(t, E2TRIM_ERR_PARTITION_TABLE, NULL);
		goto done;
	}
	blkid_probe_enable_partitions(pr, 1);
	parts = blkid_probe_get_partitions(pr);
	if (!parts) {
		ret = lib_fail(t, E2TRIM_ERR_NO_PARTITION_TABLE, NULL);
		goto done;
	}
	par = blkid_partlist_get_partition_by_partno(parts, partno);
	if (!par) {
		ret = lib_fail(t, E2TRIM_ERR_NO_PARTITION,
			       "no partition %u (the table has %d)", partno,
			       blkid_partlist_numof_partitions(parts));
		goto done;
	}
	/* libblkid counts in 512-byte sectors whatever the table's unit */
	*start_bytes = (uint64_t)blkid_partition_get_start(par) * 512;
	*size_bytes = (uint64_t)blkid_partition_get_size(par) * 512;
	ret = 0;
done:
	if (pr)
		blkid_free_probe(pr);
	return ret;
}
