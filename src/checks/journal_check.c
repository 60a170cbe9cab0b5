// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * journal_check.c - a journal that holds transactions is not clean
 *
 * needs_recovery is a superblock flag; the journal's own superblock says
 * where its log starts (s_start, 0 = empty).  When the flag is clear but
 * s_start is not, e2fsck asks "Run journal anyway?" and, answered yes,
 * replays committed transactions over blocks the block bitmap may still
 * mark free.  The kernel would instead wipe such a journal on mount.
 * Which of the two is right is not e2trim's call: it refuses with the
 * journal-recovery code and names e2fsck.  A journal superblock e2fsck
 * would not accept (bad magic, unknown version or features, checksum,
 * block size, length, fast-commit area) is refused too: e2fsck would ask
 * to clear the journal, and what is in it is then unknown.
 *
 * The journal checked is the one e2fsck_get_journal() loads: the external
 * one whenever s_journal_uuid is set, even beside s_journal_inum (e2fsck
 * never looks at the inode then), else inode s_journal_inum as e2fsck
 * accepts it (journal_inode.c).
 *
 * The fast-commit area (jbd2 INCOMPAT_FAST_COMMIT: the last s_num_fc_blks
 * blocks, 256 when 0) needs no test of its own.  e2fsck replays it only
 * inside jbd2_journal_recover(), from do_one_pass() after the full
 * commits, and that returns at once when s_start is 0; recovery runs only
 * when needs_recovery is set (the superblock gate refuses that) or, with
 * -y, when s_start is not 0 (refused here), and only when the
 * filesystem has the fast_commit feature (else no replay callback is set).
 * The kernel sets s_start at its first commit after mount and clears it
 * only when it empties the journal (clean unmount, journal flush), which
 * ends the fast-commit tail's life too.  So a fast-commit tail e2fsck
 * would replay always sits in a log that starts, and is refused as one
 * (t_journal_choice: a tail the kernel wrote, restored by e2fsck -fy).
 * What e2fsck checks of the area's size before it loads the journal is
 * checked here.
 *
 * One block is read: the journal's superblock (and the journal inode's
 * extent tree blocks, when its map does not fit in the inode).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <blkid.h>
#include <ext2fs/ext2fs.h>

#include "e2trim_int.h"
#include "journal_check.h"

/*
 * The journal superblock (jbd2's journal_superblock_t), big-endian: only
 * the fields e2fsck checks before it decides to replay.  No installed
 * header defines it.
 */
#define JSB_SIZE		JOURNAL_SB_SIZE
#define JSB_MAGIC		0		/* h_magic */
#define JSB_BLOCKTYPE		4		/* h_blocktype */
#define JSB_BLOCKSIZE		12		/* s_blocksize */
#define JSB_MAXLEN		16		/* s_maxlen: blocks in all */
#define JSB_SEQUENCE		24		/* s_sequence: first in log */
#define JSB_START		28		/* s_start: 0 = empty */
#define JSB_ERRNO		32		/* s_errno */
#define JSB_COMPAT		36
#define JSB_INCOMPAT		40
#define JSB_RO_COMPAT		44
#define JSB_NR_USERS		64
#define JSB_CSUM_TYPE		80		/* __u8 */
#define JSB_NUM_FC_BLKS		84		/* 0 = the default, 256 */
#define JSB_CHECKSUM		252		/* s_checksum */

#define JBD2_MAGIC		0xc03b3998U
#define JBD2_SUPERBLOCK_V1	3
#define JBD2_SUPERBLOCK_V2	4
#define JBD2_COMPAT_CHECKSUM	0x1
#define JBD2_INCOMPAT_CSUM_V2	0x8
#define JBD2_INCOMPAT_CSUM_V3	0x10
#define JBD2_INCOMPAT_FAST_COMMIT 0x20
#define JBD2_INCOMPAT_KNOWN	0x3f	/* revoke .. fast_commit, as 1.47 */
#define JBD2_CRC32C_CHKSUM	4
#define JBD2_MIN_JOURNAL_BLOCKS	1024
#define JBD2_DEFAULT_FC_BLOCKS	256

static __u32 jsb32(const unsigned char *jsb, int off)
{
	__u32 be;

	memcpy(&be, jsb + off, sizeof(be));
	return ntohl(be);
}

