// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * partition.c - find a partition inside a whole-disk image
 *
 * Image pipelines trim a Raspberry Pi or VM disk image as a whole file,
 * without root and so without loop devices.  libblkid reads the partition
 * table (MBR, GPT and the rest) exactly as util-linux tools do.  Its
 * entries are claims, not facts: before one is believed the whole table
 * is checked (partition_table.c), a GPT's primary header too
 * (partition_gpt.c), and a filesystem at offset 0 under the table is
 * looked for.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <blkid.h>

#include "partition.h"
#include "partition_int.h"
#include "walk.h"

/* A table takes two extra entries for its own sectors (GPT: both ends). */
#define TABLE_AREAS 2

static void add_area(struct part_table *t, uint64_t start, uint64_t end)
{
	struct part_entry *e = &t->entries[t->n++];

	memset(e, 0, sizeof(*e));
	e->table_area = 1;
	e->start_bytes = start;
	e->size_bytes = end > start ? end - start : 0;
}

/*
 * The table's own sectors are not for any partition: the MBR (or the
 * GPT's protective MBR) in sector 0, and a GPT's headers and entry arrays
 * outside its usable LBAs.
 */
static void add_table_areas(struct part_table *t, unsigned int ss,
			    const struct gpt_state *gpt)
{
	const struct gpt_copy *g = &gpt->used;
	uint64_t alt;

	if (strcmp(t->type, "gpt")) {
		add_area(t, 0, 512);
		return;
	}
	add_area(t, 0, g->first_usable * ss);
	alt = g->lba == 1 ? g->alt_lba : g->lba;
	if (alt > g->last_usable)
		add_area(t, (g->last_usable + 1) * ss, (alt + 1) * ss);
}

static int alloc_entries(struct part_table *t, unsigned int n)
{
	t->n = 0;
	t->entries = calloc(n + TABLE_AREAS, sizeof(*t->entries));
	return t->entries ? 0 : -1;
}

/* libblkid's list as part entries; libblkid counts 512-byte sectors. */
static int read_entries(blkid_partlist ls, struct part_table *t)
{
	int i, n = blkid_partlist_numof_partitions(ls);

	if (alloc_entries(t, n > 0 ? n : 0))
		return -1;
	for (i = 0; i < n; i++) {
		blkid_partition par = blkid_partlist_get_partition(ls, i);
		struct part_entry *e = &t->entries[t->n];

		if (!par)
			continue;
		e->partno = blkid_partition_get_partno(par);
		e->start_bytes = (uint64_t)blkid_partition_get_start(par) * 512;
		e->size_bytes = (uint64_t)blkid_partition_get_size(par) * 512;
		e->extended = blkid_partition_is_extended(par) ? 1 : 0;
		e->logical = blkid_partition_is_logical(par) ? 1 : 0;
		t->n++;
	}
	return 0;
}

/*
 * A GPT's entries as e2trim read them itself: libblkid leaves out an
 * entry that reaches outside the usable LBAs (over the table, say), but
 * the kernel makes a device of it, and its filesystem lies there.
 */
static int gpt_entries(const struct gpt_state *gpt, unsigned int ss,
		       struct part_table *t)
{
	unsigned int i;

	if (alloc_entries(t, gpt->nentries))
		return -1;
	for (i = 0; i < gpt->nentries; i++) {
		const struct gpt_entry *g = &gpt->entries[i];
		struct part_entry *e = &t->entries[t->n++];

		e->partno = g->partno;
		e->start_bytes = g->first_lba * ss;
		e->size_bytes = g->last_lba >= g->first_lba ?
				(g->last_lba - g->first_lba + 1) * ss : 0;
	}
	return 0;
}

/* "2, 5, 6" (the partitions, not the table's own areas), or "none" */
static void list_partnos(const struct part_table *t, int logical_in,
			 const struct part_entry *container, char *buf,
			 size_t len)
{
	size_t used = 0;
	unsigned int i;

	snprintf(buf, len, "none");
	for (i = 0; i < t->n && used < len; i++) {
		const struct part_entry *e = &t->entries[i];

		if (e->table_area || (logical_in &&
		    (!e->logical || !range_inside(e->start_bytes, 1,
				container->start_bytes,
				container->start_bytes +
				container->size_bytes))))
			continue;
		used += snprintf(buf + used, len - used, "%s%u",
				 used ? ", " : "", e->partno);
	}
}

static const struct part_entry *find_partno(const struct part_table *t,
					    unsigned int partno)
{
	unsigned int i;

	for (i = 0; i < t->n; i++)
		if (!t->entries[i].table_area && t->entries[i].partno == partno)
			return &t->entries[i];
	return NULL;
}

/*
 * A GPT's primary header or entries damaged: libblkid went by the backup.
 * Go on only if the backup is whole, and say so.
 */
