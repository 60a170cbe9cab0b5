// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fix.c - the fix a message names, spelled for the target in hand
 *
 * The table (e2trim_err.et) words each fix once for every target: "run
 * e2fsck -f first".  Followed to the letter that is wrong as often as
 * right: `e2fsck -f disk.img` checks a whole disk when the filesystem is
 * its second partition, and e2fsck cannot read a qcow2 at all.  So where
 * the handle knows its target, the message carries the command that works
 * on it, between backquotes (the convention scripts read, src/README.md):
 * "run e2fsck -f first: `e2fsck -fy 'disk.img?offset=34603008'`".  A fix
 * that needs a person's decision first is written without backquotes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "e2trim_int.h"

/* Characters a shell takes as they are: no quotes needed. */
static int shell_plain(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789_/.,:+=@%-", *s))
			return 0;
	return 1;
}

const char *lib_shell_quote(const char *s, char *buf, size_t len)
{
	size_t n = 0;

	if (!len)
		return "";
	if (shell_plain(s)) {
		snprintf(buf, len, "%s", s);
		return buf;
	}
	/* 'it'\''s': a quote closes, an escaped one, and it opens again */
	buf[n++] = '\'';
	for (; *s && n + 5 < len; s++) {
		if (*s == '\'') {
			memcpy(buf + n, "'\\''", 4);
			n += 4;
		} else {
			buf[n++] = *s;
		}
	}
	buf[n++] = '\'';
	buf[n] = '\0';
	return buf;
}

void lib_fix(struct e2trim *t, errcode_t code, const char *fmt, ...)
{
	va_list ap;

	t->fix_code = code;

	va_start(ap, fmt);
	vsnprintf(t->fix, sizeof(t->fix), fmt, ap);
	va_end(ap);
}

/*
 * A name holding a control byte: messages show it as \xHH (errors.c), so
 * no command with it in could be copied from one and run as it stands.
 */
static int has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

/*
 * The name e2fsck reads this filesystem by, shell-quoted: the path as
 * given, "path?offset=N" (libext2fs's spelling, which e2fsck takes) for
 * a partition or an offset into an image.  0 when e2fsck cannot read it
 * at all (a VM image, an NBD URI, an RBD image), or when the name holds
 * a control byte.
 */
int lib_fsck_name(const struct e2trim *t, char *buf, size_t len)
{
	char name[DETAIL_LEN / 2];

	/* "./-x.img": e2fsck -fy -n.img would take the name for -n */
	const char *dot;

	if (!t || !t->path || t->nbd || t->rbd || has_control(t->path))
		return 0;
	dot = t->path[0] == '-' ? "./" : "";
	if (t->offset_bytes)
		snprintf(name, sizeof(name), "%s%s?offset=%llu", dot, t->path,
			 (unsigned long long)t->offset_bytes);
	else
		snprintf(name, sizeof(name), "%s%s", dot, t->path);
	lib_shell_quote(name, buf, len);
	return 1;
}

/*
 * e2fsck replays a journal, then opens the filesystem again without the
 * "?offset=" it was given (e2fsprogs 1.47's e2fsck_run_ext3_journal()
 * calls ext2fs_open(), not ext2fs_open2() with ctx->io_options): "while
 * trying to re-open", exit 12, and the journal still flagged.  Inside an
 * image it can replay only through a loop device over the partition.
 */
static const char *spelled_replay(const struct e2trim *t, const char *table,
				  char *buf, size_t len)
{
	char path[DETAIL_LEN / 2], name[DETAIL_LEN / 2];

	/* "./-x.img": losetup would take the name for an option */
	snprintf(name, sizeof(name), "%s%s", t->path[0] == '-' ? "./" : "",
		 t->path);
	lib_shell_quote(name, path, sizeof(path));
	snprintf(buf, len, "%s through a loop device (e2fsck cannot replay "
		 "a journal at an ?offset=): `l=$(losetup -f --show -o %llu "
		 "--sizelimit %llu %s) && { e2fsck -fy \"$l\"; losetup -d "
		 "\"$l\"; }`", table, (unsigned long long)t->offset_bytes,
		 (unsigned long long)t->size_bytes, path);
	return buf;
}

/* A VM image opened through qemu-nbd (not an NBD URI, not RBD). */
static int vm_image(const struct e2trim *t)
{
	return t->nbd && !t->rbd && strcmp(t->res.image_format, "nbd");
}