/* jbd2's superblock checksum: crc32c over it with s_checksum zeroed. */
static int jsb_csum_ok(const unsigned char *jsb)
{
	unsigned char copy[JSB_SIZE];

	memcpy(copy, jsb, JSB_SIZE);
	memset(copy + JSB_CHECKSUM, 0, 4);
	return jsb[JSB_CSUM_TYPE] == JBD2_CRC32C_CHKSUM &&
	       ext2fs_crc32c_le(~0U, copy, JSB_SIZE) ==
	       jsb32(jsb, JSB_CHECKSUM);
}

/* e2fsck's e2fsck_journal_load() checks of the features: NULL, or why not */
static const char *jsb_features_unusable(const unsigned char *jsb)
{
	__u32 incompat = jsb32(jsb, JSB_INCOMPAT);
	__u32 csum = incompat & (JBD2_INCOMPAT_CSUM_V2 | JBD2_INCOMPAT_CSUM_V3);

	if (jsb32(jsb, JSB_NR_USERS) > 1)
		return "the journal is shared by several filesystems";
	if (incompat & ~JBD2_INCOMPAT_KNOWN || jsb32(jsb, JSB_RO_COMPAT))
		return "the journal uses features e2fsck does not know";
	if (csum == (JBD2_INCOMPAT_CSUM_V2 | JBD2_INCOMPAT_CSUM_V3) ||
	    (csum && (jsb32(jsb, JSB_COMPAT) & JBD2_COMPAT_CHECKSUM)))
		return "the journal superblock has conflicting checksum features";
	if (csum && !jsb_csum_ok(jsb))
		return "the journal superblock checksum does not match";
	return NULL;
}

/*
 * e2fsck's e2fsck_journal_load(): NULL, or why it would not load the
 * journal.  @blocksize is the filesystem's (e2fsck reads an external
 * journal in it too), @total_len the blocks the journal has (the inode's
 * size, or the journal device's block count).
 */
static const char *jsb_unusable(const unsigned char *jsb,
				unsigned int blocksize, blk64_t total_len)
{
	__u32 type = jsb32(jsb, JSB_BLOCKTYPE);
	__u32 maxlen = jsb32(jsb, JSB_MAXLEN);
	__u32 fc = jsb32(jsb, JSB_NUM_FC_BLKS);
	const char *why;

	if (jsb32(jsb, JSB_MAGIC) != JBD2_MAGIC)
		return "the journal superblock has no journal magic";
	if (type != JBD2_SUPERBLOCK_V1 && type != JBD2_SUPERBLOCK_V2)
		return "the journal superblock has an unknown version";
	/* v1 has no features (e2fsck clears them) */
	if (type == JBD2_SUPERBLOCK_V2 && (why = jsb_features_unusable(jsb)))
		return why;
	if (jsb32(jsb, JSB_BLOCKSIZE) != blocksize)
		return "the journal's block size is not the filesystem's";
	if (maxlen > total_len)
		return "the journal superblock is longer than the journal";
	if (type == JBD2_SUPERBLOCK_V2 &&
	    jsb32(jsb, JSB_INCOMPAT) & JBD2_INCOMPAT_FAST_COMMIT &&
	    (__u64)maxlen < (__u64)(fc ? fc : JBD2_DEFAULT_FC_BLOCKS) +
			    JBD2_MIN_JOURNAL_BLOCKS)
		return "the journal's fast-commit area leaves too few blocks "
		       "for its log";
	return NULL;
}

static int uuid_zero(const __u8 *uuid)
{
	static const __u8 zero[16];

	return !memcmp(uuid, zero, sizeof(zero));
}

static void uuid_text(const __u8 *u, char *buf, size_t len)
{
	snprintf(buf, len, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4],
		 u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		 u[14], u[15]);
}

