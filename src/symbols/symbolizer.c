/* symbolizer.c: per-process symbolization: maps, one symfile per file, [vdso], kernel symbols. */
#include "config.h"
#include "gotop/symbolizer.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "gotop/kallsyms.h"
#include "gotop/maps.h"
#include "gotop/util.h"

/* A miss reloads /proc/PID/maps at most this often, unless a new mmap was seen or the
 * miss is a sample's leaf newer than the maps (then at most every
 * SYMBOLIZER_LEAF_RELOAD_NS). */
#define SYMBOLIZER_RELOAD_NS (200ull * 1000 * 1000)
#define SYMBOLIZER_LEAF_RELOAD_NS (1000ull * 1000)
/* Largest [vdso] image read from the target (it is two pages on x86_64). */
#define SYMBOLIZER_MAX_VDSO (1u << 20)
/* Modules kept at most (a process that maps and unmaps forever): then new ones are
 * still returned but no longer remembered for reuse. */
#define SYMBOLIZER_MAX_MODULES (1u << 20)
/* Largest kallsyms text read from symbolizer_set_kallsyms_path's file (as kallsyms.c). */
#define SYMBOLIZER_MAX_KALLSYMS (256u << 20)

struct file_ent {
	uint64_t ino;
	uint32_t maj, min;
	char *path;        /* for files without an inode number */
	struct symfile *sf; /* NULL: could not be opened */
};

struct symbolizer {
	pid_t pid;
	unsigned flags;
	struct maps *maps;
	struct sym_module **emods; /* per entry of maps, lazily */
	int maps_tried, gone, invalid;
	uint64_t last_load_ns;
	uint64_t sample_ns; /* symbolizer_set_sample_time */

	struct sym_module **mods; /* every module ever handed out, by id */
	size_t nmods, capmods;
	/* open-addressing index of mods by mapping identity; slots hold id + 1 */
	uint32_t *mindex;
	size_t mindex_cap;

	struct file_ent *files;
	size_t nfiles, capfiles;

	struct symfile *vdso_sf;
	int vdso_tried;

	struct symfile *main_sf, *main_owned;
	int main_tried;
	/* The executable main_sf was resolved for (stat of /proc/PID/exe; main_id: it
	 * could be taken), and files owned for executables the process has left by exec:
	 * callers may still hold them (symbolizer_main_changed). */
	int main_id;
	dev_t main_dev;
	ino_t main_ino;
	struct symfile **main_old;
	size_t nmain_old;
	char *offline_exe; /* symbolizer_new_offline: no process; the executable's path */

	struct kallsyms *ks;
	int ks_tried, ks_err;
	char *ks_path; /* symbolizer_set_kallsyms_path; NULL: /proc/kallsyms */
	/* symbolizer_load_kernel_async: the thread fills the bg_ fields and sets bg_done;
	 * ks_join takes them over. ks_async: a thread was started and not joined yet. */
	pthread_t ks_thread;
	int ks_async;
	atomic_int bg_done;
	struct kallsyms *bg_ks;
	int bg_err;
	char *bg_build_id;
	struct kmod {
		const char *name; /* interned by ks: compared by pointer */
		struct sym_module *m;
	} *kmods;
	size_t nkmods, capkmods;
	char *kbuild_id;

	struct symbolizer_stats st;
};

struct symbolizer *symbolizer_new(pid_t pid)
{
	struct symbolizer *s = xcalloc(1, sizeof(*s));

	s->pid = pid;
	return s;
}

struct symbolizer *symbolizer_new_offline(const char *maps_text, size_t len, const char *exe)
{
	struct symbolizer *s = xcalloc(1, sizeof(*s));

	s->pid = -1;
	s->flags = SYMBOLIZER_NO_MAP_FILES;
	s->maps = maps_parse(maps_text, len);
	s->emods = xcalloc(GP_MAX(maps_count(s->maps), 1), sizeof(*s->emods));
	s->maps_tried = 1;
	s->gone = 1; /* never reload */
	s->offline_exe = exe ? xstrdup(exe) : NULL;
	return s;
}

