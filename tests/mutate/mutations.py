# SPDX-License-Identifier: GPL-2.0-or-later
"""Random debugfs edits of a clean fixture.

generate(rng, g) returns the lines of a debugfs script: a few operations,
each introduced by a comment line "# op NAME" (debugfs echoes comments and
skips them), so a saved case says which kinds of edit it holds.

Most weight goes to the edits that keep the filesystem looking clean:
take an inode that owns blocks, hide it from a reader that trusts one
field (bitmap bit, links, dtime, flags, mode, the group's unused inode
area, the journal), then free its blocks in the block bitmap with every
count and checksum kept consistent.  If e2trim believes the field, it
plans the file's blocks; e2fsck looks at the content and keeps them.

debugfs recomputes the checksums of what it writes: inodes (sif, clri),
bitmaps and the descriptor counts (freeb, freei, setb), the superblock
(ssv); not the descriptor after set_bg, hence "set_bg G checksum calc".
"jw -b LIST jdata.bin" journals the fixture's own (unmutated) contents of
the blocks in LIST; mutate.py writes jdata.bin from the fixture first.

OPS_TRUST3 edit where e2fsck takes another source than the primary
(issue 23): the superblock's journal fields, inode 8 against
s_jnl_blocks, the journal superblock, a fast-commit tail, descriptor
locations, symlinks fast or slow.  A line NEEDS_RECOUNT asks mutate.py to
set the groups' free counts from their bitmaps afterwards."""

EXTENTS_FL = 0x80000
INLINE_DATA_FL = 0x10000000
INDEX_FL = 0x1000
HUGE_FILE_FL = 0x40000
EA_INODE_FL = 0x200000
FLAG_TOGGLES = [EXTENTS_FL, INLINE_DATA_FL, INDEX_FL, HUGE_FILE_FL,
                EA_INODE_FL, EXTENTS_FL | INLINE_DATA_FL]
MODES = [0o100644, 0o040755, 0o120777, 0o020644, 0o060644, 0o010644,
         0o140755, 0]
NOW = 1700000000


def _runs(blocks):
    """Contiguous runs (start, count) of a list of block numbers."""
    runs = []
    for b in sorted(set(blocks)):
        if runs and b == runs[-1][0] + runs[-1][1]:
            runs[-1][1] += 1
        else:
            runs.append([b, 1])
    return runs


def _owners(g, need_blocks=True):
    return [d for d in g["inos"] if d["blocks"] or not need_blocks]


def _pick_owner(rng, g):
    """An inode with blocks: mostly regular files, also directories and
    the special inodes (resize 7, journal 8)."""
    owners = _owners(g)
    regular = [d for d in owners if d["type"] == "regular" and d["ino"] > 8]
    if regular and rng.random() < 0.7:
        return rng.choice(regular)
    return rng.choice(owners)


def _group_of_ino(g, ino):
    return (ino - 1) // g["ipg"]


def _itable_block(g, ino):
    """The block of the inode table that holds inode INO."""
    grp = g["groups"][_group_of_ino(g, ino)]
    isz = g.get("isz") or 128
    idx = (ino - 1) % g["ipg"]
    return grp["itable"] + idx * isz // g["bs"]


def _bbitmap_of(g, blk):
    per = g["bpg"]
    grp = (blk - g["first_data"]) // per
    return g["groups"][min(grp, len(g["groups"]) - 1)]["bbitmap"]


def free_blocks(rng, g, d, whole=None):
    """freeb lines for all (or a random run) of D's blocks."""
    runs = _runs(d["blocks"])
    if not runs:
        return []
    if whole is None:
        whole = rng.random() < 0.8
    if not whole:
        runs = [rng.choice(runs)]
    return ["freeb %d %d" % (s, n) for s, n in runs]


def _bg(g, grp, field, value):
    return ["set_bg %d %s %d" % (grp, field, value),
            "set_bg %d checksum calc" % grp]


# ---- hiding an inode from a reader that trusts one field -------------

def hide_freei(rng, g, d):
    return ["freei <%d>" % d["ino"]]


def hide_links(rng, g, d):
    out = ["sif <%d> links_count 0" % d["ino"]]
    if rng.random() < 0.6:
        out.append("sif <%d> dtime %d" % (d["ino"], NOW))
    return out


def hide_dtime(rng, g, d):
    return ["sif <%d> dtime %d" % (d["ino"], NOW)]


def hide_clri(rng, g, d):
    return ["clri <%d>" % d["ino"]]


