// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_rbd_name.c - an rbd: name is data: only the keys that touch no
 *                   local file are taken after it, escapes as qemu reads
 *                   them, what cannot be carried refused (rbd_name.c)
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include "e2trim_err.h"
#include "image_rbd.h"
#include "rbd_int.h"

static char dir[] = "/tmp/test_rbd_name.XXXXXX";
static char conf[64], open_conf[64];

static int setup(void **state)
{
	FILE *f;

	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(conf, sizeof(conf), "%s/ceph.conf", dir);
	snprintf(open_conf, sizeof(open_conf), "%s/open.conf", dir);
	f = fopen(conf, "w");
	if (!f)
		return -1;
	fclose(f);
	f = fopen(open_conf, "w");
	if (!f)
		return -1;
	fclose(f);
	chmod(conf, 0644);
	return chmod(open_conf, 0666);
}

static int teardown(void **state)
{
	(void)state;
	unlink(conf);
	unlink(open_conf);
	return rmdir(dir);
}

/* @path parsed: 0 and the spec, or the usage error with @want in why */
static struct rbd_spec *ok(const char *path)
{
	struct rbd_spec *s;
	char why[512] = "";

	if (e2t_rbd_spec_parse(path, &s, why, sizeof(why)))
		fail_msg("%s: refused: %s", path, why);
	return s;
}

static void refused(const char *path, const char *want)
{
	struct rbd_spec *s = NULL;
	char why[512] = "";

	assert_int_equal(e2t_rbd_spec_parse(path, &s, why, sizeof(why)),
			 E2TRIM_ERR_USAGE);
	assert_null(s);
	if (!strstr(why, want))
		fail_msg("%s: \"%s\" does not say \"%s\"", path, why, want);
}

static void test_names(void **state)
{
	struct rbd_spec *s;
	char path[256];

	(void)state;
	s = ok("rbd:rbd/img");
	assert_string_equal(s->name, "rbd/img");
	assert_int_equal(s->snap, 0);
	assert_null(s->conf);
	e2t_rbd_spec_free(s);
	/* escapes undone for librbd, the name kept as written for qemu */
	s = ok("rbd:rbd/ns/web\\:1@s\\\\1");
	assert_string_equal(s->name, "rbd/ns/web:1@s\\1");
	assert_int_equal(s->snap, 1);
	assert_non_null(strstr(e2t_rbd_spec_qemu_name(s), "rbd:rbd/ns/web\\:1@"));
	e2t_rbd_spec_free(s);
	snprintf(path, sizeof(path), "rbd:rbd/img:conf=%s:id=admin."
		 "x_1:mon_host=[v2\\:127.0.0.1\\:3300]:rados_osd_op_timeout=5",
		 conf);
	s = ok(path);
	assert_string_equal(s->conf, conf);
	assert_string_equal(s->id, "admin.x_1");
	assert_int_equal(s->nopts, 2);
	assert_string_equal(s->val[0], "[v2:127.0.0.1:3300]");
	/* the timeout set is not added again for qemu */
	assert_null(strstr(e2t_rbd_spec_qemu_name(s), "rados_osd_op_timeout=60"));
	e2t_rbd_spec_free(s);
}

static void test_refused(void **state)
{
	char path[256];

	(void)state;
	/* README's old fleet recipe over an image named so */
	refused("rbd:rbd/vm7:admin_socket=/some/file", "admin_socket= after");
	refused("rbd:rbd/vm7:log_file=/x", "log_file= after");
	refused("rbd:rbd/vm7:keyring=/x", "keyring= after");
	refused("rbd:rbd/vm7:run_dir=/x", "run_dir= after");
	/* what cannot be carried */
	refused("rbd:rbd/vm7\\:admin_socket=\\/some\\/file", "rename it");
	refused("rbd:rbd/a\\@b", "rename it");
	refused("rbd:rbd/img\\", "ends the RBD name");
	refused("rbd:rbd/img:conf=/x\\", "ends the RBD name");
	/* values */
	refused("rbd:rbd/img:id=../x", "cannot hold: id");
	refused("rbd:rbd/img:mon_host=a@b", "cannot hold: mon_host");
	refused("rbd:rbd/img:rados_mon_op_timeout=1d", "cannot hold");
	refused("rbd:rbd/img:1", "not KEY=VALUE");
	refused("rbd:rbd/img:id=", "not KEY=VALUE");
	refused("rbd:rbd/img:id=a:id=b", "given twice");
	refused("rbd:rbd/img:conf=/nonexistent/e2trim.conf", "cannot find");
	snprintf(path, sizeof(path), "rbd:rbd/img:conf=%s", open_conf);
	refused(path, "can be changed by others");
	/* shapes */
	refused("rbd:rbd", "no POOL/IMAGE");
	refused("rbd:/img", "no POOL/IMAGE");
	refused("rbd:rbd/", "no POOL/IMAGE");
	refused("rbd:rbd//img", "no POOL/IMAGE");
	refused("rbd:rbd/ns/", "no POOL/IMAGE");
	refused("rbd:rbd/a/b/c", "no POOL/IMAGE");
	refused("rbd:rbd/img@", "no POOL/IMAGE");
	refused("rbd:rbd/img@a@b", "no POOL/IMAGE");
	refused("rbd:rbd/ns@s/img", "no POOL/IMAGE");
	refused("rbd:-x/img", "no POOL/IMAGE");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
