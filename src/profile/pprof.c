/* pprof.c: profile.proto encoder and validating decoder for struct prof, gzip, and
 * atomic file output.
 *
 * The wire format is hand-written rather than built from protobuf-c's generated
 * structs: protobuf-c's string_table is an array of NUL-terminated char * (our strings
 * may hold NUL), packing needs one heap object per message, and the direct encoder
 * is faster: it writes the fields once, where protobuf-c builds, sizes, packs and frees
 * a tree of the same profile. tests/test-pprof.c still uses
 * protobuf-c's generated unpacker, as an independent reader of our bytes.
 *
 * Field numbers and types: github.com/google/pprof proto/profile.proto (Debian
 * golang-github-google-pprof-dev); wire format: protobuf encoding spec
 * (protobuf.dev/programming-guides/encoding: varints, tags = field << 3 | wire type,
 * proto3 repeated scalars packed by default, parsers must accept packed and unpacked). */
#include "config.h"
#include "gotop/pprof.h"
#include "gotop/hashmap.h"
#include "gotop/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* zlib level 1, as Go's own runtime/pprof (go1.23 runtime/pprof/proto.go,
 * gzip.BestSpeed): higher levels take several times as long on a large profile and
 * make its file only a little smaller. */
#define PPROF_GZIP_LEVEL 1

/* profile.proto field numbers. */
enum {
	F_PROFILE_SAMPLE_TYPE = 1,
	F_PROFILE_SAMPLE = 2,
	F_PROFILE_MAPPING = 3,
	F_PROFILE_LOCATION = 4,
	F_PROFILE_FUNCTION = 5,
	F_PROFILE_STRING_TABLE = 6,
	F_PROFILE_DROP_FRAMES = 7,
	F_PROFILE_KEEP_FRAMES = 8,
	F_PROFILE_TIME_NANOS = 9,
	F_PROFILE_DURATION_NANOS = 10,
	F_PROFILE_PERIOD_TYPE = 11,
	F_PROFILE_PERIOD = 12,
	F_PROFILE_COMMENT = 13,
	F_PROFILE_DEFAULT_SAMPLE_TYPE = 14,

	F_VT_TYPE = 1,
	F_VT_UNIT = 2,

	F_SAMPLE_LOCATION_ID = 1,
	F_SAMPLE_VALUE = 2,
	F_SAMPLE_LABEL = 3,

	F_LABEL_KEY = 1,
	F_LABEL_STR = 2,
	F_LABEL_NUM = 3,
	F_LABEL_NUM_UNIT = 4,

	F_MAPPING_ID = 1,
	F_MAPPING_MEMORY_START = 2,
	F_MAPPING_MEMORY_LIMIT = 3,
	F_MAPPING_FILE_OFFSET = 4,
	F_MAPPING_FILENAME = 5,
	F_MAPPING_BUILD_ID = 6,
	F_MAPPING_HAS_FUNCTIONS = 7,
	F_MAPPING_HAS_FILENAMES = 8,
	F_MAPPING_HAS_LINE_NUMBERS = 9,
	F_MAPPING_HAS_INLINE_FRAMES = 10,

	F_LOCATION_ID = 1,
	F_LOCATION_MAPPING_ID = 2,
	F_LOCATION_ADDRESS = 3,
	F_LOCATION_LINE = 4,
	F_LOCATION_IS_FOLDED = 5,

	F_LINE_FUNCTION_ID = 1,
	F_LINE_LINE = 2,

	F_FUNCTION_ID = 1,
	F_FUNCTION_NAME = 2,
	F_FUNCTION_SYSTEM_NAME = 3,
	F_FUNCTION_FILENAME = 4,
	F_FUNCTION_START_LINE = 5,
};

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

/* =================================================================================
 * Encoder. Every field number used is below 16, so every tag is one byte. Sizes of
 * nested messages are computed first so each length prefix is written once.
 */

static inline size_t vsize(uint64_t v)
{
	return v < 0x80 ? 1 : (size_t)(63 - __builtin_clzll(v)) / 7 + 1;
}

