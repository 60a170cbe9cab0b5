// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * partition.c - find a partition inside a whole-disk image
 *
 * Image pipelines trim a Raspberry Pi or VM disk image as a whole file,
 * without root and so without loop devices.  An MBR with its EBR chains
 * (partition_mbr.c) and a GPT (partition_gpt.c) are read by e2trim
 * itself, through the part_reader, so that a VM image's table is read
 * from the image through NBD exactly as a raw one's; libblkid reads only
 * the rarer tables (sun, bsd, ...).  The entries are claims, not facts:
 * before one is believed the whole table is checked (partition_table.c),
 * and a filesystem at offset 0 under the table is looked for.  An image
 * file does not say which sector size its disk had: a GPT not found at
 * 512-byte LBAs is looked for at 4096 (a 4Kn disk's header is at byte
 * 4096, its protective MBR at 0 as on any disk); a device's tables are
 * read at its logical sector size only, as the kernel reads them.  (An
 * MBR's LBAs are read at 512 bytes in an image file: nothing in it says
 * otherwise.)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
 * A GPT's own sectors are not for any partition: the protective MBR, its
 * headers and entry arrays outside its usable LBAs.  (An MBR's and its
 * EBRs' sectors come from partition_mbr.c.)
 */
static void add_gpt_areas(struct part_table *t, unsigned int ss,
			    const struct gpt_state *gpt)
{
	const struct gpt_copy *g = &gpt->used;
	uint64_t alt;

	add_area(t, 0, g->first_usable * ss);
	alt = g->lba == 1 ? g->alt_lba : g->lba;
	if (alt > g->last_usable)
		add_area(t, (g->last_usable + 1) * ss, (alt + 1) * ss);
}

static errcode_t alloc_entries(struct part_table *t, unsigned int n)
{
	t->n = 0;
	t->entries = calloc(n + TABLE_AREAS, sizeof(*t->entries));
	return t->entries ? 0 : ENOMEM;
}

/*
 * libblkid's list of a rarer table as part entries (libblkid counts
 * 512-byte sectors), and sector 0 as the table's.
 */
static errcode_t read_entries(blkid_partlist ls, struct part_table *t)
{
	int i, n = blkid_partlist_numof_partitions(ls);

	if (alloc_entries(t, n > 0 ? n : 0))
		return ENOMEM;
	add_area(t, 0, 512);
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
static errcode_t gpt_entries(const struct gpt_state *gpt, unsigned int ss,
			     struct part_table *t)
{
	unsigned int i;

	if (alloc_entries(t, gpt->nentries))
		return ENOMEM;
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
 * The other sector size a GPT may have been written for: an image file
 * of a 4Kn disk has its header at byte 4096 (LBA 1 of 4096 bytes), not
 * at 512, while its protective MBR is at byte 0 for both.  A device's
 * logical sector size is the only one (0: none to try).
 */
static unsigned int other_sector_size(const struct part_reader *rd)
{
	if (rd->sector_fixed)
		return 0;
	return rd->sector_size == 4096 ? 512 : 4096;
}

/*
 * A GPT's primary header or entries damaged: gpt_check() went by the backup.
 * Go on only if the backup is whole, and say so.  Not found at all at
 * the reader's sector size, the GPT of an image file is looked for at the
 * other one; *@ss says which one it was read at.
 */
static errcode_t check_gpt(struct e2trim *et, const struct part_reader *rd,
			   struct gpt_state *gpt, unsigned int *ss)
{
	struct part_reader other = *rd;
	struct gpt_state alt;
	char detail[256];
	errcode_t bad = gpt_check(rd, gpt);

	*ss = rd->sector_size;
	other.sector_size = other_sector_size(rd);
	if (bad && other.sector_size) {
		if (!gpt_check(&other, &alt)) {
			gpt_free(gpt);
			*gpt = alt;
			*ss = other.sector_size;
			bad = 0;
		} else {
			gpt_free(&alt);
		}
	}
	if (bad) {
		/* neither copy whole at either size: the reader's size speaks */
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
 * An ext2/3/4 superblock at offset 0 as well as a table: one of them is
 * stale, and the filesystem at 0 would be the one spanning the disk.
 */
static int fs_at_offset_zero(const struct part_reader *rd, char *type,
			     size_t len)
{
	return part_ext_at(rd, 0, 0, type, len);
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
		lib_fail(et, E2TRIM_ERR_PARTITION, "%s", detail);
		/*
		 * the number is what is wrong, not the table: "fix the
		 * table" would send the person to mend what may be whole.
		 * Which logical partition is theirs to say: no backquotes.
		 */
		lib_fix(et, E2TRIM_ERR_PARTITION, "a container holds "
			"partitions, not a filesystem: give -p with one of its "
			"logical partitions (%s) instead", nums);
		return E2TRIM_ERR_PARTITION;
	}
	*out = e;
	return 0;
}

/* A GPT, checked both copies; its entries and its own sectors into @t. */
static errcode_t gpt_table(struct e2trim *et, const struct part_reader *rd,
			   struct part_table *t)
{
	struct gpt_state gpt;
	unsigned int ss;
	errcode_t ret;

	t->type = "gpt";
	ret = check_gpt(et, rd, &gpt, &ss);
	if (!ret && gpt_entries(&gpt, ss, t))
		ret = lib_fail(et, E2TRIM_ERR_NO_MEMORY, NULL);
	if (!ret)
		add_gpt_areas(t, ss, &gpt);
	gpt_free(&gpt);
	return ret;
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
 * No MBR and no GPT: a rarer table libblkid reads (from rd->blkid_fd)?
 * An MBR or GPT only libblkid would see is no table: those are e2trim's
 * to read.
 */
static errcode_t other_table(struct e2trim *et, const struct part_reader *rd,
			     struct part_table *t)
{
	blkid_probe pr = rd->blkid_fd >= 0 ? blkid_new_probe() : NULL;
	blkid_parttable tab = NULL;
	blkid_partlist ls = NULL;
	errcode_t ret = E2TRIM_ERR_NO_PARTITION_TABLE;

	if (pr && !blkid_probe_set_device(pr, rd->blkid_fd, 0, 0)) {
		blkid_probe_enable_partitions(pr, 1);
		ls = blkid_probe_get_partitions(pr);
		tab = ls ? blkid_partlist_get_table(ls) : NULL;
	}
	if (tab) {
		t->type = table_type(blkid_parttable_get_type(tab));
		if (strcmp(t->type, "dos") && strcmp(t->type, "gpt"))
			ret = read_entries(ls, t) ? E2TRIM_ERR_NO_MEMORY : 0;
	}
	if (pr)
		blkid_free_probe(pr);
	return ret ? lib_fail(et, ret, NULL) : 0;
}

/*
 * The table that @rd reads, checked whole (t->entries is malloc'd, also
 * on failure).
 */
static errcode_t read_table_only(struct e2trim *et,
				 const struct part_reader *rd,
				 struct part_table *t)
{
	struct part_problem prob;
	char detail[320];
	enum mbr_kind kind;
	errcode_t ret, rc = mbr_probe(rd, &kind);

	if (rc)
		return lib_fail_cause(et, E2TRIM_ERR_PARTITION_TABLE, rc, NULL);
	if (kind == MBR_PROTECTIVE) {
		ret = gpt_table(et, rd, t);
	} else if (kind == MBR_DOS) {
		t->type = "dos";
		rc = mbr_read(rd, t);
		ret = rc == ENOMEM ? lib_fail(et, E2TRIM_ERR_NO_MEMORY, NULL) :
		      rc ? lib_fail_cause(et, E2TRIM_ERR_PARTITION_TABLE, rc,
					  NULL) : 0;
	} else {
		ret = other_table(et, rd, t);
	}
	if (ret)
		return ret;
	if (part_table_check(t, &prob)) {
		part_problem_describe(&prob, detail, sizeof(detail));
		return lib_fail(et, E2TRIM_ERR_PARTITION, "%s", detail);
	}
	return 0;
}

/* read_table_only(), and no filesystem at offset 0 under the table */
static errcode_t read_table(struct e2trim *et, const struct part_reader *rd,
			    struct part_table *t)
{
	char detail[320], fstype[16];
	errcode_t ret = read_table_only(et, rd, t);

	if (ret)
		return ret;
	if (fs_at_offset_zero(rd, fstype, sizeof(fstype))) {
		snprintf(detail, sizeof(detail), "an %s filesystem starts at "
			 "byte 0, under the %s table; one of them is stale, "
			 "and without -p e2trim would trim that filesystem",
			 fstype, t->type);
		return lib_fail(et, E2TRIM_ERR_PARTITION, "%s", detail);
	}
	return 0;
}

errcode_t partition_locate(struct e2trim *et, const struct part_reader *rd,
			   unsigned int partno,
			   uint64_t *start_bytes, uint64_t *size_bytes)
{
	struct part_table t = { .type = "" };
	const struct part_entry *e = NULL;
	errcode_t ret;

	ret = read_table(et, rd, &t);
	if (!ret)
		ret = select_partition(et, &t, partno, &e);
	if (!ret) {
		*start_bytes = e->start_bytes;
		*size_bytes = e->size_bytes;
	}
	free(t.entries);
	return ret;
}

errcode_t partition_list(struct e2trim *et, const struct part_reader *rd,
			 struct e2trim_partition **out, unsigned int *n)
{
	struct part_table t = { .type = "" };
	struct e2trim_partition *p;
	unsigned int i;
	errcode_t ret;

	*out = NULL;
	*n = 0;
	ret = read_table(et, rd, &t);
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
		q->struct_size = sizeof(*q);
		q->partno = e->partno;
		q->start_bytes = e->start_bytes;
		q->size_bytes = e->size_bytes;
		if (!e->size_bytes ||
		    !part_ext_at(rd, e->start_bytes, e->size_bytes,
				 q->fs_type, sizeof(q->fs_type)))
			q->fs_type[0] = '\0';
		(*n)++;
	}
	*out = p;
done:
	free(t.entries);
	return ret;
}

errcode_t partition_whole_disk(struct e2trim *et,
			       const struct part_reader *rd)
{
	struct e2trim_partition *p;
	char list[256], fstype[16];
	size_t used = 0;
	unsigned int i, n, next = 0;

	if (fs_at_offset_zero(rd, fstype, sizeof(fstype)) ||
	    partition_list(et, rd, &p, &n))
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

/* An entry that holds data: no table area, no extended container. */
static int holds_data(const struct part_entry *e)
{
	return !e->table_area && !e->extended && e->size_bytes;
}

errcode_t partition_stale_zero(struct e2trim *et, const struct part_reader *rd)
{
	struct part_table t = { .type = "" };
	char fstype[16], nums[128];
	errcode_t ret = 0;
	unsigned int i;

	if (!fs_at_offset_zero(rd, fstype, sizeof(fstype)))
		return 0;
	/* no table, or one that cannot be read whole: nothing to weigh */
	if (!read_table_only(et, rd, &t)) {
		for (i = 0; i < t.n && !holds_data(&t.entries[i]); i++)
			;
		if (i < t.n) {
			list_partnos(&t, 0, NULL, nums, sizeof(nums));
			ret = lib_fail(et, E2TRIM_ERR_PARTITION, "an %s "
				       "filesystem starts at byte 0, beside a "
				       "%s table with partitions %s: one of "
				       "them is stale, and they overlap",
				       fstype, t.type, nums);
			/*
			 * the table may well be right: not the table's "fix
			 * the table", and a person's choice (no backquotes)
			 */
			lib_fix(et, ret, "give -p N to trim a partition, or "
				"erase the stale one with wipefs (wipefs IMAGE "
				"lists both)");
		}
	}
	free(t.entries);
	return ret;
}

errcode_t partition_bound_at(struct e2trim *et, const struct part_reader *rd,
			     uint64_t start, struct part_bound *b)
{
	struct part_table t = { .type = "" };
	const struct part_entry *e;
	uint64_t next = UINT64_MAX;
	unsigned int i;
	errcode_t ret;

	memset(b, 0, sizeof(*b));
	ret = read_table_only(et, rd, &t);
	if (ret) {
		free(t.entries);
		/*
		 * no table: nothing bounds the filesystem but the image.  A
		 * table that cannot be read whole would leave it bounded by
		 * nothing, free to run over the next partition: refused.
		 */
		return ret == E2TRIM_ERR_NO_PARTITION_TABLE ? 0 : ret;
	}
	b->table = t.type;
	for (i = 0; i < t.n; i++) {
		e = &t.entries[i];
		if (!holds_data(e))
			continue;
		if (start >= e->start_bytes &&
		    start - e->start_bytes < e->size_bytes &&
		    (!b->partno || e->logical)) {
			b->partno = e->partno;
			b->part_start = e->start_bytes;
			b->end = e->start_bytes + e->size_bytes;
		} else if (e->start_bytes > start && e->start_bytes < next) {
			next = e->start_bytes;
		}
	}
	/* in no partition: up to the next one */
	if (!b->partno && next != UINT64_MAX)
		b->end = next;
	free(t.entries);
	return 0;
}