static errcode_t check_gpt(struct e2trim *et, int fd, unsigned int ss,
			   uint64_t disk_bytes, struct gpt_state *gpt)
{
	char detail[256];

	if (gpt_check(fd, ss, disk_bytes, gpt)) {
		snprintf(detail, sizeof(detail), "the primary GPT header is "
			 "damaged (%s) and so is the backup at the last LBA "
			 "(%s)", gpt->primary_why ? gpt->primary_why : "?",
			 gpt->backup_why ? gpt->backup_why : "?");
		return lib_fail(et, E2TRIM_ERR_PARTITION, "%s", detail);
	}
	if (gpt->primary_why)
		lib_warn(et, "the primary GPT header is damaged (%s); going "
			 "by the backup at LBA %" PRIu64 ", which is whole; "
			 "rewrite the table (fdisk) to repair it",
			 gpt->primary_why, gpt->used.lba);
	return 0;
}

/*
 * Which ext2/3/4 filesystem (libblkid's name) starts at @off_bytes, if
 * any: @size_bytes 0 means to the end of the image.
 */
static int ext_fs_at(int fd, uint64_t off_bytes, uint64_t size_bytes,
		     char *type, size_t len)
{
	static const char *const ext[] = { "ext2", "ext3", "ext4", "ext4dev",
					   NULL };
	blkid_probe pr = blkid_new_probe();
	const char *val = NULL;
	int found = 0;

	if (!pr)
		return 0;
	if (!blkid_probe_set_device(pr, fd, off_bytes, size_bytes)) {
		blkid_probe_enable_partitions(pr, 0);
		blkid_probe_enable_superblocks(pr, 1);
		blkid_probe_filter_superblocks_type(pr, BLKID_FLTR_ONLYIN,
						    (char **)ext);
		found = blkid_do_safeprobe(pr) == 0 &&
			!blkid_probe_lookup_value(pr, "TYPE", &val, NULL);
		if (found)
			snprintf(type, len, "%s", val);
	}
	blkid_free_probe(pr);
	return found;
}

/*
 * An ext2/3/4 superblock at offset 0 as well as a table: one of them is
 * stale, and the filesystem at 0 would be the one spanning the disk.
 */
static int fs_at_offset_zero(int fd, char *type, size_t len)
{
	return ext_fs_at(fd, 0, 0, type, len);
}

/* The table is believed; is @partno in it, and a place for a filesystem? */
static errcode_t select_partition(struct e2trim *et, const struct part_table *t,
				  unsigned int partno, const struct part_entry **out)
{
	const struct part_entry *e = find_partno(t, partno);
	char nums[128], detail[320];

	if (!e) {
		list_partnos(t, 0, NULL, nums, sizeof(nums));
		return lib_fail(et, E2TRIM_ERR_NO_PARTITION, "no partition %u "
				"(the %s table has: %s)", partno, t->type,
				nums);
	}
	if (e->extended) {
		list_partnos(t, 1, e, nums, sizeof(nums));
		snprintf(detail, sizeof(detail), "partition %u is an MBR "
			 "extended container, not a filesystem; its logical "
			 "partitions: %s", partno, nums);
		return lib_fail(et, E2TRIM_ERR_PARTITION, "%s", detail);
	}
	*out = e;
	return 0;
}

/*
 * Sector 0 holds a protective MBR (type 0xEE) when a GPT follows.  With
 * both GPT headers damaged libblkid finds no table at all; say why.
 */
static int has_pmbr(int fd)
{
	unsigned char mbr[512];
	int i;

	if (pread(fd, mbr, sizeof(mbr), 0) != (ssize_t)sizeof(mbr) ||
	    mbr[510] != 0x55 || mbr[511] != 0xAA)
		return 0;
	for (i = 0; i < 4; i++)
		if (mbr[446 + 16 * i + 4] == 0xEE)
			return 1;
	return 0;
}

static errcode_t check_table(struct e2trim *et, int fd, blkid_probe pr,
			     blkid_partlist ls, struct part_table *t)
{
	struct part_problem prob;
	struct gpt_state gpt;
	char detail[320], fstype[16];
	unsigned int ss = blkid_probe_get_sectorsize(pr);
	uint64_t disk_bytes = blkid_probe_get_size(pr);
	errcode_t ret;
	int is_gpt = !strcmp(t->type, "gpt");

	if (!ss)
		ss = 512;
	memset(&gpt, 0, sizeof(gpt));
	ret = is_gpt ? check_gpt(et, fd, ss, disk_bytes, &gpt) : 0;
	if (!ret &&
	    (is_gpt ? gpt_entries(&gpt, ss, t) : read_entries(ls, t))) {
		ret = lib_fail(et, E2TRIM_ERR_NO_MEMORY, NULL);
	}
	if (!ret)
		add_table_areas(t, ss, &gpt);
	gpt_free(&gpt);
	if (ret)
		return ret;
	if (part_table_check(t, &prob)) {
		part_problem_describe(&prob, detail, sizeof(detail));
		return lib_fail(et, E2TRIM_ERR_PARTITION, "%s", detail);
	}
	if (fs_at_offset_zero(fd, fstype, sizeof(fstype))) {
		snprintf(detail, sizeof(detail), "an %s filesystem starts at "
			 "byte 0, under the %s table; one of them is stale, "
			 "and without -p e2trim would trim that filesystem",
			 fstype, t->type);
		return lib_fail(et, E2TRIM_ERR_PARTITION, "%s", detail);
	}
	return 0;
}

