// gospin.go: CPU-bound Go benchmark workload: a fixed amount of labelled work, started by
// SIGUSR1, reporting its own wall and CPU time.
//
// Usage: gospin [-n UNITS] [-workers N] [-warm UNITS] [-w]
//
//	-n UNITS     work units in all (default 1000)
//	-workers N   goroutines sharing the units (default 1)
//	-warm UNITS  untimed warm-up units first (default 0)
//	-w           wait for SIGUSR1 before starting (so a profiler can attach first)
//
// Prints one line: "units=N wall=SECONDS cpu=SECONDS" (cpu = utime+stime of the process
// during the work, from getrusage). Each unit runs inside pprof.Do with a handler label
// (alpha, beta, gamma in turn) and goes main.worker -> main.outer -> main.mid ->
// main.leaf, where main.leaf is a frameless leaf: frame-pointer walks that land in it miss
// main.mid, which is what gotop-perf's repair puts back.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"
)

var sink uint64

//go:noinline
func leaf(x uint64, n int) uint64 {
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

//go:noinline
func mid(x uint64) uint64 {
	for i := 0; i < 100; i++ {
		x = leaf(x+uint64(i), 1000)
	}
	return x
}

//go:noinline
func outer(x uint64) uint64 {
	x = mid(x)
	return mid(x ^ 0x9e3779b97f4a7c15)
}

var handlers = []string{"alpha", "beta", "gamma"}

func worker(id, units int, wg *sync.WaitGroup) {
	defer wg.Done()
	x := uint64(id)*0x2545f4914f6cdd1d + 1
	for u := 0; u < units; u++ {
		labels := pprof.Labels("handler", handlers[u%3], "worker", fmt.Sprint(id))
		pprof.Do(context.Background(), labels, func(context.Context) {
			x = outer(x)
		})
	}
	sink += x
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

func main() {
	units := flag.Int("n", 1000, "work units in all")
	workers := flag.Int("workers", 1, "goroutines sharing the units")
	wait := flag.Bool("w", false, "wait for SIGUSR1 before starting")
	warm := flag.Int("warm", 0, "untimed warm-up units first")
	flag.Parse()
	if *units < 1 || *workers < 1 || *workers > 64 || *warm < 0 {
		fmt.Fprintln(os.Stderr, "gospin: bad -n or -workers")
		os.Exit(2)
	}
	if *wait {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGUSR1)
		fmt.Println("ready")
		<-ch
	}
	if *warm > 0 {
		var wg sync.WaitGroup
		wg.Add(1)
		worker(0, *warm, &wg)
	}
	per := (*units + *workers - 1) / *workers
	start := time.Now()
	c0 := cpuSeconds()
	var wg sync.WaitGroup
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go worker(w, per, &wg)
	}
	wg.Wait()
	fmt.Printf("units=%d wall=%.6f cpu=%.6f\n", per**workers, time.Since(start).Seconds(), cpuSeconds()-c0)
}
