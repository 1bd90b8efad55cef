// hotline.go: functions whose hot spot is on one known source line, for the annotate
// view's tests: main.hotLoop spends its time on the line marked HOT LOOP; main.inlined in
// code of main.mix inlined at the line marked INLINE SITE, on the line marked INLINED
// BODY. The tests look for the markers, so lines may move. -d: how long to run (0: until
// killed).
package main

import (
	"flag"
	"fmt"
	"time"
)

func mix(x uint64) uint64 {
	x ^= x >> 29; x *= 0xbf58476d1ce4e5b9; x ^= x >> 32; x *= 0x94d049bb133111eb; return x ^ (x >> 31) // INLINED BODY
}

//go:noinline
func hotLoop(n int) uint64 {
	s := uint64(1)
	for i := 0; i < n; i++ { s = s*6364136223846793005 + (uint64(i) ^ (s >> 17)) } // HOT LOOP
	return s
}

//go:noinline
func inlined(n int) uint64 {
	s := uint64(1)
	for i := 0; i < n; i++ {
		s = mix(s + uint64(i)) // INLINE SITE
	}
	return s
}

func main() {
	d := flag.Duration("d", 0, "how long to run (0: until killed)")
	flag.Parse()
	deadline := time.Now().Add(*d)
	var sink uint64
	for *d == 0 || time.Now().Before(deadline) {
		sink += hotLoop(20000000)
		sink += inlined(10000000)
	}
	fmt.Println(sink)
}
