// garbageg: a live Go target whose g register and pprof label pointers are garbage (amd64).
//
// Three kinds of goroutine burn CPU side by side:
//   - control (one): main.controlWork under pprof.Do(handler=ok); the only goroutine that
//     ever carries handler=ok.
//   - regs (-regs N, default 2): main.spinRegs, an ABI0 assembly loop that holds R14 (the g
//     register of ABIInternal code), R8-R13, R15 and BP at garbage values: 0, small ints,
//     unmapped and non-canonical addresses, kernel addresses, pointers into its own stack,
//     its own g shifted, its m and g0, the control goroutine's g and every other worker's g,
//     a fake g (a copy of the control goroutine's g, carrying its goid and handler=ok labels,
//     made to name this worker's m and stack), the hostile label blobs. They run under
//     pprof.Do(handler=regs, worker=rN): their samples are theirs or no one's.
//   - labels (-labels N, default 2): main.labelsWork in plain Go while the goroutine's own
//     g.labels is switched every unit among hostile label sets in static data: both layouts
//     (map[string]string through a cell for Go 1.19-1.23, a {data, len, cap} slice for
//     1.24+, go1.23 and go1.24 runtime/pprof/label.go), with absurd counts and lengths,
//     looping overflow chains, pointers to unmapped, non-canonical and kernel addresses, and
//     strings of terminal escapes, NUL bytes and invalid UTF-8; plus direct garbage values.
//     A few sets are well formed (key "garbage"), so a profiler really reads hostile bytes.
//     No set has the value "ok".
//
// The offset of g.labels is found at start, not assumed: main sets labels with
// pprof.SetGoroutineLabels and looks for the one word of its g that follows them.
//
// Why the runtime survives (checked against go1.19, go1.23 and go1.27 runtime sources):
//   - label pointers are only ever static data (.noptrbss) or addresses outside the Go heap,
//     which the garbage collector ignores (runtime/mheap.go spanOf returns nil for them);
//     no heap pointer is overwritten without a write barrier (labels workers start with none);
//   - only CPU profiling (runtime/cpuprof.go), goroutine profiles (runtime/mprof.go), new
//     user goroutines (runtime/proc.go newproc1 copies the creator's labels) and, from 1.27,
//     tracebacks (runtime/traceback.go, GODEBUG tracebacklabels) read g.labels: this program
//     uses none of them while labels are garbage (no -cpuprofile here), labels workers never
//     start goroutines, and SIGTERM, SIGINT and SIGQUIT stop it cleanly instead of dumping
//     goroutines;
//   - see garbageg_amd64.s for R14.
//
// Usage: garbageg [-d 3s] [-regs 2] [-labels 2] [-unit 5ms] [-gc 50ms] [-info FILE] [-forge] [-v]
//
//	-unit D     how long a labels worker keeps one label set before the next (default 5ms)
//	-gc D       run the garbage collector every D (default 50ms, 0: never): it scans
//	            every g, garbage labels pointers included
//	-info FILE  written (atomically) once every goroutine runs: "go VERSION",
//	            "labels_offset N", "control GOID", "regs GOID...", "labels GOID...",
//	            "sets N" (hostile label sets)
//	-only G     regs workers load only one group of values (to find which one a profiler
//	            gets wrong): garbage (no address of anything live), own (their own g,
//	            m and g0: self, m, g0), controlg, workers (every other worker's g),
//	            sets; and, only when asked for, fakeg: a forged g (a copy of the control
//	            goroutine's g on this worker's m and stack). gotop-perf believes a g whose
//	            g.m is the thread's m and whose stack holds SP without reading m.curg at
//	            every sample, so a forged g is named the goroutine it copies (a known
//	            limit: ordinary garbage, stale registers and other goroutines' g's are
//	            caught; a forgery of g and m together, -forge, cannot be)
//	-forge      one more regs worker whose fake g comes with a fake m that passes every
//	            pointer check (m.procid is the thread's id, g is m.curg, g.m is m): only a
//	            profiler that knows the thread's real m can tell (goroutine "forge" in -info)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Implemented in garbageg_amd64.s.
func getg() uintptr

//go:noescape
func spinRegs(tab *uintptr, n, rounds uintptr) uint64

// g.m is at byte 48 in every Go version from 1.19 to 1.27 (runtime/runtime2.go type g:
// stack{lo, hi}, stackguard0, stackguard1, _panic, _defer, m), and m.g0 is m's first field.
const offGM = 48

