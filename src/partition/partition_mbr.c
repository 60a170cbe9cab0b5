// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * partition_mbr.c - an MBR and the EBR chains of its extended containers
 *
 * Read as the kernel's msdos partition parser reads them (and libblkid
 * alike), since the kernel's devices are what a guest or a host mounts:
 * primaries are partitions 1-4; each extended container holds a chain of
 * EBRs, each EBR a logical partition (numbered from 5 in chain order,
 * its start relative to the EBR) and a link to the next EBR (relative to
 * the container).  Every EBR is read through the part_reader, so a VM
 * image's chain is read from the image, not from a copy of its edges.
 * Each EBR's sector is an area of the table: a partition over it is
 * refused as one over the MBR is.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ext2fs/ext2fs.h>

#include "partition_int.h"
#include "partition_table.h"

#define MBR_SIZE	512
#define MBR_ENTRIES	446	/* four 16-byte entries */
#define MBR_SIG		510	/* 0x55 0xAA */
#define E_BOOT		0	/* 0x00 or 0x80 */
#define E_TYPE		4
#define E_START		8	/* u32 LE, sectors */
#define E_SIZE		12	/* u32 LE, sectors */
#define TYPE_GPT	0xEE
/* the kernel makes no more partitions than this (DISK_MAX_PARTS) */
#define MBR_MAX_PARTNO	255
/* a chain longer than this loops: the kernel gives up after 100 empty */
#define MBR_MAX_EBRS	1024

struct mbr_slot {
	unsigned char boot, type;
	uint64_t start, size;		/* sectors, relative */
};

static void slot_at(const unsigned char *sec, int i, struct mbr_slot *s)
{
	const unsigned char *e = sec + MBR_ENTRIES + 16 * i;
	uint32_t v;

	s->boot = e[E_BOOT];
	s->type = e[E_TYPE];
	memcpy(&v, e + E_START, 4);
	s->start = ext2fs_le32_to_cpu(v);
	memcpy(&v, e + E_SIZE, 4);
	s->size = ext2fs_le32_to_cpu(v);
}

static int is_extended(unsigned char type)
{
	return type == 0x05 || type == 0x0F || type == 0x85;
}

static int has_signature(const unsigned char *sec)
{
	return sec[MBR_SIG] == 0x55 && sec[MBR_SIG + 1] == 0xAA;
}

/*
 * A FAT or NTFS boot sector ends in 0x55AA too, without a table: its name
 * where the BPB puts it, and a BPB that makes sense (bytes per sector a
 * power of two from 512 to 4096, sectors per cluster a power of two), as
 * libblkid asks before it calls such a sector no table.
 */
static int is_boot_sector(const unsigned char *sec)
{
	unsigned int bps = sec[11] | sec[12] << 8, spc = sec[13];

	if (memcmp(sec + 3, "NTFS    ", 8) && memcmp(sec + 3, "EXFAT   ", 8) &&
	    memcmp(sec + 0x36, "FAT", 3) && memcmp(sec + 0x52, "FAT32", 5))
		return 0;
	if (!memcmp(sec + 3, "EXFAT   ", 8))
		return 1;	/* exFAT keeps no BPB there */
	return bps >= 512 && bps <= 4096 && !(bps & (bps - 1)) &&
	       spc && !(spc & (spc - 1));
}

errcode_t mbr_probe(const struct part_reader *rd, enum mbr_kind *kind)
{
	unsigned char sec[MBR_SIZE];
	struct mbr_slot s;
	errcode_t rc;
	int i, gpt = 0;

	*kind = MBR_NONE;
	rc = part_read(rd, sec, sizeof(sec), 0);
	if (rc == ENXIO)
		return 0;
	if (rc)
		return rc;
	if (!has_signature(sec) || is_boot_sector(sec))
		return 0;
	for (i = 0; i < 4; i++) {
		slot_at(sec, i, &s);
		/* the kernel's rule: any other boot flag is no table */
		if (s.boot != 0 && s.boot != 0x80)
			return 0;
		gpt |= s.type == TYPE_GPT;
	}
	*kind = gpt ? MBR_PROTECTIVE : MBR_DOS;
	return 0;
}

