// memleak: a heap that grows at a known rate, for the live memory views and
// `record --heap-every`. main.leak keeps 8 KiB more every millisecond (about 8 MiB a
// second, in 128-byte objects) and never lets go of it; main.churn allocates as much and
// drops it. runtime.MemProfileRate is set to 4096 so that the sampled figures are near
// the true ones. Each object is one allocation of 128 bytes (a list node: no slice to grow),
// so what main.leak allocates is what it counts, and runtime.GC runs every 200 ms so that the runtime publishes the heap
// profile several times a second.
//
// Usage: memleak [-d 60s]
//
// It prints "ready PID", then leaks until -d, and prints "leaked BYTES NANOSECONDS" every
// second: the bytes main.leak has kept so far and the time (Unix) of the count, the
// oracle of the allocation rate a profiler shows for it.
//
// Only APIs present in Go 1.19 are used.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	_ "runtime/pprof"
	"time"
)

type node struct {
	next *node
	buf  [120]byte
}

var (
	kept   *node
	sink   *node
	leaked int64
)

//go:noinline
func leak() {
	for i := 0; i < 64; i++ {
		kept = &node{next: kept}
	}
	leaked += 64 * 128
}

//go:noinline
func churn() {
	for i := 0; i < 64; i++ {
		sink = &node{}
	}
}

func main() {
	d := flag.Duration("d", 60*time.Second, "how long to run")
	flag.Parse()
	runtime.MemProfileRate = 4096
	fmt.Printf("ready %d\n", os.Getpid())
	until := time.Now().Add(*d)
	last, said := time.Now(), time.Now()
	for time.Now().Before(until) {
		if time.Since(said) >= time.Second {
			said = time.Now()
			fmt.Printf("leaked %d %d\n", leaked, said.UnixNano())
		}
		leak()
		churn()
		time.Sleep(time.Millisecond)
		if time.Since(last) >= 200*time.Millisecond {
			runtime.GC()
			last = time.Now()
		}
	}
}