static void ks_join(struct symbolizer *s);

static void module_free(struct sym_module *m)
{
	if (m == NULL)
		return;
	free((char *)m->path);
	free(m);
}

void symbolizer_free(struct symbolizer *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nmods; i++)
		module_free(s->mods[i]);
	free(s->mods);
	free(s->mindex);
	for (size_t i = 0; i < s->nfiles; i++) {
		symfile_free(s->files[i].sf);
		free(s->files[i].path);
	}
	free(s->files);
	symfile_free(s->vdso_sf);
	symfile_free(s->main_owned);
	for (size_t i = 0; i < s->nmain_old; i++)
		symfile_free(s->main_old[i]);
	free(s->main_old);
	ks_join(s);
	kallsyms_free(s->ks);
	free(s->kmods);
	free(s->kbuild_id);
	free(s->ks_path);
	free(s->emods);
	maps_free(s->maps);
	free(s->offline_exe);
	free(s);
}

void symbolizer_set_flags(struct symbolizer *s, unsigned flags)
{
	s->flags = flags;
}

void symbolizer_set_kallsyms_path(struct symbolizer *s, const char *path)
{
	if (s->ks_tried)
		return;
	free(s->ks_path);
	s->ks_path = path ? xstrdup(path) : NULL;
}

uint32_t symbolizer_maps_version(const struct symbolizer *s)
{
	return (uint32_t)(s->st.maps_loads * 2 + (s->invalid != 0));
}

void symbolizer_invalidate_maps(struct symbolizer *s)
{
	s->invalid = 1;
}

void symbolizer_set_sample_time(struct symbolizer *s, uint64_t t_ns)
{
	s->sample_ns = t_ns;
}

/* A miss reads the maps again: after an mmap was seen; for a sample's leaf (the CPU ran
 * there, so it was mapped) when the maps were read before the sample, whose mmap record
 * may still be unread in another CPU's ring, or read before the maps were; and for any
 * address once SYMBOLIZER_RELOAD_NS passed. */
int symbolizer_miss_would_reload(const struct symbolizer *s, int is_return)
{
	uint64_t age;

	if (!s->maps_tried || s->gone)
		return !s->maps_tried;
	if (s->invalid)
		return 1;
	age = util_now_ns() - s->last_load_ns;
	return age >= SYMBOLIZER_RELOAD_NS ||
	       (!is_return && s->sample_ns > s->last_load_ns && age >= SYMBOLIZER_LEAF_RELOAD_NS);
}

int symbolizer_kernel_status(const struct symbolizer *s)
{
	return s->ks_err;
}

void symbolizer_get_stats(const struct symbolizer *s, struct symbolizer_stats *st)
{
	*st = s->st;
}

/* ---------- maps ---------- */

static void load_maps(struct symbolizer *s)
{
	struct maps *m;

	s->last_load_ns = util_now_ns();
	s->invalid = 0;
	m = maps_load(s->pid);
	s->st.maps_loads++;
	if (m == NULL) {
		/* Gone (or never readable): keep what we had; nothing will change now. */
		if (errno == ENOENT || errno == ESRCH)
			s->gone = 1;
		return;
	}
	if (maps_count(m) == 0 && maps_count(s->maps) > 0) {
		/* A zombie's maps read empty: the process is gone, keep its last maps. */
		maps_free(m);
		s->gone = 1;
		return;
	}
	maps_free(s->maps);
	free(s->emods);
	s->maps = m;
	s->emods = xcalloc(GP_MAX(maps_count(m), 1), sizeof(*s->emods));
}

static void ensure_maps(struct symbolizer *s)
{
	if (!s->maps_tried) {
		s->maps_tried = 1;
		load_maps(s);
	}
}

