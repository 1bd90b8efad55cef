/* fname.c: C++ demangling (libstdc++'s __cxa_demangle) and the short form of function
 * names. The short form follows the regular expressions of pprof's ShortenFunctionName
 * (github.com/google/pprof internal/graph/graph.go: cppAnonymousPrefixRegExp,
 * goVerRegExp, goRegExp, javaRegExp, cppRegExp, applied in that order, the first of the
 * last three that matches giving the name), matched here by hand: each of them has one
 * way to match, worked out below, and a regex engine would cost more than the names it
 * shortens on every screen row. fname.h lists the rules; tests/test-fname.c checks them
 * against pprof's own test table when Debian's copy of pprof is installed. */
#include "config.h"
#include "gotop/fname.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/util.h"

/* The Itanium C++ ABI's demangler, as libstdc++ exports it (cxxabi.h, extern "C"). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *n, int *status);

char *fname_demangle(const char *name, size_t len)
{
	char *z, *d;
	int status = 0;

	/* Mangled names start with "_Z" (Itanium C++ ABI, "Mangling: <mangled-name>"). */
	if (len < 3 || name[0] != '_' || name[1] != 'Z' || memchr(name, 0, len)) {
		errno = EINVAL;
		return NULL;
	}
	z = malloc(len + 1);
	if (!z) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(z, name, len);
	z[len] = 0;
	d = __cxa_demangle(z, NULL, NULL, &status);
	free(z);
	if (!d || status) {
		free(d);
		errno = status == -1 ? ENOMEM : EINVAL;
		return NULL;
	}
	return d;
}

