#!/bin/bash
# A library caller that forks (issue 34 point 1): the child's
# e2trim_free() must not release what the parent holds.  A small program
# through the installed public API opens a target for a real trim, forks,
# the child frees its copy of the handle and exits, and then:
#  - on an MMP filesystem: the MMP block still says "e2fsck is running"
#    (debugfs dump_mmp: sequence e24d4d50) while the parent holds it, and
#    is clean (ff4d4d50) once the parent has freed its handle; e2fsck -fn
#    is clean (before the fix, the child's free wrote it clean under the
#    parent's feet);
#  - on a qcow2 image: the parent's connection still works after the
#    child's free (a whole trim through it: exit 0, the image shrinks),
#    where the child's free used to kill the parent's qemu-nbd.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
mmp_no_wait	# MMP is taken here, but this is not about another node
command -v pkg-config >/dev/null || skip "pkg-config not installed (make deps installs it)"
command -v qemu-img >/dev/null || skip "qemu-img not installed (make deps installs it)"
lib_install

cat >"$T/forked.c" <<'C'
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <e2trim.h>

/* open ARGV[1] to trim; fork; the child frees; "forked"; wait for a
 * byte on stdin; trim; free; "freed" */
int main(int argc, char **argv)
{
	struct e2trim *t;
	errcode_t err;
	pid_t pid;
	char c;
	int st;

	if (argc != 2 || e2trim_new(&t))
		return 2;
	err = e2trim_open(t, argv[1]);
	if (err) {
		fprintf(stderr, "open: %ld\n", (long)err);
		return 2;
	}
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		e2trim_free(t);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return 2;
	printf("forked\n");
	fflush(stdout);
	if (read(0, &c, 1) != 1)
		return 2;
	err = e2trim_apply(t, NULL, NULL);
	if (err)
		fprintf(stderr, "apply: %ld\n", (long)err);
	e2trim_free(t);
	printf("freed\n");
	return err ? 1 : 0;
}
C
# shellcheck disable=SC2086  # $flags is pkg-config's words
cc -std=gnu99 -Wall -Wextra -Werror "${sanflags[@]}" "$T/forked.c" $flags -o "$T/forked" 2>"$T/cc.out" ||
	{ cat "$T/cc.out"; fail "the program does not build"; }

# run_forked IMG CHECK: the program on IMG; CHECK runs while the parent
# holds the handle and its child has freed its copy
run_forked() {
	local img=$1 check=$2 line rc=0
	rm -f "$T/in" "$T/outp"
	mkfifo "$T/in" "$T/outp" || fail "mkfifo"
	"$T/forked" "$img" <"$T/in" >"$T/outp" 2>"$T/err" &
	local pid=$!
	exec 5>"$T/in" 6<"$T/outp"
	read -r -t 300 -u 6 line || true
	[ "$line" = forked ] || { cat "$T/err"; fail "$img: the program did not fork ($line)"; }
	"$check"
	printf x >&5
	read -r -t 300 -u 6 line || true
	exec 5>&- 6<&-
	wait "$pid" || rc=$?
	[ "$line" = freed ] || { cat "$T/err"; fail "$img: the parent did not free"; }
	RC=$rc
}

mmp_seq() { dfs_read "$1" dump_mmp | sed -n 's/^sequence: //p'; }

img=$T/mmp.img
mkfs "$img" 64M -t ext4 -O mmp -E mmp_update_interval=1
assert_eq "$(mmp_seq "$img")" ff4d4d50 "MMP before"
# shellcheck disable=SC2317  # called by run_forked
held() { assert_eq "$(mmp_seq "$img")" e24d4d50 "MMP after the child's e2trim_free(), the parent holding it"; }
run_forked "$img" held
assert_eq "$RC" 0 "MMP: the parent's trim"
assert_eq "$(mmp_seq "$img")" ff4d4d50 "MMP after the parent's e2trim_free()"
e2fsck -fn "$img" >/dev/null 2>&1 || fail "MMP: e2fsck -fn after"
note "MMP: held by the parent after the child's e2trim_free(), clean after the parent's"

# a qcow2 whose free space holds data (a deleted file), 4 KiB clusters
raw=$T/q.raw
mkfs "$raw" 64M -t ext4 -b 4096
head -c $((8 << 20)) /dev/urandom >"$T/big"
debugfs -w -R "write $T/big big" "$raw" >/dev/null 2>&1 || fail "debugfs write"
debugfs -w -R "rm big" "$raw" >/dev/null 2>&1 || fail "debugfs rm"
qemu-img convert -O qcow2 -o cluster_size=4096 "$raw" "$T/q.qcow2" || fail "qemu-img convert"
before=$(alloc_bytes "$T/q.qcow2")
# shellcheck disable=SC2317  # called by run_forked
nothing() { :; }
run_forked "$T/q.qcow2" nothing
assert_eq "$RC" 0 "qcow2: the parent's trim after the child's e2trim_free()"
after=$(alloc_bytes "$T/q.qcow2")
[ "$after" -lt $((before - (4 << 20))) ] || fail "qcow2: $before -> $after bytes: not trimmed"
qemu-img check "$T/q.qcow2" >/dev/null 2>&1 || fail "qcow2: qemu-img check"
note "qcow2: the parent trimmed through its qemu-nbd after the child's e2trim_free(): $before -> $after bytes"
exit 0
