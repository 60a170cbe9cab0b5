// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rbd_name.c - an RBD name taken apart: what is a name stays a name
 *
 * "rbd:POOL[/NAMESPACE]/IMAGE[@SNAP]" then ":KEY=VALUE" fields, in qemu's
 * spelling: "\" makes the next character plain ("\:" a colon that does
 * not end the name, "\\" a backslash), as qemu's rbd driver reads it.
 *
 * A name is data.  `rbd ls` prints any name librbd took, colons and all:
 * a list made from it can hold "rbd:POOL/vm7:admin_socket=/some/file",
 * where librados, as root, would unlink the file to bind its socket
 * there, in a dry run too.  So (src/rbd/rbd.md):
 *  - only the keys below are taken after the name, each once; none of
 *    them makes librados write a local file, and the one that names a
 *    file (conf) must name one that only root or the caller can change.
 *    Every other Ceph option (admin_socket, log_file, keyring...) is set
 *    in that conf file, which the user wrote, never by a name;
 *  - a '/' or an '@' inside a pool, namespace, image or snapshot name
 *    cannot be carried: qemu and the rbd command split on them whatever
 *    the escapes.  Refused, with a word to rename it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rbd_int.h"
#include "rbd_name.h"

/* The keys an rbd: name may set, and the characters each value may hold. */
static const struct {
	const char *key;
	const char *chars;	/* NULL: a path, gated by conf_safe() */
} keys[] = {
	{ "conf", NULL },
	{ "id", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		"0123456789_.-" },
	{ "mon_host", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		      "0123456789_.-:,[]/ " },
	{ "rados_osd_op_timeout", "0123456789." },
	{ "rados_mon_op_timeout", "0123456789." },
	{ "client_mount_timeout", "0123456789." },
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static int name_bad(char *why, size_t len, const char *what, const char *arg)
{
	snprintf(why, len, "%s%s%s; the form is rbd:POOL/IMAGE[@SNAP]"
		 "[:conf=FILE][:id=USER] (a ':' in a name written \\:)", what,
		 arg ? ": " : "", arg ? arg : "");
	return 1;
}

/*
 * The next field of @p up to an unescaped @delim, cut there: returns
 * where the rest begins (NULL at the end).  *@bad: a '\' ends it.
 */
static char *cut(char *p, char delim, int *bad)
{
	for (; *p; p++) {
		if (*p == '\\') {
			if (!p[1]) {
				*bad = 1;
				return NULL;
			}
			p++;
		} else if (*p == delim) {
			*p = '\0';
			return p + 1;
		}
	}
	return NULL;
}

/* "\x" made "x", in place. */
static void unescape(char *p)
{
	char *q = p;

	for (; *p; p++) {
		if (*p == '\\' && p[1])
			p++;
		*q++ = *p;
	}
	*q = '\0';
}

/* An escaped '/' or '@' (qemu and rbd split on it anyway)? */
static int escaped_split(const char *p)
{
	for (; *p; p++)
		if (*p == '\\' && p[1] && (*++p == '/' || *p == '@'))
			return 1;
	return 0;
}

/*
 * POOL[/NAMESPACE]/IMAGE[@SNAP] in @field, its escapes undone into
 * s->name, which then splits on '/' and '@' as librbd's callers read it.
 */
static int take_name(struct rbd_spec *s, char *field, char *why, size_t len)
{
	char *p = field, *at, *slash, *slash2;
	int bad = 0;

	if (escaped_split(field))
		return name_bad(why, len, "a '/' or '@' inside an RBD pool, "
				"namespace, image or snapshot name cannot be "
				"named (rename it: rbd rename)", field);
	unescape(field);
	s->name = field;
	slash = strchr(p, '/');
	slash2 = slash ? strchr(slash + 1, '/') : NULL;
	at = strchr(p, '@');
	if (slash2 && strchr(slash2 + 1, '/'))
		bad = 1;
	/* a name starting with '-' would read as an option of rbd's */
	if (bad || !slash || slash == p || !slash[1] || slash[1] == '@' ||
	    slash[1] == '/' || (slash2 && (!slash2[1] || slash2[1] == '@')) ||
	    p[0] == '-' || (at && (at < (slash2 ? slash2 : slash) || !at[1] ||
				   strchr(at + 1, '@'))))
		return name_bad(why, len, "no POOL/IMAGE in the RBD name",
				NULL);
	s->snap = at != NULL;
	return 0;
}

/*
 * The conf file: librados does what it says (its admin_socket, log_file,
 * keyring...), so it must be one only root or the caller can change: a
 * regular file of theirs, not writable by others, in a folder others
 * cannot replace it in.  0, or 1 with @why said.
 */
static int conf_safe(const char *path, char *why, size_t len)
{
	char real[PATH_MAX], *slash;
	uid_t me = geteuid();
	struct stat st;

	if (!realpath(path, real) || stat(real, &st))
		return name_bad(why, len, "cannot find the conf file", path);
	if (!S_ISREG(st.st_mode) || (st.st_uid && st.st_uid != me) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)))
		goto unsafe;
	slash = strrchr(real, '/');
	if (slash == real)
		slash++;
	*slash = '\0';
	if (stat(real, &st) || (st.st_uid && st.st_uid != me) ||
	    ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)))
		goto unsafe;
	return 0;
