// wall: a handler under the label handler=checkout that computes (a busy loop) for a fifth
// of each 100 ms and sleeps the rest, for tests/go-wall.sh and tests/ui-wall.sh. Usage:
// wall SECONDS [FILE]. Prints "busy S idle S" at the end, the split it measured itself, on
// stdout or into FILE (the live UI gives the command it starts /dev/null as stdout).
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"time"
)

var sink uint64

func compute(d time.Duration) {
	end := time.Now().Add(d)
	x := uint64(1)
	for time.Now().Before(end) {
		for i := 0; i < 1000; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	sink += x
}

func main() {
	secs, _ := strconv.Atoi(os.Args[1])
	var busy, idle time.Duration
	pprof.Do(context.Background(), pprof.Labels("handler", "checkout"), func(context.Context) {
		stop := time.Now().Add(time.Duration(secs) * time.Second)
		for time.Now().Before(stop) {
			t0 := time.Now()
			compute(20 * time.Millisecond)
			t1 := time.Now()
			time.Sleep(80 * time.Millisecond)
			t2 := time.Now()
			busy += t1.Sub(t0)
			idle += t2.Sub(t1)
		}
	})
	out := fmt.Sprintf("busy %.3f idle %.3f\n", busy.Seconds(), idle.Seconds())
	if len(os.Args) > 2 {
		os.WriteFile(os.Args[2], []byte(out), 0o644)
	} else {
		fmt.Print(out)
	}
}
