// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * errors.c - the one table from error codes to exit codes, messages, and
 * how a stage records a failure, a warning and its progress
 *
 * The codes and their messages are in e2trim_err.et; this table gives
 * each its exit code.  README.md, e2trim --help and e2trim(8) list the
 * exit codes; tests/e2e/t_lint_scripts_man.sh keeps the four in step, and
 * tests/unit/test_errors.c checks that every code of the .et is here.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "e2trim_int.h"

/*
 * DETAIL_LEADS: the particulars say what is wrong better than the
 * table's words ("offset 1 GiB is not inside the filesystem (512 MiB)"),
 * so they replace them and only the fix is added.
 */
#define DETAIL_LEADS 1
/*
 * DETAIL_ALONE: the particulars are the whole message, fix included ("give
 * the partition's own device, /dev/loop0p2, instead of --partition").
 */
#define DETAIL_ALONE 2

static const struct code_exit {
	errcode_t code;
	enum e2trim_exit exit;
	int flags;
} code_exits[] = {
	/* CODE_EXIT_TABLE: the lint test reads the exit codes from here */
	/* a misuse on an open handle says which (open.c, options.c) */
	{ E2TRIM_ERR_BAD_CALL,		E2TRIM_EXIT_ERROR, DETAIL_LEADS },
	{ E2TRIM_ERR_NO_MEMORY,		E2TRIM_EXIT_ERROR, 0 },
	{ E2TRIM_ERR_MOUNT_CHECK,	E2TRIM_EXIT_ERROR, 0 },
	{ E2TRIM_ERR_MOUNTED,		E2TRIM_EXIT_IN_USE, 0 },
	{ E2TRIM_ERR_SWAP,		E2TRIM_EXIT_IN_USE, 0 },
	{ E2TRIM_ERR_BUSY,		E2TRIM_EXIT_IN_USE, 0 },
	{ E2TRIM_ERR_EXCLUSIVE,		E2TRIM_EXIT_IN_USE, 0 },
	{ E2TRIM_ERR_LOOP_BUSY,		E2TRIM_EXIT_IN_USE, 0 },
	{ E2TRIM_ERR_TOO_MANY_LOOPS,	E2TRIM_EXIT_IN_USE, 0 },
	{ E2TRIM_ERR_OPEN,		E2TRIM_EXIT_ERROR, DETAIL_LEADS },
	{ E2TRIM_ERR_NOT_BLOCK_OR_FILE,	E2TRIM_EXIT_USAGE, 0 },
	{ E2TRIM_ERR_DEVICE_SIZE,	E2TRIM_EXIT_ERROR, 0 },
	{ E2TRIM_ERR_PARTITION_ON_BLKDEV, E2TRIM_EXIT_USAGE, DETAIL_ALONE },
	{ E2TRIM_ERR_PARTITION_TABLE,	E2TRIM_EXIT_NOT_EXT, 0 },
	{ E2TRIM_ERR_NO_PARTITION_TABLE, E2TRIM_EXIT_NOT_EXT, 0 },
	{ E2TRIM_ERR_NO_PARTITION,	E2TRIM_EXIT_NOT_EXT, DETAIL_LEADS },
	{ E2TRIM_ERR_PARTITION_PAST_END, E2TRIM_EXIT_TRUNCATED, 0 },
	{ E2TRIM_ERR_NOT_EXT,		E2TRIM_EXIT_NOT_EXT, 0 },
	{ E2TRIM_ERR_FEATURE,		E2TRIM_EXIT_FEATURE, 0 },
	{ E2TRIM_ERR_NOT_CLEAN,		E2TRIM_EXIT_NOT_CLEAN, 0 },
	{ E2TRIM_ERR_JOURNAL,		E2TRIM_EXIT_JOURNAL, 0 },
	{ E2TRIM_ERR_ORPHANS,		E2TRIM_EXIT_ORPHANS, 0 },
	{ E2TRIM_ERR_SUPER_DAMAGED,	E2TRIM_EXIT_CORRUPT, 0 },
	{ E2TRIM_ERR_DESC_CSUM,		E2TRIM_EXIT_CORRUPT, 0 },
	{ E2TRIM_ERR_DESC_LAYOUT,	E2TRIM_EXIT_CORRUPT, 0 },
	{ E2TRIM_ERR_BITMAP_CSUM,	E2TRIM_EXIT_CORRUPT, 0 },
	{ E2TRIM_ERR_UNFOLLOWABLE,	E2TRIM_EXIT_CORRUPT, 0 },
	{ E2TRIM_ERR_TRUNCATED,		E2TRIM_EXIT_TRUNCATED, 0 },
	{ E2TRIM_ERR_MMP,		E2TRIM_EXIT_MMP, 0 },
	{ E2TRIM_ERR_MMP_FSCK,		E2TRIM_EXIT_MMP, 0 },
	{ E2TRIM_ERR_MMP_NOT_CLEAN,	E2TRIM_EXIT_MMP, 0 },
	{ E2TRIM_ERR_UNVERIFIED,	E2TRIM_EXIT_UNVERIFIED, 0 },
	{ E2TRIM_ERR_OPEN_FS,		E2TRIM_EXIT_ERROR, 0 },
	{ E2TRIM_ERR_BITMAP_READ,	E2TRIM_EXIT_ERROR, 0 },
	{ E2TRIM_ERR_VERIFY_READ,	E2TRIM_EXIT_ERROR, 0 },
	{ E2TRIM_ERR_RANGE_SHORT,	E2TRIM_EXIT_USAGE, DETAIL_LEADS },
	{ E2TRIM_ERR_RANGE_OUTSIDE,	E2TRIM_EXIT_USAGE, DETAIL_LEADS },
	{ E2TRIM_ERR_UNSUPPORTED,	E2TRIM_EXIT_UNSUPPORTED, 0 },
	{ E2TRIM_ERR_SECURE_FILE,	E2TRIM_EXIT_UNSUPPORTED, 0 },
	{ E2TRIM_ERR_LIMITS,		E2TRIM_EXIT_ERROR, 0 },
	{ E2TRIM_ERR_DISCARD,		E2TRIM_EXIT_ERROR, DETAIL_LEADS },
	{ E2TRIM_ERR_DISCARD_UNSUPPORTED, E2TRIM_EXIT_UNSUPPORTED, DETAIL_LEADS },
	{ E2TRIM_ERR_INTERRUPTED,	E2TRIM_EXIT_INTERRUPTED, 0 },
	{ E2TRIM_ERR_SCAN,		E2TRIM_EXIT_ERROR, 0 },
	{ E2TRIM_ERR_USAGE,		E2TRIM_EXIT_USAGE, DETAIL_LEADS },
	{ E2TRIM_ERR_FSCK_REBOOT,	E2TRIM_EXIT_FSCK_REBOOT, DETAIL_LEADS },
	{ E2TRIM_ERR_FSCK_FAILED,	E2TRIM_EXIT_FSCK_FAILED, DETAIL_LEADS },
	{ E2TRIM_ERR_FSCK_EXEC,		E2TRIM_EXIT_FSCK_FAILED, DETAIL_LEADS },
	{ E2TRIM_ERR_COUNTS,		E2TRIM_EXIT_COUNTS, 0 },
	{ E2TRIM_ERR_UNUSED_INODE,	E2TRIM_EXIT_UNUSED_INODE, 0 },
	{ E2TRIM_ERR_PARTITION,		E2TRIM_EXIT_PARTITION, 0 },
	{ E2TRIM_ERR_WHOLE_DISK,	E2TRIM_EXIT_WHOLE_DISK, 0 },
	{ E2TRIM_ERR_NO_EXT_PARTITION,	E2TRIM_EXIT_NOT_EXT, 0 },
	{ E2TRIM_ERR_DUPLICATE,		E2TRIM_EXIT_USAGE, 0 },
	{ E2TRIM_ERR_TARGETS_FILE,	E2TRIM_EXIT_USAGE, DETAIL_LEADS },
	{ E2TRIM_ERR_SOME_FAILED,	E2TRIM_EXIT_SOME_FAILED, 0 },
	{ E2TRIM_ERR_ALL_FAILED,	E2TRIM_EXIT_ALL_FAILED, 0 },
	{ E2TRIM_ERR_ZERO_FILL,		E2TRIM_EXIT_ERROR, DETAIL_LEADS },
	{ E2TRIM_ERR_NBD_NO_TRIM,	E2TRIM_EXIT_NBD_NO_TRIM, 0 },
	{ E2TRIM_ERR_IMAGE_LOCKED,	E2TRIM_EXIT_IMAGE_LOCKED, 0 },
	{ E2TRIM_ERR_NBD_START,		E2TRIM_EXIT_ERROR, 0 },
	{ E2TRIM_ERR_NBD_CONNECT,	E2TRIM_EXIT_ERROR, 0 },
	{ E2TRIM_ERR_NO_LIBNBD,		E2TRIM_EXIT_ERROR, 0 },
	{ E2TRIM_ERR_IMAGE_ENCRYPTED,	E2TRIM_EXIT_UNSUPPORTED, 0 },
	{ E2TRIM_ERR_INVALID_ARGUMENT,	E2TRIM_EXIT_USAGE, 0 },
	{ E2TRIM_ERR_NO_LIBRBD,		E2TRIM_EXIT_ERROR, 0 },
	{ E2TRIM_ERR_RBD_OPEN,		E2TRIM_EXIT_ERROR, 0 },
	{ E2TRIM_ERR_SIGNATURE,		E2TRIM_EXIT_PARTITION, DETAIL_LEADS },
	{ E2TRIM_ERR_CHANGED,		E2TRIM_EXIT_IMAGE_LOCKED, 0 },
	{ E2TRIM_ERR_RENAMED,		E2TRIM_EXIT_IMAGE_LOCKED, 0 },
	{ E2TRIM_ERR_JOURNAL_MISSING,	E2TRIM_EXIT_JOURNAL, 0 },
};

