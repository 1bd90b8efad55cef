// churn: goroutines created and finished at a high rate, their stacks growing (recursion
// past the initial stack: copied by the runtime) and shrinking under frequent GC cycles,
// for tests/go-goroutines-churn.sh. Each worker runs main.worker -> main.rec (depth 1 to
// 60) and parks at the bottom (sleep, channel receive, mutex) for under a millisecond, then
// exits. Runs until killed.
package main

import (
	"math/rand"
	"runtime/debug"
	"sync"
	"time"
)

var (
	mu      sync.Mutex
	garbage [][]byte
)

//go:noinline
func rec(n int, kind int, pad [64]byte) byte {
	if n > 0 {
		return rec(n-1, kind, pad) + pad[n%64]
	}
	switch kind {
	case 0:
		time.Sleep(time.Duration(rand.Intn(500)) * time.Microsecond)
	case 1:
		select {
		case <-time.After(time.Duration(rand.Intn(500)) * time.Microsecond):
		}
	default:
		mu.Lock()
		time.Sleep(50 * time.Microsecond)
		mu.Unlock()
	}
	return pad[0]
}

//go:noinline
func worker(depth, kind int) {
	var pad [64]byte
	rec(depth, kind, pad)
}

func main() {
	debug.SetGCPercent(5) // GC often: stacks shrink
	sem := make(chan struct{}, 4000)
	go func() {
		for {
			garbage = append(garbage, make([]byte, 64<<10))
			if len(garbage) > 64 {
				garbage = nil
			}
			time.Sleep(time.Millisecond)
		}
	}()
	for {
		sem <- struct{}{}
		go func(d, k int) {
			worker(d, k)
			<-sem
		}(1+rand.Intn(60), rand.Intn(3))
	}
}
