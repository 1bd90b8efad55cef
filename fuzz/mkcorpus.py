#!/usr/bin/env python3
# mkcorpus.py: makes the fuzzers' seed inputs (tests/fuzz-corpus/NAME/) from real recordings and binaries.
#
# Usage: fuzz/mkcorpus.py perfrec PERF.DATA OUTDIR PREFIX   ring records of a `perf record` file
#        fuzz/mkcorpus.py gopclntab ELF OUTDIR PREFIX       a small, valid .gopclntab cut from a Go binary
#        fuzz/mkcorpus.py goelf C-ELF GO-ELF OUT            C-ELF with the cut .gopclntab of GO-ELF added
#        fuzz/mkcorpus.py repair OUTDIR                     the synthetic stacks of tests/test-repair.c
# Formats: linux tools/perf/Documentation/perf.data-file-format.txt (perf.data),
# include/uapi/linux/perf_event.h (records), go1.24 cmd/link/internal/ld/pcln.go and
# runtime/symtab.go (pclntab). Every seed is small: the whole corpus stays well under 2 MB.
import os
import struct
import subprocess
import sys
import tempfile


def perfrec(path, outdir, prefix):
    d = open(path, 'rb').read()
    if d[:8] != b'PERFILE2':
        sys.exit('not a perf.data file')
    attr_size, a_off, a_size, d_off, d_size = struct.unpack_from('<QQQQQ', d, 16)
    # first attr: perf_event_attr then its ids section
    sample_type, read_format, flags = struct.unpack_from('<QQQ', d, a_off + 24)
    regs_user, = struct.unpack_from('<Q', d, a_off + 80)
    id_all = (flags >> 18) & 1
    recs = []
    off, end = d_off, d_off + d_size
    while off + 8 <= end:
        typ, misc, size = struct.unpack_from('<IHH', d, off)
        if size < 8:
            break
        if typ < 64:  # kernel records; perf's own (>= 64) never come from a ring
            recs.append(d[off:off + size])
        off += size
    # Seeds: runs of records as a ring would hold them, at a few tails (0: no wrap; near the
    # end of the 4 KiB data area: the records wrap through ring.c's scratch copy).
    samples = [i for i, r in enumerate(recs) if struct.unpack_from('<I', r)[0] == 9]
    others = [i for i, r in enumerate(recs) if struct.unpack_from('<I', r)[0] != 9]
    starts = (others[:1] + samples[:1] + samples[len(samples) // 2:len(samples) // 2 + 1] +
              samples[-1:])
    n = 0
    for k, s in enumerate(starts):
        for tail in (0, 4096 - 24):
            buf = b''
            i = s
            while i < len(recs) and len(buf) + len(recs[i]) <= 4096:
                buf += recs[i]
                i += 1
            if not buf:
                continue
            hdr = struct.pack('<QQQBH', sample_type, regs_user, read_format, id_all, tail)
            with open(os.path.join(outdir, '%s-%d-%d' % (prefix, k, tail)), 'wb') as f:
                f.write(hdr + buf)
            n += 1
    print('%d seeds, %d records (%d samples) in %s' % (n, len(recs), len(samples), path))


def uvarint(b, p):
    v = s = 0
    while True:
        c = b[p]
        p += 1
        v |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return v, p


def zigzag(v):
    return -((v + 1) >> 1) if v & 1 else v >> 1


def pcvalue_len_vals(b, off, quantum):
    """Bytes of the pcvalue table at off and the values it takes (go1.24 runtime/symtab.go step)."""
    p, first, val, vals = off, True, -1, []
    while True:
        uv, p = uvarint(b, p)
        if uv == 0 and not first:
            return p - off, vals
        val += zigzag(uv)
        vals.append(val)
        _, p = uvarint(b, p)
        first = False


def cut_pclntab(data, want=24, rebase=None):
    """A valid pclntab with about `want` functions of data (Go 1.18+ layout, little endian, 8-byte
    words), every offset rewritten; funcdata offsets kept (they point outside, into go:func.*).
    rebase=(text, room): the functions get equal slices of [text, text+room) instead of their
    own addresses, so that they lie in another file's executable segment."""
    magic, pad, quantum, ps = struct.unpack_from('<IHBB', data, 0)
    if magic not in (0xFFFFFFF0, 0xFFFFFFF1) or ps != 8:
        sys.exit('only Go 1.18+ little-endian 64-bit pclntabs are cut')
    nfunc, nfiles, text, fn, cu, ft, pc, pl = struct.unpack_from('<8Q', data, 8)
    hdr_len = 8 + 8 * 8
    new120 = magic == 0xFFFFFFF1
    fsize = 4 * (9 + (1 if new120 else 0)) + 4
    # choose: main.* functions and an even spread of the others, in address order
    names = []
    for i in range(nfunc):
        entry, foff = struct.unpack_from('<II', data, pl + 8 * i)
        nameoff, = struct.unpack_from('<i', data, pl + foff + 4)
        nm = data[fn + nameoff:data.index(b'\0', fn + nameoff)]
        names.append(nm)
    pick = [i for i in range(nfunc) if names[i].startswith(b'main.')]
    step = max(1, nfunc // max(1, want - len(pick)))
    pick = sorted(set(pick) | set(range(0, nfunc, step)))
    # new tables
    nametab = bytearray()
    pctab = bytearray(b'\0')  # offset 0 means "no table"
    pcmap = {}
    cutab = []
    filetab = bytearray()
    filemap = {}
    cumap = {}
    recs = []

    def pcref(off):
        if off == 0:
            return 0, []
        ln, vals = pcvalue_len_vals(data, pc + off, quantum)
        if off not in pcmap:
            pcmap[off] = len(pctab)
            pctab.extend(data[pc + off:pc + off + ln])
        return pcmap[off], vals

    for i in pick:
        entry, foff = struct.unpack_from('<II', data, pl + 8 * i)
        r = pl + foff
        f = list(struct.unpack_from('<Ii7I', data, r + 4 - 4))  # entryoff, nameoff, args, defer, pcsp, pcfile, pcln, npcdata, cuoff
        entryoff, nameoff, args, deferret, pcsp, pcfile, pcln, npcdata, cuoff = f
        tail_fixed = data[r + 36:r + fsize]  # [startLine,] funcID, flag, pad, nfuncdata
        nfd = data[r + fsize - 1]
        pcdata = list(struct.unpack_from('<%dI' % npcdata, data, r + fsize))
        funcdata = data[r + fsize + 4 * npcdata:r + fsize + 4 * npcdata + 4 * nfd]
        nm = names[i]
        new_name = len(nametab)
        nametab.extend(nm + b'\0')
        pcsp, _ = pcref(pcsp)
        pcfile_new, fvals = pcref(pcfile)
        pcln, _ = pcref(pcln)
        pcdata = [pcref(x)[0] for x in pcdata]
        # the CU's file list up to the highest file index used; files interned
        if cuoff not in cumap:
            cumap[cuoff] = len(cutab)
            top = min(max([v for v in fvals if v >= 0] + [0]), 255)
            for k in range(top + 1):
                if cu + 4 * (cuoff + k) + 4 > ft:
                    break
                fo, = struct.unpack_from('<I', data, cu + 4 * (cuoff + k))
                if fo == 0xFFFFFFFF:
                    cutab.append(fo)
                    continue
                fname = data[ft + fo:data.index(b'\0', ft + fo)]
                if fname not in filemap:
                    filemap[fname] = len(filetab)
                    filetab.extend(fname + b'\0')
                cutab.append(filemap[fname])
        body = struct.pack('<Ii7I', entryoff, new_name, args, deferret, pcsp, pcfile_new, pcln,
                           npcdata, cumap[cuoff]) + tail_fixed
        body += struct.pack('<%dI' % npcdata, *pcdata) + funcdata
        recs.append((entryoff, body))
    # end PC: the entry after the last picked function's
    last = pick[-1]
    end_entry, = struct.unpack_from('<I', data, pl + 8 * (last + 1))
    n = len(recs)
    if rebase:
        text, room = rebase
        slot = (room // (n + 1)) & ~15
        recs = [(slot * k, struct.pack('<I', slot * k) + r[4:]) for k, (e, r) in enumerate(recs)]
        end_entry = slot * n
    fn_new = hdr_len
    cu_new = fn_new + len(nametab)
    cut = b''.join(struct.pack('<I', x) for x in cutab)
    ft_new = cu_new + len(cut)
    pc_new = ft_new + len(filetab)
    pl_new = pc_new + len(pctab)
    functab = bytearray()
    body = bytearray()
    base = (2 * n + 1) * 4
    for entryoff, rec in recs:
        while (base + len(body)) % 4:
            body.append(0)
        functab.extend(struct.pack('<II', entryoff, base + len(body)))
        body.extend(rec)
    functab.extend(struct.pack('<I', end_entry))
    hdr = struct.pack('<IHBB8Q', magic, 0, quantum, ps, n, len(filemap), text, fn_new, cu_new,
                      ft_new, pc_new, pl_new)
    return hdr + bytes(nametab) + cut + bytes(filetab) + bytes(pctab) + bytes(functab) + bytes(body), text


def section(elf, name, with_addr=False):
    """Bytes of section `name` of a little-endian ELF64 file (any machine), and its address."""
    d = open(elf, 'rb').read()
    shoff, = struct.unpack_from('<Q', d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', d, 0x3a)
    def sh(i):
        return struct.unpack_from('<IIQQQQ', d, shoff + i * shentsize)
    stroff = sh(shstrndx)[4]
    for i in range(shnum):
        nm, typ, flags, addr, off, size = sh(i)
        if d[stroff + nm:d.index(b'\0', stroff + nm)] == name.encode():
            return (d[off:off + size], addr) if with_addr else d[off:off + size]
    sys.exit('%s: no section %s' % (elf, name))


def gopclntab(elf, outdir, prefix):
    tab, text = cut_pclntab(section(elf, '.gopclntab'))
    # harness input: flags byte, text_start override (0: from the header), the table
    with open(os.path.join(outdir, prefix), 'wb') as f:
        f.write(struct.pack('<BQ', 0, 0) + tab)
    print('%s: %d bytes' % (prefix, len(tab)))


def goelf(celf, goelf_path, out):
    code, text = section(celf, '.text', True)
    tab, _ = cut_pclntab(section(goelf_path, '.gopclntab'), rebase=(text, len(code)))
    with tempfile.NamedTemporaryFile() as t:
        t.write(tab)
        t.flush()
        subprocess.run(['objcopy', '--add-section', '.gopclntab=' + t.name,
                        '--set-section-flags', '.gopclntab=alloc,readonly',
                        '--change-section-address', '.gopclntab=0x100000', celf, out], check=True)
    print('%s: %d bytes' % (out, os.path.getsize(out)))


def repair(outdir):
    """fuzz-repair's seeds: the synthetic stacks of tests/test-repair.c (amd64 Go <=1.20 and
    >=1.21, frameless leaf, prologue, duff fake frame, garbage BP; arm64; C with CFI)."""
    amd64 = [(0x1000, 0x1100, 0x1004, 0, 0x28, 4), (0x2000, 0x2100, 0x2004, 0, 0x38, 4),
             (0x3000, 0x3010, 0x3000, 0, 0, 4), (0x4000, 0x4100, 0x4004, 8, 8, 4),
             (0x9000, 0x9100, 0x9000, 0, 0, 5)]
    arm64 = [(0x1000, 0x1100, 0x1008, 0, 0x30, 4), (0x2000, 0x2100, 0x2008, 0, 0x40, 4),
             (0x3000, 0x3010, 0x3000, 0, 0, 4)]
    cprog = [(0x1000, 0x1100, 0x1000, 0, 0, 2), (0x2000, 0x2100, 0x2000, 0, 0, 2),
             (0x3000, 0x3100, 0x3000, 0, 0, 0)]

    def stack_amd64(callee_sp, ra):
        w = {}
        work_sp = callee_sp + 8
        work_bp = work_sp + 0x38 - 8
        main_sp = work_sp + 0x38 + 8
        main_bp = main_sp + 0x28 - 8
        w[callee_sp] = ra
        w[work_bp] = main_bp
        w[work_bp + 8] = 0x1010
        w[main_bp] = 0
        w[main_bp + 8] = 0x9008
        return w, work_bp, main_bp

    def emit(name, arch, pc, sp, fp, lr, chain, prog, words, base):
        st = bytearray(64 * 8)
        for a, v in words.items():
            struct.pack_into('<Q', st, a - base, v)
        st = bytes(st[sp - base:])
        b = struct.pack('<BBBB4Q', arch, len(chain), len(prog), 63, pc, sp, fp, lr)
        b += b''.join(struct.pack('<Q', c) for c in chain)
        b += b''.join(struct.pack('<3Q2iI', *f) for f in prog)
        with open(os.path.join(outdir, name), 'wb') as f:
            f.write(b + st)

    w, work_bp, main_bp = stack_amd64(0x7000, 0x2020)
    emit('amd64-leaf', 0, 0x3004, 0x7000, work_bp, 0, [0x3004, 0x1010, 0x9008], amd64, w, 0x7000)
    emit('amd64-established', 0, 0x2040, 0x7008, work_bp, 0, [0x2040, 0x1010, 0x9008], amd64, w, 0x7000)
    emit('amd64-prologue', 0, 0x2000, work_bp + 8, main_bp, 0, [0x2000, 0x9008], amd64, w, 0x7000)
    emit('amd64-duff', 0, 0x2050, 0x7008, 0x7008 - 16, 0, [0x2050, 0x2060, 0x1010, 0x9008], amd64, w, 0x7000)
    emit('amd64-garbage-bp', 0, 0x3004, 0x7000, 0x4141414141414141, 0, [0x3004, 0xdeadbeef, 0x12345],
         amd64, w, 0x7000)
    work_sp, main_sp = 0x7000, 0x7040
    work_fp, main_fp = work_sp - 8, main_sp - 8
    w = {work_fp: main_fp, work_fp + 8: 0x1010, main_fp: 0, main_fp + 8: 0x9008}
    emit('arm64-leaf', 1, 0x3004, work_sp, work_fp, 0x2020, [0x3004, 0x1010, 0x9008], arm64, w, work_sp - 8)
    emit('arm64-established', 1, 0x2040, work_sp, work_fp, 0x2044, [0x2040, 0x1010, 0x9008], arm64, w,
         work_sp - 8)
    sp, mid_bp, top_bp = 0x7000, 0x7040, 0x7080
    w = {sp: 0x2030, mid_bp: top_bp, mid_bp + 8: 0x1020, top_bp: 0, top_bp + 8: 0x900}
    emit('c-frameless-leaf', 0, 0x3010, sp, mid_bp, 0, [0x3010, 0x1020, 0x900], cprog, w, sp)
    print('repair seeds in %s' % outdir)


if __name__ == '__main__':
    {'perfrec': perfrec, 'gopclntab': gopclntab, 'goelf': goelf, 'repair': repair}[sys.argv[1]](*sys.argv[2:])