static inline uint8_t *put_varint(uint8_t *o, uint64_t v)
{
	while (v >= 0x80) {
		*o++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*o++ = (uint8_t)v;
	return o;
}

/* A scalar field; proto3 leaves zero values out. int64 goes as its two's complement. */
static inline size_t fsize(uint64_t v)
{
	return v ? 1 + vsize(v) : 0;
}

static inline uint8_t *put_field(uint8_t *o, unsigned field, uint64_t v)
{
	if (v) {
		*o++ = (uint8_t)(field << 3 | WT_VARINT);
		o = put_varint(o, v);
	}
	return o;
}

/* A length-delimited field holding n bytes. */
static inline size_t lsize(size_t n)
{
	return 1 + vsize(n) + n;
}

static inline uint8_t *put_len(uint8_t *o, unsigned field, size_t n)
{
	*o++ = (uint8_t)(field << 3 | WT_LEN);
	return put_varint(o, n);
}

struct wbuf {
	uint8_t *b;
	size_t len, cap;
};

/* Makes room for n more bytes and returns where they go. */
static inline uint8_t *wb_room(struct wbuf *w, size_t n)
{
	if (w->cap - w->len < n)
		xgrow((void **)&w->b, &w->cap, w->len + n, 1);
	return w->b + w->len;
}

static inline void wb_done(struct wbuf *w, const uint8_t *end)
{
	w->len = (size_t)(end - w->b);
}

static size_t vt_size(struct prof_value_type vt)
{
	return fsize(vt.type) + fsize(vt.unit);
}

static uint8_t *put_vt(uint8_t *o, unsigned field, struct prof_value_type vt)
{
	o = put_len(o, field, vt_size(vt));
	o = put_field(o, F_VT_TYPE, vt.type);
	return put_field(o, F_VT_UNIT, vt.unit);
}

/* profile.proto Label: "At most one of the following must be present": str, or num
 * with num_unit. */
static size_t label_size(const struct prof_label *l)
{
	if (l->str)
		return fsize(l->key) + fsize(l->str);
	return fsize(l->key) + fsize((uint64_t)l->num) + fsize(l->num_unit);
}

static uint8_t *put_label(uint8_t *o, const struct prof_label *l)
{
	o = put_len(o, F_SAMPLE_LABEL, label_size(l));
	o = put_field(o, F_LABEL_KEY, l->key);
	if (l->str)
		return put_field(o, F_LABEL_STR, l->str);
	o = put_field(o, F_LABEL_NUM, (uint64_t)l->num);
	return put_field(o, F_LABEL_NUM_UNIT, l->num_unit);
}

static void put_sample(struct wbuf *w, const struct prof_sample *s, size_t nvals)
{
	size_t locs_n = 0, vals_n = 0, size = 0;

	for (uint32_t i = 0; i < s->nlocs; i++)
		locs_n += vsize(s->locs[i]);
	for (size_t i = 0; i < nvals; i++)
		vals_n += vsize((uint64_t)s->values[i]);
	if (s->nlocs)
		size += lsize(locs_n);
	if (nvals)
		size += lsize(vals_n);
	for (uint32_t i = 0; i < s->nlabels; i++)
		size += lsize(label_size(&s->labels[i]));

	uint8_t *o = wb_room(w, lsize(size));
	o = put_len(o, F_PROFILE_SAMPLE, size);
	if (s->nlocs) {
		o = put_len(o, F_SAMPLE_LOCATION_ID, locs_n);
		for (uint32_t i = 0; i < s->nlocs; i++)
			o = put_varint(o, s->locs[i]);
	}
	if (nvals) {
		o = put_len(o, F_SAMPLE_VALUE, vals_n);
		for (size_t i = 0; i < nvals; i++)
			o = put_varint(o, (uint64_t)s->values[i]);
	}
	for (uint32_t i = 0; i < s->nlabels; i++)
		o = put_label(o, &s->labels[i]);
	wb_done(w, o);
}

static void put_mapping(struct wbuf *w, const struct prof_mapping *m)
{
	size_t size = fsize(m->id) + fsize(m->start) + fsize(m->limit) + fsize(m->offset) +
		      fsize(m->filename) + fsize(m->build_id) + fsize(!!m->has_functions) +
		      fsize(!!m->has_filenames) + fsize(!!m->has_line_numbers) +
		      fsize(!!m->has_inline_frames);
	uint8_t *o = wb_room(w, lsize(size));

	o = put_len(o, F_PROFILE_MAPPING, size);
	o = put_field(o, F_MAPPING_ID, m->id);
	o = put_field(o, F_MAPPING_MEMORY_START, m->start);
	o = put_field(o, F_MAPPING_MEMORY_LIMIT, m->limit);
	o = put_field(o, F_MAPPING_FILE_OFFSET, m->offset);
	o = put_field(o, F_MAPPING_FILENAME, m->filename);
	o = put_field(o, F_MAPPING_BUILD_ID, m->build_id);
	o = put_field(o, F_MAPPING_HAS_FUNCTIONS, !!m->has_functions);
	o = put_field(o, F_MAPPING_HAS_FILENAMES, !!m->has_filenames);
	o = put_field(o, F_MAPPING_HAS_LINE_NUMBERS, !!m->has_line_numbers);
	o = put_field(o, F_MAPPING_HAS_INLINE_FRAMES, !!m->has_inline_frames);
	wb_done(w, o);
}

static size_t line_size(const struct prof_line *l)
{
	return fsize(l->function) + fsize((uint64_t)l->line);
}

static void put_location(struct wbuf *w, const struct prof_location *l)
{
	size_t size = fsize(l->id) + fsize(l->mapping) + fsize(l->address) + fsize(!!l->is_folded);

	for (uint32_t i = 0; i < l->nlines; i++)
		size += lsize(line_size(&l->lines[i]));
	uint8_t *o = wb_room(w, lsize(size));
	o = put_len(o, F_PROFILE_LOCATION, size);
	o = put_field(o, F_LOCATION_ID, l->id);
	o = put_field(o, F_LOCATION_MAPPING_ID, l->mapping);
	o = put_field(o, F_LOCATION_ADDRESS, l->address);
	for (uint32_t i = 0; i < l->nlines; i++) {
		o = put_len(o, F_LOCATION_LINE, line_size(&l->lines[i]));
		o = put_field(o, F_LINE_FUNCTION_ID, l->lines[i].function);
		o = put_field(o, F_LINE_LINE, (uint64_t)l->lines[i].line);
	}
	o = put_field(o, F_LOCATION_IS_FOLDED, !!l->is_folded);
	wb_done(w, o);
}

static void put_function(struct wbuf *w, const struct prof_function *f)
{
	size_t size = fsize(f->id) + fsize(f->name) + fsize(f->system_name) + fsize(f->filename) +
		      fsize((uint64_t)f->start_line);
	uint8_t *o = wb_room(w, lsize(size));

	o = put_len(o, F_PROFILE_FUNCTION, size);
	o = put_field(o, F_FUNCTION_ID, f->id);
	o = put_field(o, F_FUNCTION_NAME, f->name);
	o = put_field(o, F_FUNCTION_SYSTEM_NAME, f->system_name);
	o = put_field(o, F_FUNCTION_FILENAME, f->filename);
	o = put_field(o, F_FUNCTION_START_LINE, (uint64_t)f->start_line);
	wb_done(w, o);
}

static bool all_zero(const struct prof_sample *s, size_t nvals)
{
	for (size_t i = 0; i < nvals; i++)
		if (s->values[i])
			return false;
	return true;
}

int pprof_encode(const struct prof *p, uint8_t **buf, size_t *len)
{
	struct wbuf w = {0};
	const struct prof_value_type *types;
	size_t ntypes = prof_sample_types(p, &types);
	uint8_t *o;

	/* A guess that avoids most regrowth: ~16 bytes per entry. */
	w.cap = 256 + 16 * (prof_nstrings(p) + prof_nlocations(p) + prof_nsamples(p));
	w.b = xmalloc(w.cap);

	for (size_t i = 0; i < ntypes; i++) {
		o = wb_room(&w, lsize(vt_size(types[i])));
		wb_done(&w, put_vt(o, F_PROFILE_SAMPLE_TYPE, types[i]));
	}
	/* profile.proto: "All samples must have the same number of values, the same as
	 * the length of Profile.sample_type." */
	for (size_t i = 0, n = prof_nsamples(p); i < n; i++) {
		struct prof_sample s;

		prof_sample_at(p, i, &s);
		if (!all_zero(&s, ntypes))
			put_sample(&w, &s, ntypes);
	}
	/* The main executable's mapping first: pprof takes mapping[0] for the main binary. */
	uint64_t main_map = prof_main_mapping(p);
	if (main_map && main_map <= prof_nmappings(p))
		put_mapping(&w, prof_mapping_at(p, main_map - 1));
	for (size_t i = 0, n = prof_nmappings(p); i < n; i++)
		if (i + 1 != main_map)
			put_mapping(&w, prof_mapping_at(p, i));
	for (size_t i = 0, n = prof_nlocations(p); i < n; i++)
		put_location(&w, prof_location_at(p, i));
	for (size_t i = 0, n = prof_nfunctions(p); i < n; i++)
		put_function(&w, prof_function_at(p, i));
	/* string_table[0] is "" (prof_new interns it first) and is written like any
	 * other: a zero-length entry. */
	for (size_t i = 0, n = prof_nstrings(p); i < n; i++) {
		size_t sl;
		const char *s = prof_string(p, (uint32_t)i, &sl);

		o = wb_room(&w, lsize(sl));
		o = put_len(o, F_PROFILE_STRING_TABLE, sl);
		memcpy(o, s, sl);
		wb_done(&w, o + sl);
	}

	int64_t tn, dn, period;
	struct prof_value_type pt;
	const uint32_t *comments;
	size_t ncomments = prof_comments(p, &comments);
	size_t comments_n = 0;

	prof_get_time(p, &tn, &dn);
	prof_get_period(p, &pt, &period);
	for (size_t i = 0; i < ncomments; i++)
		comments_n += vsize(comments[i]);
	o = wb_room(&w, 4 * 11 + lsize(vt_size(pt)) + lsize(comments_n));
	o = put_field(o, F_PROFILE_TIME_NANOS, (uint64_t)tn);
	o = put_field(o, F_PROFILE_DURATION_NANOS, (uint64_t)dn);
	if (pt.type || pt.unit)
		o = put_vt(o, F_PROFILE_PERIOD_TYPE, pt);
	o = put_field(o, F_PROFILE_PERIOD, (uint64_t)period);
	if (ncomments) {
		o = put_len(o, F_PROFILE_COMMENT, comments_n);
		for (size_t i = 0; i < ncomments; i++)
			o = put_varint(o, comments[i]);
	}
	o = put_field(o, F_PROFILE_DEFAULT_SAMPLE_TYPE, prof_default_sample_type(p));
	wb_done(&w, o);

	*buf = w.b;
	*len = w.len;
	return 0;
}

/* =================================================================================
 * Files.
 */

static int write_all(int fd, const uint8_t *b, size_t n)
{
	while (n) {
		ssize_t r = write(fd, b, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Gzips buf into sink, 64 KB at a time: deflate with windowBits 15 + 16, which asks zlib
 * for a gzip header and trailer (zlib.h, deflateInit2). */
static int gzip_stream(const uint8_t *buf, size_t len,
		       int (*sink)(void *arg, const uint8_t *b, size_t n), void *arg)
{
	z_stream z;
	uint8_t out[1 << 16];
	int err = 0, zr;

	memset(&z, 0, sizeof(z));
	zr = deflateInit2(&z, PPROF_GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	if (zr != Z_OK)
		return zr == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
	z.next_in = (Bytef *)buf;
	do {
		/* avail_in is a uInt: feed huge buffers in pieces. */
		size_t left = len - (size_t)((const uint8_t *)z.next_in - buf);
		uInt chunk = left > (1u << 30) ? (1u << 30) : (uInt)left;
		int flush = chunk == left ? Z_FINISH : Z_NO_FLUSH;

		z.avail_in = chunk;
		do {
			z.next_out = out;
			z.avail_out = sizeof(out);
			zr = deflate(&z, flush);
			if (zr == Z_STREAM_ERROR) {
				err = -EINVAL;
				goto out_end;
			}
			err = sink(arg, out, sizeof(out) - z.avail_out);
			if (err)
				goto out_end;
		} while (z.avail_out == 0 && zr != Z_STREAM_END);
		if (flush == Z_FINISH)
			break;
	} while (1);
	if (zr != Z_STREAM_END)
		err = -EIO;
out_end:
	deflateEnd(&z);
	return err;
}

static int fd_sink(void *arg, const uint8_t *b, size_t n)
{
	return write_all(*(int *)arg, b, n);
}

static int gzip_to_fd(int fd, const uint8_t *buf, size_t len)
{
	return gzip_stream(buf, len, fd_sink, &fd);
}

struct mem_sink {
	uint8_t *buf;
	size_t len, cap;
};

static int mem_sink(void *arg, const uint8_t *b, size_t n)
{
	struct mem_sink *m = arg;

	xgrow((void **)&m->buf, &m->cap, m->len + n + 1, 1);
	memcpy(m->buf + m->len, b, n);
	m->len += n;
	return 0;
}

int pprof_gzip(const struct prof *p, uint8_t **buf, size_t *len)
{
	struct mem_sink m = { 0 };
	uint8_t *raw;
	size_t rlen;
	int err = pprof_encode(p, &raw, &rlen);

	*buf = NULL;
	*len = 0;
	if (err)
		return err;
	err = gzip_stream(raw, rlen, mem_sink, &m);
	free(raw);
	if (err) {
		free(m.buf);
		return err;
	}
	*buf = m.buf;
	*len = m.len;
	return 0;
}

/* Creates "path.tmp.XXXXXX" with O_EXCL (mode 0666 less the umask, like any new
 * file) and returns its descriptor and name (caller frees), or -errno. */
static int create_temp(const char *path, char **tmpname)
{
	static const char chars[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	static unsigned counter;
	size_t plen = strlen(path);
	char *name = xmalloc(plen + sizeof(".tmp.XXXXXX"));

	memcpy(name, path, plen);
	memcpy(name + plen, ".tmp.", 5);
	for (int attempt = 0; attempt < 100; attempt++) {
		uint64_t r = util_mix64(util_now_ns() ^ ((uint64_t)getpid() << 32) ^
					__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));

		for (int i = 0; i < 6; i++, r /= 62)
			name[plen + 5 + i] = chars[r % 62];
		name[plen + 11] = '\0';
		int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd >= 0) {
			*tmpname = name;
			return fd;
		}
		if (errno != EEXIST) {
			int e = -errno;
			free(name);
			return e;
		}
	}
	free(name);
	return -EEXIST;
}

/* fsync of the directory makes the rename itself durable; failure there does not
 * undo the write, so it is not reported. */
static void sync_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(dir);
}

/* Where a file for path goes. A path that exists and is not a regular file (a device
 * such as /dev/null, a FIFO, /dev/stdout's pipe) is written in place (*direct): the
 * rename would replace it with a file, and as root `record -o /dev/null` did that to
 * /dev/null. A symbolic link to a file stays a link: *dest is its target, where the
 * temporary file and the rename go. Otherwise *dest is path. 0 or -errno (-EISDIR for a
 * directory); *dest is the caller's to free. */
static int resolve_dest(const char *path, char **dest, int *direct)
{
	struct stat st, lst;

	*dest = NULL;
	*direct = 0;
	if (!path || !*path)
		return -ENOENT;
	if (stat(path, &st) < 0) {
		if (errno != ENOENT)
			return -errno;
		*dest = xstrdup(path); /* new (a dangling link is replaced, as before) */
		return 0;
	}
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode)) {
		*direct = 1;
		return 0;
	}
	if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
		*dest = realpath(path, NULL);
		return *dest ? 0 : -errno;
	}
	*dest = xstrdup(path);
	return 0;
}

