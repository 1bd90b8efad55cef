// gostart: a server that starts a goroutine per request, from one function.
//
// Every 20 ms a "request" starts -per goroutines with `go handle(i)`; each handle spins
// for -spin under the pprof label handler=req and ends. Three long-lived goroutines started
// with `go worker(k)` spin a little and sleep, forever. At exit (after -d) it writes the
// number of handle goroutines it started to -info, then, with -dump, Go's own dump of
// every goroutine (runtime.Stack) to that file, for comparing start functions.
//
// Usage: gostart [-d 3s] [-per 2] [-spin 15ms] [-info FILE] [-dump FILE]
//
// Only APIs present in Go 1.19 are used.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"
)

var sink uint64

//go:noinline
func spin(d time.Duration) {
	end := time.Now().Add(d)
	x := uint64(1)
	for time.Now().Before(end) {
		for i := 0; i < 10000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	atomic.AddUint64(&sink, x)
}

var spinFor time.Duration

//go:noinline
func handle(i int, wg *sync.WaitGroup) {
	defer wg.Done()
	pprof.Do(context.Background(), pprof.Labels("handler", "req"), func(context.Context) {
		spin(spinFor)
	})
}

//go:noinline
func worker(k int) {
	for {
		spin(time.Millisecond)
		time.Sleep(5 * time.Millisecond)
	}
}

func main() {
	d := flag.Duration("d", 3*time.Second, "run time")
	per := flag.Int("per", 2, "goroutines per request")
	sp := flag.Duration("spin", 15*time.Millisecond, "CPU time of one handle")
	info := flag.String("info", "", "file for the number of handle goroutines started")
	dump := flag.String("dump", "", "file for Go's dump of every goroutine at exit")
	flag.Parse()
	spinFor = *sp
	for k := 0; k < 3; k++ {
		go worker(k)
	}
	var wg sync.WaitGroup
	started := 0
	end := time.Now().Add(*d)
	for i := 0; time.Now().Before(end); i++ {
		for j := 0; j < *per; j++ {
			wg.Add(1)
			go handle(i, &wg)
			started++
		}
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	if *dump != "" {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		if err := os.WriteFile(*dump, buf[:n], 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	if *info != "" {
		if err := os.WriteFile(*info, []byte(fmt.Sprintf("%d\n", started)), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
}
