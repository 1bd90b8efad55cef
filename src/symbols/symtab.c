/* symtab.c: one ELF file's symbols (.symtab/.dynsym), DWARF lines and inlines, and Go's .gopclntab. */
#include "config.h"
#include "gotop/symtab.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <zlib.h>

#include "gotop/gopclntab.h"
#include "gotop/util.h"

/* Bounds on untrusted input. */
#define SYMTAB_MAX_SYMS (16u << 20)     /* symbols read from one table */
#define SYMTAB_MAX_CHAIN 32             /* inline depth kept per address */
#define SYMTAB_MAX_DIE_VISITS 200000    /* DIEs visited by one inline search */
#define SYMTAB_MAX_NEST 64              /* DIE nesting followed */
#define SYMTAB_BACKSCAN 64              /* overlapping ranges looked back over */
#define SYMTAB_CACHE_MIN 256            /* per-address result cache (open addressing): */
#define SYMTAB_CACHE_MAX 16384          /* grows from MIN to MAX slots as it fills, */
#define SYMTAB_CACHE_PROBE 8            /* then evicts within a probe window */
#define SYMTAB_MAX_NOTE (1u << 16)      /* bytes of one note segment read */

/* A function symbol: [addr, end). maxend: the largest end of this and all earlier
 * entries, which bounds how far back a lookup must look for an enclosing range. */
struct symbol {
	uint64_t addr, end, maxend;
	const char *name;
};

/* A PT_LOAD segment: file bytes [off, off + filesz) appear at vaddr. */
struct segment {
	uint64_t off, vaddr, filesz, memsz;
};

/* An address range of a DWARF unit or function, sorted by lo, with maxhi as above. */
struct range {
	uint64_t lo, hi, maxhi;
	size_t idx;
};

struct cu_info {
	Dwarf_Die die;
	struct range *fns; /* subprogram ranges; idx = index into fdies */
	Dwarf_Off *fdies;  /* DIE offsets of the subprograms */
	size_t nfns, nfdies;
	int fns_loaded;
	Dwarf_Files *files;
	size_t nfiles;
	int files_loaded;
	const char *comp_dir;
	int comp_dir_loaded;
};

/* Relative source paths joined with their unit's DW_AT_comp_dir, as addr2line
 * prints them; keyed by (libdw's string, unit) so each is built once. */
struct path_slot {
	const char *raw;
	size_t cu;
	char *full;
};

struct cache_slot {
	uint64_t vaddr;
	int32_t n; /* -1: empty */
	struct sym_frame *frames;
};

struct symfile {
	char *path;
	int fd;
	void *membuf;
	Elf *elf;
	uint16_t machine, type;
	struct segment *segs;
	size_t nsegs;
	char *build_id;
	int is_go_hint;

	/* symbols */
	int syms_loaded;
	struct symbol *syms;
	size_t nsyms;

	/* separate debug file */
	int debug_tried;
	int dbg_fd;
	Elf *dbg_elf;

	/* DWARF. libdw decompresses every section of a handle when it opens it, so each
	 * use has its own handle over the sections it reads (dwarf_open_classes). */
	int dwarf_tried;
	Dwarf *dw;       /* lookups: entries and line tables */
	int types_tried;
	Dwarf *dw_types; /* symfile_dwarf: entries only (types, functions) */
	int frame_tried;
	Dwarf *dw_frame; /* .debug_frame, for symfile_cfi */
	int cus_loaded;
	struct cu_info *cus;
	size_t ncus;
	struct range *cur; /* idx = index into cus */
	size_t ncur;
	struct path_slot *paths;
	size_t paths_cap, paths_used;

	/* CFI */
	int cfi_tried;
	Dwarf_CFI *cfi;
	int cfi_owned; /* from dwarf_getcfi_elf: freed with dwarf_cfi_end */

	/* Go */
	int go_tried;
	struct gopcln *go;

	/* per-address cache */
	struct cache_slot *cache;
	size_t cache_cap, cache_used;
	int cache_on, dwarf_on, go_on;
	struct symfile_stats st;
};

/* ---------- opening ---------- */

static const char *scn_name(Elf *elf, size_t shstrndx, GElf_Shdr *sh)
{
	const char *n = elf_strptr(elf, shstrndx, sh->sh_name);
	return n ? n : "";
}

static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *out)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	size_t guard = 0;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL && guard++ < 65536) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		if (strcmp(scn_name(elf, shstrndx, &sh), name) == 0) {
			if (out)
				*out = sh;
			return scn;
		}
	}
	return NULL;
}

static char *hex_string(const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char *s = xmalloc(n * 2 + 1);

	for (size_t i = 0; i < n; i++) {
		s[2 * i] = digits[p[i] >> 4];
		s[2 * i + 1] = digits[p[i] & 15];
	}
	s[n * 2] = '\0';
	return s;
}

/* Scans notes in data for the GNU build id (type NT_GNU_BUILD_ID, name "GNU", elf.h)
 * and Go's build id (type 4, name "Go\0\0" with namesz 4: Go cmd/link/internal/ld/elf.go
 * ELF_NOTE_GOBUILDID_TAG, ELF_NOTE_GO_NAME). Sets *gnu / *go (malloc'd) when not yet set. */
static void scan_notes(Elf_Data *data, char **gnu, char **go)
{
	size_t off = 0;
	GElf_Nhdr nh;
	size_t name_off, desc_off;
	int guard = 0;

	if (data == NULL || data->d_buf == NULL)
		return;
	while (off < data->d_size && guard++ < 256) {
		size_t next = gelf_getnote(data, off, &nh, &name_off, &desc_off);
		if (next == 0 || next <= off)
			break;
		const char *name = (const char *)data->d_buf + name_off;
		const uint8_t *desc = (const uint8_t *)data->d_buf + desc_off;
		if (nh.n_namesz == 4 && memcmp(name, "GNU", 4) == 0 && nh.n_type == NT_GNU_BUILD_ID &&
		    nh.n_descsz > 0 && nh.n_descsz <= 64 && *gnu == NULL)
			*gnu = hex_string(desc, nh.n_descsz);
		else if ((nh.n_namesz == 3 || nh.n_namesz == 4) && memcmp(name, "Go", 3) == 0 &&
			 nh.n_type == 4 &&
			 nh.n_descsz > 0 && nh.n_descsz <= 1024 && *go == NULL)
			*go = xstrndup((const char *)desc, nh.n_descsz);
		off = next;
	}
}