static const struct maps_entry *find_entry(struct symbolizer *s, uint64_t addr, int is_return,
					   size_t *idx)
{
	const struct maps_entry *e;

	ensure_maps(s);
	e = maps_find(s->maps, addr);
	if (e == NULL && symbolizer_miss_would_reload(s, is_return)) {
		load_maps(s);
		e = maps_find(s->maps, addr);
	}
	if (e)
		*idx = (size_t)(e - maps_at(s->maps, 0));
	return e;
}

/* ---------- files ---------- */

static int same_inode(int fd, uint64_t ino)
{
	struct stat st;
	return fstat(fd, &st) == 0 && (uint64_t)st.st_ino == ino;
}

/* Opens the file behind a mapping: /proc/PID/map_files/ gives the very file mapped
 * (deleted, replaced, or in another mount namespace; needs CAP_SYS_ADMIN, linux
 * fs/proc/base.c proc_map_files_get_link), then the path under /proc/PID/root (a
 * container's view), then the path itself. A deleted file is only accepted
 * through a path when the inode still matches. */
/* Opens path only when it is a regular file: opening a device node a target maps
 * (GPU, /dev/mem, a tape) could have side effects. */
static int open_regular(const char *path)
{
	struct stat st;
	int fd;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

static struct symfile *open_mapped_file(struct symbolizer *s, const struct maps_entry *e)
{
	char proc[32], buf[4096 + 64];
	int fd;

	if (s->pid > 0)
		snprintf(proc, sizeof(proc), "/proc/%d", (int)s->pid);
	else
		snprintf(proc, sizeof(proc), "/proc/self");
	if (s->pid < 0) {
		/* Offline: no process, only the path (the file must still be the one mapped). */
		fd = strlen(e->path) < 4096 ? open_regular(e->path) : -1;
		return fd < 0 ? NULL : symfile_open_fd(fd, e->path, NULL);
	}
	if (!(s->flags & SYMBOLIZER_NO_MAP_FILES)) {
		snprintf(buf, sizeof(buf), "%s/map_files/%llx-%llx", proc,
			 (unsigned long long)e->start, (unsigned long long)e->end);
		fd = open_regular(buf);
		if (fd >= 0)
			return symfile_open_fd(fd, e->path, NULL);
	}
	/* map_files needs CAP_SYS_ADMIN; /proc/PID/exe does not, and it opens the very
	 * executable (deleted or replaced on disk): use it when the inode is the mapping's. */
	if (e->deleted) {
		snprintf(buf, sizeof(buf), "%s/exe", proc);
		fd = open_regular(buf);
		if (fd >= 0 && same_inode(fd, e->inode))
			return symfile_open_fd(fd, e->path, NULL);
		if (fd >= 0)
			close(fd);
	}
	if (strlen(e->path) >= 4096)
		return NULL;
	snprintf(buf, sizeof(buf), "%s/root%s", proc, e->path);
	fd = open_regular(buf);
	if (fd < 0)
		fd = open_regular(e->path);
	if (fd < 0)
		return NULL;
	/* A different inode under the path of a deleted file is some other file. Without
	 * "(deleted)" trust the path: overlayfs may show another inode number. */
	if (e->deleted && !same_inode(fd, e->inode)) {
		close(fd);
		return NULL;
	}
	return symfile_open_fd(fd, e->path, NULL);
}

static struct symfile *file_for(struct symbolizer *s, const struct maps_entry *e)
{
	for (size_t i = 0; i < s->nfiles; i++) {
		struct file_ent *f = &s->files[i];
		if (e->inode != 0) {
			if (f->ino == e->inode && f->maj == e->dev_major && f->min == e->dev_minor)
				return f->sf;
		} else if (f->ino == 0 && f->path && strcmp(f->path, e->path) == 0) {
			return f->sf;
		}
	}
	xgrow((void **)&s->files, &s->capfiles, s->nfiles + 1, sizeof(*s->files));
	struct file_ent *f = &s->files[s->nfiles++];
	memset(f, 0, sizeof(*f));
	f->ino = e->inode;
	f->maj = e->dev_major;
	f->min = e->dev_minor;
	if (e->inode == 0)
		f->path = xstrdup(e->path);
	f->sf = open_mapped_file(s, e);
	if (f->sf)
		s->st.files_opened++;
	else
		s->st.files_failed++;
	return f->sf;
}

/* Reads n bytes at addr of process pid. 0 or -errno. */
static int read_target(pid_t pid, uint64_t addr, void *buf, size_t n)
{
	struct iovec local = { .iov_base = buf, .iov_len = n };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = n };
	ssize_t r;

	if (pid <= 0) {
		memcpy(buf, (const void *)(uintptr_t)addr, n);
		return 0;
	}
	r = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (r < 0)
		return -errno;
	return (size_t)r == n ? 0 : -EFAULT;
}

