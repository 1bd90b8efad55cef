// cgopark: goroutines parked in Go code that C called back (crosscall2,
// runtime.cgocallback), and one blocked in C, for tests/go-cgo-goroutines.sh.
// Usage: cgopark DIR
//
// Three goroutines call C (c_park), which calls back the exported goPark, which parks in a
// channel receive (main.parkIn); a fourth parks in a select the same way after the
// callback calls a method value; a fifth blocks in read(2) inside C (c_block). Writes its
// own goroutine profile (debug=0 and 1) and goroutine?debug=2 dump to DIR/dump1{.pb,.1,},
// and on SIGUSR1 again to DIR/dump2{.pb,.1,}.
package main

/*
#include <stdint.h>
#include <unistd.h>

extern void goPark(uintptr_t);

static __attribute__((noinline)) void c_park(uintptr_t k)
{
	goPark(k);
}

static __attribute__((noinline)) void c_block(int fd)
{
	char b;

	(void)read(fd, &b, 1);
}
*/
import "C"

import (
	"os"
	"os/signal"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"
)

var (
	started sync.WaitGroup
	chans   [4]chan int
)

type parker struct{ a, b chan int }

//go:noinline
func (p *parker) park() {
	started.Done()
	select {
	case <-p.a:
	case <-p.b:
	}
}

//go:noinline
func parkIn(ch chan int) {
	started.Done()
	<-ch
}

//export goPark
func goPark(k C.uintptr_t) {
	if k == 3 {
		fm := (&parker{make(chan int), make(chan int)}).park
		fm()
		return
	}
	parkIn(chans[k])
}

//go:noinline
func callC(k int) { C.c_park(C.uintptr_t(k)) }

//go:noinline
func blockInC(fd int) {
	started.Done()
	C.c_block(C.int(fd))
}

// dump writes the goroutine profile as a protobuf (path.pb), its debug=1 text (path.1) and
// the debug=2 dump (path, written last: the test waits for it).
func dump(path string) {
	for _, debug := range []int{0, 1, 2} {
		f, _ := os.Create(path + ".tmp")
		pprof.Lookup("goroutine").WriteTo(f, debug)
		f.Close()
		os.Rename(path+".tmp", path+[]string{".pb", ".1", ""}[debug])
	}
}

func main() {
	dir := os.Args[1]
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	var p [2]int
	syscall.Pipe(p[:])
	started.Add(5)
	for i := range chans {
		chans[i] = make(chan int)
		go callC(i)
	}
	go blockInC(p[0])
	started.Wait()
	time.Sleep(500 * time.Millisecond) // every goroutine reaches its parking place
	dump(dir + "/dump1")
	<-sig
	dump(dir + "/dump2")
	time.Sleep(time.Hour)
}
