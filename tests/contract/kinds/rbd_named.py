#!/usr/bin/env python3
# rbd_named.py CONF POOL NAME create SRC | clone PARENT SNAP | remove
#
# An RBD image whose name the rbd command cannot take (it parses
# POOL/NAMESPACE/IMAGE@SNAP; librbd's C API takes any name), made through
# librbd itself: issue 33 case 2's names ("vm7:admin_socket=/some/file").
# create: a new image holding file SRC's bytes; clone: a clone of
# PARENT@SNAP (a protected snapshot); remove: the image goes.
import ctypes
import os
import sys

rados = ctypes.CDLL("librados.so.2")
rbd = ctypes.CDLL("librbd.so.1")
vp = ctypes.c_void_p


def check(rc, what):
    if rc < 0:
        sys.exit(f"rbd_named.py: {what}: {os.strerror(-rc)}")


def main():
    conf, pool, name, op = sys.argv[1:5]
    cluster, io = vp(), vp()
    check(rados.rados_create(ctypes.byref(cluster), None), "rados_create")
    check(rados.rados_conf_read_file(cluster, conf.encode()), "conf")
    check(rados.rados_connect(cluster), "connect")
    check(rados.rados_ioctx_create(cluster, pool.encode(), ctypes.byref(io)), "ioctx")
    order = ctypes.c_int(22)
    if op == "create":
        src = sys.argv[5]
        size = os.path.getsize(src)
        check(rbd.rbd_create2(io, name.encode(), ctypes.c_uint64(size),
                              ctypes.c_uint64(1 | 4 | 8 | 16 | 32), ctypes.byref(order)),
              "rbd_create2")
        img = vp()
        check(rbd.rbd_open(io, name.encode(), ctypes.byref(img), None), "rbd_open")
        rbd.rbd_write.restype = ctypes.c_ssize_t
        with open(src, "rb") as f:
            off = 0
            while True:
                b = f.read(1 << 20)
                if not b:
                    break
                if b.count(0) != len(b):
                    n = rbd.rbd_write(img, ctypes.c_uint64(off), ctypes.c_size_t(len(b)), b)
                    check(n, "rbd_write")
                off += len(b)
        check(rbd.rbd_close(img), "rbd_close")
    elif op == "clone":
        parent, snap = sys.argv[5:7]
        check(rbd.rbd_clone(io, parent.encode(), snap.encode(), io, name.encode(),
                            ctypes.c_uint64(1 | 4 | 8 | 16 | 32), ctypes.byref(order)),
              "rbd_clone")
    elif op == "remove":
        check(rbd.rbd_remove(io, name.encode()), "rbd_remove")
    rados.rados_ioctx_destroy(io)
    rados.rados_shutdown(cluster)


main()
