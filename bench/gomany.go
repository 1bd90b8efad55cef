// gomany: N goroutines parked in a channel receive 8 calls deep, half of them under pprof
// labels, and one goroutine counting loop iterations (the work rate bench/gosnap.sh compares
// with and without snapshots). Usage: gomany N [UNITS]
// Prints "ready" when every goroutine is parked, then every second "rate ITERATIONS".
// With UNITS (bench/goroutines-slowdown.sh): fixed work instead. After "ready" it waits for
// SIGUSR1, then one goroutine counts UNITS units (GOMAXPROCS as the machine's), prints
// "done WALL_NS WORKER_CPU_NS PROCESS_CPU_NS" and the program exits.
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
)

var count uint64

const rusageThread = 1 // RUSAGE_THREAD, linux/include/uapi/linux/resource.h

func cpuNs(r *syscall.Rusage) int64 {
	return r.Utime.Nano() + r.Stime.Nano()
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

func main() {
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
