#!/bin/bash
# Lists and many targets (issue 26, point 3).  --targets-from given twice
# reads both files, in order (it used to keep only the last: half a fleet
# skipped, exit 0).  A carriage return inside a line (a.img\rjunk used to
# trim a.img) and a UTF-8 byte order mark (it became part of the first
# name) are refused with their line numbers; a CRLF line end is a line
# end.  With several targets --list names the target of each range in a
# first column (lsblk -r's escapes), and --json --list carries the same
# ranges in each target's "list".  No root needed: image files.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"

cd "$T" || fail "cd"
mkfs a.img 32M -t ext4
age a.img 5
mkfs b.img 32M -t ext4
age b.img 6
mkfs "c d.img" 32M -t ext4
age "c d.img" 7

# two lists: every target of both, in order
printf 'a.img\n' >l1
printf 'b.img\n' >l2
run_e2trim -n -v --targets-from l1 --targets-from l2
assert_rc 0 "--targets-from twice"
assert_eq "$(sed -n 's/^\([^:]*\): .* trimmed (dry run)$/\1/p' "$OUT" | tr '\n' ' ')" \
	"a.img b.img " "--targets-from twice: both lists, in order"
run_e2trim -n -v --targets-from l2 b.img --targets-from l1
assert_eq "$(sed -n 's/^\([^:]*\): .* trimmed (dry run)$/\1/p' "$OUT" | tr '\n' ' ')" \
	"b.img a.img " "arguments first, then each list (b.img twice: refused once)"
assert_grep "b.img: is given twice" "$ERR" "b.img from the list is the argument's twin"
printf 'c d.img\n' >l3
run_e2trim -n -v --targets-from l1 --targets-from - <l3
assert_rc 0 "--targets-from FILE and standard input"
assert_eq "$(sed -n 's/^\(.*\): .* trimmed (dry run)$/\1/p' "$OUT" | tr '\n' ' ')" \
	"a.img c d.img " "a file, then standard input"

# a carriage return inside a name: the line is refused, a.img untouched
sum=$(md5sum <a.img)
alloc=$(alloc_bytes b.img)
printf 'b.img\na.img\rjunk\n' >cr.list
run_e2trim -v --targets-from cr.list
assert_rc 64 "CR inside a line: refused, the others trimmed"
assert_grep "cr.list:2: line 2 holds a carriage return" "$ERR" "CR: the line named"
assert_eq "$(md5sum <a.img)" "$sum" "CR: a.img was not trimmed"
[ "$(alloc_bytes b.img)" -lt "$alloc" ] || fail "CR: b.img was not trimmed"

# a UTF-8 byte order mark at the start
printf '\xef\xbb\xbfa.img\nb.img\n' >bom.list
run_e2trim -n -v --targets-from bom.list
assert_rc 64 "BOM: line 1 refused, line 2 trimmed"
assert_grep "bom.list:1: line 1 begins with a UTF-8 byte order mark" "$ERR" "BOM: the line named"
assert_grep "^b.img: .* trimmed (dry run)$" "$OUT" "BOM: b.img still trimmed"

# CRLF line ends (a list written on Windows): accepted
printf 'a.img\r\nb.img\r\n' >crlf.list
run_e2trim -n -v --targets-from crlf.list
assert_rc 0 "CRLF line ends"
assert_eq "$(sed -n 's/^\([^:]*\): .* trimmed (dry run)$/\1/p' "$OUT" | tr '\n' ' ')" \
	"a.img b.img " "CRLF: both names, without the CR"

# --list with several targets: "<target> <start> <length>", the target
# escaped as lsblk -r does; the same ranges as each target alone
: >"$T/ref"
for n in a.img b.img "c d.img"; do
	run_e2trim -n --list "$n"
	assert_rc 0 "--list $n alone"
	sed "s/^/$(printf '%s' "$n" | sed 's/ /\\\\x20/g') /" "$OUT" >>"$T/ref"
done
run_e2trim -n --list -j 2 a.img b.img "c d.img"
assert_rc 0 "--list, three targets"
cmp -s "$OUT" "$T/ref" || { diff "$OUT" "$T/ref" | head; fail "--list with several targets: not the ranges of each, named"; }
assert_grep '^c\\x20d.img [0-9]* [0-9]*$' "$OUT" "--list: a space in a name escaped"

# --json --list: each target's "list" holds its ranges
run_e2trim -n --json --list a.img b.img "c d.img"
assert_rc 0 "--json --list"
python3 - "$OUT" "$T/ref" <<'PY' || fail "--json --list: not the ranges of --list"
import json, sys
d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
got = []
for t in d["targets"]:
    name = t["target"].replace(" ", "\\x20")
    got += [f'{name} {r["start"]} {r["length"]}' for r in t["list"]]
ref = open(sys.argv[2]).read().split("\n")[:-1]
if got != ref or not got:
    sys.exit(f"{len(got)} ranges in the document, {len(ref)} listed")
PY
run_e2trim -n --json a.img
assert_eq "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["targets"][0]["list"])' <"$OUT")" \
	"None" "--json without --list: list null"
exit 0