int pprof_check_writable(const char *path)
{
	char *dest, *tmp;
	int fd, direct, err = resolve_dest(path, &dest, &direct);

	if (err)
		return err;
	if (direct)
		return access(path, W_OK) < 0 ? -errno : 0;
	fd = create_temp(dest, &tmp);
	free(dest);
	if (fd < 0)
		return fd;
	close(fd);
	unlink(tmp);
	free(tmp);
	return 0;
}

/* buf into fd, gzipped (gz) or as it is. */
static int put_bytes(int fd, const uint8_t *buf, size_t len, int gz)
{
	return gz ? gzip_to_fd(fd, buf, len) : write_all(fd, buf, len);
}

/* Writes in place (see resolve_dest): no temporary file, no fsync (a device or a pipe
 * has nothing to sync, and /dev/null refuses it). A FIFO nobody reads gives -ENXIO at
 * once instead of blocking the open: the live UI's save must not hang. */
static int write_direct(const char *path, const uint8_t *buf, size_t len, int gz)
{
	int err, fl, fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	/* Then the writes wait for a slow reader like any pipe's. */
	if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	err = put_bytes(fd, buf, len, gz);
	if (close(fd) < 0 && !err)
		err = -errno;
	return err;
}

/* len bytes written to path atomically, gzipped or not (gz). */
static int write_bytes(const char *path, const uint8_t *buf, size_t len, int gz)
{
	char *dest, *tmp;
	int err, fd, direct;

	err = resolve_dest(path, &dest, &direct);
	if (err)
		return err;
	if (direct) {
		err = write_direct(path, buf, len, gz);
		goto out_dest;
	}
	fd = create_temp(dest, &tmp);
	if (fd < 0) {
		err = fd;
		goto out_dest;
	}
	err = put_bytes(fd, buf, len, gz);
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, dest) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
	else
		sync_dir_of(dest);
	free(tmp);
