// gobuckets: a Go program whose heap profile holds N buckets: N distinct allocation stacks,
// every allocation recorded (MemProfileRate 1). A stack is a path through step(), which
// calls itself from ten different call sites (so ten different return addresses) at each
// of five levels and allocates at the end: digit k of i picks the call site at level k, so
// i = 0 .. N-1 (N up to 100,000) are N distinct stacks. Then a GC cycle publishes the
// profile, and it prints "ready N" and sleeps without allocating; with MS, it instead runs
// a GC cycle every MS milliseconds, allocating again through 100 of its stacks before each,
// so that the runtime publishes a changed profile that often (a busy service).
//
// Usage: gobuckets N [MS]
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"
)

var sink []byte

//go:noinline
func step(level, i int) {
	if level == 0 {
		sink = make([]byte, 16)
		return
	}
	d := i % 10
	i /= 10
	switch d {
	case 0:
		step(level-1, i)
	case 1:
		step(level-1, i)
	case 2:
		step(level-1, i)
	case 3:
		step(level-1, i)
	case 4:
		step(level-1, i)
	case 5:
		step(level-1, i)
	case 6:
		step(level-1, i)
	case 7:
		step(level-1, i)
	case 8:
		step(level-1, i)
	default:
		step(level-1, i)
	}
}

// alloc allocates through stack i: one call site, so that the allocations after the start
// count in the buckets made at the start.
//
//go:noinline
func alloc(i int) {
	step(5, i)
}

func main() {
	runtime.MemProfileRate = 1
	n, _ := strconv.Atoi(os.Args[1])
	for i := 0; i < n; i++ {
		alloc(i)
	}
	runtime.GC()
	runtime.GC()
	fmt.Printf("ready %d\n", n)
	os.Stdout.Sync()
	if len(os.Args) < 3 {
		time.Sleep(time.Hour)
		return
	}
	ms, _ := strconv.Atoi(os.Args[2])
	for j := 0; ; j++ {
		for k := 0; k < 100; k++ {
			alloc((j*100 + k) % n)
		}
		runtime.GC()
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
}
