// leafduff: the program from Go issue 73753 (leaf and duff called from work), run for a duration.
//
// main.leaf copies a 64-byte struct and main.duff a 96-byte one (which the compiler turns into
// a runtime.duffcopy call up to Go 1.25); main.work calls both in a loop until the time is
// up. On amd64 frame-pointer unwinding loses main.work when a sample lands in the frameless leaf
// or in a prologue/epilogue, which is what the stack-repair code is tested against.
//
// Usage: leafduff [-d 3s] [-cpuprofile FILE]   (LEAFDUFF_DURATION also sets the duration)
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"sync/atomic"
	"time"
)

type T struct{ a, b, c, d, e, f, g, h int }

//go:noinline
func leaf() {
	a = b
}

var a, b T

type U struct{ a, b, c, d, e, f, g, h, i, j, k, l int }

//go:noinline
func duff() {
	c = d
}

var c, d U

// stopFlag is set by a timer; checking it only every 65536 iterations keeps the loop
// as close to the original as possible.
var stopFlag atomic.Bool

//go:noinline
func work() {
	for i := 0; ; i++ {
		leaf()
		duff()
		if i&0xffff == 0 && stopFlag.Load() {
			return
		}
	}
}

//go:noinline
func main() {
	def := 3 * time.Second
	if s := os.Getenv("LEAFDUFF_DURATION"); s != "" {
		if v, err := time.ParseDuration(s); err == nil {
			def = v
		}
	}
	dur := flag.Duration("d", def, "how long to run")
	cpuprofile := flag.String("cpuprofile", "", "write Go's own CPU profile to this file")
	flag.Parse()

	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "leafduff:", err)
			os.Exit(1)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "leafduff:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	time.AfterFunc(*dur, func() { stopFlag.Store(true) })
	work()
}
