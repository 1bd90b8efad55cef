/* gobpf-abi.h: what src/bpf/gobpf.bpf.c (run by the kernel at each sample) writes, and
 * its configuration; shared by the BPF program and src/gobpf.c. Linux types only. */
#ifndef GOTOP_GOBPF_ABI_H
#define GOTOP_GOBPF_ABI_H

#include <linux/types.h>

/* gobpf_rec.flags: which parts the program could read. */
#define GOBPF_REC_G 0x1      /* g[]: the g register's g (its fields, see below) */
#define GOBPF_REC_M 0x2      /* m[]: the fields of the m at maddr (g.m, or the thread's m
			      * known from earlier samples when the register is no g of it);
			      * not read when g.m is the thread's known m and the g is not
			      * one of its system stacks */
#define GOBPF_REC_CURG 0x4   /* curg[]: m.curg's fields (the register was not m.curg) */
#define GOBPF_REC_KREGS 0x8  /* sampled in the kernel: registers from the task's user entry */

/* Field order of gobpf_rec.g / .curg and of gobpf_cfg.goff. */
enum { GOBPF_G_STACK_LO, GOBPF_G_STACK_HI, GOBPF_G_M, GOBPF_G_GOID, GOBPF_G_LABELS,
       GOBPF_G_STATUS, GOBPF_G_NFIELDS };
/* Field order of gobpf_rec.m and of gobpf_cfg.moff. */
enum { GOBPF_M_G0, GOBPF_M_PROCID, GOBPF_M_GSIGNAL, GOBPF_M_CURG, GOBPF_M_NFIELDS };

/* The largest g or m span the program copies (it reads one span per structure). */
#define GOBPF_SPAN_MAX 1024

struct gobpf_rec {
	__u64 time;    /* bpf_ktime_get_ns: CLOCK_MONOTONIC, like the samples (use_clockid) */
	__u32 tid, flags;
	__u64 ip, sp, greg; /* user registers */
	__u64 g[GOBPF_G_NFIELDS];
	__u64 maddr;
	__u64 m[GOBPF_M_NFIELDS];
	__u64 curg[GOBPF_G_NFIELDS];
	__u64 matched; /* 0 from the program; the reader marks records it used */
};

/* Set before the program is loaded (read-only then: the verifier sees constants). The
 * status word is 4 bytes; the rest are 8. */
struct gobpf_cfg {
	__u32 gsz, msz; /* bytes copied from a g and an m: every field offset + 8 fits */
	__u32 goff[GOBPF_G_NFIELDS];
	__u32 moff[GOBPF_M_NFIELDS];
};

/* Counters (per-CPU array gobpf_stats). */
enum { GOBPF_ST_RECORDS, GOBPF_ST_RING_FULL, GOBPF_ST_NFIELDS };

#endif