var (
	stopFlag atomic.Bool
	sink     atomic.Uint64

	labelsOff uintptr // byte offset of g.labels, found by findLabelsOffset
	controlG  uintptr // the control goroutine's g
	workerGs  [64]uintptr
	nworkerGs atomic.Int32
	seqAt     int // index in text of garbage-seq's value

	// Static data for hostile label sets (uintptr and byte arrays: .noptrbss, never
	// scanned by the garbage collector and never moved).
	blob  [1 << 14]uintptr
	nblob int
	text  [1 << 13]byte
	ntext int
	sets  []uintptr // the g.labels values a labels worker cycles through

	// One fake g (and fake m, for -forge) per regs worker.
	fakeG [9][128]uintptr
	fakeM [9][160]uintptr
)

// Garbage addresses: unmapped (between the binary and the Go heap, which starts at
// 0xc000000000: runtime/malloc.go arena hints), non-canonical, and in the kernel half.
const (
	unmapped   = 0xdead0000
	unmapped2  = 0x7ffdead00000
	noncanon   = 0x8000000000000000
	noncanon2  = 0x0000800000000000
	kernelText = 0xffffffff81000000
	kernelMap  = 0xffff888000000000
)

func addrOf(p *uintptr) uintptr { return uintptr(unsafe.Pointer(p)) }

// word reads the word at address a (a live g or m of this process).
func word(a uintptr) uintptr { return *(*uintptr)(unsafe.Pointer(a)) }

// alloc reserves n words of blob and returns the index of the first.
func alloc(n int) int {
	if nblob+n > len(blob) {
		panic("garbageg: blob full")
	}
	i := nblob
	nblob += n
	return i
}

// str copies s into text and returns its address and length.
func str(s string) (uintptr, uintptr) {
	if ntext+len(s) > len(text) {
		panic("garbageg: text full")
	}
	copy(text[ntext:], s)
	a := uintptr(unsafe.Pointer(&text[ntext]))
	ntext += len(s)
	return a, uintptr(len(s))
}

// A label as four words: key {ptr, len}, value {ptr, len}.
type rawLabel [4]uintptr

func pair(k, v string) rawLabel {
	kp, kl := str(k)
	vp, vl := str(v)
	return rawLabel{kp, kl, vp, vl}
}

// labelArray stores labels in blob and returns the address of the first.
func labelArray(ls []rawLabel) uintptr {
	i := alloc(4 * len(ls))
	for j, l := range ls {
		copy(blob[i+4*j:], l[:])
	}
	return addrOf(&blob[i])
}

// sliceSet: a Go 1.24+ label set, g.labels -> {data, len, cap} (go1.24 runtime/pprof/label.go).
func sliceSet(data, n, c uintptr) uintptr {
	i := alloc(3)
	blob[i], blob[i+1], blob[i+2] = data, n, c
	return addrOf(&blob[i])
}

// bucket: a bmap of map[string]string, 272 bytes (go1.23 runtime/map.go): tophash [8]uint8,
// keys [8]string, values [8]string, overflow pointer. Returns the blob index.
func bucket(top [8]byte, ls []rawLabel, overflow uintptr) int {
	i := alloc(34)
	var w uintptr
	for j := 7; j >= 0; j-- {
		w = w<<8 | uintptr(top[j])
	}
	blob[i] = w
	for j, l := range ls {
		blob[i+1+2*j], blob[i+2+2*j] = l[0], l[1]
		blob[i+17+2*j], blob[i+18+2*j] = l[2], l[3]
	}
	blob[i+33] = overflow
	return i
}

// mapSet: a Go 1.19-1.23 label set, g.labels -> cell holding *hmap (labelMap is a map
// type); hmap is count, flags/B/noverflow/hash0, buckets, oldbuckets, nevacuate, extra
// (go1.23 runtime/map.go).
func mapSet(count uintptr, flags, b uint8, buckets, oldbuckets uintptr) uintptr {
	h := alloc(6)
	blob[h] = count
	blob[h+1] = uintptr(flags) | uintptr(b)<<8 | 0x1234<<32
	blob[h+2], blob[h+3] = buckets, oldbuckets
	return cellSet(addrOf(&blob[h]))
}

func cellSet(hmap uintptr) uintptr {
	c := alloc(1)
	blob[c] = hmap
	return addrOf(&blob[c])
}