def hide_flags(rng, g, d):
    return ["sif <%d> flags 0x%x" % (d["ino"], d["flags"] ^ rng.choice(FLAG_TOGGLES))]


def hide_mode(rng, g, d):
    return ["sif <%d> mode 0%o" % (d["ino"], rng.choice(MODES))]


def hide_iblock(rng, g, d):
    k = rng.choice([0, 0, 1, 2, 3, 4, 5, 12, 13, 14])
    val = rng.choice([0, 0, 1, 0xf30a, 0x0001f30a, rng.randrange(1 << 32)])
    return ["sif <%d> block[%d] 0x%x" % (d["ino"], k, val)]


def hide_size(rng, g, d):
    val = rng.choice([0, 1, g["bs"], 1 << 40, rng.randrange(1 << 20)])
    return ["sif <%d> size %d" % (d["ino"], val)]


def hide_iblocks(rng, g, d):
    return ["sif <%d> blocks %d" % (d["ino"], rng.choice([0, 1, 8, 1 << 30]))]


def hide_unused_area(rng, g, d):
    """Descriptors say the inode lies in the group's unused area."""
    grp = _group_of_ino(g, d["ino"])
    idx = (d["ino"] - 1) % g["ipg"]
    out = []
    if rng.random() < 0.7:
        out += _bg(g, grp, "itable_unused", g["ipg"] - idx - rng.choice([0, 0, 1]))
    if rng.random() < 0.5:
        out += _bg(g, grp, "flags", rng.choice([1, 5]))
    if rng.random() < 0.6:
        out.append("freei <%d>" % d["ino"])
    return out or _bg(g, grp, "itable_unused", g["ipg"] - idx)


def hide_special(rng, g, d):
    field = rng.choice(["usr_quota_inum", "grp_quota_inum", "prj_quota_inum",
                        "last_orphan", "journal_inum", "first_ino"])
    val = d["ino"] + 1 if field == "first_ino" else d["ino"]
    return ["ssv %s %d" % (field, val)]


def hide_unlink(rng, g, d):
    return ["unlink %s" % d["path"]] if d["path"] else hide_freei(rng, g, d)


def hide_journal(rng, g, d):
    """A committed transaction holds the inode and bitmap as they were;
    the live copies then say the file is gone."""
    blks = {_itable_block(g, d["ino"])}
    for b in d["blocks"][:1] + d["blocks"][-1:]:
        blks.add(_bbitmap_of(g, b))
    out = ["jo", "jw -b %s jdata.bin" % ",".join(map(str, sorted(blks))), "jc",
           "clri <%d>" % d["ino"], "freei <%d>" % d["ino"]]
    if rng.random() < 0.7:
        out.append("feature -needs_recovery")
    return out


HIDES = [(hide_freei, 10), (hide_links, 10), (hide_dtime, 6), (hide_clri, 4),
         (hide_flags, 14), (hide_mode, 6), (hide_iblock, 5), (hide_size, 3),
         (hide_iblocks, 3), (hide_unused_area, 12), (hide_special, 5),
         (hide_unlink, 5), (hide_journal, 6)]


def _weighted(rng, table):
    total = sum(w for _, w in table)
    x = rng.uniform(0, total)
    for item, w in table:
        x -= w
        if x <= 0:
            return item
    return table[-1][0]


def op_hide_and_free(rng, g):
    d = _pick_owner(rng, g)
    hides = [_weighted(rng, HIDES) for _ in range(rng.choice([1, 1, 1, 2]))]
    out, names = [], []
    for h in hides:
        out += h(rng, g, d)
        names.append(h.__name__[5:])
    if rng.random() < 0.9:
        out += free_blocks(rng, g, d)
    return "hide_%s" % "+".join(names), out


# ---- edits of one structure at random ---------------------------------

def _rand_block(rng, g):
    return rng.randrange(g["first_data"], g["blocks"])


def _rand_ino(rng, g):
    return rng.randrange(1, min(g["inodes"], g["max_ino"] + 32) + 1)


def op_freeb(rng, g):
    return "freeb", ["freeb %d %d" % (_rand_block(rng, g), rng.choice([1, 1, 4, 16, 64]))]


def op_freeb_owner(rng, g):
    return "freeb_owner", free_blocks(rng, g, _pick_owner(rng, g))


def op_free_ea_block(rng, g):
    """Free the extended-attribute block an inode names (file_acl)."""
    eas = [d for d in g["inos"] if d.get("acl")]
    if not eas:
        return op_freeb_owner(rng, g)
    d = rng.choice(eas)
    out = ["freeb %d" % d["acl"]]
    if rng.random() < 0.5:
        out = hide_flags(rng, g, d) + out
    return "free_ea_block", out


