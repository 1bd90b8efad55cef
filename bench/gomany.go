// gomany: N goroutines parked in a channel receive 8 calls deep, half of them under pprof
// labels, and one goroutine counting loop iterations (the work rate bench/gosnap.sh compares
// with and without snapshots). Usage: gomany N
// Prints "ready" when every goroutine is parked, then every second "rate ITERATIONS".
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

var count uint64

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
