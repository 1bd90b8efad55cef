// nomemprof: a program that does not link runtime/pprof, so the Go linker turns memory
// profiling off (disableMemoryProfiling: MemProfileRate is 0 and no heap profile is kept).
// main.allocLoop allocates 64 KiB every 2 ms, keeping the last 64 blocks, until -d.
//
// Usage: nomemprof [-d 30s]
//
// It prints "ready PID". A heap profile read from outside finds no profile; once
// MemProfileRate is written into it (gotop-perf pprof --enable-memprofile), the
// allocations of main.allocLoop from then on appear.
//
// Only APIs present in Go 1.19 are used; nothing that links runtime.MemProfile.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

var ring [64][]byte

//go:noinline
func allocLoop(until time.Time) {
	for i := 0; time.Now().Before(until); i++ {
		ring[i%len(ring)] = make([]byte, 64<<10)
		time.Sleep(2 * time.Millisecond)
	}
}

func main() {
	d := flag.Duration("d", 30*time.Second, "how long to run")
	flag.Parse()
	fmt.Printf("ready %d\n", os.Getpid())
	os.Stdout.Sync()
	allocLoop(time.Now().Add(*d))
}
