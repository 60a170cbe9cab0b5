/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * partition_int.h - what partition.c shares with its readers,
 *                   partition_gpt.c and partition_mbr.c
 */
#ifndef E2TRIM_PARTITION_INT_H
#define E2TRIM_PARTITION_INT_H

#include <stdint.h>

#include "partition_read.h"
#include "partition_table.h"

/* One GPT header that was found whole, in LBAs. */
struct gpt_copy {
	uint64_t lba;		/* 1 for the primary, else the backup's */
	uint64_t alt_lba;	/* where it says the other copy is */
	uint64_t first_usable;	/* partitions may use [first, last] */
	uint64_t last_usable;
};

/* A used entry (its type GUID is not all zeroes), in LBAs. */
struct gpt_entry {
	unsigned int partno;	/* index in the array + 1, as the kernel counts */
	uint64_t first_lba;
	uint64_t last_lba;	/* inclusive */
};

struct gpt_state {
	struct gpt_copy used;	/* the copy to go by */
	struct gpt_entry *entries;	/* its used entries, malloc'd */
	unsigned int nentries;
	const char *primary_why;	/* what is wrong with the primary, or NULL */
	const char *backup_why;	/* with the backup (looked at only then) */
};

/*
 * Check the primary GPT header and its entry array (rd->sector_size);
 * if it is damaged, the backup at the disk's last LBA.  Returns 0 with
 * st->used set to the first whole copy and st->entries to its used
 * entries (every one, even those libblkid leaves out because they lie
 * outside the usable LBAs: the kernel makes devices of them), or
 * E2TRIM_ERR_PARTITION when neither is whole (st->primary_why and
 * st->backup_why say why).  gpt_free() releases st->entries.
 */
errcode_t gpt_check(const struct part_reader *rd, struct gpt_state *st);

void gpt_free(struct gpt_state *st);

enum mbr_kind {
	MBR_NONE = 0,		/* no 0x55AA, a FAT/NTFS boot sector, bad flags */
	MBR_DOS,		/* an MBR partition table */
	MBR_PROTECTIVE,		/* a GPT's protective MBR (type 0xEE) */
};

/*
 * What sector 0 holds, into *@kind; 0, or the errno value of a read that
 * failed.
 */
errcode_t mbr_probe(const struct part_reader *rd, enum mbr_kind *kind);

/*
 * The MBR's entries in @t (t->entries malloc'd, also on failure): the
 * primaries, the extended containers' logical partitions from their EBR
 * chains, and the MBR's and each EBR's sector as table areas.  0 or an
 * errno value (ENOMEM too).
 */
errcode_t mbr_read(const struct part_reader *rd, struct part_table *t);

#endif /* E2TRIM_PARTITION_INT_H */