def op_freei(rng, g):
    return "freei", ["freei <%d>" % _rand_ino(rng, g)]


def op_setb(rng, g):
    return "setb", ["setb %d %d" % (_rand_block(rng, g), rng.choice([1, 8]))]


def op_clri(rng, g):
    return "clri", ["clri <%d>" % rng.choice(g["inos"])["ino"]]


def op_set_bg(rng, g):
    grp = rng.randrange(len(g["groups"]))
    field, val = rng.choice([
        ("free_blocks_count", rng.randrange(0, g["bpg"] + 1)),
        ("free_inodes_count", rng.randrange(0, g["ipg"] + 1)),
        ("itable_unused", rng.randrange(0, g["ipg"] + 1)),
        ("itable_unused", g["ipg"]),
        ("flags", rng.randrange(0, 8)),
        ("used_dirs_count", rng.randrange(0, 8))])
    out = ["set_bg %d %s %d" % (grp, field, val)]
    if rng.random() < 0.9:
        out.append("set_bg %d checksum calc" % grp)
    return "set_bg_" + field, out


def op_ssv(rng, g):
    field, val = rng.choice([
        ("free_blocks_count", rng.randrange(0, g["blocks"])),
        ("free_inodes_count", rng.randrange(0, g["inodes"])),
        ("first_ino", rng.choice([1, 5, 11, 12, 16, 40])),
        ("last_orphan", _rand_ino(rng, g)),
        ("usr_quota_inum", _rand_ino(rng, g)),
        ("prj_quota_inum", _rand_ino(rng, g)),
        ("journal_inum", rng.choice([0, 7, 8, _rand_ino(rng, g)])),
        ("r_blocks_count", rng.randrange(0, g["blocks"])),
        ("first_data_block", rng.choice([0, 1])),
        ("lpf_ino", _rand_ino(rng, g)),
        ("state", rng.choice([1, 1, 0, 3]))])
    return "ssv_" + field, ["ssv %s %d" % (field, val)]


def op_sif(rng, g):
    d = rng.choice(g["inos"])
    field, val = rng.choice([
        ("links_count", rng.choice([0, 1, 2, 65000])),
        ("size", rng.choice([0, 1, 4096, 1 << 32, 1 << 44])),
        ("blocks", rng.choice([0, 2, 8, 1 << 31])),
        ("flags", d["flags"] ^ rng.choice(FLAG_TOGGLES)),
        ("mode", rng.choice(MODES)),
        ("dtime", rng.choice([0, NOW])),
        ("file_acl", rng.choice([0, _rand_block(rng, g)])),
        ("generation", rng.randrange(1 << 32)),
        ("extra_isize", rng.choice([0, 4, 32, 200])),
        ("block[%d]" % rng.randrange(15), rng.randrange(1 << 32))])
    return "sif_" + field.split("[")[0], ["sif <%d> %s %d" % (d["ino"], field, val)]


def op_resurrect(rng, g):
    """Link a free inode (perhaps a deleted file that still maps its old
    blocks) into a directory, with links 1 and no dtime."""
    used = {d["ino"] for d in g["inos"]}
    free = [i for i in range(g["first_ino"], g["max_ino"] + 8) if i not in used]
    if not free:
        return op_freei(rng, g)
    ino = rng.choice(free)
    out = ["ln <%d> /mut%d" % (ino, ino), "sif <%d> links_count 1" % ino,
           "sif <%d> dtime 0" % ino]
    if rng.random() < 0.5:
        out.append("seti <%d>" % ino)
    return "resurrect", out


def op_unlink(rng, g):
    d = rng.choice([d for d in g["inos"] if d["path"]])
    return "unlink", ["unlink %s" % d["path"]]


def op_journal(rng, g):
    """A committed transaction of random blocks, or just the flag."""
    if rng.random() < 0.5:
        return "needs_recovery", ["feature %sneeds_recovery" % rng.choice(["-", ""])]
    blk = _rand_block(rng, g)
    out = ["jo", "jw -b %d jdata.bin" % blk, "jc"]
    if rng.random() < 0.7:
        out.append("feature -needs_recovery")
    return "journal_tx", out


# ---- where e2fsck takes another source than the primary (issue 23) ---

