// profiles: writes Go's own profiles of a small known workload, for `gotop-perf view`.
//
// Usage: profiles DIR [-d 2s] [-grow N]
//
// DIR gets cpu.pprof (two goroutines burning CPU in main.burnA and main.burnB, 2:1),
// heap.pprof (main.keepA keeps 64 blocks of 64 KiB, main.keepB 16 plus N * 16 with -grow N:
// two runs with different N differ by a known amount in main.keepB only), goroutine.pprof
// (10 goroutines parked in main.park), mutex.pprof and block.pprof (contention on one mutex
// in main.contend). Every sample of the heap profile is recorded (MemProfileRate 1).
//
// Only APIs present in Go 1.19 are used.
package main

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"
)

var sink uint64

//go:noinline
func burn(n int) uint64 {
	x := uint64(n) | 1
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

//go:noinline
func burnA(stop *int32, mu *sync.Mutex) {
	for {
		mu.Lock()
		s := *stop
		mu.Unlock()
		if s != 0 {
			return
		}
		sink += burn(2 << 16)
	}
}

//go:noinline
func burnB(stop *int32, mu *sync.Mutex) {
	for {
		mu.Lock()
		s := *stop
		mu.Unlock()
		if s != 0 {
			return
		}
		sink += burn(1 << 16)
	}
}

var kept [][]byte

//go:noinline
func keepA() {
	for i := 0; i < 64; i++ {
		kept = append(kept, make([]byte, 64<<10))
	}
}

//go:noinline
func keepB(n int) {
	for i := 0; i < 16+16*n; i++ {
		kept = append(kept, make([]byte, 64<<10))
	}
}

//go:noinline
func park(ch chan struct{}, wg *sync.WaitGroup) {
	wg.Done()
	<-ch
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

func write(dir, name string, f func(*os.File) error) {
	out, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		panic(err)
	}
	if err := f(out); err != nil {
		panic(err)
	}
	out.Close()
}

func main() {
	d := flag.Duration("d", 2*time.Second, "CPU profile duration")
	grow := flag.Int("grow", 0, "more blocks kept by main.keepB")
	flag.Parse()
	dir := flag.Arg(0)
	runtime.MemProfileRate = 1
	runtime.SetMutexProfileFraction(1)
	runtime.SetBlockProfileRate(1)

	keepA()
	keepB(*grow)

	cpu, err := os.Create(filepath.Join(dir, "cpu.pprof"))
	if err != nil {
		panic(err)
	}
	pprof.StartCPUProfile(cpu)
	var stop int32
	var smu sync.Mutex
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); burnA(&stop, &smu) }()
	go func() { defer wg.Done(); burnB(&stop, &smu) }()
	time.Sleep(*d)
	smu.Lock()
	stop = 1
	smu.Unlock()
	wg.Wait()
	pprof.StopCPUProfile()
	cpu.Close()

	var mu sync.Mutex
	wg.Add(4)
	for i := 0; i < 4; i++ {
		go contend(&mu, &wg)
	}
	wg.Wait()

	ch := make(chan struct{})
	wg.Add(10)
	for i := 0; i < 10; i++ {
		go park(ch, &wg)
	}
	wg.Wait()
	runtime.GC()
	write(dir, "heap.pprof", func(f *os.File) error { return pprof.Lookup("heap").WriteTo(f, 0) })
	write(dir, "goroutine.pprof", func(f *os.File) error { return pprof.Lookup("goroutine").WriteTo(f, 0) })
	write(dir, "mutex.pprof", func(f *os.File) error { return pprof.Lookup("mutex").WriteTo(f, 0) })
	write(dir, "block.pprof", func(f *os.File) error { return pprof.Lookup("block").WriteTo(f, 0) })
	close(ch)
	runtime.KeepAlive(kept)
}
