/* test-fname.c: unit tests for function names (src/symbols/fname.c): short forms against
 * pprof's own test table for ShortenFunctionName (read from Debian's copy of pprof's
 * source), a table of long names pprof's lacks (Go generics, closures, methods, vendored
 * paths, demangled C++), and C++ demangling through libstdc++. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/fname.h"

#define PPROF_GRAPH_TEST \
	"/usr/share/gocode/src/github.com/google/pprof/internal/graph/graph_test.go"

static void check(const char *in, const char *want)
{
	char out[1024];
	size_t n = fname_short(in, strlen(in), out, sizeof(out));

	if (strcmp(out, want) || n != strlen(want))
		fail_msg("short(\"%s\") = \"%s\" (%zu), want \"%s\"", in, out, n, want);
}

/* Every {"name", "want"} pair of pprof's TestShortenFunctionName, the oracle: pprof's
 * own expectations, not ours. The table's strings hold no escapes. */
static void test_pprof_table(void **state)
{
	FILE *f = fopen(PPROF_GRAPH_TEST, "r");
	char line[4096], *strs[256];
	size_t n = 0, i;
	int in = 0;

	(void)state;
	if (!f) {
		print_message("# SKIP %s not installed (golang-github-google-pprof-dev)\n",
			      PPROF_GRAPH_TEST);
		skip();
	}
	while (fgets(line, sizeof(line), f)) {
		char *q, *e;

		if (strstr(line, "func TestShortenFunctionName"))
			in = 1;
		else if (in && strstr(line, "for _, tc := range"))
			break;
		if (!in || !(q = strchr(line, '"')) || !(e = strrchr(line, '"')) || e == q)
			continue;
		assert_true(n < 256);
		strs[n++] = strndup(q + 1, (size_t)(e - q - 1));
	}
	fclose(f);
	/* pprof's table has 27 cases, 54 strings; fewer means it was not parsed. */
	assert_true(n >= 40 && n % 2 == 0);
	for (i = 0; i < n; i += 2)
		check(strs[i], strs[i + 1]);
	for (i = 0; i < n; i++)
		free(strs[i]);
}

