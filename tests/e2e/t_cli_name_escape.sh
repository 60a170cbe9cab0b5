#!/bin/bash
# A target's name is bytes, and a line of text shows each control byte of
# it as \xHH, as --list writes names: an image named with a terminal's
# "set title" sequence (ESC ] 0 ; title BEL) and a newline, refused as
# unclean, gets a one-line message with the name escaped and no raw ESC,
# BEL or newline in it; so do a message that names it twice (the same
# file under another name), -v's lines on stdout, --histogram's title and
# the progress line (whose own ESC [ K is all the ESC it holds).  --list
# with two targets still writes the lsblk -r form, and --json still holds
# the exact name (a JSON parser gives the bytes back).  No root needed.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. "$(dirname "$0")/../lib.sh"

name=$'t\033]0;title\007\nx.img'
shown='t\x1b]0;title\x07\x0ax.img'
img=$T/$name
mkfs "$img" 16M -t ext4 -b 1024
cp "$T/$name" "$T/clean.img"
dfs_write "$img" <<<"ssv state 0"

# has TEXT FILE WHAT: FILE holds a line that starts with TEXT, as it is
has() {
	# through the environment: awk -v would read \x1b as ESC
	HAS=$1 awk 'index($0, ENVIRON["HAS"]) == 1 {f = 1} END {exit !f}' "$2" ||
		{ cat -A "$2" >&2; fail "$3: no line starting '$1'"; }
}

# no_ctl FILE WHAT: no control byte but newline (the lines' own) in FILE
no_ctl() {
	! LC_ALL=C grep -q $'[\001-\011\013-\037\177]' "$1" ||
		{ od -c "$1" | head; fail "$2: a raw control byte"; }
}

cd "$T" || fail "cd $T"
run_e2trim "$name"
assert_rc 13 "unclean, named with ESC and a newline"
no_ctl "$ERR" "the refusal"
assert_eq "$(wc -l <"$ERR")" 1 "the refusal: lines"
assert_eq "$(cat "$ERR")" "e2trim: $shown: was not cleanly unmounted or has errors recorded; run e2fsck -f first" \
	"the refusal"
note "refused (13): one line, the name written $shown"

# the same file twice: the second message names the first too
ln -s "$name" "link.img"
run_e2trim -n "$name" link.img
no_ctl "$ERR" "given twice"
has "e2trim: link.img: is given twice (the same as $shown)" "$ERR" "given twice"

# -v, --histogram and the progress line, on the clean copy under the name
cp clean.img "$name"
run_e2trim -n -v --histogram --progress "$name"
assert_rc 0 "dry run"
no_ctl "$OUT" "-v on stdout"
has "$shown: " "$OUT" "-v's first line"
assert_grep " trimmed (dry run)$" "$OUT" "-v's first line"
has "$shown: histogram of free extent sizes" "$OUT" "--histogram's title"
# the progress line's own sequences: a carriage return and ESC [ K
sed 's/\r//g; s/\x1b\[K//g' "$ERR" >"$T/progress"
[ -s "$T/progress" ] || fail "--progress drew nothing"
no_ctl "$T/progress" "the progress line"
grep -qF "e2trim: $shown: " "$T/progress" || fail "the progress line does not name it"
note "-v, --histogram, the progress line: the name escaped"

# --list with two targets: lsblk -r's form, as before
run_e2trim -n --list "$name" clean.img
assert_rc 0 "--list, two targets"
no_ctl "$OUT" "--list"
has "$shown " "$OUT" "--list's first column"
# --json: the exact name
run_e2trim -n --json "$name"
assert_rc 0 "--json"
got=$(python3 -c 'import json, sys; sys.stdout.buffer.write(json.load(open(sys.argv[1]))["targets"][0]["target"].encode())' "$OUT")
assert_eq "$got" "$name" "--json's target"
note "--list and --json: unchanged"
exit 0
