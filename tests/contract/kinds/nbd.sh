# shellcheck shell=bash source-path=SCRIPTDIR
# shellcheck disable=SC2034  # the kind interface: read by lib.sh and the scenarios
# kind "nbd": an NBD URI, nbdkit's file plugin serving a raw image,
# e2trim 'nbd+unix:///?socket=SOCK'.  The server is the operator's: e2trim
# cannot hold it; its writer is a second client of that server.
KIND_WHOLE=1
KIND_MMP=0

kind_na() {
	case $1 in
	paths_*) echo "the server is the operator's and its file, if any, is not known to e2trim: NBD names no file (the writer scenario's documented limit)" ;;
	names) echo "the URI is the operator's own words; libnbd only reads the files it names (socket, TLS keys)" ;;
	writer) echo "the server is the operator's: NBD has no lock and no count of clients, so e2trim can neither keep another client out nor see one; a documented limit (README, e2trim(8), src/target/README.md: serve e2trim alone while it trims)" ;;
	comesgoes) echo "the server is the operator's, and e2trim reads and trims only through it: no host file of the target's is known to e2trim (see writer)" ;;
	repoint) echo "the target is a URI, not a path: no name is opened twice (libnbd connects once)" ;;
	esac
}
kind_make() {
	local pid=
	IMG=$T/k.img SOCK=$T/kit.sock
	cp --sparse=always "$1" "$IMG"
	rm -f "$T/kit.pid" "$SOCK"
	mkfifo "$T/kit.pid" || fail "mkfifo"
	exec 5<>"$T/kit.pid"
	# SIZE: the server shows the first SIZE bytes of a file that holds
	# the whole filesystem (nbdkit's truncate filter)
	if [ -n "${2:-}" ]; then
		nbdkit -f -U "$SOCK" -P "$T/kit.pid" --filter=truncate file "$IMG" truncate="$2" &
	else
		nbdkit -f -U "$SOCK" -P "$T/kit.pid" file "$IMG" &
	fi
	PIDS+=("$!")
	read -r -t 300 -u 5 pid || true
	exec 5>&-
	[ "$pid" = "${PIDS[-1]}" ] || fail "nbdkit did not start"
	KARGS=("nbd+unix:///?socket=$SOCK")
}
kind_copy() { cp --sparse=always "$IMG" "$1"; }
kind_write() { qemu_io_patch "$1" 0 raw "nbd+unix:///?socket=$SOCK"; }
kind_state() { file_state "$IMG"; }
kind_alloc() { alloc_bytes "$IMG"; }
kind_left() { data_in "$IMG" 0 "$1"; }
kind_held() { locks_on "$IMG"; servers_of; }
# the server goes (and with it its hold on the file) before another starts
kind_teardown_target() {
	kill "${PIDS[-1]}" 2>/dev/null
	wait "${PIDS[-1]}" 2>/dev/null
	unset 'PIDS[-1]'
}