out_dest:
	free(dest);
	return err;
}

int pprof_write_bytes(const char *path, const uint8_t *buf, size_t len)
{
	return write_bytes(path, buf, len, 0);
}

/* The encoding of p (encode) written to path atomically, gzipped or not (gz). */
static int write_file(const struct prof *p, const char *path, size_t col,
		      int (*encode)(const struct prof *, size_t, uint8_t **, size_t *), int gz)
{
	uint8_t *buf;
	size_t len;
	char *dest;
	int err, direct;

	/* A path that cannot be written fails before the encoding is made. */
	err = resolve_dest(path, &dest, &direct);
	free(dest);
	if (err)
		return err;
	err = encode(p, col, &buf, &len);
	if (err)
		return err;
	err = write_bytes(path, buf, len, gz);
	free(buf);
	return err;
}

static int encode_pprof(const struct prof *p, size_t col, uint8_t **buf, size_t *len)
{
	(void)col;
	return pprof_encode(p, buf, len);
}

int pprof_write_file(const struct prof *p, const char *path)
{
	return write_file(p, path, 0, encode_pprof, 1);
}

/* =================================================================================
 * Folded stacks: "root;caller;...;leaf VALUE" per line, the input of Brendan Gregg's
 * flamegraph.pl (its stackcollapse-*.pl scripts write it), inferno and speedscope.
 * The value is the last space-separated field of a line and frames are separated by ';',
 * so a ';' or a line break in a name would change the stack: such bytes, and every other
 * control character, are written as '?'. Inlined functions are frames of their own, as
 * in go tool pprof -traces.
 */

struct fold {
	struct hashmap idx;  /* hash of a stack's text (+ probe) -> entry + 1 */
	struct {
		size_t off, len; /* the text in txt */
		int64_t v;
	} *ent;
	size_t nent, capent;
	char *txt;
	size_t ntxt, captxt;
};

static void fold_put(struct fold *f, const char *s, size_t n)
{
	size_t i;

	xgrow((void **)&f->txt, &f->captxt, f->ntxt + n + 1, 1);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		f->txt[f->ntxt++] = c == ';' || c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
}

static void fold_sep(struct fold *f)
{
	xgrow((void **)&f->txt, &f->captxt, f->ntxt + 1, 1);
	f->txt[f->ntxt++] = ';';
}

/* The frames of sample s, root first, appended to f->txt; returns where they start. */
static size_t fold_text(const struct prof *p, const struct prof_sample *s, struct fold *f)
{
	size_t start = f->ntxt, k, j, n;

	for (k = s->nlocs; k-- > 0;) {
		const struct prof_location *l =
			s->locs[k] && s->locs[k] <= prof_nlocations(p) ? prof_location_at(p, s->locs[k] - 1)
								       : NULL;

		if (!l || !l->nlines) {
			char a[32];

			snprintf(a, sizeof(a), "0x%llx", l ? (unsigned long long)l->address : 0ULL);
			if (f->ntxt > start)
				fold_sep(f);
			fold_put(f, a, strlen(a));
			continue;
		}
		/* lines[0] is the innermost inlined function (profile.h). */
		for (j = l->nlines; j-- > 0;) {
			const struct prof_function *fn =
				l->lines[j].function && l->lines[j].function <= prof_nfunctions(p)
					? prof_function_at(p, l->lines[j].function - 1) : NULL;
			const char *name = fn ? prof_string(p, fn->name, &n) : NULL;

			if (!name || !n) {
				name = "??";
				n = 2;
			}
			if (f->ntxt > start)
				fold_sep(f);
			fold_put(f, name, n);
		}
	}
	return start;
}

