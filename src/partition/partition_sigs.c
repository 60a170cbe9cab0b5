// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * partition_sigs.c - every other signature at the filesystem's bytes
 *
 * An ext2/3/4 superblock says nothing of what else claims the same
 * bytes.  A disk that held a whole-disk ext4 and became an LVM physical
 * volume, a RAID member, a LUKS container or another filesystem keeps
 * the old superblock at byte 1024 as long as nobody wiped it: pvcreate
 * writes only sector 1, mdadm its superblock at 4 KiB or at the end,
 * cryptsetup its header at byte 0.  libext2fs opens that stale ext4 as
 * if it were the disk's, and its "free" blocks are the LV's or the
 * array's data.  So libblkid is asked for every signature it knows in
 * the target's bytes, as wipefs lists them (blkid_do_probe() in a loop,
 * superblocks and partition tables, bad checksums too), and an ext
 * superblock that shares its bytes with any other claimant is refused:
 * which one is stale is a person's call.  MBR and GPT are not counted
 * here: partition.c reads those itself and weighs them (a table beside
 * a superblock at byte 0 with partitions that hold data is refused
 * there, an empty one is harmless).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <blkid.h>

#include "partition.h"

/*
 * MBR and GPT are partition.c's to weigh; ext is the filesystem itself;
 * libblkid's atari prober guesses from entries that merely look
 * plausible (it has no magic), and is not believed
 */
static int ours(const char *type)
{
	static const char *const mine[] = { "ext2", "ext3", "ext4",
		"ext4dev", "dos", "gpt", "PMBR", "atari", NULL };
	unsigned int i;

	for (i = 0; mine[i]; i++)
		if (!strcmp(type, mine[i]))
			return 1;
	return 0;
}

/* The value of @name in the probe's current result, or NULL. */
static const char *value(blkid_probe pr, const char *name)
{
	const char *v = NULL;

	if (blkid_probe_lookup_value(pr, name, &v, NULL))
		return NULL;
	return v;
}

/*
 * The byte libblkid found the current result's magic at, from the start
 * of the probed range: superblocks say SBMAGIC_OFFSET, tables
 * PTMAGIC_OFFSET.  -1 when it says neither.
 */
static long long magic_offset(blkid_probe pr)
{
	const char *off = value(pr, "SBMAGIC_OFFSET");

	if (!off)
		off = value(pr, "PTMAGIC_OFFSET");
	return off ? strtoll(off, NULL, 10) : -1;
}

/* A probe of every signature libblkid knows, as wipefs sets it up. */
static blkid_probe new_probe(int fd, uint64_t off, uint64_t len)
{
	blkid_probe pr = blkid_new_probe();

	if (!pr)
		return NULL;
	if (blkid_probe_set_device(pr, fd, (blkid_loff_t)off,
				   (blkid_loff_t)len)) {
		blkid_free_probe(pr);
		return NULL;
	}
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE |
					  BLKID_SUBLKS_MAGIC |
					  BLKID_SUBLKS_BADCSUM);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
	return pr;
}

errcode_t partition_foreign_sigs(struct e2trim *et, int fd, uint64_t off,
				 uint64_t len)
{
	char found[256] = "", ext[16] = "";
	blkid_probe pr = new_probe(fd, off, len);
	size_t used = 0;
	const char *type;
	long long at;
	errcode_t ret;

	/* libblkid cannot look: the gates after it still run */
	if (!pr)
		return 0;
	while (blkid_do_probe(pr) == 0) {
		type = value(pr, "TYPE");
		if (!type)
			type = value(pr, "PTTYPE");
		if (!type)
			continue;
		at = magic_offset(pr);
		if (!strncmp(type, "ext", 3) && ours(type)) {
			snprintf(ext, sizeof(ext), "%s", type);
			continue;
		}
		if (ours(type) || used >= sizeof(found))
			continue;
		used += snprintf(found + used, sizeof(found) - used,
				 at >= 0 ? "%s%s at byte %lld" : "%s%s",
				 used ? ", " : "", type, at);
	}
	blkid_free_probe(pr);
	/* no ext superblock libblkid believes: the open says what it is */
	if (!ext[0] || !found[0])
		return 0;
	ret = lib_fail(et, E2TRIM_ERR_SIGNATURE, "its %s superblock shares "
		       "its bytes with what libblkid finds there too: %s (from "
		       "the filesystem's first byte); one of them is stale",
		       ext, found);
	/*
	 * which one is stale only a person can tell (an LV's or an array's
	 * data may be what the other holds): no backquoted command
	 */
	lib_fix(et, ret, "find out which one is in use (wipefs lists them "
		"all; pvs, mdadm --examine, cryptsetup luksDump tell who uses "
		"theirs), then erase the stale one with wipefs, or trim the "
		"device built on the other (an LV, an md array, an open LUKS "
		"device) instead");
	return ret;
}