# jbd2's superblock (block 0 of the journal), big-endian u32 fields
JSB = {"maxlen": 16, "first": 20, "sequence": 24, "start": 28, "errno": 32,
       "incompat": 40, "num_fc_blks": 84}
JBD2_FAST_COMMIT = 0x20
# mutate.py then sets the groups' free counts from their bitmaps
NEEDS_RECOUNT = "# then: group recount"
JBD2_CSUM_V3 = 0x10


def _jsb(field, value):
    """zap_block lines that write VALUE into the journal superblock field
    (byte by byte: zap_block's pattern is one byte)."""
    off = JSB[field]
    return ["zap_block -f <8> -o %d -l 1 -p %d 0" % (off + i, byte)
            for i, byte in enumerate((value & 0xffffffff).to_bytes(4, "big"))]


def _journal_len(g):
    d = [d for d in g["inos"] if d["ino"] == 8]
    return len(d[0]["blocks"]) if d else 0


def _hidden_in_journal(rng, g):
    """A file hidden by a committed transaction (hide_journal), or
    nothing: the edit that follows decides which journal e2fsck reads."""
    if rng.random() < 0.35:
        return []
    d = _pick_owner(rng, g)
    return hide_journal(rng, g, d) + free_blocks(rng, g, d)


def _uuid(rng):
    h = "%032x" % rng.getrandbits(128)
    return "-".join((h[:8], h[8:12], h[12:16], h[16:20], h[20:]))


def op_jnl_fields(rng, g):
    """The superblock's journal fields: an external journal named by
    UUID beside the inode, another journal inode, the backup of inode 8's
    block map (s_jnl_blocks) and its type."""
    owners = _owners(g)
    field, val = rng.choice([
        ("journal_uuid", _uuid(rng)),	# not "random": a mutant is
        ("journal_uuid", _uuid(rng)),	# the same each time it is made
        ("journal_inum", rng.choice([0, 7, 11, rng.choice(owners)["ino"]])),
        ("jnl_blocks[%d]" % rng.randrange(17),
         rng.choice([0, _rand_block(rng, g), rng.choice(owners)["blocks"][0]])),
        ("jnl_backup_type", rng.choice([0, 1, 2]))])
    return "jnl_" + field.split("[")[0], _hidden_in_journal(rng, g) + [
        "ssv %s %s" % (field, val)]


def op_jnl_inode(rng, g):
    """Inode 8 fails e2fsck's checks, so that it takes s_jnl_blocks."""
    field, val = rng.choice([
        ("links_count", 0), ("mode", rng.choice([0o40755, 0o100644, 0])),
        ("flags", rng.choice([0x800, 0x80800, 0x0])),
        ("size", rng.choice([0, g["bs"], 1023 * g["bs"]])),
        ("blocks", rng.choice([0, 8])),
        ("block[%d]" % rng.choice([0, 1, 3, 4, 5]),
         rng.choice([0, _rand_block(rng, g), rng.randrange(1 << 32)]))])
    return "jnl_inode_" + field.split("[")[0], _hidden_in_journal(rng, g) + [
        "sif <8> %s %d" % (field, val)]


