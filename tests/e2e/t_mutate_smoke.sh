#!/bin/bash
# A bounded run of the mutation campaign (make mutate runs 10 000): a few
# hundred random debugfs edits of the clean fixtures, a fixed seed.  Each
# mutant is judged by the one rule (tests/mutate/judge.py): e2trim
# refuses with a documented code and a message, or every file e2fsck -fy
# keeps on a copy is byte for byte the same after a real trim and e2fsck
# -fy.  Any unsafe mutant fails the test; its case (fixture, seed, debugfs
# script) is printed, and tests/mutate/mutate.py replay CASEDIR runs it
# again.  Then the harness itself: a broken e2trim or e2fsck must make
# it fail, never look safe.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"
MUTATE=$(cd "$(dirname "$0")/../mutate" && pwd)/mutate.py
command -v python3 >/dev/null || fail "python3 is missing (make deps)"

n=${MUTATE_SMOKE:-300}
# under a checker (E2E_SAMPLE), a third of them
[ -z "$E2E_SAMPLE" ] || n=${MUTATE_SMOKE:-100}
# the small fixtures (16-32 MiB, and bigalloc): setup stays a few seconds
fx=ext2-1k,ext3,ext4-noflex,ext4-bigalloc16k,ext4-uninitbg,ext4-sparse2,ext4-mmp,rich
if ! python3 "$MUTATE" --cache "$T/fx" run -n "$n" --seed 20261203 -j 2 --minimize 1 \
	--fixtures "$fx" --cases "$T/cases" >"$T/mutate.out" 2>&1; then
	cat "$T/mutate.out" >&2
	for d in "$T"/cases/*/; do
		grep -q '"verdict": "\(unsafe\|crashed\|bad_\|dry_run\|fsck_failed\)' \
			"${d}case.json" 2>/dev/null || continue
		echo "--- $(basename "$d"): ${d}min.dfs" >&2
		cat "${d}min.dfs" "${d}script.dfs" 2>/dev/null | head -20 >&2
	done
	fail "unsafe mutants, or mutants the harness could not judge (above)"
fi
line=$(grep '^mutants tried' "$T/mutate.out")
echo "$line"
# count WORD: the figure after WORD in the summary line
count() { sed -n "s/.*[ (]$1 \([0-9]*\)[,;)].*/\1/p" <<<"$line"; }
[[ "$line" == "mutants tried $n:"* ]] || fail "not every mutant was judged"
# both sides of the rule must be exercised, or the figures prove nothing
[ "$(count trimmed)" -gt 0 ] || fail "no mutant was trimmed"
[ "$(count refused)" -gt 0 ] || fail "no mutant was refused"
[ "$(count 'dry run wrote')" = 0 ] || fail "a dry run changed an image"

# The harness on broken programs: each must fail (exit 1) with its kind
# counted.  A whole run for those that fail every mutant; one mutant that
# must be trimmed (the clean fixture, no edit) for the others.
broken_run() {	# WHAT KIND: the env is already set
	local out=$T/broken.out
	if python3 "$MUTATE" --cache "$T/fx" run -n 8 --seed 7 -j 2 --no-minimize \
		--fixtures ext4-noflex --cases "$T/bcases" >"$out" 2>&1; then
		cat "$out" >&2
		fail "$1: the harness exited 0"
	fi
	grep -q "^mutants tried 8:.*[ (]$2 8[,;)]" "$out" ||
		{ cat "$out" >&2; fail "$1: not every mutant counted as '$2'"; }
	note "$1: harness fails ($(grep -o "$2 [0-9]*" "$out" | head -1))"
}
echo "# no edit" >"$T/clean.dfs"
broken_check() {	# WHAT VERDICT
	local out=$T/broken.out
	if python3 "$MUTATE" --cache "$T/fx" check ext4-noflex "$T/clean.dfs" >"$out" 2>&1; then
		cat "$out" >&2
		fail "$1: the harness exited 0"
	fi
	grep -q "^verdict: $2 " "$out" || { cat "$out" >&2; fail "$1: verdict is not $2"; }
	note "$1: $(head -1 "$out")"
}
python3 "$MUTATE" --cache "$T/fx" check ext4-noflex "$T/clean.dfs" >"$T/clean.out" 2>&1 ||
	{ cat "$T/clean.out" >&2; fail "the clean fixture is not judged trimmed"; }