/* The growing list of entries: t->n used of *cap. */
static errcode_t add_entry(struct part_table *t, unsigned int *cap,
			   const struct part_entry *e)
{
	struct part_entry *p;

	if (t->n == *cap) {
		p = realloc(t->entries, (*cap ? *cap * 2 : 16) * sizeof(*p));
		if (!p)
			return ENOMEM;
		t->entries = p;
		*cap = *cap ? *cap * 2 : 16;
	}
	t->entries[t->n++] = *e;
	return 0;
}

static errcode_t add_span(struct part_table *t, unsigned int *cap,
			  unsigned int ss, uint64_t start, uint64_t size,
			  unsigned int partno, int what)
{
	struct part_entry e = { .partno = partno, .start_bytes = start * ss,
				.size_bytes = size * ss };

	e.extended = what == 'e';
	e.logical = what == 'l';
	e.table_area = what == 't' || what == 'x';
	e.ebr = what == 'x';
	return add_entry(t, cap, &e);
}

/*
 * The data entries of the EBR at @cur (@cur_size sectors, from the link
 * to it) inside the container [@first, @first + @first_size): as the
 * kernel, entries 3 and 4 count only if they stay inside both, since
 * old tools left garbage there.
 */
static errcode_t ebr_data(struct part_table *t, unsigned int *cap,
			  unsigned int ss, const unsigned char *sec,
			  uint64_t cur, uint64_t cur_size, uint64_t first,
			  uint64_t first_size, unsigned int *next)
{
	struct mbr_slot s;
	errcode_t rc;
	int i;

	for (i = 0; i < 4 && *next <= MBR_MAX_PARTNO; i++) {
		slot_at(sec, i, &s);
		if (!s.size || is_extended(s.type))
			continue;
		if (i >= 2 && (s.start + s.size > cur_size ||
			       cur + s.start + s.size > first + first_size))
			continue;
		rc = add_span(t, cap, ss, cur + s.start, s.size, (*next)++, 'l');
		if (rc)
			return rc;
	}
	return 0;
}

/* Follow the EBR chain of the container at @first (@size sectors). */
static errcode_t read_chain(const struct part_reader *rd,
			    struct part_table *t, unsigned int *cap,
			    uint64_t first, uint64_t size, unsigned int *next)
{
	unsigned int ss = rd->sector_size, hops, i;
	unsigned char *sec = malloc(ss);
	uint64_t cur = first, cur_size = size;
	struct mbr_slot s;
	errcode_t rc = 0;

	if (!sec)
		return ENOMEM;
	for (hops = 0; hops < MBR_MAX_EBRS && *next <= MBR_MAX_PARTNO; hops++) {
		rc = part_read(rd, sec, ss, cur * ss);
		/* the kernel stops quietly at an EBR past the end */
		if (rc == ENXIO || (!rc && !has_signature(sec))) {
			rc = 0;
			break;
		}
		if (!rc)
			rc = add_span(t, cap, ss, cur, 1, 0, 'x');
		if (!rc)
			rc = ebr_data(t, cap, ss, sec, cur, cur_size, first,
				      size, next);
		if (rc)
			break;
		/* the first extended entry links to the next EBR */
		for (i = 0; i < 4; i++) {
			slot_at(sec, i, &s);
			if (s.size && is_extended(s.type))
				break;
		}
		if (i == 4)
			break;
		cur = first + s.start;
		cur_size = s.size;
	}
	free(sec);
	return rc;
}

errcode_t mbr_read(const struct part_reader *rd, struct part_table *t)
{
	unsigned int ss = rd->sector_size, cap = 0, next = 5;
	unsigned char sec[MBR_SIZE];
	struct mbr_slot s;
	errcode_t rc;
	int i;

	t->n = 0;
	t->entries = NULL;
	rc = part_read(rd, sec, sizeof(sec), 0);
	if (!rc)
		rc = add_span(t, &cap, 1, 0, MBR_SIZE, 0, 't');
	for (i = 0; !rc && i < 4; i++) {
		slot_at(sec, i, &s);
		if (!s.size)
			continue;
		rc = add_span(t, &cap, ss, s.start, s.size, i + 1,
			      is_extended(s.type) ? 'e' : 'p');
	}
	/* each container's chain, in the order of the primaries */
	for (i = 0; !rc && i < 4; i++) {
		slot_at(sec, i, &s);
		if (s.size && is_extended(s.type))
			rc = read_chain(rd, t, &cap, s.start, s.size, &next);
	}
	return rc;
}
