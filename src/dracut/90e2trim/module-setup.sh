#!/bin/bash
# module-setup.sh - dracut module 90e2trim: e2fsck -p, then discard the
# free space of the root filesystem, before it is mounted (e2trim(8)).
# The pre-mount hook decides at boot whether to run: kernel command line
# "e2trim", "e2trim=force", "e2trim=off", or /etc/e2trim.conf.

# dracut's PATH may lack the directory e2trim was installed in
e2trim_find() {
	local p
	for p in "$(command -v "$1")" "/usr/sbin/$1" "/sbin/$1" \
		"/usr/local/sbin/$1"; do
		if [[ -n $p && -x $p ]]; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# called by dracut
check() {
	local fs
	e2trim_find e2trim >/dev/null && e2trim_find e2fsck >/dev/null || return 1
	# shellcheck disable=SC2154 # hostonly and host_fs_types are dracut's
	if [[ $hostonly ]]; then
		for fs in "${host_fs_types[@]}"; do
			[[ $fs == ext[234] ]] && return 0
		done
		return 255
	fi
	return 0
}

# called by dracut
depends() {
	return 0
}

# called by dracut
install() {
	inst_binary "$(e2trim_find e2trim)" /usr/sbin/e2trim
	inst_binary "$(e2trim_find e2fsck)" /usr/sbin/e2fsck
	[[ -r /etc/e2trim.conf ]] && inst_simple /etc/e2trim.conf
	# shellcheck disable=SC2154 # moddir is dracut's
	inst_hook pre-mount 50 "$moddir/e2trim-pre-mount.sh"
}