static pthread_mutex_t blkid_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * The device holding @uuid, or NULL: @fresh 0 looks it up as e2fsck does
 * (blkid_get_devname() in libblkid's default cache, e2fsck_get_journal());
 * @fresh 1 probes every device afresh in a cache of its own (no file
 * behind it).  The default cache believes a device it has verified within
 * the last 200 s (BLKID_PROBE_INTERVAL) unless the device node changed,
 * and a loop device re-attached to another image keeps its node: it can
 * name a device that now holds another journal, or none.  The caller reads
 * the device's UUID before it believes it, and asks again afresh.
 */
static char *find_uuid(const char *uuid, int fresh)
{
	blkid_cache cache;
	char *dev = NULL;

	/* libblkid's cache file is shared: one lookup at a time */
	pthread_mutex_lock(&blkid_lock);
	if (!blkid_get_cache(&cache, fresh ? "/dev/null" : NULL)) {
		if (!fresh || !blkid_probe_all(cache))
			dev = blkid_get_devname(cache, "UUID", uuid);
		blkid_put_cache(cache);
	}
	pthread_mutex_unlock(&blkid_lock);
	return dev;
}

/*
 * @dev's ext2 superblock into @esb: 0 when it is a journal device with
 * @uuid, else EXT2_ET_LOAD_EXT_JOURNAL.  Its fd in @fdp.
 */
static errcode_t open_journal_dev(char *dev, const __u8 *uuid,
				  struct ext2_super_block *esb, int *fdp)
{
	int fd = dev ? open(dev, O_RDONLY | O_CLOEXEC) : -1;

	free(dev);
	*fdp = fd;
	if (fd < 0)
		return EXT2_ET_LOAD_EXT_JOURNAL;
	if (pread(fd, esb, sizeof(*esb), SUPERBLOCK_OFFSET) != sizeof(*esb) ||
	    esb->s_magic != EXT2_SUPER_MAGIC ||
	    !(esb->s_feature_incompat & EXT3_FEATURE_INCOMPAT_JOURNAL_DEV) ||
	    memcmp(esb->s_uuid, uuid, 16)) {
		close(fd);
		*fdp = -1;
		return EXT2_ET_LOAD_EXT_JOURNAL;
	}
	return 0;
}

/*
 * An external journal: found the way e2fsck finds it, by the UUID in the
 * superblock through libblkid.  Its own ext2 superblock (JOURNAL_DEV) must
 * carry that UUID and gives its length; e2fsck reads it in the
 * filesystem's block size (whatever the device's own says), the journal
 * superblock in the block after the ext2 superblock's.
 */
static errcode_t read_external_jsb(ext2_filsys fs, unsigned char *jsb,
				   blk64_t *total_len)
{
	struct ext2_super_block esb;
	unsigned int bs = fs->blocksize;
	char uuid[40];
	errcode_t err;
	int fd;

	uuid_text(fs->super->s_journal_uuid, uuid, sizeof(uuid));
	/* e2fsck's lookup; a stale or missing answer: every device afresh */
	err = open_journal_dev(find_uuid(uuid, 0), fs->super->s_journal_uuid,
			       &esb, &fd);
	if (err)
		err = open_journal_dev(find_uuid(uuid, 1),
				       fs->super->s_journal_uuid, &esb, &fd);
	if (err)
		return err;
	/* e2fsck caps the length at 2^32 - 1 blocks */
	*total_len = ext2fs_blocks_count(&esb);
	if (*total_len > 0xffffffffULL)
		*total_len = 0xffffffffULL;
	/* block 1, or 2 on 1 KiB blocks (the superblock is block 1 there) */
	if (pread(fd, jsb, JSB_SIZE, (off_t)bs * ext2fs_journal_sb_start(bs)) !=
	    JSB_SIZE)
		err = EXT2_ET_SHORT_READ;
	close(fd);
	return err;
}

/*
 * The superblock of the journal e2fsck_get_journal() loads into @jsb and
 * its length: 0, or 1 with @why saying why it cannot be checked (2: the
 * external journal was not found).
 */
static int chosen_jsb(ext2_filsys fs, unsigned char *jsb, blk64_t *total_len,
		      char *why, size_t len)
{
	struct ext2_super_block *sb = fs->super;
	char uuid[40];
	errcode_t err;

	if (uuid_zero(sb->s_journal_uuid))
		return journal_inode_sb(fs, jsb, total_len, why, len);
	err = read_external_jsb(fs, jsb, total_len);
	if (err == EXT2_ET_LOAD_EXT_JOURNAL) {
		/* e2fsck stops: "Can't find external journal" */
		uuid_text(sb->s_journal_uuid, uuid, sizeof(uuid));
		snprintf(why, len, "external journal UUID=%s not found%s",
			 uuid, sb->s_journal_inum ? " (e2fsck uses it, not "
			 "inode s_journal_inum, when the UUID is set)" : "");
		return 2;
	}
	if (err) {
		snprintf(why, len, "cannot read the journal superblock: %s",
			 error_message(err));
		return 1;
	}
	return 0;
}

errcode_t journal_check(struct e2trim *t)
{
	ext2_filsys fs = t->fs;
	struct ext2_super_block *sb = fs->super;
	unsigned char jsb[JSB_SIZE];
	const char *why = NULL;
	blk64_t total_len = 0;
	char detail[384];
	int missing = 0;

	if (!ext2fs_has_feature_journal(sb)) {
		/* e2fsck asks whether to clear such leftovers */
		if (sb->s_journal_inum || !uuid_zero(sb->s_journal_uuid))
			why = "journal fields are set but has_journal is clear";
		goto out;
	}
	if (ext2fs_has_feature_journal_needs_recovery(sb))
		return 0;		/* the superblock gate has decided */
	if (!sb->s_journal_inum && uuid_zero(sb->s_journal_uuid)) {
		why = "has_journal is set but no journal is named";
		goto out;
	}
	missing = chosen_jsb(fs, jsb, &total_len, detail, sizeof(detail));
	if (missing) {
		why = detail;
	} else if (!(why = jsb_unusable(jsb, fs->blocksize, total_len)) &&
		   jsb32(jsb, JSB_START)) {
		snprintf(detail, sizeof(detail),
			 "its log starts at block %u, sequence %u, but "
			 "needs_recovery is clear",
			 jsb32(jsb, JSB_START), jsb32(jsb, JSB_SEQUENCE));
		why = detail;
	} else if (!why && jsb32(jsb, JSB_ERRNO)) {
		/* e2fsck then marks the filesystem as having errors */
		snprintf(detail, sizeof(detail),
			 "the journal recorded error %d",
			 (int)jsb32(jsb, JSB_ERRNO));
		return lib_fail(t, E2TRIM_ERR_NOT_CLEAN, "%s", detail);
	}
out:
	if (!why)
		return 0;
	if (t->opt.force) {
		lib_forced(t, E2TRIM_ERR_JOURNAL, "%s", why);
		return 0;
	}
	/*
	 * Not found, the journal cannot be replayed either (e2fsck stops
	 * too): missing, not "needs recovery"; the one fix is the device.
	 * Which one, and whether it still exists, is for a person.
	 */
	if (missing == 2)
		return lib_fail(t, E2TRIM_ERR_JOURNAL_MISSING, "%s", why);
	return lib_fail(t, E2TRIM_ERR_JOURNAL, "%s", why);
}

/*
 * A journal device (mke2fs -O journal_dev) has an ext2 superblock but no
 * block bitmap: libext2fs refuses to open it (unsupported feature), and
 * "use fstrim on the mounted filesystem" would be wrong, it cannot be
 * mounted.  Say what it is and whose journal: the journal superblock, in
 * the block after the ext2 superblock's, lists its users' UUIDs (s_nr_users
 * at 0x40, s_users at 0x100, 16 bytes each).  0 when @t is no journal
 * device (or cannot be read here: through NBD or RBD).
 */
errcode_t journal_dev_refusal(struct e2trim *t)
{
	struct ext2_super_block esb;
	unsigned char jsb[JSB_SIZE];
	char users[3 * 40] = "", uuid[40];
	unsigned int bs, i, n, len = 0;
	int fd = lib_read_fd(t);

	if (fd < 0 || pread(fd, &esb, sizeof(esb), (off_t)t->offset_bytes +
			    SUPERBLOCK_OFFSET) != sizeof(esb) ||
	    esb.s_magic != EXT2_SUPER_MAGIC ||
	    !(esb.s_feature_incompat & EXT3_FEATURE_INCOMPAT_JOURNAL_DEV) ||
	    esb.s_log_block_size > 6)
		return 0;
	bs = EXT2_MIN_BLOCK_SIZE << esb.s_log_block_size;
	n = 0;
	if (pread(fd, jsb, JSB_SIZE, (off_t)t->offset_bytes +
		  (off_t)bs * ext2fs_journal_sb_start(bs)) == JSB_SIZE)
		n = jsb32(jsb, 0x40);
	for (i = 0; i < n && i < 3 && 0x100 + 16 * (i + 1) <= JSB_SIZE; i++) {
		uuid_text(jsb + 0x100 + 16 * i, uuid, sizeof(uuid));
		len += snprintf(users + len, sizeof(users) - len, "%s%s",
				i ? ", " : "", uuid);
	}
	lib_fail(t, E2TRIM_ERR_FEATURE, "it is an external journal device "
		 "(mke2fs -O journal_dev), %s%s%s, not a filesystem: it has "
		 "no free space to trim", n ? "the journal of the filesystem "
		 "with UUID " : "used by no filesystem", users,
		 n > 3 ? " and more" : "");
	lib_fix(t, E2TRIM_ERR_FEATURE, "nothing to trim with e2trim; only "
		"once no filesystem uses it any more (tune2fs -O ^has_journal "
		"on %s), discard it whole with blkdiscard (a device) or delete "
		"it (an image file)", n ? "that filesystem" : "its filesystem");
	return E2TRIM_ERR_FEATURE;
}
