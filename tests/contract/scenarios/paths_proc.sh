# shellcheck shell=bash source-path=SCRIPTDIR/..
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# Scenario "paths_proc" (issue 41, 1): a process that holds the file (or
# the loop device that is the target) open for writing, as fuser sees it.
# Holding the file before the run: refused 10 up front, naming it.  At
# every pause point a process opens the target's loop device, or else the
# file, writes the new files' bytes into it and keeps it open: the run
# refused 10 before its next discard, the files intact.
# shellcheck source=../paths_lib.sh
. "$CX/paths_lib.sh"
w_na() { :; }
w_no_stages() { not_raw "raw writes into it would break qemu's image, not add files; the up-front refusal is the case"; }
# proc_hold PATH BASE DIR: a process opens PATH O_RDWR, writes DIR's
# extents at BASE (DIR "-": nothing), fsyncs, and holds it until w_after
proc_hold() {
	rm -f "$T/w.ready" "$T/w.go"
	mkfifo "$T/w.ready" "$T/w.go" || fail "mkfifo"
	python3 -c 'import os, sys
path, base, d, ready, go = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
fd = os.open(path, os.O_RDWR)
if d != "-":
    for i, line in enumerate(open(d + "/extents")):
        o, n = map(int, line.split())
        os.pwrite(fd, open(f"{d}/c.{i}", "rb").read(), base + o)
    os.fsync(fd)
open(ready, "w").write("open\n")
open(go).read()' "$1" "$2" "$3" "$T/w.ready" "$T/w.go" &
	HOLDER=$!
	local line=
	read -r line <"$T/w.ready"
	[ "$line" = open ] || fail "the writer of $1 did not start"
}
w_upfront() {
	proc_hold "$FILE" 0 -
	# the message names the process
	UPFRONT_PID=$HOLDER
}
w_before() { :; }
w_write() {
	if [ -n "${DEV:-}" ]; then
		proc_hold "$DEV" 0 "$1"
	else
		proc_hold "$FILE" "$OFF_RAW" "$1"
	fi
}
w_after() {
	[ -n "${HOLDER:-}" ] || return 0
	echo >"$T/w.go"
	wait "$HOLDER"
	HOLDER=
}
