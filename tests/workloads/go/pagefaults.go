// pagefaults: two labelled handlers, one whose work is page faults and one whose work is
// CPU, for the group tests (tests/groups.sh): handler=touch maps fresh anonymous memory
// with syscall.Mmap and writes one byte per page (a page fault each, in main.touchPages),
// handler=spin computes (main.spinWork) and touches no new memory. Each runs in turns of
// 40 ms of the thread's CPU time (getrusage RUSAGE_THREAD; the goroutine is locked to its
// thread) under pprof.Do on one goroutine, so the labels are on the goroutine while it
// works and a group member's count since the previous sample (at most 1 ms of CPU at
// 1 kHz) falls in the same handler, whatever the machine's load.
//
// Usage: pagefaults [-d 3s]
package main

import (
	"context"
	"flag"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"
)

var sink uint64

// threadCPU: the calling thread's CPU time (linux getrusage(2), RUSAGE_THREAD is 1).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

//go:noinline
func touchPages(d time.Duration) {
	const pages = 64
	ps := syscall.Getpagesize()
	end := threadCPU() + d
	for threadCPU() < end {
		b, err := syscall.Mmap(-1, 0, pages*ps, syscall.PROT_READ|syscall.PROT_WRITE,
			syscall.MAP_PRIVATE|syscall.MAP_ANON)
		if err != nil {
			return
		}
		for i := 0; i < pages; i++ {
			b[i*ps] = 1
		}
		syscall.Munmap(b)
	}
}

//go:noinline
func spinWork(d time.Duration) {
	end := threadCPU() + d
	acc := sink | 1
	for threadCPU() < end {
		for i := 0; i < 20000; i++ {
			acc = acc*2862933555777941757 + 3037000493
		}
	}
	sink = acc
}

func main() {
	dur := flag.Duration("d", 3*time.Second, "how long to run")
	flag.Parse()
	runtime.LockOSThread()
	end := time.Now().Add(*dur)
	for time.Now().Before(end) {
		pprof.Do(context.Background(), pprof.Labels("handler", "touch"), func(context.Context) {
			touchPages(40 * time.Millisecond)
		})
		pprof.Do(context.Background(), pprof.Labels("handler", "spin"), func(context.Context) {
			spinWork(40 * time.Millisecond)
		})
	}
}