grep -q "^verdict: trimmed " "$T/clean.out" || fail "the clean fixture: $(head -1 "$T/clean.out")"
mkdir -p "$T/bin"
E2TRIM=/bin/false broken_run "E2TRIM=/bin/false" "bad exit"
E2TRIM=/bin/true broken_run "E2TRIM=/bin/true" "bad output"
# a refusal code without a word of why is no refusal
printf '#!/bin/sh\nexit 19\n' >"$T/bin/mute19"
# a dry run that trims for real (the $ signs are the wrapper's own)
# shellcheck disable=SC2016
printf '#!/bin/sh\n[ "$1" = -n ] && shift\nexec "%s" "$@"\n' "$E2TRIM" >"$T/bin/nodry"
# a trim that plans the ranges but punches nothing
# shellcheck disable=SC2016
printf '#!/bin/sh\n[ "$1" = -n ] || set -- -n "$@"\nexec "%s" "$@"\n' "$E2TRIM" >"$T/bin/notrim"
# e2fsck exits 8 while e2trim planned a trim: reported, not skipped
printf '#!/bin/sh\ne2fsck "$@" >/dev/null 2>&1\nexit 8\n' >"$T/bin/fsck8"
chmod +x "$T"/bin/*
# a real trim that also overwrites what e2fsck keeps beside the files:
# the journal's log blocks (e2fsck -fy does not read an empty log, and no
# file changes) or an in-use xattr block.  The judge compares every block
# in use after e2fsck -fy, and e2fsck's own verdict, so both are unsafe.
# (The $ signs are the wrapper's own.)
# shellcheck disable=SC2016
printf '%s\n' '#!/bin/bash' "\"$E2TRIM\" \"\$@\" || exit" \
	'[ "$1" = -n ] && exit 0' \
	'img=${*: -1}' \
	'bs=$(dumpe2fs -h "$img" 2>/dev/null | sed -n "s/^Block size: *//p")' \
	'case $(basename "$0") in' \
	'wipe-journal) blocks=$(debugfs -R "blocks <8>" "$img" 2>/dev/null | cut -d" " -f2-) ;;' \
	'wipe-xattr) blocks=$(debugfs -R "stat /d1/f4" "$img" 2>/dev/null | sed -n "s/.*File ACL: \([0-9]*\).*/\1/p") ;;' \
	'esac' \
	'[ -n "$blocks" ] || { echo "wipe: nothing found to wipe" >&2; exit 99; }' \
	'python3 -c "import sys; f = open(sys.argv[1], \"r+b\"); bs = int(sys.argv[2])' \
	'for b in sys.argv[3:]: f.seek(int(b) * bs); f.write(b\"\\x5a\" * bs)" "$img" "$bs" $blocks' \
	>"$T/bin/wipe"
chmod +x "$T/bin/wipe"
ln -s wipe "$T/bin/wipe-journal"
ln -s wipe "$T/bin/wipe-xattr"
E2TRIM=$T/bin/mute19 broken_check "exit 19 and nothing said" bad_exit
E2TRIM=$T/bin/nodry broken_check "a dry run that writes" dry_run_wrote
E2TRIM=$T/bin/notrim broken_check "a real trim that punches nothing" bad_output
E2FSCK=$T/bin/fsck8 broken_check "e2fsck exit 8" fsck_failed
E2TRIM=$T/bin/wipe-journal broken_check "a trim that wipes the journal's log" unsafe
broken_check_on() {	# FIXTURE WHAT VERDICT: broken_check on another fixture
	local out=$T/broken.out
	if python3 "$MUTATE" --cache "$T/fx" check "$1" "$T/clean.dfs" >"$out" 2>&1; then
		cat "$out" >&2
		fail "$2: the harness exited 0"
	fi
	grep -q "^verdict: $3 " "$out" || { cat "$out" >&2; fail "$2: verdict is not $3"; }
	note "$2: $(head -1 "$out")"
}
E2TRIM=$T/bin/wipe-xattr broken_check_on rich "a trim that zeroes an in-use xattr block" unsafe
# a real trim that also discards the first block past the filesystem's
# end (the judged image goes on with data there), and one that leaves
# the MMP block marked in use (sequence 0x4242, not EXT4_MMP_SEQ_CLEAN).
# (The $ signs are the wrapper's own.)
# shellcheck disable=SC2016
printf '%s\n' '#!/bin/bash' "\"$E2TRIM\" \"\$@\" || exit" \
	'[ "$1" = -n ] && exit 0' \
	'img=${*: -1}' \
	'bs=$(dumpe2fs -h "$img" 2>/dev/null | sed -n "s/^Block size: *//p")' \
	'n=$(dumpe2fs -h "$img" 2>/dev/null | sed -n "s/^Block count: *//p")' \
	'case $(basename "$0") in' \
	'past-end) fallocate -p -o $((n * bs)) -l "$bs" "$img" ;;' \
	'mmp-left) mb=$(dumpe2fs -h "$img" 2>/dev/null | sed -n "s/^MMP block number: *//p")' \
	'	[ -n "$mb" ] || { echo "mmp-left: no MMP block" >&2; exit 99; }' \
	'	printf "\x42\x42\x00\x00" | dd of="$img" bs=1 seek=$((mb * bs + 4)) conv=notrunc status=none ;;' \
	'esac' >"$T/bin/after"
chmod +x "$T/bin/after"
ln -s after "$T/bin/past-end"
ln -s after "$T/bin/mmp-left"
E2TRIM=$T/bin/past-end broken_check "a trim that also discards the first block past the filesystem" unsafe
grep -q "blocks in use after e2fsck -fy differ: \[$(dumpe2fs -h "$T/fx/ext4-noflex.img" 2>/dev/null |
	sed -n 's/^Block count: *//p')\]" "$T/broken.out" || { cat "$T/broken.out" >&2; fail "past-end: not the block past the end"; }
