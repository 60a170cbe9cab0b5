// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * e2trim.c - discard the free space of an unmounted ext2/ext3/ext4
 *            filesystem, on a block device or in an image file
 *
 * The command is libe2trim's first client (src/e2trim.h): open, gates,
 * verify, apply, through the public API only.  Of its own it has:
 *   fsck.c             --fsck: e2fsck first, before anything is opened
 *   fsck_loop.c        a partition as a loop device (journal replay)
 *   fsck_vm.c          a VM image as a file for e2fsck (nbdfuse)
 *   report.c           what was done, in fstrim's words
 *   json.c             --json: the same numbers for programs
 *   progress.c         the updating line on a terminal
 *   histogram.c        --histogram
 *   size.c             sizes in and out, as util-linux spells them
 *   job_list.c,     many targets: the list, -p all, -j
 *   jobs*.c
 *   output.c           each target's lines, in order
 * main() parses the command line, and e2trim_exit_code() maps every
 * outcome to an exit code.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "cli.h"
#include "fsck.h"
#include "histogram.h"
#include "progress.h"
#include "report.h"
#include "size.h"
#include "jobs.h"

#define program_name program_invocation_short_name

/*
 * Like util-linux's close_stdout(): output that could not be written
 * (a full disk, a closed pipe's reader gone with SIGPIPE ignored) is an
 * error, not a success with a truncated list.
 */
static void close_stdout(void)
{
	int failed = ferror(stdout);
	int err = errno;

	if (fclose(stdout) != 0) {
		failed = 1;
		err = errno;
	}
	if (!failed)
		return;
	/* a write a stop cut short (no SA_RESTART): the stop's code */
	if (err == EINTR && cli_stop && cli_stop != SIGPIPE)
		_exit(E2TRIM_EXIT_INTERRUPTED);
	if (err != EPIPE)
		warnx_target(NULL, "write error: %s",
			     strerror(err ? err : EIO));
	_exit(E2TRIM_EXIT_ERROR);
}

static void __attribute__((__noreturn__)) try_help(void)
{
	warnx_target(NULL, "try '%s --help' for more information",
		     program_name);
	exit(E2TRIM_EXIT_USAGE);
}

static void __attribute__((__noreturn__)) bad_usage(const char *fmt,
						       const char *arg)
{
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, arg);
	warnx_target(NULL, "%s", msg);
	try_help();
}

static uint64_t size_arg(const char *what, const char *arg)
{
	uint64_t val;
	int rc = parse_size(arg, &val);

	if (rc == -ERANGE)
		bad_usage("%s: number too large", arg);
	if (rc)
		bad_usage(what, arg);
	return val;
}

static unsigned int partition_arg(const char *arg)
{
	char *end;
	unsigned long n;

	if (!strcmp(arg, "all"))
		return 0;
	errno = 0;
	n = strtoul(arg, &end, 10);
	if (errno || *end || end == arg || n < 1 || n > 4096)
		bad_usage("invalid partition number: %s", arg);
	return n;
}

/* qemu's format names: letters, digits, '-', '_' */
static const char *format_arg(const char *arg)
{
	const char *p;

	for (p = arg; *p; p++)
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= '0' && *p <= '9') &&
		    *p != '-' && *p != '_')
			break;
	if (!*arg || *p || p - arg > 15)
		bad_usage("invalid format: %s", arg);
	return arg;
}

static unsigned int jobs_arg(const char *arg)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(arg, &end, 10);
	if (errno || *end || end == arg || n < 1 || n > 64)
		bad_usage("invalid number of jobs: %s (1 to 64)", arg);
	return n;
}

enum { OPT_LIST = 256, OPT_NO_VERIFY, OPT_FSCK, OPT_JSON, OPT_TARGETS_FROM,
       OPT_ZERO_FILL, OPT_HISTOGRAM, OPT_PROGRESS, OPT_NO_PROGRESS,
       OPT_FORMAT, OPT_QUIET_UNSUPPORTED };