def op_jnl_super(rng, g):
    """The journal's own superblock: where the log starts, its sequence,
    an error, its features and size (its checksum, if any, is not kept)."""
    n = _journal_len(g)
    field, val = rng.choice([
        ("start", rng.choice([0, 1, 2, rng.randrange(1, max(2, n))])),
        ("sequence", rng.choice([0, 1, 2, 3, rng.randrange(1 << 32)])),
        ("errno", rng.choice([0, -5])),
        ("incompat", rng.choice([0, JBD2_CSUM_V3, JBD2_FAST_COMMIT,
                                 JBD2_FAST_COMMIT | JBD2_CSUM_V3])),
        ("num_fc_blks", rng.choice([0, 1, 256])),
        ("maxlen", rng.choice([n // 2, n + 1, 1024])),
        ("first", rng.choice([0, 2]))])
    return "jsb_" + field, _hidden_in_journal(rng, g) + _jsb(field, val)


def op_jnl_fast_commit(rng, g):
    """A fast-commit area at the journal's tail: the feature on both
    superblocks, its size, and its blocks written with a pattern."""
    n = _journal_len(g)
    fc = rng.choice([1, 4, 16, 256])
    out = _hidden_in_journal(rng, g) + ["feature fast_commit"]
    out += _jsb("incompat", JBD2_FAST_COMMIT | rng.choice([0, JBD2_CSUM_V3]))
    out += _jsb("num_fc_blks", fc)
    for k in range(rng.choice([1, 2])):
        out.append("zap_block -f <8> -p %d %d" % (
            rng.choice([0, 9, 0xff, rng.randrange(256)]),
            max(1, n - fc + k)))
    return "jnl_fast_commit", out


def _last_in_group(rng, g):
    """The last inode of a group that owns blocks: the unused area can
    then hold it alone (other entries in it are refused, 23)."""
    last = {}
    for d in g["inos"]:
        if d["ino"] >= g["first_ino"] and d["type"] == "regular" and d["blocks"]:
            grp = _group_of_ino(g, d["ino"])
            if d["ino"] > last.get(grp, {"ino": 0})["ino"]:
                last[grp] = d
    return rng.choice(list(last.values())) if last else _pick_owner(rng, g)


def op_desc_loc(rng, g):
    """A group's bitmap or inode table placed on another group's (or its
    own) metadata or a file's block: e2fsck then trusts a backup of the
    descriptors, clears UNINIT and itable_unused, and reads every inode.
    Often with a file hidden in an area the primary calls unused."""
    grps = g["groups"]
    grp = rng.randrange(len(grps))
    other = grps[rng.randrange(len(grps))]
    field = rng.choice(["block_bitmap", "inode_bitmap", "inode_table"])
    val = rng.choice([other["bbitmap"], other["ibitmap"],
                      other["itable"] + rng.choice([0, 1]),
                      _rand_block(rng, g), _pick_owner(rng, g)["blocks"][0]])
    out = []
    if rng.random() < 0.6:
        # unlinked too, or the entry naming it is refused (23): e2fsck
        # then finds it in pass 1 and keeps it in lost+found
        d = _last_in_group(rng, g)
        out = hide_unused_area(rng, g, d) + free_blocks(rng, g, d)
        if rng.random() < 0.7:
            out = hide_unlink(rng, g, d) + out
    return "desc_" + field, out + _bg(g, grp, field, val) + [NEEDS_RECOUNT]


def op_symlink(rng, g):
    """A slow symlink whose fields disagree on fast or slow: made here
    (kill_file frees its block and inode, seti takes the inode back) or
    one of the fixture's.  i_blocks 0 makes it fast to a reader that asks
    ext2fs_inode_has_valid_blocks2(); e2fsck goes by the size."""
    links = [d for d in g["inos"] if d["type"] == "symlink" and d["blocks"]]
    if links and rng.random() < 0.3:
        d = rng.choice(links)
        field, val = rng.choice([("blocks", 0), ("size", rng.choice([0, 1, 59, 60, 61])),
                                 ("block[0]", _rand_block(rng, g)),
                                 ("flags", d["flags"] ^ EXTENTS_FL)])
        out = ["sif <%d> %s %d" % (d["ino"], field, val)]
        if rng.random() < 0.7:
            out += free_blocks(rng, g, d, whole=True)
        return "symlink_fixture_" + field.split("[")[0], out
    name = "/mutlink%d" % rng.randrange(1000)
    target = "/" + "t" * rng.choice([60, 61, 100, 200, min(g["bs"] - 2, 1000)])
    out = ["symlink %s %s" % (name, target)]
    how = rng.choice(["killed", "killed", "size", "block0", "flags"])
    if how == "killed":
        out += ["kill_file %s" % name, "seti %s" % name,
                "sif %s dtime 0" % name, "sif %s blocks 0" % name,
                NEEDS_RECOUNT]
    elif how == "size":
        out.append("sif %s size %d" % (name, rng.choice([0, 1, 30, 59])))
    elif how == "block0":
        out.append("sif %s block[0] %d" % (name, _rand_block(rng, g)))
    else:
        out.append("sif %s flags 0x%x" % (name, rng.choice([0, EXTENTS_FL,
                                                            INLINE_DATA_FL])))
    return "symlink_" + how, out


def op_jnl_two_maps(rng, g):
    """Inode 8 and s_jnl_blocks map two journals: the real one holds a
    committed transaction (a hidden file), inode 8 is made to fail
    e2fsck's checks (links 0, not a regular file) and its first block is
    moved to a free block that gets a copy of the clean, empty journal
    superblock.  A reader of inode 8 sees an empty log; e2fsck takes the
    backup map, finds the transaction and replays it."""
    free = [r for r in g.get("free", []) if r[1] - r[0] >= 4]
    if not g.get("jsb") or not free:
        return op_jnl_inode(rng, g)
    a, b = rng.choice(free)
    x = rng.randrange(a, b + 1)
    d = _pick_owner(rng, g)
    while d["ino"] == 8:
        d = _pick_owner(rng, g)
    out = hide_journal(rng, g, d) + free_blocks(rng, g, d, whole=True)
    if "feature -needs_recovery" not in out:
        out.append("feature -needs_recovery")
    out.append("zap_block -p 0 %d" % x)
    out += ["zap_block -o %d -l 1 -p %d %d" % (i, v, x)
            for i, v in enumerate(g["jsb"]) if v]
    if rng.random() < 0.5:
        out.append("setb %d" % x)
    # what e2fsck_get_journal() rejects: no links, not regular, smaller
    # than 1024 blocks, or a size its map does not reach
    n = _journal_len(g)
    out.append(rng.choice(["sif <8> links_count 0", "sif <8> links_count 0",
                           "sif <8> size %d" % (512 * g["bs"]),
                           "sif <8> size %d" % ((n + 64) * g["bs"]),
                           "sif <8> mode 040700"]))
    jflags = [j for j in g["inos"] if j["ino"] == 8][0]["flags"]
    # block-mapped: i_block[0] is block 0; extents: the first extent's
    # start (ee_start_lo) is i_block[5] when the tree has depth 0
    out.append("sif <8> block[%d] %d" % (5 if jflags & EXTENTS_FL else 0, x))
    return "jnl_two_maps", out + [NEEDS_RECOUNT]


OPS_TRUST3 = [(op_jnl_two_maps, 6), (op_jnl_fields, 8), (op_jnl_inode, 6), (op_jnl_super, 8),
              (op_jnl_fast_commit, 3), (op_desc_loc, 8), (op_symlink, 8)]


OPS = [(op_hide_and_free, 60), (op_freeb, 6), (op_freeb_owner, 6), (op_freei, 3),
       (op_free_ea_block, 2),
       (op_setb, 1), (op_clri, 2), (op_set_bg, 6), (op_ssv, 4), (op_sif, 6),
       (op_resurrect, 4), (op_unlink, 2), (op_journal, 3)] + OPS_TRUST3
JOURNAL_OPS = (op_journal, op_jnl_fields, op_jnl_inode, op_jnl_super,
               op_jnl_fast_commit, op_jnl_two_maps)


# Control mutants: edits e2fsck calls harmless (debugfs keeps every
# count, bitmap and checksum as the kernel would), and no edit at all.
# e2trim must trim them; a refusal fails the campaign (judge.py), so that
# refusing without looking is never taken for safety.
def ctl_none(rng, g):
    return []


def ctl_rm(rng, g):
    """Delete a regular file the way rm does: its blocks become free
    space that e2trim must find and trim."""
    files = [d for d in g["inos"] if d["type"] == "regular" and d["ino"] > 11
             and d["path"] and d["blocks"]]
    return ["rm %s" % rng.choice(files)["path"]] if files else []


def ctl_mkdir(rng, g):
    return ["mkdir /ctl%d" % rng.randrange(1000)]


def ctl_times(rng, g):
    files = [d for d in g["inos"] if d["type"] == "regular" and d["ino"] > 11]
    if not files:
        return []
    return ["sif <%d> mtime %d" % (rng.choice(files)["ino"],
                                   NOW - rng.randrange(10 ** 6))]


def ctl_label(rng, g):
    return ["ssv volume_name ctl%d" % rng.randrange(1000)]


CONTROLS = [(ctl_none, 2), (ctl_rm, 4), (ctl_mkdir, 2), (ctl_times, 1),
            (ctl_label, 1)]


def generate_control(rng, g):
    """A control mutant's script: one harmless edit, or none."""
    f = _weighted(rng, CONTROLS)
    return ["# control %s" % f.__name__[4:]] + f(rng, g)


def op_names():
    return [f.__name__[3:] for f, _ in OPS]


def generate(rng, g, only=None):
    """The script of one mutant: 1 to 3 operations (of ONLY: op names,
    without "op_", if given)."""
    table = [(f, w) for f, w in OPS if not only or f.__name__[3:] in only]
    if "has_journal" not in g["features"]:
        table = [(f, w) for f, w in table if f not in JOURNAL_OPS] or \
            [(op_hide_and_free, 1)]
    lines = []
    for _ in range(rng.choice([1, 1, 2, 2, 3])):
        name, out = _weighted(rng, table)(rng, g)
        if "has_journal" not in g["features"] and any(
                x.split()[0] in ("jo", "jw", "jc") for x in out):
            continue
        lines.append("# op %s" % name)
        lines += out
    return lines