E2TRIM=$T/bin/mmp-left broken_check_on ext4-mmp "a trim that leaves the MMP block in use" unsafe
assert_grep "the MMP block is left marked in use" "$T/broken.out" "mmp-left: the reason"
# one refusal where e2fsck -fy changes nothing (the clean fixture,
# refused with e2trim's words): a one-off check fails on it (exit 2)
# shellcheck disable=SC2016  # the $1 is the fake program's own
printf '#!/bin/sh\necho "e2trim: $1: refused for the test" >&2\nexit 19\n' >"$T/bin/refuse19"
chmod +x "$T/bin/refuse19"
rc=0
E2TRIM=$T/bin/refuse19 python3 "$MUTATE" --cache "$T/fx" check ext4-noflex "$T/clean.dfs" >"$T/broken.out" 2>&1 || rc=$?
grep -q "^verdict: refused_clean " "$T/broken.out" || { cat "$T/broken.out" >&2; fail "refuse19: not refused_clean"; }
assert_eq "$rc" 2 "check's exit on refused_clean"
note "a refusal of a clean mutant: $(head -1 "$T/broken.out"), check exits 2"
# a program that refuses everything, with e2trim's words and a refusal
# code: the control mutants (one in ten) must be trimmed, so it fails
# shellcheck disable=SC2016
printf '#!/bin/sh\necho "e2trim: $1: block bitmap marks in-use blocks free; run e2fsck -f" >&2\nexit 19\n' \
	>"$T/bin/refuse-all"
chmod +x "$T/bin/refuse-all"
if E2TRIM=$T/bin/refuse-all python3 "$MUTATE" --cache "$T/fx" run -n 40 --seed 7 -j 2 \
	--no-minimize --fixtures "$fx" --cases "$T/rcases" >"$T/refuse.out" 2>&1; then
	cat "$T/refuse.out" >&2
	fail "a program that refuses everything: the harness exited 0"
fi
grep -q '^mutants tried 40:.*refused control [1-9]' "$T/refuse.out" ||
	{ cat "$T/refuse.out" >&2; fail "refuse-all: no control counted as refused"; }
note "a program that refuses everything: $(grep -o 'refused control [0-9]*' "$T/refuse.out") of 40 fail it"
exit 0
