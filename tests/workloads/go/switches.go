// switches: Go code whose CPU time runs on other stacks than the goroutine's: stack growth
// (runtime.morestack -> newstack -> copystack on the thread's g0 stack), large allocations
// (runtime.systemstack into the heap), cgo calls (runtime.asmcgocall: C on g0, the C built
// without frame pointers as distributions build libraries) and a C -> Go callback
// (crosscall2, runtime.cgocallback).
//
// Four goroutines, each under its own pprof label role=...:
//   - grow:     starts a goroutine that recurses main.growDeep 2000 levels deep with a
//               256-byte frame (the stack grows from 8 KB to 1 MB by copies), spins in
//               main.growSpin for a fraction of a millisecond, then exits;
//   - alloc:    allocates and drops 4 MB slices (mheap.alloc runs on g0 via systemstack);
//   - cgo:      main.cgoLoop calls C.c_outer, which spins in c_inner (frameless C);
//   - callback: main.callbackLoop calls C.c_callback, which calls back the Go function
//               goSpin (exported), which spins in main.spinGo.
//
// Usage: switches [-d 3s] [-cpuprofile FILE] [-signals]
//
//	-cpuprofile writes Go's own CPU profile of the run, the reference for a profiler's;
//	-signals starts that profile at SIGUSR1 and stops it and exits at SIGUSR2 (so a
//	profiler attached meanwhile sees the same window), instead of -d.
//
// Built with cgo (tests/helpers/go-build.sh VERSION cgo). Only APIs of Go 1.19 are used.
package main

/*
#cgo CFLAGS: -O2 -fomit-frame-pointer

#include <stdint.h>

extern uint64_t goSpin(uint64_t);

static __attribute__((noinline)) uint64_t c_inner(uint64_t x, int n)
{
	for (int i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

static __attribute__((noinline)) uint64_t c_middle(uint64_t x, int n)
{
	return c_inner(x, n) + 1;
}

static __attribute__((noinline)) uint64_t c_outer(uint64_t x, int n)
{
	return c_middle(x, n) ^ 3;
}

static __attribute__((noinline)) uint64_t c_callback(uint64_t x)
{
	return goSpin(x) + c_inner(x, 1000);
}
*/
import "C"

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"
)

var sink uint64

//go:noinline
func growDeep(n int, x uint64) uint64 {
	var pad [256]byte
	pad[n&255] = byte(x)
	if n == 0 {
		return x + uint64(pad[0])
	}
	return growDeep(n-1, x*31+1) + uint64(pad[n&255])
}

// growSpin runs on the grown stack for a fraction of a millisecond, so that growing
// goroutines also have samples on their own stack (to compare goroutine ids with).
//
//go:noinline
func growSpin(x uint64) uint64 {
	for i := 0; i < 1<<18; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

func growLoop() {
	for {
		done := make(chan uint64)
		go func() { done <- growSpin(growDeep(2000, 7)) }()
		sink += <-done
	}
}

var keep []byte

func allocLoop() {
	for {
		b := make([]byte, 4<<20)
		b[len(b)-1] = 1
		keep = b
	}
}

//go:noinline
func cgoLoop() {
	for {
		sink += uint64(C.c_outer(C.uint64_t(sink|1), 200000))
	}
}

//go:noinline
func spinGo(x uint64) uint64 {
	for i := 0; i < 200000; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

//export goSpin
func goSpin(x C.uint64_t) C.uint64_t {
	return C.uint64_t(spinGo(uint64(x) | 1))
}

//go:noinline
func callbackLoop() {
	for {
		sink += uint64(C.c_callback(C.uint64_t(sink | 1)))
	}
}

func role(name string, f func()) {
	go pprof.Do(context.Background(), pprof.Labels("role", name), func(context.Context) { f() })
}

func main() {
	d := flag.Duration("d", 3*time.Second, "how long to run")
	cpuprofile := flag.String("cpuprofile", "", "write Go's CPU profile to this file")
	signals := flag.Bool("signals", false, "profile from SIGUSR1 to SIGUSR2, then exit")
	flag.Parse()

	role("grow", growLoop)
	role("alloc", allocLoop)
	role("cgo", cgoLoop)
	role("callback", callbackLoop)

	var f *os.File
	start := func() {
		if *cpuprofile == "" {
			return
		}
		var err error
		if f, err = os.Create(*cpuprofile); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err = pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if *signals {
		c := make(chan os.Signal, 2)
		signal.Notify(c, syscall.SIGUSR1, syscall.SIGUSR2)
		fmt.Println("ready")
		for s := range c {
			if s == syscall.SIGUSR1 {
				start()
				continue
			}
			break
		}
	} else {
		start()
		time.Sleep(*d)
	}
	if f != nil {
		pprof.StopCPUProfile()
		f.Close()
	}
}