static void read_build_id(struct symfile *sf)
{
	char *gnu = NULL, *go = NULL;
	size_t nph = 0;
	Elf_Scn *scn = NULL;
	int guard = 0;

	/* Program headers first: they survive section stripping and are what a memory
	 * image has. Then sections (a debug file has no PT_NOTE). */
	if (elf_getphdrnum(sf->elf, &nph) == 0) {
		for (size_t i = 0; i < nph && i < 256; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(sf->elf, (int)i, &ph) == NULL || ph.p_type != PT_NOTE)
				continue;
			if (ph.p_filesz == 0 || ph.p_filesz > SYMTAB_MAX_NOTE)
				continue;
			Elf_Data *d = elf_getdata_rawchunk(sf->elf, (int64_t)ph.p_offset, ph.p_filesz,
							   ELF_T_NHDR);
			scan_notes(d, &gnu, &go);
		}
	}
	if (gnu == NULL) {
		while ((scn = elf_nextscn(sf->elf, scn)) != NULL && guard++ < 65536) {
			GElf_Shdr sh;
			if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_NOTE)
				continue;
			if (sh.sh_size > SYMTAB_MAX_NOTE)
				continue;
			scan_notes(elf_getdata(scn, NULL), &gnu, &go);
		}
	}
	if (go)
		sf->is_go_hint = 1;
	if (gnu) {
		sf->build_id = gnu;
		free(go);
	} else {
		sf->build_id = go;
	}
}

static void read_segments(struct symfile *sf)
{
	size_t nph = 0, cap = 0;

	if (elf_getphdrnum(sf->elf, &nph) != 0)
		return;
	for (size_t i = 0; i < nph && i < 4096; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(sf->elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD)
			continue;
		xgrow((void **)&sf->segs, &cap, sf->nsegs + 1, sizeof(*sf->segs));
		sf->segs[sf->nsegs].off = ph.p_offset;
		sf->segs[sf->nsegs].vaddr = ph.p_vaddr;
		sf->segs[sf->nsegs].filesz = ph.p_filesz;
		sf->segs[sf->nsegs].memsz = ph.p_memsz;
		sf->nsegs++;
	}
}

/* Whether the file looks like Go: cheap section-name checks (Go cmd/link emits
 * .go.buildinfo since go1.13, .gopclntab for non-PIE, .note.go.buildid). */
static void detect_go(struct symfile *sf)
{
	if (sf->is_go_hint)
		return;
	if (find_section(sf->elf, ".gopclntab", NULL) || find_section(sf->elf, ".go.buildinfo", NULL) ||
	    find_section(sf->elf, ".note.go.buildid", NULL))
		sf->is_go_hint = 1;
}

static struct symfile *symfile_from_elf(Elf *elf, int fd, void *membuf, const char *display, int *err)
{
	GElf_Ehdr eh;
	struct symfile *sf;

	if (elf == NULL || elf_kind(elf) != ELF_K_ELF || gelf_getehdr(elf, &eh) == NULL) {
		if (elf)
			elf_end(elf);
		if (fd >= 0)
			close(fd);
		free(membuf);
		if (err)
			*err = -ENOEXEC;
		errno = ENOEXEC;
		return NULL;
	}
	sf = xcalloc(1, sizeof(*sf));
	sf->path = xstrdup(display ? display : "");
	sf->fd = fd;
	sf->membuf = membuf;
	sf->elf = elf;
	sf->machine = eh.e_machine;
	sf->type = eh.e_type;
	sf->dbg_fd = -1;
	sf->cache_on = 1;
	sf->dwarf_on = 1;
	sf->go_on = 1;
	read_segments(sf);
	read_build_id(sf);
	detect_go(sf);
	if (err)
		*err = 0;
	return sf;
}

static void elf_init_once(void)
{
	/* Idempotent: it only records the version the caller speaks. */
	elf_version(EV_CURRENT);
}

struct symfile *symfile_open_fd(int fd, const char *display_path, int *err)
{
	elf_init_once();
	if (fd < 0) {
		if (err)
			*err = -EBADF;
		errno = EBADF;
		return NULL;
	}
	return symfile_from_elf(elf_begin(fd, ELF_C_READ_MMAP, NULL), fd, NULL, display_path, err);
}

struct symfile *symfile_open(const char *path, int *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;
		if (err)
			*err = -e;
		return NULL;
	}
	return symfile_open_fd(fd, path, err);
}

struct symfile *symfile_open_memory(void *buf, size_t len, const char *display_path, int *err)
{
	elf_init_once();
	if (buf == NULL || len == 0) {
		free(buf);
		if (err)
			*err = -EINVAL;
		errno = EINVAL;
		return NULL;
	}
	return symfile_from_elf(elf_memory(buf, len), -1, buf, display_path, err);
}

static void cache_clear(struct symfile *sf)
{
	if (sf->cache == NULL)
		return;
	for (size_t i = 0; i < sf->cache_cap; i++)
		free(sf->cache[i].frames);
	free(sf->cache);
	sf->cache = NULL;
	sf->cache_cap = sf->cache_used = 0;
}

/* The slot holding vaddr, else an empty slot to fill, else one to evict: linear
 * probing over at most SYMTAB_CACHE_PROBE slots (entries are replaced, never
 * removed, so probe chains have no holes). *hit tells which. */
static struct cache_slot *cache_slot_for(const struct symfile *sf, uint64_t vaddr, int *hit)
{
	size_t mask = sf->cache_cap - 1, h = (size_t)util_mix64(vaddr);

	*hit = 0;
	for (size_t k = 0; k < SYMTAB_CACHE_PROBE; k++) {
		struct cache_slot *s = &sf->cache[(h + k) & mask];
		if (s->n < 0)
			return s;
		if (s->vaddr == vaddr) {
			*hit = 1;
			return s;
		}
	}
	/* all taken: evict one of them, chosen by the address */
	return &sf->cache[(h + (size_t)((vaddr >> 2) % SYMTAB_CACHE_PROBE)) & mask];
}

/* Allocates the cache, or doubles it when half full (re-inserting what still fits:
 * it is a cache, entries may go). */
static void cache_grow(struct symfile *sf)
{
	struct cache_slot *old = sf->cache;
	size_t oldcap = sf->cache_cap;
	size_t cap = oldcap ? oldcap * 2 : SYMTAB_CACHE_MIN;
	int hit;

	sf->cache = xmalloc(cap * sizeof(*sf->cache));
	sf->cache_cap = cap;
	sf->cache_used = 0;
	for (size_t i = 0; i < cap; i++) {
		sf->cache[i].n = -1;
		sf->cache[i].frames = NULL;
	}
	for (size_t i = 0; i < oldcap; i++) {
		if (old[i].n < 0)
			continue;
		struct cache_slot *s = cache_slot_for(sf, old[i].vaddr, &hit);
		if (s->n >= 0) {
			free(old[i].frames);
			continue;
		}
		*s = old[i];
		sf->cache_used++;
	}
	free(old);
}

