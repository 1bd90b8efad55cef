// goroutines: goroutines parked at known places, under pprof labels, for
// tests/go-goroutines.sh. Usage: goroutines DIR
//
// Parks goroutines in a channel receive and send, a select, sync.Mutex, sync.Cond,
// time.Sleep, a blocking network read and a blocking system call, with one spinning; each
// runs under labels kind=<place> and writes "L goid kind" to DIR/labels. Then writes its
// own goroutine?debug=2 dump to DIR/dump1, and on SIGUSR1 a second one to DIR/dump2.
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

var (
	mu      sync.Mutex
	cmu     sync.Mutex
	cond    = sync.NewCond(&cmu)
	lmu     sync.Mutex
	account []string
	started sync.WaitGroup
	sink    uint64
)

func goid() uint64 {
	var b [64]byte
	s := strings.TrimPrefix(string(b[:runtime.Stack(b[:], false)]), "goroutine ")
	n, _ := strconv.ParseUint(s[:strings.IndexByte(s, ' ')], 10, 64)
	return n
}

// park runs fn under labels kind=kind after noting its goroutine id.
func park(kind string, fn func()) {
	started.Add(1)
	go pprof.Do(context.Background(), pprof.Labels("kind", kind), func(context.Context) {
		lmu.Lock()
		account = append(account, fmt.Sprintf("L %d %s", goid(), kind))
		lmu.Unlock()
		started.Done()
		fn()
	})
}

//go:noinline
func recvForever(ch chan int) { <-ch }

//go:noinline
func sendForever(ch chan int) { ch <- 1 }

//go:noinline
func selectForever(a, b chan int) {
	select {
	case <-a:
	case <-b:
	}
}

//go:noinline
func lockForever() { mu.Lock() }

//go:noinline
func condForever() {
	cmu.Lock()
	for {
		cond.Wait()
	}
}

//go:noinline
func sleepForever() { time.Sleep(time.Hour) }

//go:noinline
func readConn(c net.Conn) {
	var b [1]byte
	c.Read(b[:])
}

//go:noinline
func readPipe(fd int) {
	var b [1]byte
	syscall.Read(fd, b[:])
}

//go:noinline
func spin() {
	x := uint64(1)
	for {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		sink = x
	}
}

func dump(path string) {
	f, _ := os.Create(path + ".tmp")
	pprof.Lookup("goroutine").WriteTo(f, 2)
	f.Close()
	os.Rename(path+".tmp", path)
}

func main() {
	dir := os.Args[1]
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	mu.Lock()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		panic(err)
	}
	peer, _ := ln.Accept()
	var p [2]int
	syscall.Pipe(p[:])

	for i := 0; i < 3; i++ {
		park("chanrecv", func() { recvForever(make(chan int)) })
	}
	park("chansend", func() { sendForever(make(chan int)) })
	park("select", func() { selectForever(make(chan int), make(chan int)) })
	park("mutex", lockForever)
	park("cond", condForever)
	park("sleep", sleepForever)
	park("netread", func() { readConn(peer) })
	park("syscall", func() { readPipe(p[0]) })
	park("spin", spin)
	started.Wait()
	time.Sleep(500 * time.Millisecond) // every goroutine reaches its parking place
	lmu.Lock()
	os.WriteFile(dir+"/labels", []byte(strings.Join(account, "\n")+"\n"), 0o644)
	lmu.Unlock()
	dump(dir + "/dump1")
	<-sig
	dump(dir + "/dump2")
	_ = conn
	time.Sleep(time.Hour)
}
