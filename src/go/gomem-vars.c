/* gomem-vars.c: where the Go runtime keeps its memory, block and mutex profiles, found
 * without symbols from the code of the runtime functions that use them (the way
 * goruntime-vars.c finds allgs and allm: stripped binaries keep .gopclntab, which names
 * those functions, and their amd64 code refers to the variables RIP-relatively).
 *
 * The patterns, the same in go1.19 to go1.27 (runtime/mprof.go, malloc.go, runtime.go;
 * checked by disassembling Debian's toolchains, and against .symtab by tests/go-memprof.sh):
 * - mProf_FlushLocked starts with `head := (*bucket)(mbuckets.Load())` and walks it: its
 *   first operand is a qword load of mbuckets.
 * - stkbucket links a new bucket into `&mbuckets` for memProfile, `&xbuckets` for
 *   mutexProfile, else `&bbuckets`: three LEAs in that order, the first of mbuckets. They
 *   come past the first KB of the function (at +615 in go1.19, +697 in go1.27).
 * - mProf_Free (mProf_Malloc too) reads `mProfCycle.read()`: a dword load, its first operand.
 * - mProf_PostSweep reads mProfCycle and then takes `&profMemActiveLock` (lock, unlock):
 *   the first LEA after that load, taken twice.
 * - allocmcache sets `c.nextSample = nextSample()`, which reads MemProfileRate: the one
 *   qword load of the function (its other operands are LEAs of a closure and emptymspan).
 * - blockevent starts with `rate := int64(atomic.Load64(&blockprofilerate))`: its first
 *   operand. mutexevent (linked as sync.event through go1.26, runtime.mutexevent in
 *   go1.27) likewise reads mutexprofilerate first.
 * - tickspersecond (go1.19-go1.21) and ticksPerSecond (go1.22+) load ticks.val first and
 *   then take &ticks for its lock: the LEA is the struct, the load's distance from it the
 *   offset of val (16 in go1.19, 8 in go1.21, 24 in go1.22+).
 */
#include "config.h"
#include "gotop/gomem.h"

#include <errno.h>
#include <string.h>

#include "gotop/gopclntab.h"
#include "gotop/goruntime.h"
#include "gotop/util.h"

#define REFS 96
#define SCAN_BYTES 4096 /* stkbucket's LEAs end before +900 in every release */

static int refs(Elf *elf, const struct gopcln *t, const char *name, struct gort_ref *r)
{
	int n = gort_code_refs(elf, t, name, SCAN_BYTES, r, REFS);

	return n < 0 ? 0 : n;
}

static int is(const struct gort_ref *r, const char *mn)
{
	return !strcmp(r->mnemonic, mn);
}

/* The first operand of the function, when it is a load of width bytes. */
static uint64_t first_load(Elf *elf, const struct gopcln *t, const char *name, uint8_t width)
{
	struct gort_ref r[REFS];
	int n = refs(elf, t, name, r);

	return n > 0 && is(&r[0], "mov") && r[0].width == width ? r[0].addr : 0;
}

static void find_lists(Elf *elf, const struct gopcln *t, struct gomem_vars *v)
{
	struct gort_ref r[REFS];
	int n, i, j;

	v->mbuckets = first_load(elf, t, "runtime.mProf_FlushLocked", 8);
	n = refs(elf, t, "runtime.stkbucket", r);
	for (i = 0; i + 2 < n; i++) {
		if (!is(&r[i], "lea") || !is(&r[i + 1], "lea") || !is(&r[i + 2], "lea"))
			continue;
		if (v->mbuckets && r[i].addr != v->mbuckets)
			continue;
		if (r[i].addr == r[i + 1].addr || r[i + 1].addr == r[i + 2].addr ||
		    r[i].addr == r[i + 2].addr)
			continue;
		/* each taken once: profInsertLock and buckhash are taken more often */
		for (j = 0; j < n; j++)
			if (j < i || j > i + 2)
				if (r[j].addr == r[i].addr || r[j].addr == r[i + 1].addr ||
				    r[j].addr == r[i + 2].addr)
					break;
		if (j < n)
			continue;
		v->mbuckets = r[i].addr;
		v->xbuckets = r[i + 1].addr;
		v->bbuckets = r[i + 2].addr;
		return;
	}
}

static void find_cycle(Elf *elf, const struct gopcln *t, struct gomem_vars *v)
{
	struct gort_ref r[REFS];
	int n, i, j, k;

	v->mprofcycle = first_load(elf, t, "runtime.mProf_Free", 4);
	if (!v->mprofcycle)
		v->mprofcycle = first_load(elf, t, "runtime.mProf_Malloc", 4);
	n = refs(elf, t, "runtime.mProf_PostSweep", r);
	for (i = 0; i < n; i++) {
		if (r[i].addr != v->mprofcycle || !is(&r[i], "mov"))
			continue;
		for (j = i + 1; j < n && !is(&r[j], "lea"); j++)
			;
		if (j >= n)
			break;
		for (k = j + 1; k < n; k++)
			if (r[k].addr == r[j].addr && is(&r[k], "lea"))
				v->active_lock = r[j].addr;
		break;
	}
}

static void find_rates(Elf *elf, const struct gopcln *t, struct gomem_vars *v)
{
	struct gort_ref r[REFS];
	int n, i, loads = 0;
	uint64_t a = 0;

	n = refs(elf, t, "runtime.allocmcache", r);
	for (i = 0; i < n; i++)
		if (is(&r[i], "mov") && r[i].width == 8) {
			a = r[i].addr;
			loads++;
		}
	if (loads == 1)
		v->memprofilerate = a;
	v->blockprofilerate = first_load(elf, t, "runtime.blockevent", 8);
	v->mutexprofilerate = first_load(elf, t, "runtime.mutexevent", 8);
	if (!v->mutexprofilerate)
		v->mutexprofilerate = first_load(elf, t, "sync.event", 8);
}

static void find_ticks(Elf *elf, const struct gopcln *t, struct gomem_vars *v)
{
	static const char *const fns[] = { "runtime.ticksPerSecond", "runtime.tickspersecond" };
	struct gort_ref r[REFS];
	size_t f;
	int n, i;

	for (f = 0; f < GP_ARRAY_SIZE(fns) && !v->ticks; f++) {
		n = refs(elf, t, fns[f], r);
		if (n < 2 || !is(&r[0], "mov") || r[0].width != 8)
			continue;
		for (i = 1; i < n; i++)
			if (is(&r[i], "lea") && r[i].addr < r[0].addr &&
			    r[0].addr - r[i].addr <= 64) {
				v->ticks = r[i].addr;
				v->ticks_val = (uint32_t)(r[0].addr - r[i].addr);
				break;
			}
	}
}

int gomem_vars_find(Elf *elf, const struct gopcln *t, struct gomem_vars *out)
{
	GElf_Ehdr eh;

	memset(out, 0, sizeof(*out));
	if (!elf || !t || !gelf_getehdr(elf, &eh))
		return -EINVAL;
	if (eh.e_machine != EM_X86_64)
		return -ENOTSUP;
	find_lists(elf, t, out);
	find_cycle(elf, t, out);
	find_rates(elf, t, out);
	find_ticks(elf, t, out);
	return out->mbuckets && out->mprofcycle ? 0 : -ENOENT;
}