void symfile_free(struct symfile *sf)
{
	if (sf == NULL)
		return;
	cache_clear(sf);
	if (sf->go)
		gopcln_free(sf->go);
	if (sf->cfi && sf->cfi_owned)
		dwarf_cfi_end(sf->cfi);
	for (size_t i = 0; i < sf->ncus; i++) {
		free(sf->cus[i].fns);
		free(sf->cus[i].fdies);
	}
	free(sf->cus);
	free(sf->cur);
	for (size_t i = 0; i < sf->paths_cap; i++)
		free(sf->paths[i].full);
	free(sf->paths);
	if (sf->dw)
		dwarf_end(sf->dw);
	if (sf->dw_types)
		dwarf_end(sf->dw_types);
	if (sf->dw_frame)
		dwarf_end(sf->dw_frame);
	if (sf->dbg_elf)
		elf_end(sf->dbg_elf);
	if (sf->dbg_fd >= 0)
		close(sf->dbg_fd);
	free(sf->syms);
	free(sf->segs);
	free(sf->build_id);
	elf_end(sf->elf);
	if (sf->fd >= 0)
		close(sf->fd);
	free(sf->membuf);
	free(sf->path);
	free(sf);
}

const char *symfile_path(const struct symfile *sf)
{
	return sf->path;
}

Elf *symfile_elf(const struct symfile *sf)
{
	return sf->elf;
}

uint16_t symfile_machine(const struct symfile *sf)
{
	return sf->machine;
}

uint16_t symfile_type(const struct symfile *sf)
{
	return sf->type;
}

int symfile_eh_frame_hdr(const struct symfile *sf, uint64_t *vaddr, uint64_t *size)
{
	size_t nph = 0;

	if (elf_getphdrnum(sf->elf, &nph) != 0)
		return -ENOENT;
	for (size_t i = 0; i < nph && i < 4096; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(sf->elf, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME) {
			*vaddr = ph.p_vaddr;
			*size = ph.p_memsz;
			return 0;
		}
	}
	return -ENOENT;
}

const char *symfile_build_id(const struct symfile *sf)
{
	return sf->build_id;
}