/* No table libblkid could read: a GPT whose both copies are damaged? */
static errcode_t no_table(struct e2trim *et, int fd, blkid_probe pr)
{
	struct gpt_state gpt;
	unsigned int ss = blkid_probe_get_sectorsize(pr);
	errcode_t ret;

	if (has_pmbr(fd)) {
		memset(&gpt, 0, sizeof(gpt));
		ret = check_gpt(et, fd, ss ? ss : 512,
				blkid_probe_get_size(pr), &gpt);
		gpt_free(&gpt);
		if (ret)
			return ret;
	}
	return lib_fail(et, E2TRIM_ERR_NO_PARTITION_TABLE, NULL);
}

/* libblkid's name lives only as long as its probe: ours outlives it */
static const char *table_type(const char *name)
{
	static const char *const known[] = { "dos", "gpt", "sun", "sgi",
		"bsd", "mac", "atari", "solaris", "unixware", "minix",
		"ultrix", "aix", NULL };
	unsigned int i;

	for (i = 0; known[i]; i++)
		if (name && !strcmp(name, known[i]))
			return known[i];
	return "unknown";
}

/*
 * The table in @fd, read by libblkid and checked whole (t->entries is
 * malloc'd, also on failure).
 */
static errcode_t read_table(struct e2trim *et, int fd, struct part_table *t)
{
	blkid_probe pr = blkid_new_probe();
	blkid_parttable tab;
	blkid_partlist ls;
	errcode_t ret;

	if (!pr || blkid_probe_set_device(pr, fd, 0, 0)) {
		ret = lib_fail(et, E2TRIM_ERR_PARTITION_TABLE, NULL);
		goto done;
	}
	blkid_probe_enable_partitions(pr, 1);
	ls = blkid_probe_get_partitions(pr);
	tab = ls ? blkid_partlist_get_table(ls) : NULL;
	if (!tab) {
		ret = no_table(et, fd, pr);
		goto done;
	}
	t->type = table_type(blkid_parttable_get_type(tab));
	ret = check_table(et, fd, pr, ls, t);
done:
	if (pr)
		blkid_free_probe(pr);
	return ret;
}

errcode_t partition_locate(struct e2trim *et, int fd, unsigned int partno,
			   uint64_t *start_bytes, uint64_t *size_bytes)
{
	struct part_table t = { .type = "" };
	const struct part_entry *e = NULL;
	errcode_t ret;

	ret = read_table(et, fd, &t);
	if (!ret)
		ret = select_partition(et, &t, partno, &e);
	if (!ret) {
		*start_bytes = e->start_bytes;
		*size_bytes = e->size_bytes;
	}
	free(t.entries);
	return ret;
}

errcode_t partition_list(struct e2trim *et, int fd,
			 struct e2trim_partition **out, unsigned int *n)
{
	struct part_table t = { .type = "" };
	struct e2trim_partition *p;
	unsigned int i;
	errcode_t ret;

	*out = NULL;
	*n = 0;
	ret = read_table(et, fd, &t);
	if (ret)
		goto done;
	p = calloc(t.n ? t.n : 1, sizeof(*p));
	if (!p) {
		ret = lib_fail(et, E2TRIM_ERR_NO_MEMORY, NULL);
		goto done;
	}
	for (i = 0; i < t.n; i++) {
		const struct part_entry *e = &t.entries[i];
		struct e2trim_partition *q = &p[*n];

		/* a container holds partitions, not a filesystem */
		if (e->table_area || e->extended)
			continue;
		q->partno = e->partno;
		q->start_bytes = e->start_bytes;
		q->size_bytes = e->size_bytes;
		if (!e->size_bytes ||
		    !ext_fs_at(fd, e->start_bytes, e->size_bytes, q->fs_type,
			       sizeof(q->fs_type)))
			q->fs_type[0] = '\0';
		(*n)++;
	}
	*out = p;
done:
	free(t.entries);
	return ret;
}

errcode_t partition_whole_disk(struct e2trim *et, int fd)
{
	struct e2trim_partition *p;
	char list[256], fstype[16];
	size_t used = 0;
	unsigned int i, n, next = 0;

	if (fs_at_offset_zero(fd, fstype, sizeof(fstype)) ||
	    partition_list(et, fd, &p, &n))
		return 0;
	list[0] = '\0';
	for (i = 0; i < n; i++) {
		if (!p[i].fs_type[0] || used >= sizeof(list))
			continue;
		used += snprintf(list + used, sizeof(list) - used, "%s%u (%s)",
				 used ? ", " : "", p[i].partno, p[i].fs_type);
		next++;
	}
	free(p);
	if (!next)
		return 0;
	return lib_fail(et, E2TRIM_ERR_WHOLE_DISK, "its ext partition%s: %s",
			next == 1 ? "" : "s", list);
}
