// memprof: allocates, blocks and contends at known places, writes Go's own heap, allocs,
// block, mutex and goroutine profiles of that state, and then idles without allocating, so
// that a profile read from outside at any later moment must equal the files.
//
// Usage: memprof DIR [-d 100s] [-block-rate 1] [-mutex-fraction 1]
//
// main.retainBig keeps 256 blocks of 32 KiB, main.retainSmall 20,000 of 512 bytes (in a
// slice of pointers), main.churn allocates 40,000 of 4 KiB and drops them, main.inlined
// allocates through a function the compiler inlines (main.newBuf). Two runtime.GC calls
// publish the heap profile (MemProfileRate keeps Go's default 524288: sampled). Then
// main.waitChan goroutines block on channels and main.contend goroutines contend on one
// sync.Mutex, and 10 goroutines park for ever in main.park, the first locked to its
// thread (runtime.LockOSThread: Go's dump says "locked to thread"). DIR gets heap.pprof,
// allocs.pprof, block.pprof, mutex.pprof and goroutine.pprof (runtime/pprof WriteTo,
// debug 0), heap.1.txt, block.1.txt, mutex.1.txt and goroutine.1.txt (debug 1), and
// goroutine.txt (debug 2). It prints "ready PID" and then waits (no
// allocation, no channel or mutex operation) until SIGUSR1 or -d. On SIGUSR1 it writes
// heap.after.pprof, block.after.pprof and mutex.after.pprof, prints "again" and waits
// for -d again. Block and mutex counts only grow: a profile read between the two must lie
// between them (from go1.23 the mutex profile also counts the runtime's own lock
// contention, which goes on in an idle program). The runtime's periodic GC (every 2
// minutes) moves the heap profile on: read it before then.
//
// Only APIs present in Go 1.19 are used.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"
)

var (
	big   [][]byte
	small []*[512]byte
	sink  []byte
	inl   [][]byte
)

//go:noinline
func retainBig() {
	for i := 0; i < 256; i++ {
		big = append(big, make([]byte, 32<<10))
	}
}

//go:noinline
func retainSmall() {
	for i := 0; i < 20000; i++ {
		small = append(small, new([512]byte))
	}
}

//go:noinline
func churn() {
	for i := 0; i < 40000; i++ {
		sink = make([]byte, 4<<10)
	}
	sink = nil
}

// newBuf is small enough to be inlined into its caller: the heap profile's stack then
// holds an inlined frame above main.inlined.
func newBuf(n int) []byte {
	return make([]byte, n)
}

//go:noinline
func inlined() {
	for i := 0; i < 64; i++ {
		inl = append(inl, newBuf(64<<10))
	}
}

//go:noinline
func waitChan(ch chan int, wg *sync.WaitGroup) {
	defer wg.Done()
	for i := 0; i < 50; i++ {
		<-ch
	}
}

//go:noinline
func feed(ch chan int) {
	for i := 0; i < 200; i++ {
		time.Sleep(200 * time.Microsecond)
		ch <- i
	}
}

//go:noinline
func contend(mu *sync.Mutex, wg *sync.WaitGroup) {
	defer wg.Done()
	for i := 0; i < 200; i++ {
		mu.Lock()
		time.Sleep(50 * time.Microsecond)
		mu.Unlock()
	}
}

//go:noinline
func park(ch chan struct{}, wg *sync.WaitGroup, lock bool) {
	if lock {
		runtime.LockOSThread()
	}
	wg.Done()
	<-ch
}

func write(dir, name string, debug int) {
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		panic(err)
	}
	prof := name[:len(name)-len(filepath.Ext(name))]
	if e := filepath.Ext(prof); e != "" {
		prof = prof[:len(prof)-len(e)]
	}
	if err := pprof.Lookup(prof).WriteTo(f, debug); err != nil {
		panic(err)
	}
	f.Close()
}

func main() {
	d := flag.Duration("d", 100*time.Second, "how long to idle after writing the profiles")
	blockRate := flag.Int("block-rate", 1, "runtime.SetBlockProfileRate")
	mutexFraction := flag.Int("mutex-fraction", 1, "runtime.SetMutexProfileFraction")
	flag.CommandLine.Parse(os.Args[2:])
	dir := os.Args[1]
	runtime.SetBlockProfileRate(*blockRate)
	runtime.SetMutexProfileFraction(*mutexFraction)

	retainBig()
	retainSmall()
	churn()
	inlined()

	var wg sync.WaitGroup
	ch := make(chan int)
	wg.Add(4)
	for i := 0; i < 4; i++ {
		go waitChan(ch, &wg)
	}
	feed(ch)
	wg.Wait()

	var mu sync.Mutex
	wg.Add(4)
	for i := 0; i < 4; i++ {
		go contend(&mu, &wg)
	}
	wg.Wait()

	stop := make(chan struct{})
	wg.Add(10)
	for i := 0; i < 10; i++ {
		go park(stop, &wg, i == 0)
	}
	wg.Wait()

	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	timeout := time.After(*d)

	runtime.GC()
	runtime.GC()
	write(dir, "heap.pprof", 0)
	write(dir, "allocs.pprof", 0)
	write(dir, "block.pprof", 0)
	write(dir, "mutex.pprof", 0)
	write(dir, "goroutine.pprof", 0)
	write(dir, "heap.1.txt", 1)
	write(dir, "block.1.txt", 1)
	write(dir, "mutex.1.txt", 1)
	write(dir, "goroutine.1.txt", 1)
	f, err := os.Create(filepath.Join(dir, "goroutine.txt"))
	if err != nil {
		panic(err)
	}
	pprof.Lookup("goroutine").WriteTo(f, 2)
	f.Close()
	fmt.Printf("ready %d\n", os.Getpid())
	os.Stdout.Sync()
	select {
	case <-usr1:
		write(dir, "heap.after.pprof", 0)
		write(dir, "block.after.pprof", 0)
		write(dir, "mutex.after.pprof", 0)
		fmt.Printf("again\n")
		os.Stdout.Sync()
		time.Sleep(*d)
	case <-timeout:
	}
	runtime.KeepAlive(big)
	runtime.KeepAlive(small)
	runtime.KeepAlive(inl)
	close(stop)
}
