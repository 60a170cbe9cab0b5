#!/usr/bin/env python3
# pty_run.py OUT ERR CMD...: run CMD with stderr on a pseudo-terminal
# (stdout to the file OUT), copy what the terminal received to ERR, and
# exit with CMD's exit code.  PTY_COLS=N: the terminal is N columns wide
# (TIOCSWINSZ; else the pty's default, 0: the width unknown).
import fcntl
import os
import struct
import subprocess
import sys
import termios

out_path, err_path, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
master, slave = os.openpty()
if os.environ.get("PTY_COLS"):
    fcntl.ioctl(slave, termios.TIOCSWINSZ,
                struct.pack("HHHH", 24, int(os.environ["PTY_COLS"]), 0, 0))
with open(out_path, "wb") as out:
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out,
                         stderr=slave)
os.close(slave)
got = b""
while True:
    try:
        data = os.read(master, 65536)
    except OSError:		# EIO: the other end is closed
        break
    if not data:
        break
    got += data
with open(err_path, "wb") as err:
    err.write(got)
sys.exit(p.wait())