/* [vdso] has no file: read its ELF image out of the target. Failing that, ours is
 * the same kernel's image (for a target of the same ABI). */
static struct symfile *vdso_file(struct symbolizer *s, const struct maps_entry *e)
{
	size_t len = (size_t)(e->end - e->start);
	void *buf;

	if (s->vdso_tried)
		return s->vdso_sf;
	s->vdso_tried = 1;
	if (len == 0 || len > SYMBOLIZER_MAX_VDSO)
		return NULL;
	buf = xmalloc(len);
	if (s->pid >= 0 && read_target(s->pid, e->start, buf, len) == 0) {
		s->vdso_sf = symfile_open_memory(buf, len, "[vdso]", NULL);
		if (s->vdso_sf)
			return s->vdso_sf;
	} else {
		free(buf);
	}
	uint64_t own = getauxval(AT_SYSINFO_EHDR);
	struct maps *mine = own ? maps_load(0) : NULL;
	const struct maps_entry *me = maps_find(mine, own);
	if (me && me->kind == MAPS_KIND_VDSO && me->start == own &&
	    me->end - me->start <= SYMBOLIZER_MAX_VDSO) {
		size_t mlen = (size_t)(me->end - me->start);
		buf = xmalloc(mlen);
		memcpy(buf, (const void *)(uintptr_t)me->start, mlen);
		s->vdso_sf = symfile_open_memory(buf, mlen, "[vdso]", NULL);
	}
	maps_free(mine);
	return s->vdso_sf;
}

/* ---------- modules ---------- */

static uint64_t module_hash(uint64_t start, uint64_t limit, uint64_t pgoff, const char *path)
{
	uint64_t h = util_mix64(start ^ util_mix64(limit ^ util_mix64(pgoff)));
	return util_hash(path, strlen(path), h);
}

static int module_matches(const struct sym_module *m, uint64_t start, uint64_t limit,
			  uint64_t pgoff, const char *path)
{
	return m->start == start && m->limit == limit && m->pgoff == pgoff &&
	       strcmp(m->path, path) == 0;
}

static void mindex_insert(struct symbolizer *s, uint64_t h, uint32_t id1)
{
	size_t mask = s->mindex_cap - 1, i = (size_t)h & mask;

	while (s->mindex[i] != 0)
		i = (i + 1) & mask;
	s->mindex[i] = id1;
}

static void mindex_grow(struct symbolizer *s)
{
	size_t cap = s->mindex_cap ? s->mindex_cap * 2 : 64;

	free(s->mindex);
	s->mindex = xcalloc(cap, sizeof(*s->mindex));
	s->mindex_cap = cap;
	for (size_t k = 0; k < s->nmods; k++) {
		const struct sym_module *m = s->mods[k];
		mindex_insert(s, module_hash(m->start, m->limit, m->pgoff, m->path), (uint32_t)k + 1);
	}
}

/* The module for (start, limit, pgoff, path): an existing one (the same mapping
 * seen before a maps reload keeps its id), or a new one with sf from open(). */