unsafe:
	snprintf(why, len, "the conf file %s can be changed by others than "
		 "root or you (librados does what it says): make it yours "
		 "and not writable by group or others, in a folder of yours",
		 path);
	return 1;
}

/* Does @s set @key already? */
static int has_key(const struct rbd_spec *s, const char *key)
{
	int i;

	if (!strcmp(key, "conf"))
		return s->conf != NULL;
	if (!strcmp(key, "id"))
		return s->id != NULL;
	for (i = 0; i < s->nopts; i++)
		if (!strcmp(s->key[i], key))
			return 1;
	return 0;
}

/* One KEY=VALUE field after the name. */
static int take_opt(struct rbd_spec *s, char *kv, char *why, size_t len)
{
	int bad = 0;
	char *val = cut(kv, '=', &bad);
	size_t k;

	if (bad || !val || !*kv || !*val)
		return name_bad(why, len, "an RBD option that is not KEY=VALUE",
				kv);
	unescape(kv);
	unescape(val);
	for (k = 0; k < NKEYS && strcmp(keys[k].key, kv); k++)
		;
	if (k == NKEYS) {
		snprintf(why, len, "%s= after an RBD name is refused: a name "
			 "is read as data, never as a Ceph option (an image "
			 "whose name holds ':' is written with \\:); the keys "
			 "taken are conf, id, mon_host and the rados_osd_op_, "
			 "rados_mon_op_ and client_mount_ timeouts: set any "
			 "other (admin_socket, log_file, keyring...) in the "
			 "conf file conf= names", kv);
		return 1;
	}
	if (has_key(s, kv))
		return name_bad(why, len, "an RBD option given twice", kv);
	/* qemu reads any '@' after the pool as the snapshot's mark */
	if (strchr(val, '@') || (keys[k].chars &&
				 val[strspn(val, keys[k].chars)]))
		return name_bad(why, len, "a character that value cannot "
				"hold", kv);
	if (!keys[k].chars)
		return conf_safe(val, why, len) ? 1 : (s->conf = val, 0);
	if (!strcmp(kv, "id"))
		s->id = val;
	else {
		s->key[s->nopts] = kv;
		s->val[s->nopts++] = val;
	}
	return 0;
}

int e2t_rbd_name_parse(struct rbd_spec *s, char *why, size_t len)
{
	char *field = s->buf, *next;
	int bad = 0;

	next = cut(field, ':', &bad);
	if (bad || take_name(s, field, why, len))
		return bad ? name_bad(why, len, "a '\\' ends the RBD name",
				      NULL) : 1;
	while (next) {
		field = next;
		next = cut(field, ':', &bad);
		if (bad)
			return name_bad(why, len, "a '\\' ends the RBD name",
					NULL);
		if (take_opt(s, field, why, len))
			return 1;
	}
	return 0;
}