/*
 * Where the .et's fix speaks to the person at the command line (its
 * options, "run e2trim again"), what a program calling the library reads
 * instead: e2trim_error_fix(code, E2TRIM_FIX_CALLER).  The other codes'
 * fixes say the same to both.
 */
static const struct caller_fix {
	errcode_t code;
	const char *fix;
} caller_fixes[] = {
	{ E2TRIM_ERR_PARTITION_ON_BLKDEV,
	  "open the partition's own device (such as /dev/sdb1), without "
	  "e2trim_set_partition()" },
	{ E2TRIM_ERR_PARTITION_TABLE,
	  "check the image, or open it with e2trim_set_partition(t, 0)" },
	{ E2TRIM_ERR_NO_PARTITION_TABLE,
	  "call e2trim_set_partition(t, 0) for an image of one filesystem" },
	{ E2TRIM_ERR_NO_PARTITION,
	  "check the number given to e2trim_set_partition() (1 is the first, "
	  "as in /dev/sda1; e2trim_partitions() lists them)" },
	{ E2TRIM_ERR_JOURNAL_MISSING,
	  "attach the journal device with that UUID, then open the "
	  "filesystem again (if it is lost for good: tune2fs -f -O "
	  "^has_journal drops the journal and its log, then e2fsck -f)" },
	{ E2TRIM_ERR_RANGE_SHORT,
	  "give e2trim_set_range() a len_bytes of at least one block" },
	{ E2TRIM_ERR_RANGE_OUTSIDE,
	  "give e2trim_set_range() a start_bytes below the filesystem's size" },
	{ E2TRIM_ERR_UNSUPPORTED,
	  "nothing can be trimmed on it; open it on a new handle after "
	  "e2trim_set_mode(t, E2TRIM_ZEROOUT) to write zeroes instead" },
	{ E2TRIM_ERR_SECURE_FILE,
	  "open an image file on a new handle after e2trim_set_mode(t, "
	  "E2TRIM_DISCARD) or E2TRIM_ZEROOUT" },
	{ E2TRIM_ERR_DISCARD,
	  "check the device for I/O errors, then call e2trim_apply() again" },
	{ E2TRIM_ERR_DISCARD_UNSUPPORTED,
	  "it does not support this kind of discard; open it on a new handle "
	  "after e2trim_set_mode(t, E2TRIM_DISCARD)" },
	{ E2TRIM_ERR_INTERRUPTED,
	  "call e2trim_apply() again (the flag cleared) to trim the rest" },
	{ E2TRIM_ERR_USAGE,
	  "see e2trim.h for what the call takes" },
	{ E2TRIM_ERR_FSCK_EXEC,
	  "install e2fsprogs (the command runs e2fsck; the library never does)" },
	{ E2TRIM_ERR_WHOLE_DISK,
	  "list its partitions with e2trim_partitions() and open each after "
	  "e2trim_set_partition()" },
	{ E2TRIM_ERR_NO_EXT_PARTITION,
	  "check the image name, or call e2trim_set_partition()" },
	{ E2TRIM_ERR_ZERO_FILL,
	  "check the device for I/O errors, then call e2trim_apply() again" },
	{ E2TRIM_ERR_IMAGE_LOCKED,
	  "shut down the VM or the program that has it (qemu-nbd, "
	  "qemu-storage-daemon, an RBD client), then open it again" },
	{ E2TRIM_ERR_CHANGED,
	  "find what wrote it (a loop device or a mount through another "
	  "path, e2fsck, a VM), let it finish, then open it on a new handle "
	  "and call e2trim_apply() again" },
	{ E2TRIM_ERR_RENAMED,
	  "find what changes the name, let it finish, then open it on a new "
	  "handle; or give a name no one else can change" },
};

