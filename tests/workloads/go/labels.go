// labels: goroutines burning CPU under pprof labels in known proportions (handler 60/30/10).
//
// Each worker repeats a cycle of ten equal work units: six in main.alphaWork under
// handler=alpha, three in main.betaWork under handler=beta, one in main.gammaWork under
// handler=gamma. The units alternate tenant=acme and tenant=globex, so each tenant gets half
// the CPU (alpha 3+3, beta 2 acme + 1 globex, gamma 1 globex). Because the split comes from the
// count of equal units and not from scheduling, it holds for any number of CPUs and workers.
// Every unit runs inside pprof.Do, so the labels are on the goroutine (g.labels) while it burns.
//
// Usage: labels [-d 3s] [-workers N] [-cpuprofile FILE] [-cpurate HZ] [-unitscale K] [-heaptenant] [-v]
//
//	-cpuprofile writes Go's own CPU profile of the same run, for comparing per-label shares;
//	-heaptenant makes each unit's tenant value a new heap string (a copy of the constant),
//	as for a tenant taken from a request, instead of the string constant;
//	-v prints the number of units run per handler and tenant on stdout at exit.
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
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// unitIters is the loop count of one work unit, about a millisecond of CPU; -unitscale
// multiplies it (longer units: the labels stay the same for longer, as in a slow request).
var unitIters = 1 << 20

// The three hot functions have identical bodies so that a unit costs the same in each;
// they are separate functions so that a profile can tell them apart by name too.

//go:noinline
func alphaWork(seed uint64) uint64 {
	x := seed | 1
	for i := 0; i < unitIters; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

//go:noinline
func betaWork(seed uint64) uint64 {
	x := seed | 1
	for i := 0; i < unitIters; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

//go:noinline
func gammaWork(seed uint64) uint64 {
	x := seed | 1
	for i := 0; i < unitIters; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// cycle is the fixed sequence of units each worker repeats.
var cycle = [10]struct {
	handler string
	work    func(uint64) uint64
}{
	{"alpha", alphaWork}, {"alpha", alphaWork}, {"alpha", alphaWork},
	{"alpha", alphaWork}, {"alpha", alphaWork}, {"alpha", alphaWork},
	{"beta", betaWork}, {"beta", betaWork}, {"beta", betaWork},
	{"gamma", gammaWork},
}

var tenants = [2]string{"acme", "globex"}

var heapTenant, goPerUnit, yield, reqID bool

// yieldSlices: with -yield a unit is this many slices, each followed by runtime.Gosched,
// so that much of the time goes to the scheduler, on g0 under runtime.mcall.
const yieldSlices = 1024

var (
	stopFlag atomic.Bool
	sink     atomic.Uint64
	mu       sync.Mutex
	counts   = map[string]int{}
)

//go:noinline
func worker(id int, wg *sync.WaitGroup) {
	defer wg.Done()
	local := map[string]int{}
	seed := uint64(id)*0x9e3779b97f4a7c15 + 1
	for n := 0; !stopFlag.Load(); n++ {
		u := cycle[n%len(cycle)]
		tenant := tenants[n%len(tenants)]
		if heapTenant {
			tenant = string(append([]byte(nil), tenant...))
		}
		labels := pprof.Labels("handler", u.handler, "tenant", tenant)
		if reqID {
			// A value no other unit has, as a service that labels by request id: a
			// label set, and so a profile entry, of its own at nearly every sample.
			labels = pprof.Labels("handler", u.handler, "tenant", tenant,
				"request", strconv.FormatUint(uint64(id)<<40|uint64(n), 10))
		}
		// The closure for pprof.Do comes first in the source: it stays main.worker.func1,
		// the stack tests/record-go.sh expects.
		if !goPerUnit {
			pprof.Do(context.Background(), labels, func(context.Context) {
				if !yield {
					seed = u.work(seed)
					return
				}
				for k := 0; k < yieldSlices; k++ {
					seed = u.work(seed)
					runtime.Gosched()
				}
			})
		} else {
			// A goroutine per unit, as a server with a goroutine per request.
			done := make(chan struct{})
			go func() {
				pprof.Do(context.Background(), labels, func(context.Context) {
					seed = u.work(seed)
				})
				close(done)
			}()
			<-done
		}
		local["handler="+u.handler]++
		local["tenant="+tenant]++
	}
	sink.Add(seed)
	mu.Lock()
	for k, v := range local {
		counts[k] += v
	}
	mu.Unlock()
}

func main() {
	dur := flag.Duration("d", 3*time.Second, "how long to run")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "number of worker goroutines")
	cpuprofile := flag.String("cpuprofile", "", "write Go's own CPU profile to this file")
	verbose := flag.Bool("v", false, "print units run per label at exit")
	cpurate := flag.Int("cpurate", 0, "Go's CPU profiling rate in Hz (default: the runtime's 100)")
	unitscale := flag.Int("unitscale", 1, "make each work unit this many times longer")
	flag.BoolVar(&heapTenant, "heaptenant", false, "tenant values are new heap strings")
	flag.BoolVar(&goPerUnit, "gopercall", false, "run each unit in a new goroutine")
	flag.BoolVar(&reqID, "reqid", false, "each unit also carries a label request=<a number of its own>")
	flag.BoolVar(&yield, "yield", false, "split each unit in 1024 slices with runtime.Gosched after each")
	flag.Parse()
	if *unitscale > 1 {
		unitIters *= *unitscale
	}
	if yield {
		unitIters /= yieldSlices
	}

	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "labels:", err)
			os.Exit(1)
		}
		defer f.Close()
		if *cpurate > 0 {
			// A rate set before StartCPUProfile wins; StartCPUProfile then only
			// prints "cannot set cpu profile rate" (runtime/pprof/pprof.go).
			runtime.SetCPUProfileRate(*cpurate)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "labels:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}

	var wg sync.WaitGroup
	for i := 0; i < *workers; i++ {
		wg.Add(1)
		go worker(i, &wg)
	}
	time.Sleep(*dur)
	stopFlag.Store(true)
	wg.Wait()

	if *verbose {
		for _, k := range []string{"handler=alpha", "handler=beta", "handler=gamma",
			"tenant=acme", "tenant=globex"} {
			fmt.Printf("%s %d\n", k, counts[k])
		}
	}
}