static struct sym_module *module_get(struct symbolizer *s, uint64_t start, uint64_t limit,
				     uint64_t pgoff, const char *path, int *found)
{
	uint64_t h = module_hash(start, limit, pgoff, path);

	*found = 0;
	if (s->mindex_cap) {
		size_t mask = s->mindex_cap - 1, i = (size_t)h & mask;
		while (s->mindex[i] != 0) {
			struct sym_module *m = s->mods[s->mindex[i] - 1];
			if (module_matches(m, start, limit, pgoff, path)) {
				*found = 1;
				return m;
			}
			i = (i + 1) & mask;
		}
	}
	struct sym_module *m = xcalloc(1, sizeof(*m));
	m->path = xstrdup(path);
	m->start = start;
	m->limit = limit;
	m->pgoff = pgoff;
	if (s->nmods >= SYMBOLIZER_MAX_MODULES) {
		/* Still hand it out; keep it for freeing but not for reuse. */
		m->id = (int)s->nmods;
		xgrow((void **)&s->mods, &s->capmods, s->nmods + 1, sizeof(*s->mods));
		s->mods[s->nmods++] = m;
		return m;
	}
	m->id = (int)s->nmods;
	xgrow((void **)&s->mods, &s->capmods, s->nmods + 1, sizeof(*s->mods));
	s->mods[s->nmods++] = m;
	if ((s->nmods + 1) * 2 > s->mindex_cap)
		mindex_grow(s);
	else
		mindex_insert(s, h, (uint32_t)s->nmods);
	return m;
}

static struct sym_module *entry_module(struct symbolizer *s, const struct maps_entry *e, size_t idx)
{
	struct sym_module *m;
	int found;

	if (s->emods[idx])
		return s->emods[idx];
	m = module_get(s, e->start, e->end, e->pgoff, e->path, &found);
	m->nocode = !(e->perms & MAPS_X);
	/* Only code has symbols: data mappings (a database file, fonts) are never opened. */
	if (!found && (e->perms & MAPS_X)) {
		if (e->kind == MAPS_KIND_FILE)
			m->sf = file_for(s, e);
		else if (e->kind == MAPS_KIND_VDSO)
			m->sf = vdso_file(s, e);
		if (m->sf)
			m->build_id = symfile_build_id(m->sf);
	}
	s->emods[idx] = m;
	return m;
}

/* ---------- kernel ---------- */

/* Reading /proc/kallsyms is slow, most of it in the kernel formatting megabytes of text
 * (linux kernel/kallsyms.c s_show); so it can run on a thread of its own while user
 * frames are named. */
/* The kernel symbols from /proc/kallsyms or from the file set for them. */
static struct kallsyms *ks_read(const char *path, int *err)
{
	struct kallsyms *ks;
	size_t len = 0;
	char *text;

	if (!path)
		return kallsyms_load(err);
	text = util_read_file(path, SYMBOLIZER_MAX_KALLSYMS, &len);
	if (!text) {
		*err = -errno;
		return NULL;
	}
	ks = kallsyms_parse(text, len, err);
	free(text);
	return ks;
}

static void ks_load_now(struct symbolizer *s)
{
	s->ks = ks_read(s->ks_path, &s->ks_err);
	s->kbuild_id = kallsyms_kernel_build_id();
}