static const struct code_exit *lookup(errcode_t code)
{
	size_t i;

	for (i = 0; i < sizeof(code_exits) / sizeof(code_exits[0]); i++)
		if (code_exits[i].code == code)
			return &code_exits[i];
	return NULL;
}

int errors_known(errcode_t code)
{
	return lookup(code) != NULL;
}

int e2trim_exit_code(errcode_t code)
{
	const struct code_exit *ce = lookup(code);

	if (!code)
		return E2TRIM_EXIT_OK;
	return ce ? (int)ce->exit : E2TRIM_EXIT_ERROR;
}

/*
 * @fmt's text into @buf (@len bytes), each control byte (below 0x20, and
 * 0x7f) written as \xHH, as the command's --list writes names: the
 * particulars often hold a file name, which may hold a newline or a
 * terminal's escape sequence, and a message is one line of text that a
 * caller prints as it is.  Cut, never overrun, when it does not fit.
 */
static void text_vprintf(char *buf, size_t len, const char *fmt, va_list ap)
{
	char raw[DETAIL_LEN];
	const unsigned char *p;
	size_t n = 0;

	vsnprintf(raw, sizeof(raw), fmt, ap);
	for (p = (const unsigned char *)raw; *p && n + 1 < len; p++) {
		if (*p >= 0x20 && *p != 0x7f) {
			buf[n++] = (char)*p;
			continue;
		}
		if (n + 5 > len)
			break;
		snprintf(buf + n, len - n, "\\x%02x", *p);
		n += 4;
	}
	buf[n] = '\0';
}