// buildSets fills blob and text with the hostile label sets.
func buildSets() {
	// Well-formed, hostile content (sorted by key, as Go 1.24+ keeps them).
	seqAt = -1
	good := []rawLabel{
		pair("garbage", "\x1b]0;pwned\x07\x1b[2J\x1b[H"),
		pair("garbage-seq", "0"),
		pair("handler", "\x1b[31mpwned\x1b[0m\r\n\t"),
		pair("nul\x00key", "\xff\xfe\x9b2J\xe2\x80\xae"),
	}
	for i := 0; i+11 <= ntext; i++ {
		if string(text[i:i+11]) == "garbage-seq" {
			seqAt = i + 11
			break
		}
	}
	if seqAt < 0 || text[seqAt] != '0' {
		panic("garbageg: garbage-seq not found")
	}
	esc := strings.Repeat("\x1b[2J\x1b]0;pwned\x07\x00\xff", 40)
	ep, _ := str(esc)
	selfp, _ := str("x")
	var strange []rawLabel
	for _, l := range [][4]uintptr{
		{unmapped, 5, ep, 5},
		{kernelText, 8, ep, 8},
		{noncanon, 3, ep, 3},
		{ep, 1 << 40, ep, 7},
		{ep, ^uintptr(0), ep, ^uintptr(0) - 7},
		{0, 5, 0, 5},
		{ep, 0, ep, 0},
		{selfp, 1 << 20, ep, uintptr(len(esc))},
	} {
		strange = append(strange, rawLabel(l))
	}
	var many []rawLabel
	for i := 0; i < 80; i++ {
		many = append(many, pair(fmt.Sprintf("garbage%02d\x1b[%dm", i, 30+i%8), fmt.Sprintf("v%02d\x07", i)))
	}
	goodA := labelArray(good)
	strangeA := labelArray(strange)
	manyA := labelArray(many)

	// Go 1.24+ layout.
	self := alloc(3)
	blob[self], blob[self+1], blob[self+2] = addrOf(&blob[self]), 3, 3
	sets = append(sets,
		sliceSet(goodA, 4, 4),
		sliceSet(manyA, 1<<62, 1<<62),
		sliceSet(strangeA, 8, 8),
		sliceSet(unmapped, 4, 4),
		sliceSet(kernelText, 2, 2),
		sliceSet(noncanon, 2, 2),
		sliceSet(goodA, ^uintptr(0), ^uintptr(0)),
		addrOf(&blob[self]),
		sliceSet(goodA, 0, 1<<62),
		sliceSet(0, 5, 5),
	)

	// Go 1.19-1.23 layout.
	var top3, topAll, topEvac [8]byte
	for j := 0; j < 8; j++ {
		topAll[j] = 0xff - byte(j)
		topEvac[j] = 2 + byte(j%3)
	}
	top3[0], top3[1], top3[2], top3[3] = 5, 6, 7, 8
	bkGood := bucket(top3, good, 0)
	// Four consecutive buckets for B=2: the good one and three of strange pairs.
	bk4 := bucket(top3, good, 0)
	for j := 0; j < 3; j++ {
		bucket(topAll, strange, 0)
	}
	bkL1 := bucket(topAll, strange, 0)
	bkL2 := bucket(topAll, good, addrOf(&blob[bkL1]))
	blob[bkL1+33] = addrOf(&blob[bkL2])
	bkSelf := bucket(topAll, many[:8], 0)
	blob[bkSelf+33] = addrOf(&blob[bkSelf])
	bkEvac := bucket(topEvac, good, 0)
	bkStrange := bucket(topAll, strange, 0)
	sets = append(sets,
		mapSet(4, 0, 0, addrOf(&blob[bkGood]), 0),
		mapSet(1<<62, 0, 63, addrOf(&blob[bkGood]), 0),
		mapSet(3, 0, 40, addrOf(&blob[bkGood]), 0),
		mapSet(1000, 0, 0, addrOf(&blob[bkL1]), 0),
		mapSet(50, 0, 0, addrOf(&blob[bkSelf]), 0),
		mapSet(3, 8, 2, addrOf(&blob[bk4]), unmapped),
		mapSet(3, 0, 2, addrOf(&blob[bk4]), addrOf(&blob[bkL1])),
		cellSet(unmapped),
		cellSet(kernelText),
		mapSet(2, 0, 0, kernelText, 0),
		mapSet(8, 0, 0, addrOf(&blob[bkEvac]), 0),
		mapSet(8, 0, 0, addrOf(&blob[bkStrange]), 0),
		mapSet(^uintptr(0), 0xff, 0xff, noncanon, noncanon),
	)

	// Direct garbage in g.labels: never a heap or stack address (the collector would
	// look at those), only addresses outside the Go heap.
	sets = append(sets, unmapped, noncanon, kernelText, 0x10, ep+3)
}