static void *ks_thread_main(void *arg)
{
	struct symbolizer *s = arg;
	sigset_t all;

	/* Signals are for the threads that expect them. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	s->bg_ks = ks_read(s->ks_path, &s->bg_err);
	s->bg_build_id = kallsyms_kernel_build_id();
	atomic_store_explicit(&s->bg_done, 1, memory_order_release);
	return NULL;
}

static void ks_join(struct symbolizer *s)
{
	if (!s->ks_async)
		return;
	pthread_join(s->ks_thread, NULL);
	s->ks_async = 0;
	s->ks = s->bg_ks;
	s->ks_err = s->bg_err;
	s->kbuild_id = s->bg_build_id;
	s->bg_ks = NULL;
	s->bg_build_id = NULL;
}

void symbolizer_load_kernel_async(struct symbolizer *s)
{
	if (s->ks_tried)
		return;
	s->ks_tried = 1;
	atomic_store(&s->bg_done, 0);
	if (pthread_create(&s->ks_thread, NULL, ks_thread_main, s) == 0) {
		s->ks_async = 1;
		pthread_setname_np(s->ks_thread, "gotop-kallsyms");
	} else {
		ks_load_now(s);
	}
}

int symbolizer_kernel_ready(struct symbolizer *s)
{
	if (!s->ks_tried)
		symbolizer_load_kernel_async(s);
	if (s->ks_async) {
		if (!atomic_load_explicit(&s->bg_done, memory_order_acquire))
			return 0;
		ks_join(s);
	}
	return 1;
}

static int kernel_lookup(struct symbolizer *s, uint64_t addr, const struct sym_module **mod,
			 struct sym_frame *out, int max)
{
	const char *modname = "", *name = NULL;
	uint64_t off = 0, start = 0, end = 0;
	char path[300];
	int found;

	if (!s->ks_tried) {
		s->ks_tried = 1;
		ks_load_now(s);
	}
	ks_join(s);
	if (s->ks)
		name = kallsyms_lookup(s->ks, addr, &modname, &off);
	if (name == NULL && s->ks) {
		/* Outside every known symbol: no module either. */
		s->st.no_mapping++;
		return -ENOENT;
	}
	struct sym_module *m = NULL;
	for (size_t i = 0; i < s->nkmods; i++)
		if (s->kmods[i].name == modname)
			m = s->kmods[i].m;
	if (m == NULL) {
		if (modname[0] == '\0')
			snprintf(path, sizeof(path), "[kernel.kallsyms]");
		else
			snprintf(path, sizeof(path), "[%s]", modname);
		if (s->ks == NULL || kallsyms_module_range(s->ks, modname, &start, &end) != 0)
			start = end = 0;
		m = module_get(s, start, end, 0, path, &found);
		if (!found && modname[0] == '\0')
			m->build_id = s->kbuild_id;
		xgrow((void **)&s->kmods, &s->capkmods, s->nkmods + 1, sizeof(*s->kmods));
		s->kmods[s->nkmods].name = modname;
		s->kmods[s->nkmods].m = m;
		s->nkmods++;
	}
	if (mod)
		*mod = m;
	if (name == NULL || max <= 0) {
		s->st.no_symbol++;
		return 0;
	}
	out[0].func = name;
	out[0].wrapper = 0;
	out[0].file = NULL;
	out[0].line = 0;
	out[0].start_line = 0;
	out[0].wrapper = 0;
	return 1;
}

/* ---------- lookup ---------- */

int symbolizer_lookup(struct symbolizer *s, uint64_t addr, int is_return,
		      const struct sym_module **mod, struct sym_frame *out, int max)
{
	const struct maps_entry *e;
	struct sym_module *m;
	size_t idx = 0;
	uint64_t a = addr, vaddr;

	if (mod)
		*mod = NULL;
	s->st.lookups++;
	if (is_return && a > 0)
		a--;
	if (kallsyms_is_kernel_addr(a))
		return kernel_lookup(s, a, mod, out, max);
	e = find_entry(s, a, is_return, &idx);
	if (e == NULL) {
		s->st.no_mapping++;
		return -ENOENT;
	}
	m = entry_module(s, e, idx);
	if (mod)
		*mod = m;
	if (m->sf == NULL || max <= 0 ||
	    symfile_file_vaddr(m->sf, m->start, m->pgoff, a, &vaddr) != 0) {
		s->st.no_symbol++;
		return 0;
	}
	int n = symfile_lookup(m->sf, vaddr, out, max);
	if (n <= 0)
		s->st.no_symbol++;
	return n;
}