errcode_t lib_fail(struct e2trim *t, errcode_t code, const char *fmt, ...)
{
	va_list ap;

	t->cause = 0;
	t->detail[0] = '\0';
	t->fix[0] = '\0';
	if (fmt) {
		va_start(ap, fmt);
		text_vprintf(t->detail, sizeof(t->detail), fmt, ap);
		va_end(ap);
	}
	return code;
}

/*
 * What @cause says: errno values through strerror_r(), the registered
 * tables' through error_message() (thread-safe for known codes: the text
 * is the table's own).
 */
static const char *cause_text(errcode_t cause, char *buf, size_t len)
{
	if (cause > 0 && cause < 4096)
		return strerror_r((int)cause, buf, len);
	return error_message(cause);
}

errcode_t lib_fail_cause(struct e2trim *t, errcode_t code, errcode_t cause,
			 const char *fmt, ...)
{
	char msg[256], context[DETAIL_LEN / 2];
	const char *text = cause_text(cause, msg, sizeof(msg));
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(context, sizeof(context), fmt, ap);
		va_end(ap);
		lib_fail(t, code, "%s: %s", context, text);
	} else {
		lib_fail(t, code, "%s", text);
	}
	t->cause = cause;
	return code;
}

errcode_t lib_interrupted(struct e2trim *t)
{
	t->res.interrupted = 1;
	/* no particulars: "interrupted" says it all */
	return lib_fail(t, E2TRIM_ERR_INTERRUPTED, NULL);
}

void lib_forced(struct e2trim *t, errcode_t code, const char *fmt, ...)
{
	va_list ap;
	char *buf;

	if (t->nforced == MAX_FORCED)
		return;
	buf = t->forced_detail[t->nforced];
	buf[0] = '\0';
	if (fmt) {
		va_start(ap, fmt);
		text_vprintf(buf, sizeof(t->forced_detail[0]), fmt, ap);
		va_end(ap);
	}
	t->forced[t->nforced++] = code;
}

void lib_warn(struct e2trim *t, const char *fmt, ...)
{
	va_list ap;

	unsigned int i;

	if (t->nwarnings == MAX_WARNINGS)
		return;
	va_start(ap, fmt);
	text_vprintf(t->warnings[t->nwarnings], sizeof(t->warnings[0]), fmt,
		     ap);
	va_end(ap);
	/* said once: a check run again under a lock finds the same */
	for (i = 0; i < t->nwarnings; i++)
		if (!strcmp(t->warnings[i], t->warnings[t->nwarnings]))
			return;
	t->nwarnings++;
}