/* Go's regexp \w: ASCII word characters. */
static int is_w(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static int is_lower(char c)
{
	return c >= 'a' && c <= 'z';
}

/* A working copy of the name; s[0..n). */
struct nm {
	char *s;
	size_t n;
};

static void cut(struct nm *w, size_t at, size_t len)
{
	memmove(w->s + at, w->s + at + len, w->n - at - len);
	w->n -= len;
}

static int starts(const struct nm *w, size_t at, const char *lit)
{
	size_t k = strlen(lit);

	return w->n - at >= k && !memcmp(w->s + at, lit, k);
}

#define ANON "(anonymous namespace)::"

/* Rule 6's return type: a demangled template function starts with it ("long
 * ns::f<long>"): everything up to the last space outside template arguments and
 * parentheses goes, unless
 * that space is part of an operator's name ("operator new", "operator int"). */
static void cpp_cut_return(struct nm *w)
{
	size_t i, sp = 0;
	int depth = 0, found = 0;

	for (i = 0; i < w->n; i++) {
		if (w->s[i] == '<' || w->s[i] == '(')
			depth++; /* "(anonymous namespace)" has a space too */
		else if ((w->s[i] == '>' || w->s[i] == ')') && depth > 0)
			depth--;
		else if (w->s[i] == ' ' && depth == 0) {
			sp = i;
			found = 1;
		}
	}
	if (!found || (sp >= 8 && !memcmp(w->s + sp - 8, "operator", 8)))
		return;
	cut(w, 0, sp + 1);
}

/* Rule 6: the argument list of a C++ name, from the first '(' outside template
 * arguments, lambda braces and brackets that is not part of "(anonymous namespace)" or
 * an operator's name ("operator()"), to the end. */
static void cpp_cut_args(struct nm *w)
{
	size_t i;
	int depth = 0;

	for (i = 0; i < w->n; i++) {
		char c = w->s[i];

		if (starts(w, i, "operator") && (i == 0 || !is_w(w->s[i - 1])) &&
		    (i + 8 >= w->n || !is_w(w->s[i + 8]))) {
			/* The operator's symbol is part of the name: skip it ("operator()",
			 * "operator<<", "operator->"). */
			i += 8;
			if (starts(w, i, "()")) {
				i++;
				continue;
			}
			while (i < w->n && strchr("<>=!+-*/%&|^~[],", w->s[i]))
				i++;
			i--;
			continue;
		}
		if (c == '<' || c == '{' || c == '[') {
			depth++;
		} else if ((c == '>' || c == '}' || c == ']') && depth > 0) {
			depth--;
		} else if (c == '(' && depth == 0) {
			if (starts(w, i, "(anonymous namespace)")) {
				i += strlen("(anonymous namespace)") - 1;
				continue;
			}
			if (i > 0) {
				w->n = i;
				/* "f() const" leaves nothing after the name; a space before the
				 * '(' is none of the name either. */
				while (w->n && w->s[w->n - 1] == ' ')
					w->n--;
				cpp_cut_return(w);
			}
			return;
		}
	}
}

/* Rule 2 (goVerRegExp `^(.*?)/v(?:[2-9]|[1-9][0-9]+)([./].*)$`, replaced by the two
 * groups): the leftmost "/vN" whose N is 2-9 or has two or more digits without a
 * leading zero, followed by '.' or '/', is removed. The digits before the '.' or '/'
 * are all of the run, since [./] is no digit. */
static void go_version(struct nm *w)
{
	size_t i, d;

	for (i = 0; i + 2 < w->n; i++) {
		if (w->s[i] != '/' || w->s[i + 1] != 'v')
			continue;
		for (d = i + 2; d < w->n && is_digit(w->s[d]); d++)
			;
		if (d == i + 2 || d >= w->n || (w->s[d] != '.' && w->s[d] != '/'))
			continue;
		if (d - (i + 2) == 1 ? w->s[i + 2] >= '2' : w->s[i + 2] != '0') {
			cut(w, i, d - i);
			return;
		}
	}
}

/* Rule 3 (goRegExp `^(?:[\w\-\.]+\/)+(.+)`): the greedy repetition takes every
 * non-empty element ending in '/' from the start, as long as a character is left after
 * it. Returns where the name starts, or -1 when it does not match. */
static long go_rule(const struct nm *w)
{
	size_t i, seg = 0;
	long last = -1;

	for (i = 0; i < w->n; i++) {
		char c = w->s[i];

		if (c == '/') {
			if (i == seg)
				break; /* an empty element ends the repetition */
			if (i + 1 < w->n)
				last = (long)i + 1;
			seg = i + 1;
		} else if (!is_w(c) && c != '-' && c != '.') {
			break;
		}
	}
	return last;
}

/* Rule 4 (javaRegExp `^(?:[a-z]\w*\.)*([A-Z][\w\$]*\.(?:<init>|[a-z][\w\$]*(?:\$\d+)?))
 * (?:(?:\()|$)`): the package elements start lower-case and are words, so the
 * repetition takes all of them; then a capitalized class, '.', and "<init>" or a method
 * ([\w$]* takes a "$N" suffix too), which must end the name or meet '('. Sets *start
 * and *end of the group; 0, or -1 when it does not match. */
static int java_rule(const struct nm *w, size_t *start, size_t *end)
{
	size_t i = 0, j;

	for (;;) {
		if (i >= w->n || !is_lower(w->s[i]))
			break;
		for (j = i + 1; j < w->n && is_w(w->s[j]); j++)
			;
		if (j >= w->n || w->s[j] != '.')
			break;
		i = j + 1;
	}
	if (i >= w->n || !is_upper(w->s[i]))
		return -1;
	for (j = i + 1; j < w->n && (is_w(w->s[j]) || w->s[j] == '$'); j++)
		;
	if (j >= w->n || w->s[j] != '.')
		return -1;
	j++;
	if (starts(w, j, "<init>")) {
		j += 6;
	} else {
		if (j >= w->n || !is_lower(w->s[j]))
			return -1;
		for (j++; j < w->n && (is_w(w->s[j]) || w->s[j] == '$'); j++)
			;
	}
	if (j < w->n && w->s[j] != '(')
		return -1;
	*start = i;
	*end = j;
	return 0;
}

/* Rule 5 (cppRegExp `^(?:[_a-zA-Z]\w*::)+(_*[A-Z]\w*::~?[_a-zA-Z]\w*(?:<.*>)?)`): the
 * elements "word::" from the start; the group begins at the last element but one from
 * which it matches (the repetition is greedy and backs off one element at a time),
 * after at least one element: a capitalized word (after underscores), "::", a method
 * (optionally a destructor), and, when '<' follows, everything to the last '>' of the
 * name. 0 with *start and *end, or -1. */
static int cpp_rule(const struct nm *w, size_t *start, size_t *end)
{
	size_t seg[256], nseg = 0, i = 0, j;
	long k;

	/* Element starts: s[seg[k]..] is "word::" for k < nseg - 1; seg[nseg - 1] is
	 * where the elements end. */
	for (;;) {
		if (nseg == sizeof(seg) / sizeof(seg[0]))
			return -1;
		seg[nseg++] = i;
		if (i >= w->n || !(is_w(w->s[i]) && !is_digit(w->s[i])))
			break;
		for (j = i + 1; j < w->n && is_w(w->s[j]); j++)
			;
		if (!starts(w, j, "::"))
			break;
		i = j + 2;
	}
	for (k = (long)nseg - 2; k >= 1; k--) {
		size_t p = seg[k], q;

		while (p < w->n && w->s[p] == '_')
			p++;
		if (p >= w->n || !is_upper(w->s[p]))
			continue;
		for (q = p + 1; q < w->n && is_w(w->s[q]); q++)
			;
		if (!starts(w, q, "::"))
			continue;
		q += 2;
		if (q < w->n && w->s[q] == '~')
			q++;
		if (q >= w->n || !(is_w(w->s[q]) && !is_digit(w->s[q])))
			continue;
		for (q++; q < w->n && is_w(w->s[q]); q++)
			;
		if (q < w->n && w->s[q] == '<') {
			size_t r = w->n;

			while (r > q + 1 && w->s[r - 1] != '>')
				r--;
			if (r > q + 1)
				q = r;
		}
		*start = seg[k];
		*end = q;
		return 0;
	}
	return -1;
}

/* Rule 7: template arguments of the qualifiers (before the last "::" outside them)
 * become "<>". */
static void cpp_templates(struct nm *w)
{
	size_t i, last = 0, open = 0;
	int depth = 0;

	for (i = 0; i + 1 < w->n; i++) {
		if (w->s[i] == '<')
			depth++;
		else if (w->s[i] == '>' && depth > 0)
			depth--;
		else if (depth == 0 && w->s[i] == ':' && w->s[i + 1] == ':')
			last = i;
	}
	depth = 0;
	for (i = 0; i < last; i++) {
		if (w->s[i] == '<') {
			if (!depth++)
				open = i;
		} else if (w->s[i] == '>' && depth > 0 && !--depth) {
			size_t len = i - open - 1;

			cut(w, open + 1, len);
			last -= len;
			i = open + 1;
		}
	}
}

size_t fname_short(const char *name, size_t len, char *out, size_t outsz)
{
	struct nm w;
	size_t start = 0, end, k;
	long g;
	int cpp = 0, done = 0;

	w.s = malloc(len ? len : 1);
	if (!w.s) {
		/* No room for a copy: the full name is a faithful short form. */
		k = len < outsz ? len : outsz ? outsz - 1 : 0;
		memcpy(out, name, k);
		if (outsz)
			out[k] = 0;
		return len;
	}
	memcpy(w.s, name, len);
	w.n = len;
	end = w.n;
	/* C++: a qualified name, or a demangled function with its arguments. */
	for (k = 0; k + 1 < w.n && !cpp; k++)
		cpp = w.s[k] == ':' && w.s[k + 1] == ':';
	if (!cpp && w.n && w.s[w.n - 1] == ')') {
		const char *p = memchr(w.s, '(', w.n);

		cpp = p && p > w.s && is_w(p[-1]);
	}
	if (starts(&w, 0, ANON))
		cut(&w, 0, strlen(ANON));
	if (cpp)
		cpp_cut_args(&w);
	go_version(&w);
	end = w.n;
	if ((g = go_rule(&w)) >= 0) {
		start = (size_t)g;
		done = 1;
	} else if (!java_rule(&w, &start, &end) || !cpp_rule(&w, &start, &end)) {
		done = 1;
	}
	if (!done && cpp) {
		cpp_templates(&w);
		end = w.n;
	}
	k = end - start;
	if (outsz) {
		size_t c = k < outsz ? k : outsz - 1;

		memcpy(out, w.s + start, c);
		out[c] = 0;
	}
	free(w.s);
	return k;
}

/* The first elements of the standard library's import paths: the package directories of
 * $GOROOT/src in Go 1.19 to 1.27 (cmd and testdata hold no package of a program). */
static const char *const std_roots[] = {
	"archive", "arena", "bufio", "bytes", "cmp", "compress", "container", "context", "crypto",
	"database", "debug", "embed", "encoding", "errors", "expvar", "flag", "fmt", "go", "hash",
	"html", "image", "index", "internal", "io", "iter", "log", "maps", "math", "mime", "net",
	"os", "path", "plugin", "reflect", "regexp", "runtime", "simd", "slices", "sort",
	"strconv", "strings", "structs", "sync", "syscall", "testing", "text", "time", "unicode",
	"unique", "unsafe", "uuid", "vendor", "weak",
};

static int has_prefix(const char *s, size_t len, const char *p)
{
	size_t n = strlen(p);

	return len >= n && !memcmp(s, p, n);
}

static int is_name(const char *s, size_t len, const char *p)
{
	return len == strlen(p) && !memcmp(s, p, len);
}

/* runtime/traceback.go isExportedRuntime: "runtime." then an upper-case name, or a
 * receiver type's exported method (runtime.(*Func).Entry): the part after the last '.'
 * starts upper-case, and so does the receiver's type. */
static int exported_runtime(const char *s, size_t len)
{
	size_t i = len, r;

	if (!has_prefix(s, len, "runtime."))
		return 0;
	s += 8;
	len -= 8;
	for (i = len; i > 0 && s[i - 1] != '.'; i--)
		;
	if (i == len || !is_upper(s[i]))
		return 0;
	if (i == 0)
		return 1;
	/* A receiver: "(*T)." or "T." before the name. */
	r = 0;
	if (s[0] == '(' && len > 2 && s[1] == '*')
		r = 2;
	return is_upper(s[r]);
}

enum fname_go_kind fname_go_kind(const char *s, size_t len)
{
	static const char *const wait_pkgs[] = { "internal/poll.", "internal/sync.", "sync.",
						 "syscall.", "internal/syscall/" };
	static const char *const wait_fns[] = { "time.Sleep", "os/signal.signal_recv",
						"reflect.Select", "reflect.rselect" };
	size_t first, i;

	if (!memchr(s, '.', len) || has_prefix(s, len, "type:") || has_prefix(s, len, "go:"))
		return FNAME_GO_RUNTIME; /* C, the linker's own (type:.eq.T, go:buildid) */
	if (has_prefix(s, len, "runtime/internal/") || has_prefix(s, len, "internal/runtime/"))
		return FNAME_GO_RUNTIME;
	if (has_prefix(s, len, "runtime.") && !exported_runtime(s, len) &&
	    !is_name(s, len, "runtime.gopanic"))
		return FNAME_GO_RUNTIME;
	for (i = 0; i < GP_ARRAY_SIZE(wait_pkgs); i++)
		if (has_prefix(s, len, wait_pkgs[i]))
			return FNAME_GO_WAIT;
	for (i = 0; i < GP_ARRAY_SIZE(wait_fns); i++)
		if (is_name(s, len, wait_fns[i]))
			return FNAME_GO_WAIT;
	/* The import path's first element: up to its first '/' or '.'. */
	for (first = 0; first < len && s[first] != '/' && s[first] != '.'; first++)
		;
	if (is_name(s, first, "main") && s[first] == '.')
		return FNAME_GO_PROGRAM;
	/* A first element with a dot is a domain (github.com/...): never the standard
	 * library, whose paths are dot-less. */
	if (s[first] == '.' && memchr(s + first, '/', len - first))
		return FNAME_GO_PROGRAM;
	for (i = 0; i < GP_ARRAY_SIZE(std_roots); i++)
		if (is_name(s, first, std_roots[i]))
			return FNAME_GO_STD;
	return FNAME_GO_PROGRAM;
}
