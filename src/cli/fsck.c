// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fsck.c - --fsck: e2fsck repairs the filesystem before it is trimmed
 *
 * e2fsck runs first and alone: e2trim holds nothing open while it runs,
 * and opens the filesystem only after e2fsck has exited.  Of e2fsck's
 * work only the exit code is believed; the open then passes every gate
 * afresh, as if e2fsck had never run.  A check that leaves errors behind,
 * or wants a reboot, stops the run before anything is discarded.
 */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsck.h"
#include "fsck_target.h"
#include "jobs.h"
#include "test_hooks.h"

extern char **environ;

errcode_t fsck_verdict(int code)
{
	if (code & ~(FSCK_NONDESTRUCT | FSCK_REBOOT))
		return E2TRIM_ERR_FSCK_FAILED;
	if (code & FSCK_REBOOT)
		return E2TRIM_ERR_FSCK_REBOOT;
	return 0;
}

const char *fsck_describe(int code, char *buf, size_t len)
{
	static const struct {
		int bit;
		const char *what;
	} bits[] = {
		{ FSCK_NONDESTRUCT, "errors corrected" },
		{ FSCK_REBOOT, "reboot needed" },
		{ FSCK_UNCORRECTED, "errors left uncorrected" },
		{ FSCK_ERROR, "operational error" },
		{ FSCK_USAGE, "usage error" },
		{ FSCK_CANCELED, "cancelled" },
		{ FSCK_LIBRARY, "shared library error" },
	};
	size_t i, n = 0;
	int known = 0;

	buf[0] = '\0';
	if (code == 0) {
		snprintf(buf, len, "clean");
		return buf;
	}
	for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		known |= bits[i].bit;
		if (!(code & bits[i].bit) || n >= len)
			continue;
		n += snprintf(buf + n, len - n, "%s%s", n ? ", " : "",
			      bits[i].what);
	}
	if ((code & ~known) && n < len)
		snprintf(buf + n, len - n, "%sunknown status", n ? ", " : "");
	return buf;
}

void fsck_argv(const struct cli_control *ctl, const char *prog,
	       const char *target, const char *argv[FSCK_ARGV_MAX])
{
	int n = 0;

	argv[n++] = prog;
	if (ctl->fsck == FSCK_FORCE)
		argv[n++] = "-f";
	/* a dry run changes nothing, e2fsck's part included */
	argv[n++] = ctl->opts.dryrun ? "-n" : "-p";
	argv[n++] = target;
	argv[n] = NULL;
}

/*
 * Start @argv[0] (a name looked up in PATH, or a path) with its standard
 * output on our standard error, and wait for it.  Returns 0 with
 * @status set, or -errno when it could not be started.
 */