int symfile_file_vaddr(const struct symfile *sf, uint64_t map_start, uint64_t map_pgoff,
		       uint64_t addr, uint64_t *vaddr)
{
	uint64_t off;

	if (addr < map_start)
		return -EINVAL;
	off = addr - map_start + map_pgoff;
	/* The kernel maps file pages; the segment whose file bytes hold off says where
	 * they were linked (linux fs/binfmt_elf.c, glibc elf/dl-map-segments.h). */
	for (size_t i = 0; i < sf->nsegs; i++) {
		const struct segment *s = &sf->segs[i];
		if (off >= s->off && off - s->off < s->filesz) {
			*vaddr = off - s->off + s->vaddr;
			return 0;
		}
	}
	/* Page-rounding: the tail of a segment's last page past filesz (e.g. .bss). */
	for (size_t i = 0; i < sf->nsegs; i++) {
		const struct segment *s = &sf->segs[i];
		if (off >= s->off && off - s->off < GP_MAX(s->memsz, s->filesz)) {
			*vaddr = off - s->off + s->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

ssize_t symfile_read(const struct symfile *sf, uint64_t vaddr, void *buf, size_t n)
{
	for (size_t i = 0; i < sf->nsegs; i++) {
		const struct segment *s = &sf->segs[i];
		size_t avail;
		ssize_t r;

		if (vaddr < s->vaddr || vaddr - s->vaddr >= s->filesz)
			continue;
		avail = (size_t)GP_MIN((uint64_t)n, s->filesz - (vaddr - s->vaddr));
		if (sf->membuf) {
			size_t sz = 0;
			const char *img = elf_rawfile(sf->elf, &sz);
			uint64_t off = s->off + (vaddr - s->vaddr);

			if (!img || off > sz)
				return -EIO;
			avail = GP_MIN(avail, sz - (size_t)off);
			memcpy(buf, img + off, avail);
			return (ssize_t)avail;
		}
		/* pread, not the mapped image: a file truncated on disk while we read it gives
		 * a short read here, where a read of the mapping would raise SIGBUS. */
		r = pread(sf->fd, buf, avail, (off_t)(s->off + (vaddr - s->vaddr)));
		return r < 0 ? -errno : r;
	}
	return -ENOENT;
}

void symfile_get_stats(const struct symfile *sf, struct symfile_stats *st)
{
	*st = sf->st;
}

void symfile_set_cache(struct symfile *sf, int enabled)
{
	sf->cache_on = enabled != 0;
	cache_clear(sf);
}

void symfile_set_dwarf(struct symfile *sf, int enabled)
{
	sf->dwarf_on = enabled != 0;
	cache_clear(sf);
}

void symfile_set_go(struct symfile *sf, int enabled)
{
	sf->go_on = enabled != 0;
	cache_clear(sf);
}

/* ---------- separate debug file ---------- */

static int has_section(Elf *elf, const char *name)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(elf, name, &sh);
	return scn != NULL && sh.sh_type != SHT_NOBITS;
}

/* CRC-32 of a whole file as .gnu_debuglink records it (the zlib polynomial: binutils
 * bfd/opncls.c bfd_calc_gnu_debuglink_crc32). 0 or -1. */
static int file_crc32(int fd, uint32_t *out)
{
	uint8_t buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	off_t off = 0;

	for (;;) {
		ssize_t r = pread(fd, buf, sizeof(buf), off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		crc = crc32(crc, buf, (uInt)r);
		off += r;
	}
	*out = (uint32_t)crc;
	return 0;
}

/* crc: when not NULL, the debug file's CRC-32 must equal *crc (used when the file
 * has no GNU build id to match). */
static int try_debug_file(struct symfile *sf, const char *path, const uint32_t *crc)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	uint32_t got;

	if (fd < 0)
		return 0;
	if (crc && (file_crc32(fd, &got) != 0 || got != *crc)) {
		close(fd);
		return 0;
	}
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e == NULL || elf_kind(e) != ELF_K_ELF ||
	    (!has_section(e, ".debug_info") && !has_section(e, ".symtab"))) {
		if (e)
			elf_end(e);
		close(fd);
		return 0;
	}
	/* Refuse a debug file built for another binary. */
	if (sf->build_id && strchr(sf->build_id, '/') == NULL) {
		struct symfile tmp;
		memset(&tmp, 0, sizeof(tmp));
		tmp.elf = e;
		read_build_id(&tmp);
		int same = tmp.build_id == NULL || strcmp(tmp.build_id, sf->build_id) == 0;
		free(tmp.build_id);
		if (!same) {
			elf_end(e);
			close(fd);
			return 0;
		}
	}
	sf->dbg_fd = fd;
	sf->dbg_elf = e;
	return 1;
}

/* Debug file locations as gdb and elfutils search them (gdb manual "Separate Debug
 * Files"): /usr/lib/debug/.build-id/xx/rest.debug, then .gnu_debuglink's name in
 * the file's directory, its .debug/ subdirectory and /usr/lib/debug/DIR. */
static Elf *debug_elf(struct symfile *sf)
{
	char buf[4096];

	if (sf->debug_tried)
		return sf->dbg_elf;
	sf->debug_tried = 1;
	if (sf->build_id && strchr(sf->build_id, '/') == NULL && strlen(sf->build_id) > 2 &&
	    strlen(sf->build_id) < 200) {
		snprintf(buf, sizeof(buf), "/usr/lib/debug/.build-id/%.2s/%s.debug", sf->build_id,
			 sf->build_id + 2);
		if (try_debug_file(sf, buf, NULL))
			return sf->dbg_elf;
	}
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(sf->elf, ".gnu_debuglink", &sh);
	if (scn == NULL || sh.sh_type == SHT_NOBITS)
		return NULL;
	Elf_Data *d = elf_getdata(scn, NULL);
	if (d == NULL || d->d_buf == NULL || d->d_size < 2)
		return NULL;
	/* Section layout: name, NUL, padding to 4 bytes, CRC-32 in the file's byte order
	 * (gdb manual "Separate Debug Files"). */
	const char *name = d->d_buf;
	size_t nlen = strnlen(name, d->d_size);
	if (nlen == 0 || nlen >= d->d_size || nlen > 255 || strchr(name, '/'))
		return NULL;
	size_t crc_off = (nlen + 1 + 3) & ~(size_t)3;
	uint32_t crc = 0;
	const uint32_t *want = NULL;
	if (crc_off + 4 <= d->d_size) {
		const uint8_t *c = (const uint8_t *)d->d_buf + crc_off;
		const char *ident = elf_getident(sf->elf, NULL);
		if (ident && ident[EI_DATA] == ELFDATA2MSB)
			crc = (uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 | (uint32_t)c[2] << 8 | c[3];
		else
			crc = (uint32_t)c[3] << 24 | (uint32_t)c[2] << 16 | (uint32_t)c[1] << 8 | c[0];
		/* a build id already ties the files together; the CRC reads the whole file */
		if (sf->build_id == NULL || strchr(sf->build_id, '/') != NULL)
			want = &crc;
	}
	char dir[2048];
	const char *slash = strrchr(sf->path, '/');
	if (slash == NULL || (size_t)(slash - sf->path) >= sizeof(dir))
		return NULL;
	memcpy(dir, sf->path, (size_t)(slash - sf->path));
	dir[slash - sf->path] = '\0';
	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	if (strcmp(buf, sf->path) != 0 && try_debug_file(sf, buf, want))
		return sf->dbg_elf;
	snprintf(buf, sizeof(buf), "%s/.debug/%s", dir, name);
	if (try_debug_file(sf, buf, want))
		return sf->dbg_elf;
	snprintf(buf, sizeof(buf), "/usr/lib/debug%s/%s", dir, name);
	if (try_debug_file(sf, buf, want))
		return sf->dbg_elf;
	return NULL;
}

/* ---------- symbol table ---------- */

struct rawsym {
	uint64_t addr, size, secend;
	const char *name;
	int rank;
};

static int leading_underscores(const char *s)
{
	int n = 0;
	while (n < 8 && s[n] == '_')
		n++;
	return n;
}

static int cmp_rawsym(const void *a, const void *b)
{
	const struct rawsym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	int ux = leading_underscores(x->name), uy = leading_underscores(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void collect_syms(Elf *elf, Elf_Scn *scn, GElf_Shdr *sh, struct rawsym **raw, size_t *n,
			 size_t *cap)
{
	Elf_Data *data, *xdata = NULL;
	size_t count;

	if (sh->sh_flags & SHF_COMPRESSED) {
		/* libdwfl does the same for a compressed .symtab in debug files. */
		if (elf_compress(scn, 0, 0) < 0)
			return;
		if (gelf_getshdr(scn, sh) == NULL)
			return;
	}
	data = elf_getdata(scn, NULL);
	if (data == NULL || sh->sh_entsize == 0)
		return;
	count = data->d_size / sh->sh_entsize;
	if (count > SYMTAB_MAX_SYMS)
		count = SYMTAB_MAX_SYMS;
	/* SHN_XINDEX section indexes live in SHT_SYMTAB_SHNDX (ELF gABI). */
	{
		Elf_Scn *x = NULL;
		size_t idx = elf_ndxscn(scn);
		int guard = 0;
		while ((x = elf_nextscn(elf, x)) != NULL && guard++ < 65536) {
			GElf_Shdr xs;
			if (gelf_getshdr(x, &xs) && xs.sh_type == SHT_SYMTAB_SHNDX && xs.sh_link == idx) {
				xdata = elf_getdata(x, NULL);
				break;
			}
		}
	}
	for (size_t i = 1; i < count; i++) {
		GElf_Sym sym;
		Elf32_Word xndx = 0;
		GElf_Shdr tsh;
		Elf_Scn *tscn;
		size_t shndx;

		if (gelf_getsymshndx(data, xdata, (int)i, &sym, &xndx) == NULL)
			continue;
		int type = GELF_ST_TYPE(sym.st_info);
		int bind = GELF_ST_BIND(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		if (sym.st_value == 0 || sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS ||
		    sym.st_shndx == SHN_COMMON)
			continue;
		shndx = sym.st_shndx == SHN_XINDEX ? xndx : sym.st_shndx;
		tscn = elf_getscn(elf, shndx);
		if (tscn == NULL || gelf_getshdr(tscn, &tsh) == NULL)
			continue;
		if (!(tsh.sh_flags & SHF_EXECINSTR))
			continue;
		const char *name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (name == NULL || name[0] == '\0' || name[0] == '$')
			continue;
		if (type == STT_NOTYPE && name[0] == '.' && name[1] == 'L')
			continue;
		xgrow((void **)raw, cap, *n + 1, sizeof(**raw));
		struct rawsym *r = &(*raw)[*n];
		r->addr = sym.st_value;
		r->size = sym.st_size;
		r->secend = tsh.sh_addr + tsh.sh_size;
		r->name = name;
		/* Prefer sized over sizeless, functions over untyped labels, then global over
		 * weak over local (as libdwfl's dwfl_module_addrsym does). */
		r->rank = (sym.st_size ? 16 : 0) + (type != STT_NOTYPE ? 8 : 0) +
			  (bind == STB_GLOBAL ? 3 : bind == STB_WEAK ? 2 : 1);
		(*n)++;
	}
}

static void load_syms_from(Elf *elf, int types_mask, struct rawsym **raw, size_t *n, size_t *cap)
{
	Elf_Scn *scn = NULL;
	int guard = 0;

	while ((scn = elf_nextscn(elf, scn)) != NULL && guard++ < 65536) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		if ((sh.sh_type == SHT_SYMTAB && (types_mask & 1)) ||
		    (sh.sh_type == SHT_DYNSYM && (types_mask & 2)))
			collect_syms(elf, scn, &sh, raw, n, cap);
	}
}

static void load_syms(struct symfile *sf)
{
	struct rawsym *raw = NULL;
	size_t n = 0, cap = 0;

	if (sf->syms_loaded)
		return;
	sf->syms_loaded = 1;
	load_syms_from(sf->elf, 3, &raw, &n, &cap);
	/* A stripped file: the debug file's .symtab has the local symbols too. */
	if (!has_section(sf->elf, ".symtab")) {
		Elf *d = debug_elf(sf);
		if (d)
			load_syms_from(d, 1, &raw, &n, &cap);
	}
	if (n == 0) {
		free(raw);
		return;
	}
	qsort(raw, n, sizeof(*raw), cmp_rawsym);
	sf->syms = xmalloc(n * sizeof(*sf->syms));
	size_t out = 0;
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && raw[i].addr == raw[i - 1].addr)
			continue; /* an alias ranked lower */
		sf->syms[out].addr = raw[i].addr;
		sf->syms[out].name = raw[i].name;
		sf->syms[out].end = raw[i].size;  /* fixed below */
		sf->syms[out].maxend = raw[i].secend; /* stash */
		out++;
	}
	free(raw);
	for (size_t i = 0; i < out; i++) {
		struct symbol *s = &sf->syms[i];
		uint64_t size = s->end, secend = s->maxend;
		if (size > 0 && s->addr + size > s->addr) {
			s->end = s->addr + size;
		} else {
			/* Sizeless: up to the next symbol, within its section. */
			uint64_t end = i + 1 < out ? sf->syms[i + 1].addr : secend;
			if (secend > s->addr && secend < end)
				end = secend;
			if (end <= s->addr)
				end = s->addr + 1;
			s->end = end;
		}
	}
	uint64_t m = 0;
	for (size_t i = 0; i < out; i++) {
		m = GP_MAX(m, sf->syms[i].end);
		sf->syms[i].maxend = m;
	}
	sf->nsyms = out;
}

static const struct symbol *find_sym(struct symfile *sf, uint64_t addr)
{
	size_t lo = 0, hi;

	load_syms(sf);
	hi = sf->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sf->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Nested or overlapping symbols: walk back while an earlier one may still reach. */
	for (size_t i = lo, k = 0; i > 0 && k < SYMTAB_BACKSCAN; i--, k++) {
		const struct symbol *s = &sf->syms[i - 1];
		if (addr < s->end)
			return s;
		if (s->maxend <= addr)
			break;
	}
	return NULL;
}

const char *symfile_symbol(struct symfile *sf, uint64_t vaddr, uint64_t *start, uint64_t *size)
{
	const struct symbol *s = find_sym(sf, vaddr);

	if (s == NULL)
		return NULL;
	if (start)
		*start = s->addr;
	if (size)
		*size = s->end - s->addr;
	return s->name;
}

size_t symfile_nsymbols(struct symfile *sf)
{
	load_syms(sf);
	return sf->nsyms;
}

/* ---------- DWARF ---------- */

/* DWARF sections by class. libdw recognises them by name (elfutils 0.188
 * libdw/dwarf_begin_elf.c dwarf_scnnames), also with a ".zdebug_" prefix (GNU
 * compression) or a ".dwo" suffix. */
#define DWS_ENTRIES 0x1 /* .debug_info, _abbrev, _str, _ranges, ...: all not below */
#define DWS_LINE 0x2    /* .debug_line */
#define DWS_FRAME 0x4   /* .debug_frame */
#define DWS_UNUSED 0x8  /* location lists and macros: nothing here reads them */
#define SYMTAB_MAX_HIDDEN 256

static unsigned dwarf_scn_class(const char *name)
{
	char base[64];
	size_t len;

	if (strncmp(name, ".zdebug_", 8) == 0)
		snprintf(base, sizeof(base), ".%s", name + 2);
	else if (strncmp(name, ".debug_", 7) == 0)
		snprintf(base, sizeof(base), "%s", name);
	else
		return 0;
	len = strlen(base);
	if (len > 4 && strcmp(base + len - 4, ".dwo") == 0)
		base[len - 4] = '\0';
	if (strcmp(base, ".debug_line") == 0)
		return DWS_LINE;
	if (strcmp(base, ".debug_frame") == 0)
		return DWS_FRAME;
	if (strcmp(base, ".debug_loc") == 0 || strcmp(base, ".debug_loclists") == 0 ||
	    strcmp(base, ".debug_macro") == 0 || strcmp(base, ".debug_macinfo") == 0)
		return DWS_UNUSED;
	return DWS_ENTRIES;
}

/* Moves a section's name one byte on (".debug_loc" reads "debug_loc", which no
 * reader recognises), or back. Only libelf's copy of the section headers changes:
 * ELF_C_READ_MMAP copies them out of the read-only mapping (elfutils 0.188
 * libelf/elf_begin.c file_read_elf), elf_memory's image is our own buffer. */
static int shift_scn_name(Elf_Scn *scn, int by)
{
	GElf_Shdr sh;

	if (gelf_getshdr(scn, &sh) == NULL || (by > 0 && sh.sh_name == UINT32_MAX))
		return 0;
	sh.sh_name = (GElf_Word)((int64_t)sh.sh_name + by);
	return gelf_update_shdr(scn, &sh) != 0;
}

/* dwarf_begin_elf over the DWARF sections of the classes in want only. libdw
 * decompresses every SHF_COMPRESSED section it recognises on open (elfutils 0.188
 * dwarf_begin_elf.c check_section): a Go binary's .debug_loc alone is tens of MB. The
 * other sections' names are hidden for the duration of the call. A section that
 * another handle decompressed stays decompressed in elf (libelf keeps the data). */
static Dwarf *dwarf_open_classes(Elf *elf, unsigned want)
{
	size_t shstrndx, hidden[SYMTAB_MAX_HIDDEN], nh = 0;
	Elf_Scn *scn = NULL;
	Dwarf *dw;
	int guard = 0;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL && guard++ < 65536) {
		GElf_Shdr sh;
		const char *name;
		unsigned c;

		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name == NULL || name[0] == '\0')
			continue;
		c = dwarf_scn_class(name);
		if (c == 0 || (c & want) || nh == SYMTAB_MAX_HIDDEN)
			continue;
		if (shift_scn_name(scn, 1))
			hidden[nh++] = elf_ndxscn(scn);
	}
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	for (size_t i = 0; i < nh; i++) {
		scn = elf_getscn(elf, hidden[i]);
		if (scn)
			shift_scn_name(scn, -1);
	}
	return dw;
}