void symbolizer_preload(struct symbolizer *s, int main, int kernel)
{
	if (kernel && !s->ks_tried) {
		s->ks_tried = 1;
		ks_load_now(s);
	}
	if (kernel)
		ks_join(s);
	if (main) {
		struct symfile *sf = symbolizer_main_file(s);

		if (sf) {
			GElf_Ehdr eh;
			struct sym_frame fr[4];

			symfile_nsymbols(sf);
			symfile_gopcln(sf);
			/* One lookup builds the DWARF unit and line indexes too. */
			if (gelf_getehdr(symfile_elf(sf), &eh))
				symfile_lookup(sf, eh.e_entry, fr, 4);
		}
	}
}

/* The target's /proc/PID/exe (/proc/self/exe for pid 0). */
static void exe_link(const struct symbolizer *s, char *buf, size_t len)
{
	if (s->pid > 0)
		snprintf(buf, len, "/proc/%d/exe", (int)s->pid);
	else
		snprintf(buf, len, "/proc/self/exe");
}

struct symfile *symbolizer_main_file(struct symbolizer *s)
{
	char link[64], target[4096];
	ssize_t n;

	if (s->main_tried)
		return s->main_sf;
	s->main_tried = 1;
	ensure_maps(s);
	if (s->invalid && !s->gone)
		load_maps(s);
	exe_link(s, link, sizeof(link));
	if (s->pid >= 0) {
		struct stat st;

		s->main_id = stat(link, &st) == 0;
		if (s->main_id) {
			s->main_dev = st.st_dev;
			s->main_ino = st.st_ino;
		}
	}
	if (s->pid < 0) {
		if (!s->offline_exe)
			return NULL;
		snprintf(target, sizeof(target), "%s", s->offline_exe);
		link[0] = '\0';
		n = (ssize_t)strlen(target);
	} else {
		n = readlink(link, target, sizeof(target) - 1);
	}
	if (n > 0) {
		static const char del[] = " (deleted)";
		target[n] = '\0';
		if ((size_t)n > sizeof(del) - 1 && strcmp(target + n - (sizeof(del) - 1), del) == 0)
			target[n - (sizeof(del) - 1)] = '\0';
		/* Prefer the mapping of the executable, so that it shares the module cache. */
		for (size_t i = 0; i < maps_count(s->maps); i++) {
			const struct maps_entry *e = maps_at(s->maps, i);
			if (e->kind == MAPS_KIND_FILE && strcmp(e->path, target) == 0) {
				struct sym_module *m = entry_module(s, e, i);
				if (m->sf) {
					s->main_sf = m->sf;
					return s->main_sf;
				}
			}
		}
	}
	/* /proc/PID/exe opens the very file that was executed, wherever it lives. */
	int fd = s->pid < 0 ? (n > 0 ? open_regular(target) : -1) : open(link, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		s->main_owned = symfile_open_fd(fd, n > 0 ? target : link, NULL);
		s->main_sf = s->main_owned;
	}
	return s->main_sf;
}

int symbolizer_main_changed(struct symbolizer *s)
{
	char link[64];
	struct stat st;

	if (!s->main_tried || s->pid < 0 || s->gone)
		return 0;
	exe_link(s, link, sizeof(link));
	/* stat follows the link to the very file executed (proc(5) /proc/pid/exe). */
	if (stat(link, &st) != 0)
		return 0;
	if (s->main_id && st.st_dev == s->main_dev && st.st_ino == s->main_ino)
		return 0;
	if (s->main_owned) {
		s->main_old = xrealloc(s->main_old, (s->nmain_old + 1) * sizeof(*s->main_old));
		s->main_old[s->nmain_old++] = s->main_owned;
		s->main_owned = NULL;
	}
	s->main_sf = NULL;
	s->main_tried = 0;
	/* The new executable's mappings replace the old ones at the next lookup. */
	s->invalid = 1;
	return 1;
}