int pprof_folded(const struct prof *p, size_t col, uint8_t **buf, size_t *len)
{
	struct fold f = { 0 };
	struct prof_sample s;
	size_t i, stride, out = 0;
	const int64_t *vals = prof_values(p, &stride);
	char *o;

	*buf = NULL;
	*len = 0;
	if (col >= stride && prof_nsamples(p))
		return -EINVAL;
	for (i = 0; i < prof_nsamples(p); i++) {
		int64_t v = vals[i * stride + col];
		size_t start, n;
		uint64_t h, *slot;
		int created;

		if (!v || prof_sample_at(p, i, &s))
			continue;
		start = fold_text(p, &s, &f);
		n = f.ntxt - start;
		if (!n) {
			f.ntxt = start;
			continue;
		}
		for (h = util_hash(f.txt + start, n, 0x666f6c64ULL);; h++) {
			slot = hashmap_put(&f.idx, h, &created);
			if (created || (f.ent[*slot - 1].len == n &&
					!memcmp(f.txt + f.ent[*slot - 1].off, f.txt + start, n)))
				break;
		}
		if (!created) {
			f.ent[*slot - 1].v += v;
			f.ntxt = start;
			continue;
		}
		xgrow((void **)&f.ent, &f.capent, f.nent + 1, sizeof(*f.ent));
		f.ent[f.nent].off = start;
		f.ent[f.nent].len = n;
		f.ent[f.nent].v = v;
		*slot = ++f.nent;
	}
	for (i = 0; i < f.nent; i++)
		out += f.ent[i].len + 24;
	o = malloc(out + 1);
	if (!o) {
		hashmap_free(&f.idx);
		free(f.ent);
		free(f.txt);
		return -ENOMEM;
	}
	for (i = 0, out = 0; i < f.nent; i++) {
		memcpy(o + out, f.txt + f.ent[i].off, f.ent[i].len);
		out += f.ent[i].len;
		out += (size_t)sprintf(o + out, " %lld\n", (long long)f.ent[i].v);
	}
	hashmap_free(&f.idx);
	free(f.ent);
	free(f.txt);
	*buf = (uint8_t *)o;
	*len = out;
	return 0;
}

int pprof_write_folded(const struct prof *p, size_t col, const char *path)
{
	return write_file(p, path, col, pprof_folded, 0);
}

/* =================================================================================
 * Decoder. Input is untrusted: every read is bounded by the message it is in, every
 * string index and id is checked, and element counts are bounded by the input size.
 */

struct rd {
	const uint8_t *p, *end;
};

struct span {
	const uint8_t *p;
	size_t n;
};

static int rd_varint(struct rd *r, uint64_t *out)
{
	uint64_t v = 0;

	/* At most 10 bytes: 9 * 7 bits, then the 64th bit. */
	for (unsigned shift = 0; shift <= 63; shift += 7) {
		if (r->p >= r->end)
			return -EBADMSG;
		uint8_t b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -EBADMSG;
}

static int rd_key(struct rd *r, uint32_t *field, uint32_t *wt)
{
	uint64_t k;
	int err = rd_varint(r, &k);

	if (err)
		return err;
	if (k >> 3 == 0 || k >> 3 > 0x1fffffff)
		return -EBADMSG;
	*field = (uint32_t)(k >> 3);
	*wt = (uint32_t)(k & 7);
	return 0;
}

static int rd_span(struct rd *r, struct span *s)
{
	uint64_t n;
	int err = rd_varint(r, &n);

	if (err)
		return err;
	if (n > (uint64_t)(r->end - r->p))
		return -EBADMSG;
	s->p = r->p;
	s->n = (size_t)n;
	r->p += n;
	return 0;
}

static int rd_skip(struct rd *r, uint32_t wt)
{
	uint64_t v;
	struct span s;

	switch (wt) {
	case WT_VARINT:
		return rd_varint(r, &v);
	case WT_I64:
		if (r->end - r->p < 8)
			return -EBADMSG;
		r->p += 8;
		return 0;
	case WT_LEN:
		return rd_span(r, &s);
	case WT_I32:
		if (r->end - r->p < 4)
			return -EBADMSG;
		r->p += 4;
		return 0;
	default: /* groups (3, 4) are not in profile.proto */
		return -EBADMSG;
	}
}

/* A scalar field that must be a varint. */
static int rd_scalar(struct rd *r, uint32_t wt, uint64_t *v)
{
	return wt == WT_VARINT ? rd_varint(r, v) : -EBADMSG;
}

static int rd_msg(struct rd *r, uint32_t wt, struct span *s)
{
	return wt == WT_LEN ? rd_span(r, s) : -EBADMSG;
}

struct u64vec {
	uint64_t *v;
	size_t n, cap;
};

static void u64_push(struct u64vec *a, uint64_t x)
{
	if (a->n == a->cap)
		xgrow((void **)&a->v, &a->cap, a->n + 1, sizeof(*a->v));
	a->v[a->n++] = x;
}

/* A repeated varint field, packed (one length-delimited run) or not (one per tag). */
static int rd_repeated(struct rd *r, uint32_t wt, struct u64vec *out)
{
	uint64_t v;
	int err;

	if (wt == WT_VARINT) {
		err = rd_varint(r, &v);
		if (!err)
			u64_push(out, v);
		return err;
	}
	if (wt != WT_LEN)
		return -EBADMSG;
	struct span s;
	err = rd_span(r, &s);
	if (err)
		return err;
	struct rd sub = {s.p, s.p + s.n};
	while (sub.p < sub.end) {
		err = rd_varint(&sub, &v);
		if (err)
			return err;
		u64_push(out, v);
	}
	return 0;
}

struct spanvec {
	struct span *v;
	size_t n, cap;
};

static void span_push(struct spanvec *a, struct span s)
{
	if (a->n == a->cap)
		xgrow((void **)&a->v, &a->cap, a->n + 1, sizeof(*a->v));
	a->v[a->n++] = s;
}

/* File ids of mappings, functions and locations are any unique nonzero numbers
 * (profile.proto: "Unique nonzero id"); they map to the prof's ids. */
struct idpair {
	uint64_t fid, nid;
};

struct idmap {
	struct idpair *v;
	size_t n, cap;
};

static void idmap_push(struct idmap *m, uint64_t fid, uint64_t nid)
{
	if (m->n == m->cap)
		xgrow((void **)&m->v, &m->cap, m->n + 1, sizeof(*m->v));
	m->v[m->n].fid = fid;
	m->v[m->n].nid = nid;
	m->n++;
}

static int idpair_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct idpair *)a)->fid, y = ((const struct idpair *)b)->fid;

	return x < y ? -1 : x > y;
}

/* Sorts (files written by us are already in order) and rejects duplicates. */
static int idmap_seal(struct idmap *m)
{
	bool sorted = true;

	for (size_t i = 1; i < m->n && sorted; i++)
		sorted = m->v[i - 1].fid < m->v[i].fid;
	if (!sorted) {
		qsort(m->v, m->n, sizeof(*m->v), idpair_cmp);
		for (size_t i = 1; i < m->n; i++)
			if (m->v[i - 1].fid == m->v[i].fid)
				return -EBADMSG;
	}
	return 0;
}