/* DWARF of the classes in want, from the file when it has .debug_info, else from
 * its separate debug file. */
static Dwarf *dwarf_for(struct symfile *sf, unsigned want)
{
	Dwarf *dw = NULL;

	if (has_section(sf->elf, ".debug_info") || has_section(sf->elf, ".zdebug_info"))
		dw = dwarf_open_classes(sf->elf, want);
	if (dw == NULL) {
		Elf *d = debug_elf(sf);
		if (d)
			dw = dwarf_open_classes(d, want);
	}
	return dw;
}

/* The handle for lookups: entries and line tables. */
static Dwarf *lines_dwarf(struct symfile *sf)
{
	if (sf->dwarf_tried)
		return sf->dw;
	sf->dwarf_tried = 1;
	sf->dw = dwarf_for(sf, DWS_ENTRIES | DWS_LINE);
	return sf->dw;
}

Dwarf *symfile_dwarf(struct symfile *sf)
{
	if (sf->types_tried)
		return sf->dw_types;
	sf->types_tried = 1;
	sf->dw_types = dwarf_for(sf, DWS_ENTRIES);
	return sf->dw_types;
}

/* The ELF's .eh_frame as CFI. libdw (elfutils 0.188 libdw/dwarf_getcfi_elf.c
 * getcfi_shdr) uses .eh_frame_hdr's binary search table only when that section comes
 * before .eh_frame in the section headers. lld puts it after (libLLVM-14.so.1), and
 * then each lookup scans .eh_frame on from where the last one stopped, interning
 * every FDE, slow on a large library's first lookups. The program-header
 * path (getcfi_phdr, PT_GNU_EH_FRAME) always uses the table; with .eh_frame's name
 * hidden, the section path finds nothing and libdw takes it. */
