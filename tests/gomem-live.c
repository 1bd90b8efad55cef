/* gomem-live.c: where gomem_vars_find puts the runtime's profile variables in a Go binary,
 * next to its .symtab (driven by tests/go-memprof.sh).
 *
 * Usage: gomem-live BINARY
 * Prints one line per variable, "NAME CODE SYMTAB" (hex, 0 when not found), then
 * "ticks_val N". Exit 0, or 1 when the binary cannot be read. */
#include "config.h"
#include "gotop/gomem.h"
#include "gotop/symtab.h"

#include <inttypes.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	struct gomem_vars v;
	struct symfile *sf;
	int err, rc;

	if (argc != 2) {
		fprintf(stderr, "usage: gomem-live BINARY\n");
		return 2;
	}
	sf = symfile_open(argv[1], &err);
	if (!sf || !symfile_gopcln(sf) || !symfile_go_version(sf)) {
		fprintf(stderr, "gomem-live: %s: not a Go binary\n", argv[1]);
		return 1;
	}
	rc = gomem_vars_find(symfile_elf(sf), symfile_gopcln(sf), &v);
#define VAR(f, s) printf("%s %#" PRIx64 " %#" PRIx64 "\n", s, v.f, symfile_symbol_value(sf, s))
	VAR(mbuckets, "runtime.mbuckets");
	VAR(bbuckets, "runtime.bbuckets");
	VAR(xbuckets, "runtime.xbuckets");
	VAR(mprofcycle, "runtime.mProfCycle");
	VAR(active_lock, "runtime.profMemActiveLock");
	VAR(memprofilerate, "runtime.MemProfileRate");
	VAR(blockprofilerate, "runtime.blockprofilerate");
	VAR(mutexprofilerate, "runtime.mutexprofilerate");
	VAR(ticks, "runtime.ticks");
	printf("ticks_val %u\nfind %d\n", v.ticks_val, rc);
	symfile_free(sf);
	return 0;
}