/* Returns the prof id for file id fid, or 0 when there is none. */
static uint64_t idmap_get(const struct idmap *m, uint64_t fid)
{
	if (fid - 1 < m->n && m->v[fid - 1].fid == fid)
		return m->v[fid - 1].nid;
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].fid < fid)
			lo = mid + 1;
		else if (m->v[mid].fid > fid)
			hi = mid;
		else
			return m->v[mid].nid;
	}
	return 0;
}

struct decoder {
	struct prof *p;
	uint32_t *smap; /* file string index -> prof string id */
	size_t nstr;
	struct idmap maps, funcs, locs;
	struct u64vec tmp_a, tmp_b;
	struct prof_line *lines;
	size_t cap_lines;
	struct prof_label *labels;
	size_t cap_labels;
};

/* A string index from the file: must be inside the string table. */
static int dec_str(const struct decoder *d, uint64_t v, uint32_t *out)
{
	if (v >= d->nstr)
		return -EBADMSG;
	*out = d->smap[v];
	return 0;
}

/* Reads a message whose fields of interest are scalars numbered 1..n (all of
 * ValueType, Mapping, Function, Line and Label in profile.proto are): v[k] gets field k,
 * 0 when absent; other fields are skipped. */
static int rd_scalar_fields(struct span s, uint64_t *v, uint32_t n)
{
	struct rd r = {s.p, s.p + s.n};
	uint32_t field, wt;
	int err = 0;

	memset(v, 0, (n + 1) * sizeof(*v));
	while (!err && r.p < r.end) {
		err = rd_key(&r, &field, &wt);
		if (!err)
			err = field >= 1 && field <= n ? rd_scalar(&r, wt, &v[field]) : rd_skip(&r, wt);
	}
	return err;
}

static int dec_value_type(struct decoder *d, struct span s, struct prof_value_type *vt)
{
	uint64_t v[F_VT_UNIT + 1];
	int err = rd_scalar_fields(s, v, F_VT_UNIT);

	if (!err)
		err = dec_str(d, v[F_VT_TYPE], &vt->type);
	if (!err)
		err = dec_str(d, v[F_VT_UNIT], &vt->unit);
	return err;
}

static int dec_mapping(struct decoder *d, struct span s)
{
	uint64_t v[F_MAPPING_HAS_INLINE_FRAMES + 1];
	struct prof_mapping m;
	int err = rd_scalar_fields(s, v, F_MAPPING_HAS_INLINE_FRAMES);

	if (err)
		return err;
	if (v[F_MAPPING_ID] == 0)
		return -EBADMSG;
	memset(&m, 0, sizeof(m));
	m.start = v[F_MAPPING_MEMORY_START];
	m.limit = v[F_MAPPING_MEMORY_LIMIT];
	m.offset = v[F_MAPPING_FILE_OFFSET];
	if (dec_str(d, v[F_MAPPING_FILENAME], &m.filename) ||
	    dec_str(d, v[F_MAPPING_BUILD_ID], &m.build_id))
		return -EBADMSG;
	m.has_functions = v[F_MAPPING_HAS_FUNCTIONS] != 0;
	m.has_filenames = v[F_MAPPING_HAS_FILENAMES] != 0;
	m.has_line_numbers = v[F_MAPPING_HAS_LINE_NUMBERS] != 0;
	m.has_inline_frames = v[F_MAPPING_HAS_INLINE_FRAMES] != 0;
	idmap_push(&d->maps, v[F_MAPPING_ID], prof_add_mapping(d->p, &m));
	return 0;
}

static int dec_function(struct decoder *d, struct span s)
{
	uint64_t v[F_FUNCTION_START_LINE + 1];
	uint32_t n, sn, fn;
	int err = rd_scalar_fields(s, v, F_FUNCTION_START_LINE);

	if (err)
		return err;
	if (v[F_FUNCTION_ID] == 0 || dec_str(d, v[F_FUNCTION_NAME], &n) ||
	    dec_str(d, v[F_FUNCTION_SYSTEM_NAME], &sn) || dec_str(d, v[F_FUNCTION_FILENAME], &fn))
		return -EBADMSG;
	idmap_push(&d->funcs, v[F_FUNCTION_ID],
		   prof_add_function(d->p, n, sn, fn, (int64_t)v[F_FUNCTION_START_LINE]));
	return 0;
}

static int dec_line(struct decoder *d, struct span s, struct prof_line *out)
{
	uint64_t v[F_LINE_LINE + 1];
	int err = rd_scalar_fields(s, v, F_LINE_LINE);

	if (err)
		return err;
	out->function = 0;
	if (v[F_LINE_FUNCTION_ID]) {
		out->function = idmap_get(&d->funcs, v[F_LINE_FUNCTION_ID]);
		if (!out->function)
			return -EBADMSG;
	}
	out->line = (int64_t)v[F_LINE_LINE];
	return 0;
}

static int dec_location(struct decoder *d, struct span s)
{
	struct rd r = {s.p, s.p + s.n};
	uint64_t id = 0, mapping = 0, address = 0, folded = 0;
	size_t nlines = 0;
	uint32_t field, wt;
	struct span ls;
	int err = 0;

	while (!err && r.p < r.end) {
		err = rd_key(&r, &field, &wt);
		if (err)
			break;
		switch (field) {
		case F_LOCATION_ID: err = rd_scalar(&r, wt, &id); break;
		case F_LOCATION_MAPPING_ID: err = rd_scalar(&r, wt, &mapping); break;
		case F_LOCATION_ADDRESS: err = rd_scalar(&r, wt, &address); break;
		case F_LOCATION_IS_FOLDED: err = rd_scalar(&r, wt, &folded); break;
		case F_LOCATION_LINE:
			err = rd_msg(&r, wt, &ls);
			if (err)
				break;
			xgrow((void **)&d->lines, &d->cap_lines, nlines + 1, sizeof(*d->lines));
			err = dec_line(d, ls, &d->lines[nlines]);
			nlines++;
			break;
		default: err = rd_skip(&r, wt); break;
		}
	}
	if (err)
		return err;
	if (id == 0)
		return -EBADMSG;
	uint64_t mid = 0;
	if (mapping) {
		mid = idmap_get(&d->maps, mapping);
		if (!mid)
			return -EBADMSG;
	}
	/* is_folded has no setter in profile.h; it is not kept. */
	(void)folded;
	idmap_push(&d->locs, id, prof_add_location(d->p, mid, address, d->lines, nlines));
	return 0;
}