static Dwarf_CFI *eh_frame_cfi(Elf *elf)
{
	size_t shstrndx, nph = 0, idx_eh = 0, idx_hdr = 0;
	Elf_Scn *scn = NULL, *eh = NULL;
	Dwarf_CFI *cfi = NULL;
	int guard = 0, have_ph = 0;

	if (elf_getshdrstrndx(elf, &shstrndx) == 0) {
		while ((scn = elf_nextscn(elf, scn)) != NULL && guard++ < 65536) {
			GElf_Shdr sh;
			const char *name;

			if (gelf_getshdr(scn, &sh) == NULL)
				continue;
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (name && strcmp(name, ".eh_frame") == 0 && eh == NULL) {
				eh = scn;
				idx_eh = elf_ndxscn(scn);
			} else if (name && strcmp(name, ".eh_frame_hdr") == 0 && idx_hdr == 0) {
				idx_hdr = elf_ndxscn(scn);
			}
		}
	}
	if (elf_getphdrnum(elf, &nph) == 0) {
		for (size_t i = 0; i < nph && i < 65536; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME)
				have_ph = 1;
		}
	}
	if (eh && idx_hdr > idx_eh && have_ph && shift_scn_name(eh, 1)) {
		cfi = dwarf_getcfi_elf(elf);
		shift_scn_name(eh, -1);
		if (cfi)
			return cfi;
	}
	return dwarf_getcfi_elf(elf);
}

Dwarf_CFI *symfile_cfi(struct symfile *sf)
{
	if (sf->cfi_tried)
		return sf->cfi;
	sf->cfi_tried = 1;
	if (has_section(sf->elf, ".eh_frame")) {
		sf->cfi = eh_frame_cfi(sf->elf);
		if (sf->cfi) {
			sf->cfi_owned = 1;
			return sf->cfi;
		}
	}
	if (!sf->frame_tried) {
		sf->frame_tried = 1;
		sf->dw_frame = dwarf_for(sf, DWS_FRAME);
	}
	if (sf->dw_frame)
		sf->cfi = dwarf_getcfi(sf->dw_frame); /* .debug_frame; owned by dw_frame */
	return sf->cfi;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

static void finish_ranges(struct range *r, size_t n)
{
	uint64_t m = 0;

	if (n == 0)
		return;
	qsort(r, n, sizeof(*r), cmp_range);
	for (size_t i = 0; i < n; i++) {
		m = GP_MAX(m, r[i].hi);
		r[i].maxhi = m;
	}
}

/* Index of the range holding addr, or (size_t)-1. */
static size_t find_range(const struct range *r, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, k = 0; i > 0 && k < SYMTAB_BACKSCAN; i--, k++) {
		if (addr < r[i - 1].hi)
			return i - 1;
		if (r[i - 1].maxhi <= addr)
			break;
	}
	return (size_t)-1;
}

static void add_die_ranges(Dwarf_Die *die, size_t idx, struct range **r, size_t *n, size_t *cap)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	int guard = 0;

	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0 && guard++ < 4096) {
		if (end <= start)
			continue;
		xgrow((void **)r, cap, *n + 1, sizeof(**r));
		(*r)[*n].lo = start;
		(*r)[*n].hi = end;
		(*r)[*n].idx = idx;
		(*n)++;
	}
}

static void index_functions(struct cu_info *cu);

static void load_cus(struct symfile *sf)
{
	Dwarf *dw;
	Dwarf_CU *cu = NULL, *next;
	size_t cap = 0, rcap = 0;
	size_t guard = 0;

	if (sf->cus_loaded)
		return;
	sf->cus_loaded = 1;
	dw = lines_dwarf(sf);
	if (dw == NULL)
		return;
	/* Our own unit range table, not .debug_aranges: clang and Go omit that section. */
	for (;;) {
		Dwarf_Half version;
		uint8_t unit_type;
		Dwarf_Die cudie, subdie;

		if (dwarf_get_units(dw, cu, &next, &version, &unit_type, &cudie, &subdie) != 0)
			break;
		cu = next;
		if (++guard > (1u << 22))
			break;
		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
			continue;
		if (dwarf_tag(&cudie) != DW_TAG_compile_unit)
			continue;
		xgrow((void **)&sf->cus, &cap, sf->ncus + 1, sizeof(*sf->cus));
		struct cu_info *ci = &sf->cus[sf->ncus];
		memset(ci, 0, sizeof(*ci));
		ci->die = cudie;
		size_t before = sf->ncur;
		add_die_ranges(&cudie, sf->ncus, &sf->cur, &sf->ncur, &rcap);
		if (sf->ncur == before) {
			/* No unit ranges: fall back to the ranges of its functions. */
			index_functions(ci);
			for (size_t i = 0; i < ci->nfns; i++) {
				xgrow((void **)&sf->cur, &rcap, sf->ncur + 1, sizeof(*sf->cur));
				sf->cur[sf->ncur].lo = ci->fns[i].lo;
				sf->cur[sf->ncur].hi = ci->fns[i].hi;
				sf->cur[sf->ncur].idx = sf->ncus;
				sf->ncur++;
			}
		}
		sf->ncus++;
	}
	finish_ranges(sf->cur, sf->ncur);
}

struct fn_walk {
	struct cu_info *cu;
	size_t rcap, dcap;
	size_t visits;
};