static int spawn_wait(const struct cli_control *ctl, const char *argv[],
		      int *status)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int rc;

	fflush(stdout);
	fflush(stderr);
	rc = posix_spawn_file_actions_init(&fa);
	if (rc)
		return -rc;
	rc = posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO,
					      STDOUT_FILENO);
	if (!rc)
		rc = posix_spawnp(&pid, argv[0], &fa, NULL,
				  (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		return -rc;
	/* a test holds e2trim here, e2fsck running, to signal it */
	test_pause_at("fsck", ctl->device, 0);
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/* "<what>; nothing trimmed" for the table's E2TRIM_ERR_FSCK_*. */
static errcode_t fsck_fails(const char *device, errcode_t err,
			    const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static errcode_t fsck_fails(const char *device, errcode_t err,
			    const char *fmt, ...)
{
	const char *fix = e2trim_error_fix(err, E2TRIM_FIX_COMMAND);
	char what[PATH_MAX + 160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	warnx_target(device, "%s; nothing trimmed%s%s", what, *fix ? "; " : "",
		     fix);
	return err;
}

void fsck_target_init(struct fsck_target *ft)
{
	memset(ft, 0, sizeof(*ft));
	ft->loop_fd = -1;
}

int fsck_target_release(struct fsck_target *ft)
{
	int rc = fsck_loop_release(ft);

	return fsck_vm_release(ft) | rc;
}

/*
 * The probe refused a VM image (e2fsck cannot read one) but named its
 * format: qemu's name, never "nbd" (a URI: a server of someone else's)
 * nor "rbd" (Ceph: e2fsck it through rbd device map).
 */
static const char *vm_format(const struct e2trim *t, errcode_t err)
{
	const char *fmt = e2trim_result(t)->image_format;

	if (err != E2TRIM_ERR_USAGE || !*fmt || !strcmp(fmt, "nbd") ||
	    !strcmp(fmt, "rbd"))
		return NULL;
	return fmt;
}

/*
 * The name e2fsck is to check, in @ft: the path itself; the content of
 * a VM image (nbdfuse); a loop device bounded by the partition's table
 * entry when the filesystem does not start at the first byte.  Both
 * layers for a partition of a VM image.
 */
static errcode_t fsck_prepare(const struct cli_control *ctl,
			      struct e2trim *t, struct fsck_target *ft)
{
	const struct e2trim_result *r;
	const char *fmt;
	char why[PATH_MAX + 160] = "", base[sizeof(ft->name)];
	uint64_t offset, size;
	errcode_t err;
	int rc;

	/*
	 * A device that is in use is e2trim's refusal (10), never e2fsck's
	 * business: e2fsck -p on a filesystem mounted through a loop device
	 * would repair it under the kernel's feet.
	 */
	err = cli_set_options(t, &ctl->opts);
	if (!err)
		err = e2trim_probe(t, ctl->path, &offset);
	fmt = vm_format(t, err);
	if (err && !fmt) {
		warn_code(ctl->device, t, err);
		return err;
	}
	r = e2trim_result(t);
	size = r->size_bytes;
	snprintf(base, sizeof(base), "%s", ctl->path);
	if (fmt) {
		rc = fsck_vm_mount(ft, ctl->path, fmt, ctl->opts.dryrun, why,
				   sizeof(why));
		if (rc)
			goto fail;
		/* a test holds e2trim here, the mount up, to signal it */
		test_pause_at("fsck-mount", ctl->device, 0);
		/* the loop device, if any, goes over the image's content */
		snprintf(base, sizeof(base), "%s", ft->name);
	}
	if (offset) {
		rc = fsck_loop_make(ft, base, offset, size, ctl->opts.dryrun,
				    why, sizeof(why));
		/*
		 * No loop devices for us (not root, none in this container):
		 * "?offset=" checks and repairs all but a journal replay
		 */
		if (rc == -EACCES || rc == -EPERM || rc == -ENOENT ||
		    rc == -ENODEV) {
			if (ctl->verbose && !ctl->quiet)
				warnx_target(ctl->device, "%s; e2fsck gets "
					     "?offset= instead", why);
			rc = snprintf(ft->name, sizeof(ft->name),
				      "%s?offset=%llu", base,
				      (unsigned long long)offset);
			if (rc < 0 || (size_t)rc >= sizeof(ft->name)) {
				snprintf(why, sizeof(why), "name too long");
				rc = -ENAMETOOLONG;
			} else {
				rc = 0;
			}
		}
		if (rc)
			goto fail;
	} else if (!fmt) {
		snprintf(ft->name, sizeof(ft->name), "%s", ctl->path);
	}
	return 0;
fail:
	/* 21: what e2fsck was to check could not be made */
	return fsck_fails(ctl->device, E2TRIM_ERR_FSCK_FAILED, "%s", why);
}

/*
 * e2fsck failed: is the reason one of e2trim's own refusals that e2fsck
 * does not repair (a stale "e2fsck is running" MMP mark, a missing
 * external journal, a filesystem larger than its device)?  Then that
 * refusal and its own fix, not "run e2fsck -f by hand", which fails the
 * same way (issue 42).  @t, closed by the probe, is opened for a dry run
 * (it writes nothing); its message is the one the outcome keeps.  0 when
 * e2trim finds nothing, or only what e2fsck was to repair.
 */
static errcode_t fsck_explain(const struct cli_control *ctl, struct e2trim *t)
{
	struct cli_opts dry = ctl->opts;
	const char *table;
	char msg[1024];
	errcode_t err;

	dry.dryrun = 1;
	err = cli_set_options(t, &dry);
	if (!err)
		err = e2trim_open(t, ctl->path);
	if (!err)
		err = e2trim_check(t);
	if (!err || err == E2TRIM_ERR_INTERRUPTED ||
	    err == E2TRIM_ERR_BAD_CALL)
		return 0;
	/* the table's "run e2fsck ..." kept as it is: e2fsck's own work */
	table = e2trim_error_fix(err, E2TRIM_FIX_COMMAND);
	e2trim_message(t, err, msg, sizeof(msg));
	if (!strncmp(table, "run e2fsck", 10) && strstr(msg, table))
		return 0;
	return err;
}

static errcode_t fsck_check(const struct cli_control *ctl, struct e2trim *t,
			    const char *target)
{
	const char *argv[FSCK_ARGV_MAX];
	const char *prog = getenv("E2FSCK");
	char what[128], line[PATH_MAX + 1024];
	errcode_t err, known;
	int i, rc, status, code;

	if (!prog || !*prog)
		prog = "e2fsck";
	fsck_argv(ctl, prog, target, argv);
	if (ctl->verbose && !ctl->quiet) {
		for (i = 0, rc = 0; argv[i] && rc < (int)sizeof(line); i++)
			rc += snprintf(line + rc, sizeof(line) - rc, " %s",
				       argv[i]);
		warnx_target(NULL, "running%s", line);
	}

	rc = spawn_wait(ctl, argv, &status);
	if (rc)
		return fsck_fails(ctl->device, E2TRIM_ERR_FSCK_EXEC,
				  "cannot run %s: %s", prog, strerror(-rc));
	if (WIFSIGNALED(status))
		return fsck_fails(ctl->device, E2TRIM_ERR_FSCK_FAILED,
				  "e2fsck was killed by signal %d (%s)",
				  WTERMSIG(status), strsignal(WTERMSIG(status)));
	code = WEXITSTATUS(status);
	/*
	 * 126 and 127 are how a child reports that exec failed when the
	 * spawn could not tell us directly (a fork-based posix_spawn, as
	 * under valgrind, or a wrapper script).  e2fsck itself never exits
	 * with either: its codes are sums of the bits 1..32 and 128.
	 */
	if (code == FSCK_EXEC_FAILED || code == FSCK_EXEC_NOEXEC)
		return fsck_fails(ctl->device, E2TRIM_ERR_FSCK_EXEC,
				  "cannot run %s: not found or not executable",
				  prog);
	err = fsck_verdict(code);
	if (!err)
		return 0;
	known = err == E2TRIM_ERR_FSCK_FAILED ? fsck_explain(ctl, t) : 0;
	if (known) {
		warnx_target(ctl->device, "e2fsck exited with %d (%s); nothing "
			     "trimmed: it %s", code,
			     fsck_describe(code, what, sizeof(what)),
			     e2trim_message(t, known, line, sizeof(line)));
		return known;
	}
	return fsck_fails(ctl->device, err, "e2fsck exited with %d (%s)", code,
			  fsck_describe(code, what, sizeof(what)));
}

/*
 * What @path (an image, a device, "image?offset=N") leads to now: 0 and
 * @st, or -1 when it cannot be told (an NBD URI, an RBD spec).
 */
static int name_stat(const char *path, struct stat *st)
{
	char plain[PATH_MAX];
	const char *q = strchr(path, '?');

	if (!stat(path, st))
		return 0;
	if (!q || (size_t)(q - path) >= sizeof(plain))
		return -1;
	snprintf(plain, sizeof(plain), "%.*s", (int)(q - path), path);
	return stat(plain, st) ? -1 : 0;
}

/*
 * e2fsck checks the target by its name, and the trim opens it afresh
 * after: the name must lead to the same file or device at both ends of
 * the check, or e2fsck checked (and repaired) another one than e2trim is
 * about to trim (issue 41.3: refused with 26).
 */
static errcode_t same_after_fsck(const struct cli_control *ctl,
				 int known, const struct stat *before)
{
	struct stat now;

	if (!known || (!name_stat(ctl->path, &now) &&
		       now.st_dev == before->st_dev &&
		       now.st_ino == before->st_ino &&
		       now.st_rdev == before->st_rdev))
		return 0;
	return fsck_fails(ctl->device, E2TRIM_ERR_RENAMED, "the name led to "
			  "another file or device after e2fsck checked it");
}

errcode_t fsck_run(const struct cli_control *ctl, struct e2trim *t)
{
	struct fsck_target ft;
	struct stat before;
	int known = !name_stat(ctl->path, &before);
	errcode_t err;

	fsck_target_init(&ft);
	err = fsck_prepare(ctl, t, &ft);
	/* a stop while the mount came up: e2fsck does not start */
	if (!err && !cli_stop)
		err = fsck_check(ctl, t, ft.name);
	/* whatever happened, nothing of ours stays: the trim opens afresh */
	if (fsck_target_release(&ft) && !err)
		err = fsck_fails(ctl->device, E2TRIM_ERR_FSCK_FAILED,
				 "what e2fsck checked could not be released");
	if (!err)
		err = same_after_fsck(ctl, known, &before);
	return err;
}