/*
 * The e2trim command that checks this filesystem, then trims it:
 * "e2trim --fsck=force -p 2 disk.img".  Its --fsck shows e2fsck a loop
 * device bounded by the partition's table entry (where a journal can be
 * replayed, as at "?offset=" it cannot) and a VM image's content through
 * qemu-nbd (src/cli/fsck_vm.c).  A journal or orphans need e2fsck -p
 * only; the rest the "-f" the table asks for.
 */
static const char *spelled_e2trim(const struct e2trim *t, errcode_t code,
				  const char *table, char *buf, size_t len)
{
	char name[DETAIL_LEN / 2], quoted[DETAIL_LEN / 2], fmt[64] = "";
	char part[32] = "";
	int plain = code == E2TRIM_ERR_JOURNAL || code == E2TRIM_ERR_ORPHANS;

	/* "./-x.img": a name is never taken for an option */
	snprintf(name, sizeof(name), "%s%s", t->path[0] == '-' ? "./" : "",
		 t->path);
	if (t->opt.partition)
		snprintf(part, sizeof(part), " -p %u", t->opt.partition);
	else if (t->opt.offset_bytes)
		snprintf(name + strlen(name), sizeof(name) - strlen(name),
			 "?offset=%llu",
			 (unsigned long long)t->opt.offset_bytes);
	if (t->opt.format)
		snprintf(fmt, sizeof(fmt), " --format %.40s", t->opt.format);
	lib_shell_quote(name, quoted, sizeof(quoted));
	snprintf(buf, len, "%s (e2trim runs it %s, then trims): `e2trim %s%s%s "
		 "%s`", table, vm_image(t) ? "through qemu-nbd" :
		 "on a loop device bounded by the partition",
		 plain ? "--fsck" : "--fsck=force", fmt, part, quoted);
	return buf;
}

/*
 * Which fixes e2trim --fsck spells: every one on a VM image (nothing else
 * reads it); on a partition those e2fsck -p repairs for sure (a journal,
 * orphans, an unclean state), where "?offset=" cannot replay a journal.
 * The rest keep "e2fsck -fy path?offset=N": -y repairs what -p leaves.
 */
static int by_e2trim(const struct e2trim *t, errcode_t code)
{
	if (!t->path || t->rbd || (t->nbd && !vm_image(t)))
		return 0;
	if (vm_image(t))
		return 1;
	return t->opt.partition && (code == E2TRIM_ERR_JOURNAL ||
				    code == E2TRIM_ERR_ORPHANS ||
				    code == E2TRIM_ERR_NOT_CLEAN);
}

/* The table's fix spelled for @t into @buf; @table if nothing to add. */
static const char *spelled(const struct e2trim *t, errcode_t code,
			   const char *table, char *buf, size_t len)
{
	char name[DETAIL_LEN / 2];

	/* only "run e2fsck ... first": the others ask a person to look */
	if (!*table || strncmp(table, "run e2fsck", 10) ||
	    !strstr(table, "first") || (t->path && has_control(t->path)))
		return table;
	if (by_e2trim(t, code))
		return spelled_e2trim(t, code, table, buf, len);
	if (code == E2TRIM_ERR_JOURNAL && t->path && !t->nbd && !t->rbd &&
	    t->offset_bytes && t->size_bytes)
		return spelled_replay(t, table, buf, len);
	if (lib_fsck_name(t, name, sizeof(name))) {
		snprintf(buf, len, "%s: `e2fsck -fy %s`", table, name);
		return buf;
	}
	if (!t->path)
		return table;
	/* e2fsck reads files and devices only: say how to get one */
	snprintf(buf, len, "%s where e2fsck can read it: e2fsck cannot read "
		 "%s itself; run e2fsck -f on the filesystem's device (inside "
		 "the VM, or through qemu-nbd --connect for a VM image, rbd "
		 "device map for an RBD image)", table,
		 t->rbd ? "an RBD image" : "a VM image or NBD export");
	return buf;
}

void lib_keep_fix(struct e2trim *t, errcode_t code, const char *table)
{
	char buf[sizeof(t->fix)];
	const char *fix;

	if (t->fix[0] && t->fix_code == code)
		return;
	fix = spelled(t, code, table, buf, sizeof(buf));
	if (fix == table)
		return;
	snprintf(t->fix, sizeof(t->fix), "%s", fix);
	t->fix_code = code;
}

const char *lib_fix_for(const struct e2trim *t, errcode_t code,
			const char *table, char *buf, size_t len)
{
	if (!t)
		return table;
	if (t->fix[0] && t->fix_code == code)
		return t->fix;
	return spelled(t, code, table, buf, len);
}