static void walk_functions(struct fn_walk *w, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;

	if (depth > SYMTAB_MAX_NEST || dwarf_child(parent, &child) != 0)
		return;
	do {
		if (++w->visits > SYMTAB_MAX_DIE_VISITS * 50)
			return;
		int tag = dwarf_tag(&child);
		switch (tag) {
		case DW_TAG_subprogram: {
			size_t before = w->cu->nfns;
			add_die_ranges(&child, w->cu->nfdies, &w->cu->fns, &w->cu->nfns, &w->rcap);
			if (w->cu->nfns != before) {
				xgrow((void **)&w->cu->fdies, &w->dcap, w->cu->nfdies + 1,
				      sizeof(*w->cu->fdies));
				w->cu->fdies[w->cu->nfdies++] = dwarf_dieoffset(&child);
			}
			break;
		}
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_module:
			walk_functions(w, &child, depth + 1);
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

static void index_functions(struct cu_info *cu)
{
	struct fn_walk w = { .cu = cu };

	if (cu->fns_loaded)
		return;
	cu->fns_loaded = 1;
	walk_functions(&w, &cu->die, 0);
	finish_ranges(cu->fns, cu->nfns);
}

/* The DWARF name a tool like addr2line prints: the linkage name when there is one,
 * else DW_AT_name, both followed through abstract_origin/specification. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *s;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a)) {
		s = dwarf_formstring(&a);
		if (s && s[0])
			return s;
	}
	s = dwarf_diename(die);
	return s && s[0] ? s : NULL;
}

static int has_pc_attrs(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges);
}

/* Finds the chain of DW_TAG_inlined_subroutine DIEs under parent that hold pc,
 * outermost first; returns the number stored in chain (at most max). */
static int inline_chain(Dwarf_Die *parent, uint64_t pc, Dwarf_Die *chain, int n, int max,
			size_t *visits, int depth)
{
	Dwarf_Die child;

	if (depth > SYMTAB_MAX_NEST || dwarf_child(parent, &child) != 0)
		return n;
	do {
		if (++*visits > SYMTAB_MAX_DIE_VISITS)
			return n;
		int tag = dwarf_tag(&child);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block &&
		    tag != DW_TAG_try_block && tag != DW_TAG_catch_block && tag != DW_TAG_with_stmt)
			continue;
		int has = dwarf_haspc(&child, pc);
		if (has == 1) {
			if (tag == DW_TAG_inlined_subroutine && n < max)
				chain[n++] = child;
			return inline_chain(&child, pc, chain, n, max, visits, depth + 1);
		}
		if (has == 0 && tag == DW_TAG_lexical_block && !has_pc_attrs(&child)) {
			/* A block without addresses may still hold inlined code. */
			int m = inline_chain(&child, pc, chain, n, max, visits, depth + 1);
			if (m != n)
				return m;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return n;
}

static const char *cu_file(struct cu_info *cu, Dwarf_Word idx)
{
	if (!cu->files_loaded) {
		cu->files_loaded = 1;
		if (dwarf_getsrcfiles(&cu->die, &cu->files, &cu->nfiles) != 0) {
			cu->files = NULL;
			cu->nfiles = 0;
		}
	}
	if (cu->files == NULL || idx >= cu->nfiles)
		return NULL;
	return dwarf_filesrc(cu->files, idx, NULL, NULL);
}

static void paths_insert(struct symfile *sf, const char *raw, size_t cu, char *full)
{
	size_t mask = sf->paths_cap - 1;
	size_t i = (size_t)util_mix64((uint64_t)(uintptr_t)raw ^ util_mix64(cu)) & mask;

	while (sf->paths[i].raw != NULL)
		i = (i + 1) & mask;
	sf->paths[i].raw = raw;
	sf->paths[i].cu = cu;
	sf->paths[i].full = full;
	sf->paths_used++;
}

static const char *full_path(struct symfile *sf, struct cu_info *cu, const char *raw)
{
	size_t ci = (size_t)(cu - sf->cus);

	if (raw == NULL || raw[0] == '/')
		return raw;
	if (!cu->comp_dir_loaded) {
		Dwarf_Attribute a;
		cu->comp_dir_loaded = 1;
		if (dwarf_attr(&cu->die, DW_AT_comp_dir, &a))
			cu->comp_dir = dwarf_formstring(&a);
	}
	if (cu->comp_dir == NULL || cu->comp_dir[0] == '\0')
		return raw;
	if (sf->paths_cap) {
		size_t mask = sf->paths_cap - 1;
		size_t i = (size_t)util_mix64((uint64_t)(uintptr_t)raw ^ util_mix64(ci)) & mask;
		while (sf->paths[i].raw != NULL) {
			if (sf->paths[i].raw == raw && sf->paths[i].cu == ci)
				return sf->paths[i].full;
			i = (i + 1) & mask;
		}
	}
	if ((sf->paths_used + 1) * 2 > sf->paths_cap) {
		struct path_slot *old = sf->paths;
		size_t oldcap = sf->paths_cap;
		sf->paths_cap = oldcap ? oldcap * 2 : 64;
		sf->paths = xcalloc(sf->paths_cap, sizeof(*sf->paths));
		sf->paths_used = 0;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].raw)
				paths_insert(sf, old[i].raw, old[i].cu, old[i].full);
		free(old);
	}
	char *full = xasprintf("%s/%s", cu->comp_dir, raw);
	paths_insert(sf, raw, ci, full);
	return full;
}

static int32_t clamp_line(int64_t v)
{
	if (v < 0 || v > INT32_MAX)
		return 0;
	return (int32_t)v;
}

static int32_t decl_line(Dwarf_Die *die)
{
	int l = 0;
	if (dwarf_decl_line(die, &l) != 0)
		return 0;
	return clamp_line(l);
}

/* DWARF frames for vaddr into out[SYMTAB_MAX_CHAIN]; returns the count, 0 if DWARF
 * knows no function there. *line_file / *line_no get the line table's answer even
 * when no function is known (for use with a symtab name). */
static int dwarf_frames(struct symfile *sf, uint64_t vaddr, struct sym_frame *out,
			const char **line_file, int32_t *line_no)
{
	Dwarf_Die chain[SYMTAB_MAX_CHAIN];
	size_t visits = 0;

	*line_file = NULL;
	*line_no = 0;
	load_cus(sf);
	size_t ri = find_range(sf->cur, sf->ncur, vaddr);
	if (ri == (size_t)-1)
		return 0;
	struct cu_info *cu = &sf->cus[sf->cur[ri].idx];

	Dwarf_Line *ln = dwarf_getsrc_die(&cu->die, vaddr);
	if (ln) {
		int l = 0;
		*line_file = full_path(sf, cu, dwarf_linesrc(ln, NULL, NULL));
		if (dwarf_lineno(ln, &l) == 0)
			*line_no = clamp_line(l);
	}

	index_functions(cu);
	size_t fi = find_range(cu->fns, cu->nfns, vaddr);
	if (fi == (size_t)-1)
		return 0;
	Dwarf_Off off = cu->fdies[cu->fns[fi].idx];
	if (dwarf_offdie(sf->dw, off, &chain[0]) == NULL)
		return 0;
	int n = inline_chain(&chain[0], vaddr, chain, 1, SYMTAB_MAX_CHAIN, &visits, 0);

	/* chain[0] is the real function, chain[n-1] the innermost inlined one. Output
	 * goes innermost first; each outer frame's line is the inner one's call site. */
	int k = 0;
	for (int i = n - 1; i >= 0; i--, k++) {
		const char *name = die_name(&chain[i]);

		/* GCC leaves DW_AT_linkage_name out for functions of internal linkage (an
		 * anonymous namespace's): their DW_AT_name ("operator()") lacks the scope,
		 * which the symbol table's mangled name has. */
		if (i == 0 && name && !(name[0] == '_' && name[1] == 'Z')) {
			const struct symbol *s = find_sym(sf, vaddr);

			if (s && s->name[0] == '_' && s->name[1] == 'Z')
				name = s->name;
		}
		out[k].func = name ? name : "??";
		out[k].wrapper = 0;
		out[k].start_line = decl_line(&chain[i]);
		if (i == n - 1) {
			out[k].file = *line_file;
			out[k].line = *line_no;
		} else {
			Dwarf_Attribute a;
			Dwarf_Word w = 0;
			out[k].file = NULL;
			out[k].line = 0;
			if (dwarf_attr(&chain[i + 1], DW_AT_call_file, &a) && dwarf_formudata(&a, &w) == 0)
				out[k].file = full_path(sf, cu, cu_file(cu, w));
			if (dwarf_attr(&chain[i + 1], DW_AT_call_line, &a) && dwarf_formudata(&a, &w) == 0)
				out[k].line = clamp_line((int64_t)GP_MIN(w, (Dwarf_Word)INT32_MAX));
		}
	}
	return k;
}

/* ---------- Go ---------- */

struct gopcln *symfile_gopcln(struct symfile *sf)
{
	int err = 0;

	if (sf->go_tried)
		return sf->go;
	sf->go_tried = 1;
	if (!sf->is_go_hint)
		return NULL;
	sf->go = gopcln_open_elf(sf->elf, &err);
	return sf->go;
}

const char *symfile_go_version(struct symfile *sf)
{
	struct gopcln *g = symfile_gopcln(sf);
	return g ? gopcln_go_version(g) : NULL;
}

/* ---------- lookup ---------- */

static int lookup_uncached(struct symfile *sf, uint64_t vaddr, struct sym_frame *out)
{
	struct gopcln *g = sf->go_on ? symfile_gopcln(sf) : NULL;
	const char *lfile = NULL;
	int32_t lline = 0;
	int n;

	if (g) {
		struct gopcln_frame gf[SYMTAB_MAX_CHAIN];
		n = gopcln_frames(g, vaddr, gf, SYMTAB_MAX_CHAIN);
		if (n > 0) {
			if (n > SYMTAB_MAX_CHAIN)
				n = SYMTAB_MAX_CHAIN;
			for (int i = 0; i < n; i++) {
				out[i].func = gf[i].func ? gf[i].func : "??";
				out[i].file = gf[i].file && strcmp(gf[i].file, "?") != 0 ? gf[i].file : NULL;
				out[i].line = gf[i].line;
				out[i].start_line = gf[i].start_line;
				out[i].wrapper = gf[i].wrapper;
			}
			sf->st.go_hits++;
			return n;
		}
		/* cgo: C code in a Go binary is not in the Go table. */
	}
	if (sf->dwarf_on && lines_dwarf(sf)) {
		n = dwarf_frames(sf, vaddr, out, &lfile, &lline);
		if (n > 0) {
			sf->st.dwarf_hits++;
			return n;
		}
	}
	const struct symbol *s = find_sym(sf, vaddr);
	if (s) {
		out[0].func = s->name;
		out[0].wrapper = 0;
		out[0].file = lfile;
		out[0].line = lline;
		out[0].start_line = 0;
		sf->st.symtab_hits++;
		return 1;
	}
	sf->st.misses++;
	return 0;
}

static int copy_out(const struct sym_frame *fr, int n, struct sym_frame *out, int max)
{
	if (max <= 0 || n <= 0)
		return 0;
	if (n <= max) {
		memcpy(out, fr, (size_t)n * sizeof(*fr));
		return n;
	}
	memcpy(out, fr, (size_t)(max - 1) * sizeof(*fr));
	out[max - 1] = fr[n - 1];
	return max;
}

int symfile_lookup(struct symfile *sf, uint64_t vaddr, struct sym_frame *out, int max)
{
	struct sym_frame fr[SYMTAB_MAX_CHAIN];
	struct cache_slot *slot = NULL;
	int n;

	if (sf == NULL)
		return 0;
	sf->st.lookups++;
	if (sf->cache_on) {
		if (sf->cache == NULL ||
		    (sf->cache_used * 2 > sf->cache_cap && sf->cache_cap < SYMTAB_CACHE_MAX))
			cache_grow(sf);
		int hit;
		slot = cache_slot_for(sf, vaddr, &hit);
		if (hit) {
			sf->st.cache_hits++;
			return copy_out(slot->frames, slot->n, out, max);
		}
	}
	n = lookup_uncached(sf, vaddr, fr);
	if (slot) {
		if (slot->n < 0)
			sf->cache_used++;
		free(slot->frames);
		slot->frames = NULL;
		if (n > 0) {
			slot->frames = xmalloc((size_t)n * sizeof(*fr));
			memcpy(slot->frames, fr, (size_t)n * sizeof(*fr));
		}
		slot->vaddr = vaddr;
		slot->n = n;
	}
	return copy_out(fr, n, out, max);
}

/* Go's rule, the same from go1.19 to go1.27: a frame of autogenerated code (FuncIDWrapper:
 * method wrappers, method values' "-fm", the closures of go and defer statements with
 * arguments, "gowrapN" and "deferwrapN" from go1.22) is not shown unless the function it
 * called is a panic function, as a wrapper that panics on a nil receiver calls
 * runtime.panicwrap (go1.19 runtime/traceback.go gentraceback and showfuncinfo, go1.23 and
 * go1.27 traceback.go tracebackPCs and showfuncinfo, all through elideWrapperCalling;
 * inlined frames are judged as the others, with the frame inlined into them as callee).
 * runtime.goexit, the return address every goroutine's start function is given, is not
 * shown either: runtime/pprof's allFrames stops at it (go1.19, go1.23, go1.27
 * runtime/pprof/proto.go), and Go's tracebacks never print it. */
int sym_go_panic_func(const char *f)
{
	return f && (!strcmp(f, "runtime.gopanic") || !strcmp(f, "runtime.sigpanic") ||
		     !strcmp(f, "runtime.panicwrap"));
}

uint32_t sym_go_hidden(const struct sym_frame *fr, int n, int callee_panics)
{
	uint32_t hide = 0;
	int k;

	for (k = 0; k < n && k < 32; k++) {
		const char *f = fr[k].func;

		if ((fr[k].wrapper && !callee_panics) || (f && !strcmp(f, "runtime.goexit")))
			hide |= 1u << k;
		callee_panics = sym_go_panic_func(f);
	}
	return hide;
}

int sym_go_elide(struct sym_frame *fr, int n, int callee_panics)
{
	uint32_t hide = sym_go_hidden(fr, n, callee_panics);
	int k, kept = 0;

	for (k = 0; k < n; k++)
		if (k >= 32 || !(hide >> k & 1))
			fr[kept++] = fr[k];
	return kept;
}

uint64_t symfile_symbol_value(const struct symfile *sf, const char *name)
{
	Elf *elf = symfile_elf(sf);
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *nm;

			if (!gelf_getsym(d, (int)i, &sym))
				break;
			nm = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (nm && !strcmp(nm, name))
				return sym.st_value;
		}
	}
	return 0;
}
