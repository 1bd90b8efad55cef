// gomany: N goroutines parked in a channel receive 8 calls deep, half of them under pprof
// labels, and one goroutine counting loop iterations (the work rate bench/gosnap.sh compares
// with and without snapshots). Usage: gomany N [UNITS | chunks SECONDS]
// Prints "ready" when every goroutine is parked, then every second "rate ITERATIONS".
// With UNITS: fixed work instead. After "ready" it waits for SIGUSR1, then one goroutine
// counts UNITS units (GOMAXPROCS as the machine's), prints
// "done WALL_NS WORKER_CPU_NS PROCESS_CPU_NS" and the program exits.
// With "chunks SECONDS" (bench/goroutines-slowdown.sh): after SIGUSR1, one goroutine locked
// to its thread works in chunks of 10,000 units for SECONDS or until the next SIGUSR1, then
// prints a line "chunk START_NS END_NS CPU_NS" per chunk (wall clock, Unix ns; the thread's
// CPU time, CLOCK_THREAD_CPUTIME_ID) and exits.
// GOMANY_GC_MS=M runs a garbage collection every M ms: every label set a reader cached may
// then have been freed, so each snapshot after one proves the sets again (bench/gosnap.sh).
// GOMANY_BUCKETS=K records every allocation (MemProfileRate 1) and first allocates through
// K distinct stacks: a heap profile of K buckets for a reader of it to read
// (bench/goroutines-slowdown.sh's heap reader).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

var count uint64

const rusageThread = 1 // RUSAGE_THREAD, linux/include/uapi/linux/resource.h

func cpuNs(r *syscall.Rusage) int64 {
	return r.Utime.Nano() + r.Stime.Nano()
}

const clockThreadCputime = 3 // CLOCK_THREAD_CPUTIME_ID, linux/include/uapi/linux/time.h

// threadCPU: the calling thread's CPU time in ns, to the ns (getrusage(2) splits it into
// user and system time at the tick's resolution).
func threadCPU() int64 {
	var ts syscall.Timespec
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCputime, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

// chunks works for secs seconds (or until stop) in chunks of 10,000 units on a thread of
// its own, then prints each chunk's wall-clock span and CPU time.
func chunks(secs float64, stop chan os.Signal) {
	type chunk struct{ t0, t1, cpu int64 }
	var out []chunk
	runtime.LockOSThread()
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	x := uint64(1)
	for time.Now().Before(end) && len(stop) == 0 {
		t0, c0 := time.Now().UnixNano(), threadCPU()
		for u := 0; u < 10000; u++ {
			for i := 0; i < 1000; i++ {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
			}
		}
		out = append(out, chunk{t0, time.Now().UnixNano(), threadCPU() - c0})
	}
	for _, c := range out {
		fmt.Println("chunk", c.t0, c.t1, c.cpu)
	}
	fmt.Println("sink", x&1)
}

//go:noinline
func deep(n int, ch chan int, wg *sync.WaitGroup) {
	if n == 0 {
		wg.Done()
		<-ch
		return
	}
	deep(n-1, ch, wg)
}

// The allocation stacks of GOMANY_BUCKETS: at each of five levels one of ten functions,
// chosen by a digit of i, calls the next level (distinct return addresses); the last
// allocates.
var bsink []byte
var bsites [10]func(level, i int)

//go:noinline
func bstep(level, i int) {
	if level == 0 {
		bsink = make([]byte, 16)
		return
	}
	bsites[i%10](level-1, i/10)
}

//go:noinline
func b0(l, i int) { bstep(l, i) }

//go:noinline
func b1(l, i int) { bstep(l, i) }

//go:noinline
func b2(l, i int) { bstep(l, i) }

//go:noinline
func b3(l, i int) { bstep(l, i) }

//go:noinline
func b4(l, i int) { bstep(l, i) }

//go:noinline
func b5(l, i int) { bstep(l, i) }

//go:noinline
func b6(l, i int) { bstep(l, i) }

//go:noinline
func b7(l, i int) { bstep(l, i) }

//go:noinline
func b8(l, i int) { bstep(l, i) }

//go:noinline
func b9(l, i int) { bstep(l, i) }

func main() {
	if k, _ := strconv.Atoi(os.Getenv("GOMANY_BUCKETS")); k > 0 {
		runtime.MemProfileRate = 1
		bsites = [10]func(int, int){b0, b1, b2, b3, b4, b5, b6, b7, b8, b9}
		for i := 0; i < k && i < 100000; i++ {
			bstep(5, i)
		}
		runtime.GC() // publishes the profile
	}
	n, _ := strconv.Atoi(os.Args[1])
	ch := make(chan int)
	var wg sync.WaitGroup
	wg.Add(n)
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			go pprof.Do(context.Background(), pprof.Labels("shard", strconv.Itoa(i%16)),
				func(context.Context) { deep(8, ch, &wg) })
		} else {
			go deep(8, ch, &wg)
		}
	}
	wg.Wait()
	if ms, _ := strconv.Atoi(os.Getenv("GOMANY_GC_MS")); ms > 0 {
		go func() {
			for {
				time.Sleep(time.Duration(ms) * time.Millisecond)
				runtime.GC()
			}
		}()
	}
	if len(os.Args) > 3 && os.Args[2] == "chunks" {
		secs, _ := strconv.ParseFloat(os.Args[3], 64)
		start := make(chan os.Signal, 1)
		signal.Notify(start, syscall.SIGUSR1)
		fmt.Println("ready")
		<-start
		chunks(secs, start)
		return
	}
	if len(os.Args) > 2 {
		units, _ := strconv.Atoi(os.Args[2])
		start := make(chan os.Signal, 1)
		signal.Notify(start, syscall.SIGUSR1)
		fmt.Println("ready")
		<-start
		var p0, p1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &p0)
		t0 := time.Now()
		done := make(chan [2]uint64)
		go func() {
			// its thread's CPU time (getrusage(2) RUSAGE_THREAD, Linux): what the
			// work cost, apart from the time it waited for a CPU
			var r0, r1 syscall.Rusage
			runtime.LockOSThread()
			syscall.Getrusage(rusageThread, &r0)
			x := uint64(1)
			for u := 0; u < units; u++ {
				for i := 0; i < 1000; i++ {
					x ^= x << 13
					x ^= x >> 7
					x ^= x << 17
				}
			}
			syscall.Getrusage(rusageThread, &r1)
			done <- [2]uint64{x, uint64(cpuNs(&r1) - cpuNs(&r0))}
		}()
		x := <-done
		wall := time.Since(t0).Nanoseconds()
		syscall.Getrusage(syscall.RUSAGE_SELF, &p1)
		// done WALL_NS WORKER_CPU_NS PROCESS_CPU_NS
		fmt.Println("done", wall, x[1], cpuNs(&p1)-cpuNs(&p0), x[0]&1)
		return
	}
	go func() {
		x := uint64(1)
		for {
			for i := 0; i < 1000; i++ {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
			}
			atomic.AddUint64(&count, 1)
		}
	}()
	fmt.Println("ready")
	last := uint64(0)
	for {
		time.Sleep(time.Second)
		c := atomic.LoadUint64(&count)
		fmt.Println("rate", c-last)
		last = c
	}
}