// findLabelsOffset finds g.labels: the word of main's g that is 0 without labels, follows
// two different label sets, and comes back to the first.
func findLabelsOffset() (uintptr, error) {
	const nw = 64 // 512 bytes; g.labels is at 344 to 360 in Go 1.19-1.27
	g := getg()
	snap := func() (s [nw]uintptr) {
		for i := range s {
			s[i] = word(g + uintptr(8*i))
		}
		return
	}
	bg := context.Background()
	ctx1 := pprof.WithLabels(bg, pprof.Labels("probe", "1"))
	ctx2 := pprof.WithLabels(bg, pprof.Labels("probe", "2"))
	pprof.SetGoroutineLabels(bg)
	s0 := snap()
	pprof.SetGoroutineLabels(ctx1)
	s1 := snap()
	pprof.SetGoroutineLabels(ctx2)
	s2 := snap()
	pprof.SetGoroutineLabels(ctx1)
	s3 := snap()
	pprof.SetGoroutineLabels(bg)
	s4 := snap()
	var found []uintptr
	for i := 0; i < nw; i++ {
		if s0[i] == 0 && s4[i] == 0 && s1[i] != 0 && s2[i] != 0 && s1[i] != s2[i] && s3[i] == s1[i] {
			found = append(found, uintptr(8*i))
		}
	}
	if len(found) != 1 {
		return 0, fmt.Errorf("g.labels offset: %d candidates %v", len(found), found)
	}
	return found[0], nil
}

// goid parses the current goroutine's id from its traceback header ("goroutine N [").
func goid() int64 {
	var b [64]byte
	n := runtime.Stack(b[:], false)
	f := strings.Fields(string(b[:n]))
	if len(f) < 2 {
		return -1
	}
	id, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return -1
	}
	return id
}

func addWorkerG(g uintptr) {
	workerGs[nworkerGs.Add(1)-1] = g
}