static void test_go_names(void **state)
{
	static const char *const t[][2] = {
		{ "github.com/prometheus/prometheus/promql.(*evaluator).eval",
		  "promql.(*evaluator).eval" },
		{ "github.com/prometheus/prometheus/promql.(*evaluator).matrixIterSlice",
		  "promql.(*evaluator).matrixIterSlice" },
		{ "runtime.mallocgc", "runtime.mallocgc" },
		{ "main.main.func1", "main.main.func1" },
		{ "net/http.(*Server).Serve.func3", "http.(*Server).Serve.func3" },
		{ "github.com/a/b.(*T).Run.func2.1", "b.(*T).Run.func2.1" },
		/* generics: Go 1.18+ names carry [...] (runtime/symtab.go funcNameForPrint) */
		{ "golang.org/x/exp/slices.SortFunc[...]", "slices.SortFunc[...]" },
		{ "github.com/x/y/v2/cache.(*LRU[...]).Get", "cache.(*LRU[...]).Get" },
		{ "main.Map[go.shape.int,go.shape.string]", "main.Map[go.shape.int,go.shape.string]" },
		{ "github.com/x/kv.Tree[github.com/x/kv.Key].Put",
		  "kv.Tree[github.com/x/kv.Key].Put" },
		/* vendored and versioned paths */
		{ "github.com/x/app/vendor/golang.org/x/net/http2.(*Framer).ReadFrame",
		  "http2.(*Framer).ReadFrame" },
		{ "gopkg.in/yaml.v3.(*parser).parse", "yaml.v3.(*parser).parse" },
		{ "k8s.io/client-go/v12/tools.F", "tools.F" },
		{ "github.com/x/y/v0/z.F", "z.F" },
		{ "type:.eq.main.T", "type:.eq.main.T" },
		{ "", "" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		check(t[i][0], t[i][1]);
}

static void test_cpp_names(void **state)
{
	static const char *const t[][2] = {
		{ "ns::Foo::bar(int, char const*) const", "Foo::bar" },
		{ "std::vector<int, std::allocator<int> >::push_back(int const&)",
		  "std::vector<>::push_back" },
		{ "std::_Rb_tree<int, int, std::_Identity<int>, std::less<int>, "
		  "std::allocator<int> >::_M_insert_unique(int const&)",
		  "std::_Rb_tree<>::_M_insert_unique" },
		{ "app::Server::handle<Req>(Req&&)", "Server::handle<Req>" },
		{ "(anonymous namespace)::Worker::run()", "Worker::run" },
		{ "outer::(anonymous namespace)::helper(int)", "outer::(anonymous namespace)::helper" },
		{ "Foo::operator()(int)", "Foo::operator()" },
		{ "main", "main" },
		{ "compute(double*, int)", "compute" },
		/* as tests/workloads/cppnames.cpp's functions demangle */
		{ "long shop::accumulate<long>(std::vector<long, std::allocator<long> > const&, int)",
		  "shop::accumulate<long>" },
		{ "(anonymous namespace)::Spin::operator()(int) const", "Spin::operator()" },
		{ "shop::Cart::total(int) const", "Cart::total" },
		/* pprof's rule 5 takes a word after the class: "operator new" loses "new" */
		{ "ns::Buf::operator new(unsigned long)", "Buf::operator" },
		{ "ns::run()::{lambda(int)#1}::operator()(int) const",
		  "ns::run" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		check(t[i][0], t[i][1]);
}

static void test_cut(void **state)
{
	const char *in = "github.com/prometheus/prometheus/promql.(*evaluator).eval";
	char out[8];

	(void)state;
	assert_int_equal(fname_short(in, strlen(in), out, sizeof(out)), strlen("promql.(*evaluator).eval"));
	assert_string_equal(out, "promql.");
	assert_int_equal(fname_short(in, strlen(in), NULL, 0), strlen("promql.(*evaluator).eval"));
}

static void test_demangle(void **state)
{
	static const char *const t[][2] = {
		{ "_ZN2ns3Foo3barEiPKc", "ns::Foo::bar(int, char const*)" },
		{ "_ZNSt6vectorIiSaIiEE9push_backERKi",
		  "std::vector<int, std::allocator<int> >::push_back(int const&)" },
		{ "_Z7computePdi", "compute(double*, int)" },
	};
	char *d;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		d = fname_demangle(t[i][0], strlen(t[i][0]));
		assert_non_null(d);
		assert_string_equal(d, t[i][1]);
		free(d);
	}
	assert_null(fname_demangle("main.main", 9));
	assert_null(fname_demangle("_Zgarbage!!", 11));
	assert_null(fname_demangle("_Z7compute\0di", 13));
}

/* The kinds of Go functions, for where a goroutine waits: names as Go's own goroutine
 * dumps print them (net/http and Prometheus services, Go 1.19 to 1.27). */
static void test_go_kind(void **state)
{
	static const struct {
		const char *name;
		enum fname_go_kind kind;
	} t[] = {
		/* runtime/traceback.go showfuncinfo hides these */
		{ "runtime.gopark", FNAME_GO_RUNTIME },
		{ "runtime.selectgo", FNAME_GO_RUNTIME },
		{ "runtime.goexit", FNAME_GO_RUNTIME },
		{ "runtime.netpollblock", FNAME_GO_RUNTIME },
		{ "runtime.gcBgMarkWorker", FNAME_GO_RUNTIME },
		{ "runtime.(*mheap).alloc", FNAME_GO_RUNTIME },
		{ "internal/runtime/syscall.Syscall6", FNAME_GO_RUNTIME },
		{ "runtime/internal/syscall.Syscall6", FNAME_GO_RUNTIME },
		{ "_cgo_topofstack", FNAME_GO_RUNTIME },
		{ "[running]", FNAME_GO_RUNTIME },
		{ "type:.eq.[2]interface {}", FNAME_GO_RUNTIME },
		/* ... and shows these: exported, or gopanic */
		{ "runtime.Gosched", FNAME_GO_STD },
		{ "runtime.(*Func).Name", FNAME_GO_STD },
		{ "runtime.gopanic", FNAME_GO_STD },
		/* the machinery of parking */
		{ "internal/poll.runtime_pollWait", FNAME_GO_WAIT },
		{ "internal/poll.(*FD).Read", FNAME_GO_WAIT },
		{ "internal/sync.(*Mutex).lockSlow", FNAME_GO_WAIT },
		{ "sync.runtime_SemacquireWaitGroup", FNAME_GO_WAIT },
		{ "sync.(*WaitGroup).Wait", FNAME_GO_WAIT },
		{ "sync.(*Cond).Wait", FNAME_GO_WAIT },
		{ "time.Sleep", FNAME_GO_WAIT },
		{ "os/signal.signal_recv", FNAME_GO_WAIT },
		{ "reflect.rselect", FNAME_GO_WAIT },
		{ "syscall.Syscall", FNAME_GO_WAIT },
		{ "syscall.read", FNAME_GO_WAIT },
		{ "internal/syscall/unix.Fcntl", FNAME_GO_WAIT },
		/* the standard library */
		{ "net.(*netFD).Read", FNAME_GO_STD },
		{ "net/http.(*conn).serve", FNAME_GO_STD },
		{ "bufio.(*Reader).fill", FNAME_GO_STD },
		{ "time.(*Timer).Stop", FNAME_GO_STD },
		{ "sync/atomic.(*Int64).Add", FNAME_GO_STD },
		{ "os/signal.loop", FNAME_GO_STD },
		{ "vendor/golang.org/x/net/http2/hpack.(*Decoder).Write", FNAME_GO_STD },
		{ "context.(*cancelCtx).propagateCancel.func2", FNAME_GO_STD },
		/* the program and its dependencies */
		{ "main.main", FNAME_GO_PROGRAM },
		{ "main.main.func8", FNAME_GO_PROGRAM },
		{ "main.(*server).handle", FNAME_GO_PROGRAM },
		{ "github.com/prometheus/prometheus/discovery.(*Manager).Run", FNAME_GO_PROGRAM },
		{ "github.com/oklog/run.(*Group).Run.func1", FNAME_GO_PROGRAM },
		{ "golang.org/x/sync/errgroup.(*Group).Go.func1", FNAME_GO_PROGRAM },
		{ "gopkg.in/yaml.v3.Unmarshal", FNAME_GO_PROGRAM },
		{ "myservice/internal/store.(*DB).Query", FNAME_GO_PROGRAM },
		{ "mainly.F", FNAME_GO_PROGRAM },
		{ "netx.Dial", FNAME_GO_PROGRAM },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		enum fname_go_kind k = fname_go_kind(t[i].name, strlen(t[i].name));

		if (k != t[i].kind)
			fail_msg("%s: kind %d, want %d", t[i].name, (int)k, (int)t[i].kind);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pprof_table),
		cmocka_unit_test(test_go_names),
		cmocka_unit_test(test_cpp_names),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_go_kind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