static int dec_label(struct decoder *d, struct span s, struct prof_label *out)
{
	uint64_t v[F_LABEL_NUM_UNIT + 1];
	int err = rd_scalar_fields(s, v, F_LABEL_NUM_UNIT);

	if (err)
		return err;
	if (dec_str(d, v[F_LABEL_KEY], &out->key) || dec_str(d, v[F_LABEL_STR], &out->str) ||
	    dec_str(d, v[F_LABEL_NUM_UNIT], &out->num_unit))
		return -EBADMSG;
	out->num = (int64_t)v[F_LABEL_NUM];
	return 0;
}

static int dec_sample(struct decoder *d, struct span s, size_t ntypes)
{
	struct rd r = {s.p, s.p + s.n};
	size_t nlabels = 0;
	uint32_t field, wt;
	struct span ls;
	int err = 0;

	d->tmp_a.n = 0; /* location ids */
	d->tmp_b.n = 0; /* values */
	while (!err && r.p < r.end) {
		err = rd_key(&r, &field, &wt);
		if (err)
			break;
		switch (field) {
		case F_SAMPLE_LOCATION_ID: err = rd_repeated(&r, wt, &d->tmp_a); break;
		case F_SAMPLE_VALUE: err = rd_repeated(&r, wt, &d->tmp_b); break;
		case F_SAMPLE_LABEL:
			err = rd_msg(&r, wt, &ls);
			if (err)
				break;
			xgrow((void **)&d->labels, &d->cap_labels, nlabels + 1, sizeof(*d->labels));
			err = dec_label(d, ls, &d->labels[nlabels]);
			nlabels++;
			break;
		default: err = rd_skip(&r, wt); break;
		}
	}
	if (err)
		return err;
	/* profile.proto: every sample has exactly one value per sample type. */
	if (d->tmp_b.n != ntypes)
		return -EBADMSG;
	for (size_t i = 0; i < d->tmp_a.n; i++) {
		uint64_t lid = idmap_get(&d->locs, d->tmp_a.v[i]);

		if (!lid)
			return -EBADMSG;
		d->tmp_a.v[i] = lid;
	}
	int64_t vals[PROF_MAX_VALUES] = {0};
	for (size_t i = 0; i < ntypes; i++)
		vals[i] = (int64_t)d->tmp_b.v[i];
	prof_add_sample(d->p, d->tmp_a.v, d->tmp_a.n, vals, d->labels, nlabels);
	return 0;
}

/* The top-level fields of a Profile message (profile.proto), gathered before any is
 * decoded: the string table and the tables that samples refer to may come in any order. */
struct profile_fields {
	struct spanvec strs, types, samples, maps, locs, funcs;
	struct u64vec comments;
	struct span period_type;
	bool have_period_type;
	uint64_t time_nanos, duration_nanos, period, default_type;
};

static void profile_fields_free(struct profile_fields *f)
{
	free(f->strs.v);
	free(f->types.v);
	free(f->samples.v);
	free(f->maps.v);
	free(f->locs.v);
	free(f->funcs.v);
	free(f->comments.v);
}

/* One pass over the message, a flat switch on the field number: the message fields are
 * kept as spans, the scalars as they come (the last one wins, as in protobuf). */
static int dec_profile_fields(const uint8_t *buf, size_t len, struct profile_fields *f)
{
	struct rd r = {buf, buf + len};
	struct span s;
	uint64_t ignored;
	uint32_t field, wt;
	int err = 0;

	while (!err && r.p < r.end) {
		err = rd_key(&r, &field, &wt);
		if (err)
			break;
		switch (field) {
		case F_PROFILE_SAMPLE_TYPE:
		case F_PROFILE_SAMPLE:
		case F_PROFILE_MAPPING:
		case F_PROFILE_LOCATION:
		case F_PROFILE_FUNCTION:
		case F_PROFILE_STRING_TABLE:
			err = rd_msg(&r, wt, &s);
			if (err)
				break;
			span_push(field == F_PROFILE_SAMPLE_TYPE ? &f->types :
				  field == F_PROFILE_SAMPLE ? &f->samples :
				  field == F_PROFILE_MAPPING ? &f->maps :
				  field == F_PROFILE_LOCATION ? &f->locs :
				  field == F_PROFILE_FUNCTION ? &f->funcs : &f->strs, s);
			break;
		case F_PROFILE_PERIOD_TYPE:
			err = rd_msg(&r, wt, &f->period_type); /* the last one wins */
			f->have_period_type = true;
			break;
		case F_PROFILE_DROP_FRAMES:
		case F_PROFILE_KEEP_FRAMES: err = rd_scalar(&r, wt, &ignored); break;
		case F_PROFILE_TIME_NANOS: err = rd_scalar(&r, wt, &f->time_nanos); break;
		case F_PROFILE_DURATION_NANOS: err = rd_scalar(&r, wt, &f->duration_nanos); break;
		case F_PROFILE_PERIOD: err = rd_scalar(&r, wt, &f->period); break;
		case F_PROFILE_COMMENT: err = rd_repeated(&r, wt, &f->comments); break;
		case F_PROFILE_DEFAULT_SAMPLE_TYPE: err = rd_scalar(&r, wt, &f->default_type); break;
		default: err = rd_skip(&r, wt); break;
		}
	}
	return err;
}

/* The tables, each after those it refers to: strings, sample types, mappings, functions
 * (names are strings), locations (mappings, functions), samples (locations). */
static int dec_profile_tables(struct decoder *d, const struct profile_fields *f)
{
	struct prof_value_type vt[PROF_MAX_VALUES];
	int err;

	/* profile.proto: "string_table[0] must always be """. */
	if (f->strs.n == 0 || f->strs.v[0].n != 0)
		return -EBADMSG;
	d->nstr = f->strs.n;
	d->smap = xmalloc(f->strs.n * sizeof(*d->smap));
	for (size_t i = 0; i < f->strs.n; i++)
		d->smap[i] = prof_strn(d->p, (const char *)f->strs.v[i].p, f->strs.v[i].n);

	if (f->types.n > PROF_MAX_VALUES)
		return -EOVERFLOW;
	for (size_t i = 0; i < f->types.n; i++)
		if ((err = dec_value_type(d, f->types.v[i], &vt[i])))
			return err;
	prof_set_sample_types(d->p, vt, f->types.n);

	for (size_t i = 0; i < f->maps.n; i++)
		if ((err = dec_mapping(d, f->maps.v[i])))
			return err;
	if ((err = idmap_seal(&d->maps)))
		return err;
	for (size_t i = 0; i < f->funcs.n; i++)
		if ((err = dec_function(d, f->funcs.v[i])))
			return err;
	if ((err = idmap_seal(&d->funcs)))
		return err;
	for (size_t i = 0; i < f->locs.n; i++)
		if ((err = dec_location(d, f->locs.v[i])))
			return err;
	if ((err = idmap_seal(&d->locs)))
		return err;
	for (size_t i = 0; i < f->samples.n; i++)
		if ((err = dec_sample(d, f->samples.v[i], f->types.n)))
			return err;
	return 0;
}