static void parse_args(int argc, char **argv, struct cli_control *ctl)
{
	static const struct option longopts[] = {
		{ "offset",  required_argument, NULL, 'o' },
		{ "length",  required_argument, NULL, 'l' },
		{ "minimum", required_argument, NULL, 'm' },
		{ "partition", required_argument, NULL, 'p' },
		{ "dry-run", no_argument,       NULL, 'n' },
		{ "secure",  no_argument,       NULL, 's' },
		{ "zeroout", no_argument,       NULL, 'z' },
		{ "zero-fill", no_argument,     NULL, OPT_ZERO_FILL },
		{ "histogram", no_argument,     NULL, OPT_HISTOGRAM },
		{ "progress", no_argument,      NULL, OPT_PROGRESS },
		{ "no-progress", no_argument,   NULL, OPT_NO_PROGRESS },
		{ "list",    no_argument,       NULL, OPT_LIST },
		{ "no-verify", no_argument,     NULL, OPT_NO_VERIFY },
		{ "fsck",    optional_argument, NULL, OPT_FSCK },
		{ "format",  required_argument, NULL, OPT_FORMAT },
		{ "force",   no_argument,       NULL, 'f' },
		{ "verbose", no_argument,       NULL, 'v' },
		{ "json",    no_argument,       NULL, OPT_JSON },
		{ "targets-from", required_argument, NULL, OPT_TARGETS_FROM },
		{ "quiet-unsupported", no_argument, NULL, OPT_QUIET_UNSUPPORTED },
		{ "jobs",    required_argument, NULL, 'j' },
		{ "quiet",   no_argument,       NULL, 'q' },
		{ "help",    no_argument,       NULL, 'h' },
		{ "version", no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	/* getopt's messages start with argv[0]: "e2trim:", as ours, not
	   the full path the binary was started by */
	argv[0] = program_invocation_short_name;
	while ((c = getopt_long(argc, argv, "o:l:m:p:nszfvqj:hV", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'o':
			ctl->range.start_bytes = size_arg("invalid offset: %s", optarg);
			break;
		case 'l':
			ctl->range.len_bytes = size_arg("invalid length: %s", optarg);
			break;
		case 'm':
			ctl->range.minlen_bytes = size_arg("invalid minimum: %s",
						     optarg);
			break;
		case 'p':
			ctl->opts.partition = partition_arg(optarg);
			ctl->all_partitions = !ctl->opts.partition;
			break;
		case 'n':
			ctl->opts.dryrun = 1;
			break;
		case 's':
		case 'z':
		case OPT_ZERO_FILL:
			if (ctl->opts.mode != E2TRIM_DISCARD)
				bad_usage("%s", "--secure, --zeroout and "
					  "--zero-fill exclude each other");
			ctl->opts.mode = c == 's' ? E2TRIM_SECURE :
					 c == 'z' ? E2TRIM_ZEROOUT :
						    E2TRIM_ZERO_FILL;
			break;
		case OPT_HISTOGRAM:
			ctl->histogram = 1;
			break;
		case OPT_PROGRESS:
		case OPT_NO_PROGRESS:
			ctl->progress = c == OPT_PROGRESS ? PROGRESS_ON :
							    PROGRESS_OFF;
			break;
		case OPT_LIST:
			ctl->list = 1;
			break;
		case OPT_NO_VERIFY:
			ctl->opts.no_verify = 1;
			break;
		case OPT_FSCK:
			if (optarg && strcmp(optarg, "force"))
				bad_usage("invalid --fsck argument: %s "
					  "(only --fsck=force)", optarg);
			ctl->fsck = optarg ? FSCK_FORCE : FSCK_PREEN;
			break;
		case OPT_FORMAT:
			ctl->opts.format = format_arg(optarg);
			break;
		case 'f':
			ctl->opts.force = 1;
			break;
		case 'v':
			if (ctl->verbose < 2)
				ctl->verbose++;
			break;
		case 'q':
			ctl->quiet = 1;
			break;
		case OPT_JSON:
			ctl->json = 1;
			break;
		case OPT_TARGETS_FROM:
			/* each, in order: a second must not replace the first */
			if (ctl->ntargets_from < CLI_MAX_TARGETS_FROM)
				ctl->targets_from[ctl->ntargets_from++] = optarg;
			else
				bad_usage("more than %s --targets-from files",
					  CLI_MAX_TARGETS_FROM_STR);
			break;
		case OPT_QUIET_UNSUPPORTED:
			ctl->quiet_unsupported = 1;
			break;
		case 'j':
			ctl->jobs = jobs_arg(optarg);
			break;
		case 'h':
			usage();
		case 'V':
			printf("%s %s\n", program_name, E2TRIM_VERSION);
			exit(E2TRIM_EXIT_OK);
		default:
			try_help();
		}
	}
	if (optind == argc && !ctl->ntargets_from)
		bad_usage("%s", "no device or image specified");
	ctl->names = argv + optind;
	ctl->nnames = argc - optind;
	/* "--fsck force disk.img": the argument needs the '=' */
	if (ctl->fsck == FSCK_PREEN && ctl->nnames > 1 &&
	    !strcmp(ctl->names[0], "force") && access("force", F_OK))
		bad_usage("%s", "--fsck force: write --fsck=force (the "
			  "argument needs the '=')");
}

/* The gates --force let pass: each worth a warning, and kept for --json. */
static void warn_forced(const struct cli_control *ctl,
			const struct e2trim *t, struct outcome *o)
{
	char what[512], kept[1024];
	const char *detail;
	errcode_t code;
	unsigned int i;

	for (i = 0; (code = e2trim_forced(t, i, &detail)); i++) {
		e2trim_error_desc(code, what, sizeof(what));
		warnx_target(ctl->device, "WARNING: %s%s%s%s, trimming anyway "
			     "because of --force", what, *detail ? " (" : "",
			     detail, *detail ? ")" : "");
		warnx_target(ctl->device, "WARNING: blocks that hold data may "
			     "be discarded");
		snprintf(kept, sizeof(kept), "%s%s%s%s", what,
			 *detail ? " (" : "", detail, *detail ? ")" : "");
		if (outcome_add_text(&o->forced, kept))
			o->lost = 1;
	}
}

/* What the library found worth a warning, each said once (and kept). */
static void warn_new(const struct cli_control *ctl, const struct e2trim *t,
		     unsigned int *said, struct outcome *o)
{
	const char *w;

	while ((w = e2trim_warning(t, *said))) {
		warnx_target(ctl->device, "warning: %s", w);
		if (outcome_add_text(&o->warnings, w))
			o->lost = 1;
		(*said)++;
	}
}

/*
 * A stage that ends after a stop was asked for (cli_stop: SIGINT,
 * SIGTERM, SIGHUP, SIGPIPE, caught from the start of the run) ends the
 * target, whatever it returned: an error it met may be the signal's
 * own doing (a poll cut short), and a stop is what was asked.
 */
static errcode_t or_stopped(errcode_t err)
{
	return cli_stop ? E2TRIM_ERR_INTERRUPTED : err;
}

/* what list_extent() needs: where to print, or keep for --json */
struct list_to {
	const struct cli_control *ctl;
	struct outcome *o;
};

static int list_extent(void *priv, uint64_t start_bytes, uint64_t len_bytes)
{
	const struct list_to *to = priv;
	const struct cli_control *ctl = to->ctl;

	if (!ctl->list)
		return 0;
	/* --json --list: the ranges go into the document */
	if (ctl->json) {
		if (outcome_add_range(to->o, start_bytes, len_bytes))
			to->o->lost = 1;
		return 0;
	}
	progress_clear();
	report_extent(ctl, start_bytes, len_bytes);
	return 0;
}

/* After apply: the summary, or why it stopped and what was done by then. */
static void report(const struct cli_control *ctl, const struct e2trim *t,
		   errcode_t err)
{
	const struct e2trim_result *r = e2trim_result(t);
	char msg[1024];

	if (outcome_unsupported(ctl, err))
		return;
	switch (err) {
	case 0:
		report_summary(ctl, r);
		break;
	case E2TRIM_ERR_SCAN:
	case E2TRIM_ERR_CHANGED:	/* a writer seen between batches */
		warn_code(ctl->device, t, err);
		report_partial(ctl, r, "stopped");
		break;
	case E2TRIM_ERR_INTERRUPTED:
		report_partial(ctl, r, "interrupted");
		break;
	case E2TRIM_ERR_DISCARD_UNSUPPORTED:
		/* refused at the first request: the fix is another mode */
		report_partial_fix(ctl, r, e2trim_detail(t),
				   e2trim_message(t, err, msg, sizeof(msg)));
		break;
	case E2TRIM_ERR_DISCARD:
	case E2TRIM_ERR_ZERO_FILL:
		report_partial(ctl, r, e2trim_detail(t));
		break;
	default:		/* before anything was trimmed */
		warn_code(ctl->device, t, err);
		return;
	}
	/* a note, after fstrim's line: scripts read that one first */
	report_minlen_raised(ctl, r);
	/* asked for, as --list is: -q does not drop it; --json has it */
	if (ctl->histogram && !ctl->json)
		histogram_print(cli_out(), ctl->shown, e2trim_histogram(t));
}

/*
 * Verification alone, timed for tests/bench.sh when E2TRIM_TIME_VERIFY
 * is set: "e2trim: verify: SECONDS" on stderr.
 */
static errcode_t timed_verify(struct e2trim *t)
{
	struct timespec t0, t1;
	errcode_t err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = e2trim_verify(t);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (getenv("E2TRIM_TIME_VERIFY"))
		warnx_target(NULL, "verify: %.3f",
			     (double)(t1.tv_sec - t0.tv_sec) +
			     (t1.tv_nsec - t0.tv_nsec) / 1e9);
	return err;
}

/*
 * The witness's looks, for tests/bench.sh when E2TRIM_TIME_WITNESS is
 * set: "e2trim: witness reads: N, BYTES bytes, SECONDS s" on stderr.
 */
static void timed_witness(const struct e2trim *t)
{
	const struct e2trim_result *r = e2trim_result(t);

	if (getenv("E2TRIM_TIME_WITNESS"))
		warnx_target(NULL, "witness reads: %llu, %llu bytes, %.3f s",
			     (unsigned long long)r->witness_reads,
			     (unsigned long long)r->witness_bytes,
			     r->witness_seconds);
}

static errcode_t trim(const struct cli_control *ctl, struct e2trim *t,
		      struct outcome *o)
{
	struct list_to to = { .ctl = ctl, .o = o };
	unsigned int said = 0;
	errcode_t err;

	progress_start(ctl, t);
	err = or_stopped(cli_set_options(t, &ctl->opts));
	if (!err) {
		err = e2trim_open(t, ctl->path);
		o->opened = !err;
		err = or_stopped(err);
	}
	warn_new(ctl, t, &said, o);
	if (!err)
		err = or_stopped(e2trim_check(t));
	warn_new(ctl, t, &said, o);
	if (!err)
		warn_forced(ctl, t, o);
	if (!err)
		err = e2trim_set_range(t, ctl->range.start_bytes,
				       ctl->range.len_bytes,
				       ctl->range.minlen_bytes);
	/* before the target is opened: a refusal must trim nothing */
	if (!err)
		err = or_stopped(timed_verify(t));
	/* stopped at any stage so far: run_target() releases everything */
	if (err == E2TRIM_ERR_INTERRUPTED) {
		warnx_target(ctl->device, "interrupted before the first "
			     "discard; nothing trimmed");
		return err;
	}
	if (err) {
		if (!outcome_unsupported(ctl, err))
			warn_code(ctl->device, t, err);
		return err;
	}
	err = e2trim_apply(t, list_extent, &to);
	o->applied = 1;
	progress_clear();
	/* what the trim's end says (an RBD lock it could not release) */
	warn_new(ctl, t, &said, o);
	report(ctl, t, err);
	timed_witness(t);
	return err;
}

/* What happened to the target, kept for --json and the exit code. */
static void keep_outcome(const struct cli_control *ctl, struct outcome *o,
			 const struct e2trim *t, errcode_t err)
{
	o->err = err;
	o->exit_code = e2trim_exit_code(err);
	o->unsupported = outcome_unsupported(ctl, err);
	if (o->unsupported)
		o->exit_code = E2TRIM_EXIT_OK;
	/* an interruption's particulars only repeat it */
	if (err && t && err != E2TRIM_ERR_INTERRUPTED)
		e2trim_message(t, err, o->message, sizeof(o->message));
	else if (err)
		e2trim_message(NULL, err, o->message, sizeof(o->message));
	if (t)
		outcome_take(o, t);
}

static void run_target(const struct cli_control *base,
		       struct job *r)
{
	struct cli_control ctl = *base;
	struct outcome *o = &r->out;
	struct e2trim *t = NULL;
	char shown[TEXT_SAFE_NAME_LEN];
	errcode_t err;

	ctl.device = r->label;
	ctl.shown = text_safe(r->label, shown, sizeof(shown));
	ctl.path = r->path;
	ctl.opts = r->opts;
	/* --json: stdout is the document's; messages stay on stderr */
	if (ctl.json)
		ctl.verbose = 0;
	if (r->pre_err) {
		warnx_target(ctl.device, "%s", r->pre_msg ? r->pre_msg : "");
		keep_outcome(&ctl, o, NULL, r->pre_err);
		snprintf(o->message, sizeof(o->message), "%s",
			 r->pre_msg ? r->pre_msg : "");
		return;
	}
	if (cli_stop) {
		warnx_target(ctl.device, "interrupted before it started; "
			     "nothing trimmed");
		keep_outcome(&ctl, o, NULL, E2TRIM_ERR_INTERRUPTED);
		return;
	}
	err = e2trim_new(&t);
	if (err) {
		warn_code(ctl.device, NULL, err);
		keep_outcome(&ctl, o, NULL, err);
		return;
	}
	/* every stage from here on stops early once a signal came */
	e2trim_set_cancel(t, &cli_stop);
	/* e2fsck first, alone: the open below trusts nothing from before */
	if (ctl.fsck != FSCK_NONE) {
		err = fsck_run(&ctl, t);
		/* e2fsck runs to its end (a terminal's Ctrl-C reaches it) */
		if (cli_stop) {
			if (!err)
				warnx_target(ctl.device, "interrupted before "
					     "the first discard; nothing "
					     "trimmed");
			err = E2TRIM_ERR_INTERRUPTED;
		}
		/* e2fsck -f has just checked every block the bitmap frees */
		if (ctl.fsck == FSCK_FORCE)
			ctl.opts.no_verify = 1;
	}
	if (!err)
		err = trim(&ctl, t, o);
	keep_outcome(&ctl, o, t, err);
	e2trim_free(t);
}

int main(int argc, char **argv)
{
	struct cli_control ctl = { .range.len_bytes = UINT64_MAX };
	struct job_list l;
	int code;

	/* before anything is held: see catch_signals() */
	catch_signals();
	atexit(close_stdout);
	parse_args(argc, argv, &ctl);
	if (jobs_build(&ctl, &l))
		return E2TRIM_EXIT_USAGE;
	ctl.several = l.n > 1;
	for (code = 0; code < (int)l.n; code++)
		if (!strncmp(l.v[code].path, "rbd:", 4))
			stop_watch();
	code = jobs_run(&ctl, &l, run_target);
	jobs_free(&l);
	return code;
}