errcode_t e2trim_forced(const struct e2trim *t, unsigned int i,
			const char **detail)
{
	/* no handle, no gates: 0 ends the caller's loop */
	if (!t || i >= t->nforced)
		return 0;
	if (detail)
		*detail = t->forced_detail[i];
	return t->forced[i];
}

const char *e2trim_warning(const struct e2trim *t, unsigned int i)
{
	return t && i < t->nwarnings ? t->warnings[i] : NULL;
}

const char *e2trim_detail(const struct e2trim *t)
{
	return t ? t->detail : "";
}

/* The table's text for one of our codes: "<what>; <fix>". */
static const char *our_text(errcode_t code)
{
	long i = code - ERROR_TABLE_BASE_e2tr;

	if (i < 0 || i >= et_e2tr_error_table.n_msgs)
		return NULL;
	return et_e2tr_error_table.msgs[i];
}

/*
 * The one place that splits the .et's "<what>; <fix>": the fix (after
 * its "; "), NULL if @text has none.  The what is @text up to it.
 */
static const char *command_fix(const char *text)
{
	const char *fix = text ? strstr(text, "; ") : NULL;

	return fix ? fix + 2 : NULL;
}

const char *e2trim_error_desc(errcode_t code, char *buf, size_t len)
{
	const char *text = our_text(code), *fix = command_fix(text);

	if (!buf || !len)
		return "";
	if (!text)
		snprintf(buf, len, "%s", error_message(code));
	else
		snprintf(buf, len, "%.*s", (int)(fix ? fix - 2 - text :
						 (long)strlen(text)), text);
	return buf;
}

const char *e2trim_error_fix(errcode_t code, enum e2trim_fix_for who)
{
	const char *fix = command_fix(our_text(code));
	size_t i;

	for (i = 0; who == E2TRIM_FIX_CALLER &&
		    i < sizeof(caller_fixes) / sizeof(caller_fixes[0]); i++)
		if (caller_fixes[i].code == code)
			return caller_fixes[i].fix;
	return fix ? fix : "";
}

const char *e2trim_message(const struct e2trim *t, errcode_t code, char *buf,
			   size_t len)
{
	const struct code_exit *ce = lookup(code);
	const char *text = our_text(code), *fix;
	const char *detail = t ? t->detail : "";
	char spelled[DETAIL_LEN];
	int what;

	if (!buf || !len)
		return "";
	if (!text) {
		if (*detail)
			snprintf(buf, len, "%s: %s", detail,
				 error_message(code));
		else
			snprintf(buf, len, "%s", error_message(code));
		return buf;
	}
	fix = command_fix(text);
	what = fix ? (int)(fix - 2 - text) : (int)strlen(text);
	if (fix)
		fix = lib_fix_for(t, code, fix, spelled, sizeof(spelled));
	if (ce && (ce->flags & DETAIL_ALONE) && *detail)
		snprintf(buf, len, "%s", detail);
	else if (ce && (ce->flags & DETAIL_LEADS) && *detail)
		snprintf(buf, len, "%s%s%s", detail, fix ? "; " : "",
			 fix ? fix : "");
	else if (*detail)
		snprintf(buf, len, "%.*s (%s)%s%s", what, text, detail,
			 fix ? "; " : "", fix ? fix : "");
	else
		snprintf(buf, len, "%.*s%s%s", what, text, fix ? "; " : "",
			 fix ? fix : "");
	return buf;
}

static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void register_tables(void)
{
	initialize_ext2_error_table();
	initialize_e2tr_error_table();
}

/* See e2trim.h: the only process-wide effect, done once. */
void lib_register_error_tables(void)
{
	pthread_once(&tables_once, register_tables);
}

/* A step of 1/1024 of the stage, at least 1 MiB: a bounded number of calls. */
void lib_progress(struct e2trim *t, enum e2trim_stage stage, uint64_t done,
		  uint64_t total)
{
	uint64_t step = total / 1024 > (1u << 20) ? total / 1024 : 1u << 20;

	if (!t->progress)
		return;
	if (done != 0 && done < total && done < t->progress_next)
		return;
	t->progress_next = done + step;
	t->progress(t->progress_priv, stage, done, total);
}
