#!/bin/bash
# cluster.sh start DIR | stop DIR: a one-node Ceph cluster for the RBD tests.
# cluster.sh kill-osd DIR | start-osd DIR: SIGKILL the OSD (a crash), and
# start it again, back once the pool serves I/O.
#
# One monitor and one OSD (bluestore on a sparse 4 GiB file, or
# CEPH_OSD_BYTES: the bench's fleet needs more), no mgr (RBD
# does not need one), bound to 127.0.0.1 only, every file under DIR: its
# own ceph.conf, keyring, admin sockets (one per daemon: a socket in
# [global] would make every client fight for the same path), logs and
# data.  `start` prints DIR/ceph.conf once pool "rbd" serves I/O; the
# daemons' PIDs are in DIR/pids, and `stop` ends exactly those (they are
# re-parented to init, so a process group would not find them).
# CEPH_AUTH=cephx: with cephx authentication (a client.admin key in
# DIR/keyring, which the conf names), as production clusters run; the
# default is none.
set -eu

start() {
	local D=$1 fsid conf uuid id ports mon auth=${CEPH_AUTH:-none}
	mkdir -p "$D"/{mon,osd,run,log}
	fsid=$(uuidgen)
	# the monitor's two ports, free ones rather than 3300 and 6789: a
	# cluster another test or a bench runs may hold those (the OSD picks
	# free ports of its own)
	ports=$(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')
	mon="[v2:127.0.0.1:${ports% *},v1:127.0.0.1:${ports#* }]"
	conf=$D/ceph.conf
	# the mon refuses to run below mon_data_avail_crit % free disk: the
	# test machine's disk may be fuller than a production mon's
	cat >"$conf" <<CONF
[global]
fsid = $fsid
mon_host = $mon
public_addr = 127.0.0.1
cluster_addr = 127.0.0.1
ms_bind_ipv4 = true
ms_bind_ipv6 = false
auth_cluster_required = $auth
auth_service_required = $auth
auth_client_required = $auth
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pg_autoscale_mode = off
mon_allow_pool_size_one = true
mon_warn_on_pool_no_redundancy = false
osd_crush_chooseleaf_type = 0
mon_data_avail_warn = 1
mon_data_avail_crit = 1
mon_warn_on_insecure_global_id_reclaim_allowed = false
run_dir = $D/run
log_file = $D/log/\$name.log
mon_data = $D/mon/\$name
osd_data = $D/osd/\$name
keyring = $D/keyring
[mon]
admin_socket = $D/run/\$name.asok
[osd]
admin_socket = $D/run/\$name.asok
keyring = $D/osd/\$name/keyring
osd_objectstore = bluestore
bluestore_block_size = ${CEPH_OSD_BYTES:-4294967296}
osd_memory_target = 1073741824
[client]
admin_socket =
CONF
	ceph-authtool --create-keyring "$D/keyring" --gen-key -n mon. \
		--cap mon 'allow *' >/dev/null
	# the mon learns client.admin from its first keyring (cephx only)
	[ "$auth" = none ] || ceph-authtool "$D/keyring" --gen-key -n client.admin \
		--cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' >/dev/null
	monmaptool --create --fsid "$fsid" \
		--addv a "$mon" \
		"$D/monmap" >/dev/null
	ceph-mon -c "$conf" --mkfs -i a --monmap "$D/monmap" \
		--keyring "$D/keyring"
	ceph-mon -c "$conf" -i a -f >"$D/log/mon.a.out" 2>&1 &
	echo "mon.a $!" >"$D/pids"
	wait_for "$D" "the monitor" 60 ceph -c "$conf" --connect-timeout 5 mon stat
	uuid=$(uuidgen)
	id=$(ceph -c "$conf" --connect-timeout 30 osd new "$uuid")
	mkdir -p "$D/osd/osd.$id"
	# cephx: the OSD's own key, from the mon, before its mkfs asks
	[ "$auth" = none ] || ceph -c "$conf" auth get-or-create "osd.$id" \
		osd 'allow *' mon 'allow profile osd' -o "$D/osd/osd.$id/keyring"
	ceph-osd -c "$conf" -i "$id" --mkfs --osd-uuid "$uuid" \
		>"$D/log/osd.mkfs.out" 2>&1
	ceph-osd -c "$conf" -i "$id" -f >"$D/log/osd.$id.out" 2>&1 &
	echo "osd.$id $!" >>"$D/pids"
	wait_for "$D" "the OSD" 60 osd_up "$conf"
	ceph -c "$conf" --connect-timeout 30 osd pool create rbd 8 8 >/dev/null 2>&1
	# no mgr, so no `ceph pg stat`: rbd pool init itself waits for the
	# placement groups to go active (bounded by timeout)
	timeout 120 rbd -c "$conf" pool init rbd
	echo "$conf"
}

osd_up() {
	ceph -c "$1" --connect-timeout 5 osd stat 2>/dev/null |
		grep -Eq '^1 osds: 1 up'
}

# wait_for DIR WHAT SECONDS CMD...: poll CMD (two tries a second) for at
# most SECONDS; on time-out show the daemons' last words and fail.
wait_for() {
	local D=$1 what=$2 n=$(( $3 * 2 )) i
	shift 3
	for ((i = 0; i < n; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	echo "cluster.sh: $what not ready after $((n / 2)) s" >&2
	tail -n 5 "$D"/log/*.out >&2 || true
	return 1
}

alive() {
	[ -r "/proc/$1/stat" ] && ! grep -q '^[0-9]* ([^)]*) Z' "/proc/$1/stat"
}

# The OSD first (it reports to the mon as it stops), then the mon; each
# gets 10 s after SIGTERM before SIGKILL.
stop() {
	local D=$1 kind name pid i
	[ -f "$D/pids" ] || return 0
	for kind in osd mon; do
		while read -r name pid; do
			case $name in "$kind".*) kill -TERM "$pid" 2>/dev/null || true ;; esac
		done <"$D/pids"
		while read -r name pid; do
			case $name in "$kind".*)
				for ((i = 0; i < 100; i++)); do
					alive "$pid" || break
					sleep 0.1
				done
				if alive "$pid"; then
					echo "cluster.sh: $name did not stop: SIGKILL" >&2
					kill -KILL "$pid" 2>/dev/null || true
				fi ;;
			esac
		done <"$D/pids"
	done
	rm -f "$D/pids"
}

kill_osd() {
	local D=$1 name pid i
	while read -r name pid; do
		case $name in osd.*) kill -KILL "$pid" ;; esac
	done <"$D/pids"
	while read -r name pid; do
		case $name in osd.*)
			for ((i = 0; i < 100; i++)); do alive "$pid" || break; sleep 0.1; done ;;
		esac
	done <"$D/pids"
	grep -v '^osd\.' "$D/pids" >"$D/pids.new"
	mv "$D/pids.new" "$D/pids"
}

start_osd() {
	local D=$1 conf=$1/ceph.conf
	ceph-osd -c "$conf" -i 0 -f >>"$D/log/osd.0.out" 2>&1 &
	echo "osd.0 $!" >>"$D/pids"
	wait_for "$D" "the OSD" 60 osd_up "$conf"
	# the pool's placement groups active again: a read of the pool answers
	wait_for "$D" "the pool" 120 timeout 10 rbd -c "$conf" ls rbd
}

case ${1:-} in
start) start "$(realpath -m "$2")" ;;
kill-osd) kill_osd "$(realpath -m "$2")" ;;
start-osd) start_osd "$(realpath -m "$2")" ;;
stop) stop "$(realpath -m "$2")" ;;
*) echo "usage: cluster.sh start|stop|kill-osd|start-osd DIR" >&2; exit 2 ;;
esac
