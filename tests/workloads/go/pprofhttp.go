// pprofhttp: a Go service with net/http/pprof, the oracle for `gotop-perf serve`: it
// allocates, blocks and contends at known places, then serves its own /debug/pprof on
// 127.0.0.1 and idles, so that its own answers and the server's can be compared.
//
// Usage: pprofhttp [-d 100s]
//
// main.retain keeps 2,000 blocks of 8 KiB, main.churn allocates 20,000 of 4 KiB and drops
// them; two runtime.GC calls publish the heap profile (Go's default MemProfileRate). Four
// main.waitChan goroutines block on a channel, four main.contend goroutines contend on one
// sync.Mutex (block rate 1, mutex fraction 1), 10 goroutines park for ever in main.park.
// It prints "ready PID PORT" and serves until -d passes. Only APIs of Go 1.19.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime"
	"sync"
	"time"
)

var kept [][]byte
var sink []byte

//go:noinline
func retain() {
	for i := 0; i < 2000; i++ {
		kept = append(kept, make([]byte, 8192))
	}
}

//go:noinline
func churn() {
	for i := 0; i < 20000; i++ {
		sink = make([]byte, 4096)
	}
	sink = nil
}

//go:noinline
func waitChan(ch chan int, wg *sync.WaitGroup) {
	defer wg.Done()
	for v := range ch {
		if v < 0 {
			return
		}
	}
}

//go:noinline
func contend(mu *sync.Mutex, wg *sync.WaitGroup) {
	defer wg.Done()
	for i := 0; i < 2000; i++ {
		mu.Lock()
		time.Sleep(10 * time.Microsecond)
		mu.Unlock()
	}
}

//go:noinline
func park(stop chan struct{}, wg *sync.WaitGroup) {
	wg.Done()
	<-stop
}

func main() {
	d := flag.Duration("d", 100*time.Second, "how long to serve")
	flag.Parse()
	runtime.SetBlockProfileRate(1)
	runtime.SetMutexProfileFraction(1)
	retain()
	churn()

	var wg sync.WaitGroup
	ch := make(chan int)
	wg.Add(4)
	for i := 0; i < 4; i++ {
		go waitChan(ch, &wg)
	}
	for i := 0; i < 400; i++ {
		time.Sleep(100 * time.Microsecond)
		ch <- i
	}
	close(ch)
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
		go park(stop, &wg)
	}
	wg.Wait()
	runtime.GC()
	runtime.GC()

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go http.Serve(l, nil)
	fmt.Printf("ready %d %d\n", os.Getpid(), l.Addr().(*net.TCPAddr).Port)
	os.Stdout.Sync()
	time.Sleep(*d)
	runtime.KeepAlive(kept)
	close(stop)
}
