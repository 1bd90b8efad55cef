/* fname.h: function names for people: C++ demangling and the short form of a name
 * (pprof's shortened names, github.com/google/pprof internal/graph ShortenFunctionName). */
#ifndef GOTOP_FNAME_H
#define GOTOP_FNAME_H

#include <stddef.h>

/* The demangled form of an Itanium C++ ABI name ("_Z..."), from libstdc++'s
 * __cxa_demangle. NULL when name is not a mangled C++ name or does not demangle (errno
 * EINVAL), or out of memory (ENOMEM). Caller frees with free(). */
char *fname_demangle(const char *name, size_t len);

/* Writes the short form of name[0..len) to out (outsz bytes, NUL-terminated, cut at
 * outsz - 1 bytes) and returns its length before any cut. The rules, in order:
 *
 *   pprof's, as ShortenFunctionName applies them:
 *   1. a leading "(anonymous namespace)::" is removed;
 *   2. a major-version element of a Go module path ("/v2" to "/vN" before '.' or '/')
 *      is removed: github.com/foo/bar/v4.(*Foo).Bar is github.com/foo/bar.(*Foo).Bar;
 *   3. Go: everything up to the last '/' of a leading package path (characters
 *      [A-Za-z0-9_.-] and '/') goes: net/http.(*conn).serve is http.(*conn).serve,
 *      github.com/x/y/vendor/gopkg.in/redis.v3.F is redis.v3.F; generics keep their
 *      type arguments (pkg.Map[...]), closures their suffix (pkg.F.func1);
 *   4. Java: lower-case package elements and the argument list go:
 *      java.bar.foo.FooBar.run(java.lang.Runnable) is FooBar.run;
 *   5. C++: namespaces before a capitalized class go, the method and its template
 *      arguments stay: cpp::namespace::Class::method<float> is Class::method<float>.
 *
 *   gotop-perf's, for C++ names (those with "::", or ending in an argument list after a
 *   word: compute(double*, int)) before pprof's rules:
 *   6. the argument list and what follows it (cv-qualifiers) go, and so does the return
 *      type a template function's name starts with: ns::Foo::bar(int, char const*) const
 *      is Foo::bar, long ns::sum<long>(std::vector<long> const&) is ns::sum<long>;
 *   and after them, when rule 5 did not apply:
 *   7. template arguments of the qualifiers are shown as "<>":
 *      std::vector<int, std::allocator<int> >::push_back is std::vector<>::push_back.
 *
 * Never fails; out may be the empty buffer only when outsz is 0. */
size_t fname_short(const char *name, size_t len, char *out, size_t outsz);

/* What a Go function is to someone asking where a goroutine waits, from its name
 * (package path, '.', the rest), the most telling kind first:
 *   FNAME_GO_PROGRAM  the program: package main and every package outside the standard
 *                     library (its module and its dependencies);
 *   FNAME_GO_STD      the standard library, by the first element of its import path (the
 *                     directories of $GOROOT/src of Go 1.19 to 1.27; cmd/go's
 *                     search.IsStandardImportPath is the dot-less rule they follow), but
 *                     not the machinery below;
 *   FNAME_GO_WAIT     the machinery a goroutine parks through on the runtime's behalf:
 *                     internal/poll (the network poller's descriptors), sync and
 *                     internal/sync (mutexes, wait groups, conditions, semaphores),
 *                     syscall and internal/syscall (the system calls a goroutine sits
 *                     in, state syscall),
 *                     reflect.Select and reflect.rselect (select), and the runtime's
 *                     functions Go links under other packages' names (time.Sleep,
 *                     os/signal.signal_recv: runtime/time.go, runtime/sigqueue.go);
 *   FNAME_GO_RUNTIME  what Go's tracebacks hide as the runtime's (runtime/traceback.go
 *                     showfuncinfo: a name without '.', or "runtime." and not exported:
 *                     runtime.gopark, runtime.selectgo, runtime.goexit), and the
 *                     runtime's own packages (runtime/internal/..., internal/runtime/...).
 * Exported runtime functions (runtime.Gosched, runtime.GC) are what the program called:
 * FNAME_GO_STD, as Go's tracebacks show them. */
enum fname_go_kind { FNAME_GO_RUNTIME, FNAME_GO_WAIT, FNAME_GO_STD, FNAME_GO_PROGRAM };
enum fname_go_kind fname_go_kind(const char *name, size_t len);

#endif