/* The profile-wide fields, once the string table is known: period, times, comments and
 * the default sample type. */
static int dec_profile_rest(struct decoder *d, const struct profile_fields *f)
{
	uint32_t dt;

	if (f->have_period_type) {
		struct prof_value_type pt;
		int err;

		if ((err = dec_value_type(d, f->period_type, &pt)))
			return err;
		prof_set_period(d->p, pt, (int64_t)f->period);
	} else {
		prof_set_period(d->p, (struct prof_value_type){0, 0}, (int64_t)f->period);
	}
	prof_set_time(d->p, (int64_t)f->time_nanos, (int64_t)f->duration_nanos);
	for (size_t i = 0; i < f->comments.n; i++) {
		uint32_t c;

		if (dec_str(d, f->comments.v[i], &c))
			return -EBADMSG;
		/* prof_add_comment takes a C string: a comment holding NUL is cut there. */
		prof_add_comment(d->p, prof_string(d->p, c, NULL));
	}
	if (dec_str(d, f->default_type, &dt))
		return -EBADMSG;
	prof_set_default_sample_type(d->p, dt);
	return 0;
}

/* The top level: fields are gathered first (dec_profile_fields), then decoded in the
 * order they refer to each other. */
static int dec_profile(struct decoder *d, const uint8_t *buf, size_t len)
{
	struct profile_fields f;
	int err;

	memset(&f, 0, sizeof(f));
	err = dec_profile_fields(buf, len, &f);
	if (!err)
		err = dec_profile_tables(d, &f);
	if (!err)
		err = dec_profile_rest(d, &f);
	profile_fields_free(&f);
	return err;
}

/* Inflates a gzip stream (several members allowed, as gzip(1) writes them) into a
 * new buffer of at most PPROF_MAX_DECODED bytes. windowBits 15 + 16: gzip only. */
static int gunzip(const uint8_t *in, size_t inlen, uint8_t **outp, size_t *outlen)
{
	z_stream z;
	size_t cap = inlen < (1u << 20) ? (1u << 20) :
		     inlen > PPROF_MAX_DECODED / 4 ? PPROF_MAX_DECODED : inlen * 4;
	size_t len = 0;
	uint8_t *out;
	int zr, err = 0;

	if (cap > PPROF_MAX_DECODED)
		cap = PPROF_MAX_DECODED;
	out = xmalloc(cap);
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 15 + 16) != Z_OK) {
		free(out);
		return -ENOMEM;
	}
	const uint8_t *ip = in;
	size_t ileft = inlen;
	for (;;) {
		if (len == cap) {
			if (cap >= PPROF_MAX_DECODED) {
				err = -EOVERFLOW;
				break;
			}
			cap = GP_MIN(cap * 2, PPROF_MAX_DECODED);
			out = xrealloc(out, cap);
		}
		uInt ichunk = ileft > (1u << 30) ? (1u << 30) : (uInt)ileft;
		size_t ospace = cap - len;
		uInt ochunk = ospace > (1u << 30) ? (1u << 30) : (uInt)ospace;

		z.next_in = (Bytef *)ip;
		z.avail_in = ichunk;
		z.next_out = out + len;
		z.avail_out = ochunk;
		zr = inflate(&z, Z_NO_FLUSH);
		ip += ichunk - z.avail_in;
		ileft -= ichunk - z.avail_in;
		len += ochunk - z.avail_out;
		if (zr == Z_STREAM_END) {
			if (ileft == 0)
				break;
			/* Another member must follow; anything else is garbage. */
			if (ileft < 2 || ip[0] != 0x1f || ip[1] != 0x8b) {
				err = -EBADMSG;
				break;
			}
			inflateReset(&z);
			continue;
		}
		if (zr == Z_OK)
			continue;
		if (zr == Z_BUF_ERROR && z.avail_out == 0)
			continue; /* output full: grow */
		err = zr == Z_MEM_ERROR ? -ENOMEM : -EBADMSG; /* corrupt or truncated */
		break;
	}
	inflateEnd(&z);
	if (err) {
		free(out);
		return err;
	}
	*outp = out;
	*outlen = len;
	return 0;
}

struct prof *pprof_decode(const uint8_t *buf, size_t len)
{
	uint8_t *raw = NULL;
	struct decoder d;
	int err;

	if (!buf && len) {
		errno = EINVAL;
		return NULL;
	}
	/* gzip magic: RFC 1952 section 2.3.1 (ID1 = 31, ID2 = 139). */
	if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
		err = gunzip(buf, len, &raw, &len);
		if (err) {
			errno = -err;
			return NULL;
		}
		buf = raw;
	} else if (len > PPROF_MAX_DECODED) {
		errno = EOVERFLOW;
		return NULL;
	}
	memset(&d, 0, sizeof(d));
	d.p = prof_new();
	err = dec_profile(&d, buf, len);
	free(d.smap);
	free(d.maps.v);
	free(d.funcs.v);
	free(d.locs.v);
	free(d.tmp_a.v);
	free(d.tmp_b.v);
	free(d.lines);
	free(d.labels);
	free(raw);
	if (err) {
		prof_free(d.p);
		errno = -err;
		return NULL;
	}
	return d.p;
}

struct prof *pprof_read_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	int err = 0;

	if (fd < 0)
		return NULL;
	/* Up to one byte past the limit, to tell "exactly the limit" from "more". */
	const size_t limit = PPROF_MAX_DECODED + 1;
	for (;;) {
		if (len == limit) {
			err = EOVERFLOW;
			break;
		}
		if (len == cap)
			xgrow((void **)&buf, &cap, len + (1u << 16), 1);
		ssize_t r = read(fd, buf + len, GP_MIN(cap, limit) - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			break;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	if (err) {
		free(buf);
		errno = err;
		return NULL;
	}
	struct prof *p = pprof_decode(buf, len);
	err = errno;
	free(buf);
	errno = err;
	return p;
}
