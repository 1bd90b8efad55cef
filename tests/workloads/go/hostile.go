// hostile: burns CPU under pprof labels built to break a naive profiler UI or decoder.
//
// The label keys and values hold terminal escape sequences (clear screen, set window title,
// cursor movement, colour), NUL bytes, invalid UTF-8, a right-to-left override, newlines and
// tabs, an empty key and value, and one value of 1 MiB. Four goroutines each burn CPU in
// main.hostileWork under one of these label sets; a fifth uses 64 labels at once.
// A profiler must show all of it escaped, never pass it to the terminal, and bound what it
// reads (the 1 MiB value must be truncated, not copied whole into every sample).
//
// Usage: hostile [-d 3s] [-cpuprofile FILE]   (-cpuprofile: Go's own profile, holding the
// exact label bytes, for comparison)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var (
	stopFlag atomic.Bool
	sink     atomic.Uint64
)

//go:noinline
func hostileWork(seed uint64) uint64 {
	x := seed | 1
	for !stopFlag.Load() {
		for i := 0; i < 1<<16; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	return x
}

// burn runs hostileWork under labels given as key, value pairs.
func burn(wg *sync.WaitGroup, seed uint64, kv ...string) {
	defer wg.Done()
	pprof.Do(context.Background(), pprof.Labels(kv...), func(context.Context) {
		sink.Add(hostileWork(seed))
	})
}

func main() {
	dur := flag.Duration("d", 3*time.Second, "how long to run")
	cpuprofile := flag.String("cpuprofile", "", "write Go's own CPU profile to this file")
	flag.Parse()

	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "hostile:", err)
			os.Exit(1)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "hostile:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}

	big := strings.Repeat("\x1b[2J\x1b[H1MiB", (1<<20)/11+1)[:1<<20]

	sets := [][]string{
		{"handler", "\x1b[2J\x1b[H\x1b[31mcleared\x1b[0m",
			"tenant", "\x1b]0;pwned\x07\x1b]2;pwned\x1b\\"},
		{"nul\x00key", "nul\x00value\x00", "bad-utf8", "\xff\xfe\xc3\x28\xe2\x82", "", ""},
		{"\u202emoc.live", "line1\nline2\r\n\ttabbed", "\x1b[999;999H\x1b[6n", "\x9b2J\x90q"},
		{"big", big, "handler", "big-value"},
	}

	var many []string
	for i := 0; i < 64; i++ {
		many = append(many, fmt.Sprintf("k%02d\x1b[%dm", i, 30+i%8), fmt.Sprintf("v%02d\x07", i))
	}
	sets = append(sets, many)

	var wg sync.WaitGroup
	for i, kv := range sets {
		wg.Add(1)
		go burn(&wg, uint64(i+1), kv...)
	}
	time.Sleep(*dur)
	stopFlag.Store(true)
	wg.Wait()
}