// controlWork and labelsWork have the same body, not a shared callee, so that a sample's
// leaf function says which kind of goroutine it came from.
//
//go:noinline
func controlWork(x uint64) uint64 {
	for i := 0; i < 1<<16; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

//go:noinline
func labelsWork(x uint64) uint64 {
	for i := 0; i < 1<<16; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// preemptPoint lets the scheduler and the collector's stop-the-world in between spinRegs
// calls: a loop of assembly calls has no other safe point (assembly is never preempted
// asynchronously, and small leaf functions get no stack check: cmd/internal/obj/x86
// obj6.go marks them NOSPLIT), so the world could never stop. A non-leaf function keeps
// its prologue's stack check, which is where a preemption request is seen.
//
//go:noinline
func preemptPoint() { preemptLeaf() }

//go:noinline
func preemptLeaf() {}

type worker struct {
	goid int64
	g    uintptr
}

func control(w *worker, ready *sync.WaitGroup, done *sync.WaitGroup) {
	defer done.Done()
	pprof.Do(context.Background(), pprof.Labels("handler", "ok"), func(context.Context) {
		w.goid, w.g = goid(), getg()
		controlG = w.g
		ready.Done()
		x := uint64(1)
		for !stopFlag.Load() {
			x = controlWork(x)
		}
		sink.Add(x)
	})
}

// regs runs spinRegs with a table of garbage register values rebuilt before every call
// (the worker may have moved to another thread: its m, g0 and fake g change).
// forge: LockOSThread and a fake m that passes every pointer check.
func regs(id int, forge bool, w *worker, ready *sync.WaitGroup, done *sync.WaitGroup) {
	defer done.Done()
	name := "r" + strconv.Itoa(id)
	if forge {
		name = "forge"
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	pprof.Do(context.Background(), pprof.Labels("handler", "regs", "worker", name), func(context.Context) {
		w.goid, w.g = goid(), getg()
		if forge {
			var err error
			if goidOff, err = findGoidOffset(w.g, w.goid); err != nil {
				fmt.Fprintln(os.Stderr, "garbageg:", err)
				os.Exit(1)
			}
		} else {
			addWorkerG(w.g)
		}
		ready.Done()
		var tab [64]uintptr
		var local [8]uintptr
		me := w.g
		fg := &fakeG[id]
		fm := &fakeM[id]
		gWords := int(labelsOff/8) + 8
		for !stopFlag.Load() {
			m := word(me + offGM)
			g0 := word(m)
			n := 0
			put := func(v uintptr) {
				if n < 56 {
					tab[n] = v
					n++
				}
			}
			if forge {
				// This worker's own running g (status, stack) claiming the control
				// goroutine's goid and labels, on a copy of the real m whose curg
				// (and lockedg) is the fake g.
				for i := 0; i < gWords; i++ {
					fg[i] = word(me + uintptr(8*i))
				}
				fg[goidOff/8] = uintptr(controlGoid)
				fg[labelsOff/8] = word(controlG + labelsOff)
				for i := range fm {
					v := word(m + uintptr(8*i))
					if v == me {
						v = addrOf(&fg[0])
					}
					fm[i] = v
				}
				fg[offGM/8] = addrOf(&fm[0])
				put(addrOf(&fg[0]))
			} else {
				// The control goroutine's g (its goid, its handler=ok labels, its
				// status) moved onto this worker's stack and m.
				for i := 0; i < gWords; i++ {
					fg[i] = word(controlG + uintptr(8*i))
				}
				fg[0], fg[1] = word(me), word(me+8)
				fg[offGM/8] = m
				if only == "" || only == "garbage" {
					for _, v := range [...]uintptr{
						0, 1, 8, 0x30, 0x1000, unmapped, unmapped2, noncanon, noncanon2,
						0xdeadbeefdeadbeef, kernelText, kernelMap,
						^uintptr(0) - 47, ^uintptr(0) - 7, // g.m wraps to 0 and to 40
						addrOf(&local[0]), addrOf(&local[3]) + 3, // own stack
						me + 8, me - offGM, me + 1, // own g, shifted
					} {
						put(v)
					}
				}
				if only == "" || only == "own" || only == "self" {
					put(me)
				}
				if only == "" || only == "own" || only == "m" {
					put(m)
				}
				if only == "" || only == "own" || only == "g0" {
					put(g0)
				}
				if only == "fakeg" { // not by default: see -only in the usage above
					put(addrOf(&fg[0]))
				}
				if only == "" || only == "controlg" {
					put(controlG)
					put(controlG + 8)
				}
				if only == "" || only == "workers" {
					for i := int32(0); i < nworkerGs.Load(); i++ {
						put(workerGs[i])
					}
				}
				if only == "" || only == "sets" {
					for _, v := range sets[:8] {
						put(v)
					}
				}
			}
			for i := 0; i < 8; i++ {
				tab[n+i] = tab[i%n]
			}
			nvalues.Store(int32(n))
			sink.Add(spinRegs(&tab[0], uintptr(n), 64))
			preemptPoint()
			local[0]++
		}
	})
}

var (
	controlGoid int64
	goidOff     uintptr // byte offset of g.goid (for -forge), found by findGoidOffset
	nvalues     atomic.Int32
	only        string // -only: one group of register values
)

// findGoidOffset finds g.goid: the word that holds each goroutine's own id in both the
// control goroutine's g and this one's.
func findGoidOffset(me uintptr, id int64) (uintptr, error) {
	var found []uintptr
	for off := uintptr(offGM + 8); off < labelsOff; off += 8 {
		if word(me+off) == uintptr(id) && word(controlG+off) == uintptr(controlGoid) {
			found = append(found, off)
		}
	}
	if len(found) != 1 {
		return 0, fmt.Errorf("g.goid offset: %d candidates %v", len(found), found)
	}
	return found[0], nil
}

// labelsWorker switches its own g.labels among the hostile sets, one per unit of time.
// It has no labels of its own (main has none when it starts it), so no heap pointer is
// ever overwritten; it clears g.labels before it returns.
func labelsWorker(unit time.Duration, w *worker, ready *sync.WaitGroup, done *sync.WaitGroup) {
	defer done.Done()
	w.goid, w.g = goid(), getg()
	addWorkerG(w.g)
	slot := (*uintptr)(unsafe.Pointer(w.g + labelsOff))
	if *slot != 0 {
		fmt.Fprintln(os.Stderr, "garbageg: a labels worker started with labels")
		os.Exit(1)
	}
	ready.Done()
	x := uint64(w.goid)
	for k := 0; !stopFlag.Load(); k++ {
		*slot = sets[k%len(sets)]
		for t0 := time.Now(); time.Since(t0) < unit && !stopFlag.Load(); {
			x = labelsWork(x)
		}
		// Change the well-formed sets' bytes under the same pointers too
		// (garbage-seq cycles through "0" to "9").
		text[seqAt] = '0' + byte(k%10)
	}
	*slot = 0
	sink.Add(x)
}

func main() {
	dur := flag.Duration("d", 3*time.Second, "how long to run")
	nregs := flag.Int("regs", 2, "goroutines with garbage in R14 and the other registers (1-8)")
	nlabels := flag.Int("labels", 2, "goroutines with garbage in g.labels")
	info := flag.String("info", "", "write goroutine ids and the g.labels offset to this file")
	forge := flag.Bool("forge", false, "one more regs worker with a fake g and a fake m")
	unit := flag.Duration("unit", 5*time.Millisecond, "how long a labels worker keeps one hostile set")
	gcEvery := flag.Duration("gc", 50*time.Millisecond, "run the garbage collector this often (0: never), so it scans the garbage")
	flag.StringVar(&only, "only", "", "regs workers use only this group of values: garbage, own (self, m, g0), fakeg, controlg, workers, sets")
	verbose := flag.Bool("v", false, "print what ran at exit")
	flag.Parse()
	if *nregs < 0 || *nregs > 8 || *nlabels < 0 || *nlabels > 32 {
		fmt.Fprintln(os.Stderr, "garbageg: -regs must be 0 to 8, -labels 0 to 32")
		os.Exit(2)
	}
	if runtime.GOARCH != "amd64" {
		fmt.Fprintln(os.Stderr, "garbageg: amd64 only")
		os.Exit(2)
	}
	var err error
	if labelsOff, err = findLabelsOffset(); err != nil {
		fmt.Fprintln(os.Stderr, "garbageg:", err)
		os.Exit(1)
	}
	buildSets()

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT)
	// Start the collector's mark workers now, from main, whose labels are nil.
	runtime.GC()

	var ready, done sync.WaitGroup
	var ctl worker
	ready.Add(1)
	done.Add(1)
	go control(&ctl, &ready, &done)
	ready.Wait()
	controlGoid = ctl.goid
	rw := make([]worker, *nregs)
	lw := make([]worker, *nlabels)
	var fw worker
	for i := range rw {
		ready.Add(1)
		done.Add(1)
		go regs(i, false, &rw[i], &ready, &done)
	}
	for i := range lw {
		ready.Add(1)
		done.Add(1)
		go labelsWorker(*unit, &lw[i], &ready, &done)
	}
	if *forge {
		ready.Add(1)
		done.Add(1)
		go regs(8, true, &fw, &ready, &done)
	}
	ready.Wait()

	if *info != "" {
		var b strings.Builder
		fmt.Fprintf(&b, "go %s\nlabels_offset %d\ncontrol %d\nregs", runtime.Version(), labelsOff, ctl.goid)
		for _, w := range rw {
			fmt.Fprintf(&b, " %d", w.goid)
		}
		b.WriteString("\nlabels")
		for _, w := range lw {
			fmt.Fprintf(&b, " %d", w.goid)
		}
		b.WriteString("\n")
		if *forge {
			fmt.Fprintf(&b, "forge %d\n", fw.goid)
		}
		fmt.Fprintf(&b, "sets %d\n", len(sets))
		tmp := *info + ".tmp"
		if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "garbageg:", err)
			os.Exit(1)
		}
		if err := os.Rename(tmp, *info); err != nil {
			fmt.Fprintln(os.Stderr, "garbageg:", err)
			os.Exit(1)
		}
	}

	// The collector scans every g, with its garbage labels pointer, and changes the GC
	// generation a profiler's label cache may key on.
	end := time.After(*dur)
	var tick <-chan time.Time
	if *gcEvery > 0 {
		t := time.NewTicker(*gcEvery)
		defer t.Stop()
		tick = t.C
	}
	gcs := 0
wait:
	for {
		select {
		case <-end:
			break wait
		case <-sig:
			break wait
		case <-tick:
			runtime.GC()
			gcs++
		}
	}
	stopFlag.Store(true)
	done.Wait()
	if *verbose {
		fmt.Fprintf(os.Stderr, "garbageg: %s, g.labels at %d, %d label sets, %d register values, control goroutine %d, %d collections\n",
			runtime.Version(), labelsOff, len(sets), nvalues.Load(), ctl.goid, gcs)
	}
}
