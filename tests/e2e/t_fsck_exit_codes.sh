#!/bin/bash
# --fsck with a stand-in e2fsck ($E2FSCK) that records its arguments and
# exits with the code it is told: 0 and 1 let the trim go on; 2 and 3
# stop it with exit 20, 4 and above, a crash, or no e2fsck at all with
# 21, and then not a byte of the image changes.  e2fsck's output is shown
# (on stderr); --fsck=force adds -f; -n runs e2fsck -n instead of -p.
# Whatever e2fsck says, the gates run again afterwards.  No root needed
# but for the last part (a mounted loop device).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"

orig="$T/orig.img" img="$T/f.img"
mkfs "$orig" 32M -t ext4
age "$orig" 3

cat >"$T/fake-e2fsck" <<'EOF'
#!/bin/sh
echo "$*" >>"$FAKE_ARGS"
echo "fake e2fsck: checking $*"
[ "$FAKE_RC" != kill ] || kill -9 $$
exit "$FAKE_RC"
EOF
chmod +x "$T/fake-e2fsck"
export E2FSCK="$T/fake-e2fsck" FAKE_ARGS="$T/args" FAKE_RC=0
last_args() { tail -n 1 "$FAKE_ARGS"; }

# e2fsck's exit code -> e2trim's, and what the message says it was
for c in "0 0" "1 0" "2 20 reboot needed" "3 20 errors corrected, reboot needed" \
	"4 21 errors left uncorrected" "8 21 operational error" \
	"12 21 errors left uncorrected, operational error" "16 21 usage error" \
	"32 21 cancelled" "128 21 shared library error" "kill 21"; do
	read -r code want what <<<"$c"
	cp "$orig" "$img"
	sum=$(sha_of "$img")
	before=$(alloc_bytes "$img")
	FAKE_RC=$code run_e2trim --fsck -v "$img"
	assert_rc "$want" "e2fsck exiting $code"
	assert_grep "fake e2fsck: checking -p $img" "$ERR" "e2fsck's output ($code)"
	assert_eq "$(last_args)" "-p $img" "e2fsck's arguments"
	if [ "$want" = 0 ]; then
		assert_grep "trimmed" "$OUT" "trim after e2fsck exit $code"
		[ "$(alloc_bytes "$img")" -lt "$before" ] ||
			fail "e2fsck exit $code: nothing was trimmed"
		continue
	fi
	assert_eq "$(sha_of "$img")" "$sum" "image after e2fsck exit $code"
	[ ! -s "$OUT" ] || fail "e2fsck exit $code: e2trim printed a report"
	assert_grep "nothing trimmed" "$ERR" "message for e2fsck exit $code"
	if [ "$code" = kill ]; then
		assert_grep "e2fsck was killed by signal 9" "$ERR" "killed e2fsck"
	else
		assert_grep "e2fsck exited with $code ($what)" "$ERR" "message for $code"
	fi
	[ "$want" = 20 ] && assert_grep "reboot, then run e2trim again" "$ERR" "fix for $code"
	[ "$want" = 21 ] && assert_grep "run e2fsck -f by hand" "$ERR" "fix for $code"
done
note "e2fsck 0, 1 -> trim; 2, 3 -> 20; 4..128 and killed -> 21, image unchanged"

# no e2fsck to run
cp "$orig" "$img"
sum=$(sha_of "$img")
E2FSCK="$T/no-such-e2fsck" run_e2trim --fsck "$img"
assert_rc 21 "missing e2fsck"
# posix_spawnp reports ENOENT itself, except where it forks and the child
# can only exit 127 (under valgrind): both must say e2fsck did not run.
grep -Eq "cannot run $T/no-such-e2fsck: (No such file or directory|not found or not executable); nothing trimmed" \
	"$ERR" || fail "missing e2fsck message: $(cat "$ERR")"
assert_eq "$(sha_of "$img")" "$sum" "image after a missing e2fsck"

# a child exiting 127 or 126 (a shell's "command not found", "cannot
# execute") did not run e2fsck
for code in 127 126; do
	FAKE_RC=$code run_e2trim --fsck "$img"
	assert_rc 21 "e2fsck exiting $code"
	assert_grep "cannot run $T/fake-e2fsck: not found or not executable; nothing trimmed" \
		"$ERR" "message for exit $code"
	assert_eq "$(sha_of "$img")" "$sum" "image after exit $code"
done

# the command lines: -f with force, -n instead of -p on a dry run
run_e2trim --fsck=force "$img"
assert_rc 0 "--fsck=force"
assert_eq "$(last_args)" "-f -p $img" "--fsck=force arguments"
cp "$orig" "$img"
run_e2trim --fsck -n -v "$img"
assert_rc 0 "--fsck -n"
assert_eq "$(last_args)" "-n $img" "--fsck -n arguments"
run_e2trim --fsck=force --dry-run "$img"
assert_eq "$(last_args)" "-f -n $img" "--fsck=force --dry-run arguments"
assert_eq "$(sha_of "$img")" "$sum" "image after dry runs with --fsck"
lines=$(wc -l <"$FAKE_ARGS")
run_e2trim -n "$img"
assert_rc 0 "no --fsck"
assert_eq "$(wc -l <"$FAKE_ARGS")" "$lines" "e2fsck run without --fsck"
run_e2trim --fsck=yes "$img"
assert_rc 3 "--fsck=yes"
assert_grep "invalid --fsck argument: yes" "$ERR" "--fsck=yes message"
run_e2trim --fsck force "$img"
assert_rc 3 "--fsck force (the argument needs =)"
note "e2fsck -p, -f -p, -n, -f -n as asked; none without --fsck"

# e2fsck says all is well, but the filesystem still has errors recorded:
# the gates, run afresh after e2fsck, refuse it
cp "$orig" "$img"
debugfs -w -R "ssv state 3" "$img" >/dev/null 2>&1 || fail "debugfs ssv state"
sum=$(sha_of "$img")
for code in 0 1; do
	FAKE_RC=$code run_e2trim --fsck "$img"
	assert_rc 13 "errors recorded, e2fsck exits $code"
	assert_grep "has errors recorded" "$ERR" "gate after e2fsck $code"
done
assert_eq "$(sha_of "$img")" "$sum" "image refused after e2fsck"
note "the gates run again after e2fsck: errors still recorded -> 13"

# mounted: e2trim's own refusal (10), and e2fsck is not run at all
if [ "$(id -u)" = 0 ] && losetup -f >/dev/null 2>&1; then
	cp "$orig" "$img"
	dev=$(loop_attach "$img")
	LOOPS+=("$dev")
	mkdir -p "$T/mnt"
	mount -o ro "$dev" "$T/mnt" || fail "mount $dev"
	MOUNTS+=("$T/mnt")
	lines=$(wc -l <"$FAKE_ARGS")
	for target in "$dev" "$img"; do
		run_e2trim --fsck=force "$target"
		assert_rc 10 "--fsck on mounted $target"
		assert_grep "unmount it first" "$ERR" "--fsck on mounted $target"
	done
	assert_eq "$(wc -l <"$FAKE_ARGS")" "$lines" "e2fsck run on a mounted filesystem"
	note "mounted: 10, and e2fsck not run"
else
	left_out "the mounted case (needs root and a loop device)"
fi
finish
