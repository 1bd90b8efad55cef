// cppnames: a C++ workload whose hot functions have mangled names of the kinds that
// demangling and the short form must handle: a method in a namespace, a template
// instance, a function in an anonymous namespace, an operator().
//
// Usage: cppnames [SECONDS]   (default 3). Prints nothing.
#include <chrono>
#include <cstdlib>
#include <vector>

volatile unsigned long cppnames_sink;

namespace shop {
class Cart {
public:
	__attribute__((noinline)) unsigned long total(int n) const
	{
		unsigned long x = 1;
		for (int i = 0; i < n; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		return x;
	}
};

template <typename T> __attribute__((noinline)) T accumulate(const std::vector<T> &v, int n)
{
	T s = 0;
	for (int k = 0; k < n; k++)
		for (const T &x : v)
			s = s * 31 + x;
	return s;
}
} // namespace shop

namespace {
struct Spin {
	__attribute__((noinline)) unsigned long operator()(int n) const
	{
		unsigned long x = 7;
		for (int i = 0; i < n; i++)
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		return x;
	}
};
} // namespace

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(secs);
	shop::Cart c;
	std::vector<long> v(64, 3);
	Spin s;

	while (std::chrono::steady_clock::now() < end) {
		cppnames_sink += c.total(200000);
		cppnames_sink += (unsigned long)shop::accumulate(v, 3000);
		cppnames_sink += s(200000);
	}
	return 0;
}
