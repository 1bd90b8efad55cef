// demo: a simulated web service to try gotop-perf on (the bundled demo for the live UI).
//
// There is no network: a load generator invents requests for a few tenants and hands them to
// a pool of workers. Each request runs its handler under pprof labels
// (handler, tenant, region), so the profiler can split CPU by any of them:
//
//	checkout   heavy: builds an order, encodes it as JSON, signs it with SHA-256, then waits
//	           for a simulated database (a channel round trip to another goroutine)
//	search     medium: tokenises a query, scores a small in-memory catalogue, sorts the hits
//	login      medium: key stretching (repeated SHA-256), then a short sleep
//	inventory  light: walks a map of stock levels and compresses a report with gzip
//	healthz    trivial
//
// Around the requests: a cache janitor that sleeps most of the time, a batch job that runs
// every few seconds, and a thread churner whose goroutines lock their OS thread and exit
// without unlocking it, so the Go runtime destroys those threads and starts new ones: the
// set of threads in the process keeps changing.
//
// Usage: demo [-d DURATION] [-rate REQUESTS_PER_SECOND] [-work N] [-workers N] [-cpuprofile FILE]
// With no -d it runs until killed. It prints its pid and then nothing. At the default
// rate it keeps about half a CPU busy.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

// A request as the load generator invents it.
type request struct {
	handler string
	tenant  string
	region  string
	user    int
	query   string
}

var (
	handlers = []struct {
		name   string
		weight int
		fn     func(*request)
	}{
		{"checkout", 20, handleCheckout},
		{"search", 40, handleSearch},
		{"login", 10, handleLogin},
		{"inventory", 10, handleInventory},
		{"healthz", 20, handleHealthz},
	}
	tenants = []string{"acme", "globex", "initech", "umbrella"}
	regions = []string{"eu-west", "us-east"}
	words   = strings.Fields("red blue green small large cotton wool linen shirt dress " +
		"shoe boot hat scarf coat jacket sock glove belt bag")
)

// served counts requests, so the optimiser cannot drop the work.
var served atomic.Int64

// ---- handlers -------------------------------------------------------------------------

type orderLine struct {
	SKU      string  `json:"sku"`
	Quantity int     `json:"qty"`
	Price    float64 `json:"price"`
}

type order struct {
	Tenant string      `json:"tenant"`
	User   int         `json:"user"`
	Lines  []orderLine `json:"lines"`
	Total  float64     `json:"total"`
	Sig    string      `json:"sig,omitempty"`
}

// dbQueries is served by the simulated database goroutine.
var dbQueries = make(chan chan struct{})

//go:noinline
func handleCheckout(r *request) {
	o := order{Tenant: r.tenant, User: r.user}
	for i := 0; i < 200; i++ {
		l := orderLine{SKU: fmt.Sprintf("%s-%04d", words[i%len(words)], i), Quantity: 1 + i%3,
			Price: float64(i%50) + 0.99}
		o.Lines = append(o.Lines, l)
		o.Total += float64(l.Quantity) * l.Price
	}
	body, _ := json.Marshal(&o)
	sum := signOrder(body)
	o.Sig = fmt.Sprintf("%x", sum[:8])

	// The payment service echoes the order back; check that it survived the round trip.
	var echo order
	if json.Unmarshal(body, &echo) != nil || len(echo.Lines) != len(o.Lines) {
		panic("checkout: order corrupted")
	}

	// Wait for the "database" to commit: the goroutine blocks on a channel.
	done := make(chan struct{})
	dbQueries <- done
	<-done
}

//go:noinline
func signOrder(body []byte) [32]byte {
	sum := sha256.Sum256(body)
	for i := 0; i < 50; i++ {
		sum = sha256.Sum256(append(body[:0:0], sum[:]...))
	}
	return sum
}

// catalogue is what search looks through.
var catalogue []string

//go:noinline
func handleSearch(r *request) {
	terms := strings.Fields(r.query)
	type hit struct {
		item  string
		score int
	}
	var hits []hit
	for _, item := range catalogue {
		if s := scoreItem(item, terms); s > 0 {
			hits = append(hits, hit{item, s})
		}
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	if len(hits) > 10 {
		hits = hits[:10]
	}
	served.Add(int64(len(hits)))
}

//go:noinline
func scoreItem(item string, terms []string) int {
	score := 0
	for _, t := range terms {
		if strings.Contains(item, t) {
			score += len(t)
		}
	}
	return score
}

//go:noinline
func handleLogin(r *request) {
	key := stretchPassword(fmt.Sprintf("user%d:%s", r.user, r.tenant))
	if key[0] == 0xff && key[1] == 0xff {
		served.Add(1)
	}
	// Pretend to call an identity provider.
	time.Sleep(2 * time.Millisecond)
}

//go:noinline
func stretchPassword(pw string) [32]byte {
	sum := sha256.Sum256([]byte(pw))
	for i := 0; i < 10000; i++ {
		sum = sha256.Sum256(sum[:])
	}
	return sum
}

var stock = map[string]int{}

//go:noinline
func handleInventory(r *request) {
	var b strings.Builder
	for sku, n := range stock {
		if n%7 == r.user%7 {
			fmt.Fprintf(&b, "%s %d\n", sku, n)
		}
	}
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestSpeed)
	w.Write([]byte(b.String()))
	w.Close()
	served.Add(int64(z.Len()))
}

//go:noinline
func handleHealthz(r *request) {
	served.Add(1)
}

// ---- the service ------------------------------------------------------------------------

// workPerRequest is how many times a request repeats its handler's work (-work): real
// requests take milliseconds, and so should these.
var workPerRequest = 8

// serve runs one request under its labels; the labels stay on the goroutine (and on any
// goroutine it starts) until the handler returns.
func serve(r *request, fn func(*request)) {
	labels := pprof.Labels("handler", r.handler, "tenant", r.tenant, "region", r.region)
	pprof.Do(context.Background(), labels, func(context.Context) {
		for i := 0; i < workPerRequest; i++ {
			fn(r)
		}
	})
	served.Add(1)
}

//go:noinline
func worker(queue <-chan *request) {
	for r := range queue {
		for _, h := range handlers {
			if h.name == r.handler {
				serve(r, h.fn)
				break
			}
		}
	}
}

// loadGenerator invents rate requests per second, in small bursts.
func loadGenerator(queue chan<- *request, rate int) {
	rng := rand.New(rand.NewSource(1))
	total := 0
	for _, h := range handlers {
		total += h.weight
	}
	const tick = 10 * time.Millisecond
	perTick := rate / int(time.Second/tick)
	if perTick < 1 {
		perTick = 1
	}
	for range time.Tick(tick) {
		for i := 0; i < perTick; i++ {
			pick := rng.Intn(total)
			h := handlers[0]
			for _, h = range handlers {
				if pick < h.weight {
					break
				}
				pick -= h.weight
			}
			r := &request{
				handler: h.name,
				// Tenants are skewed: acme sends the most traffic.
				tenant: tenants[rng.Intn(len(tenants))*rng.Intn(2)],
				region: regions[rng.Intn(len(regions))],
				user:   rng.Intn(100000),
				query:  words[rng.Intn(len(words))] + " " + words[rng.Intn(len(words))],
			}
			select {
			case queue <- r:
			default: // overloaded: drop the request, like a real service would
			}
		}
	}
}

// database answers queries after a simulated disk wait.
func database() {
	for done := range dbQueries {
		go func(done chan struct{}) {
			time.Sleep(3 * time.Millisecond)
			close(done)
		}(done)
	}
}

// janitor sleeps most of the time and now and then sweeps the stock map.
func janitor() {
	labels := pprof.Labels("handler", "janitor", "tenant", "-")
	pprof.Do(context.Background(), labels, func(context.Context) {
		for {
			time.Sleep(500 * time.Millisecond)
			for sku := range stock {
				served.Add(int64(len(sku)))
			}
		}
	})
}

// batchJob runs a burst of work every few seconds: the profile changes over time.
func batchJob() {
	labels := pprof.Labels("handler", "nightly-report", "tenant", "acme")
	pprof.Do(context.Background(), labels, func(context.Context) {
		for {
			time.Sleep(4 * time.Second)
			buildReport()
		}
	})
}

//go:noinline
func buildReport() {
	deadline := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(deadline) {
		for i := 0; i < 1000; i++ {
			sum := sha256.Sum256([]byte(catalogue[i]))
			served.Add(int64(sum[0]))
		}
	}
}

// threadChurner starts goroutines that lock their OS thread and exit while still locked:
// the runtime then terminates that thread instead of reusing it (Go 1.10+
// runtime.LockOSThread documentation), so threads keep appearing and disappearing.
func threadChurner() {
	for {
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			busyFor(5 * time.Millisecond)
			close(done)
			// Returning without UnlockOSThread: this thread exits.
		}()
		<-done
		time.Sleep(250 * time.Millisecond)
	}
}

//go:noinline
func busyFor(d time.Duration) {
	deadline := time.Now().Add(d)
	x := uint64(1)
	for time.Now().Before(deadline) {
		for i := 0; i < 100000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	served.Add(int64(x & 1))
}

func setup() {
	for i := 0; i < 20000; i++ {
		item := fmt.Sprintf("%s %s %s #%d", words[i%len(words)], words[(i/3)%len(words)],
			words[(i/7)%len(words)], i)
		catalogue = append(catalogue, item)
	}
	for i := 0; i < 2000; i++ {
		stock[fmt.Sprintf("sku-%05d", i)] = (i * 7919) % 1000
	}
}

func main() {
	dur := flag.Duration("d", 0, "run for this long (default: until killed)")
	rate := flag.Int("rate", 60, "requests per second")
	work := flag.Int("work", 8, "how many times each request repeats its handler's work")
	workers := flag.Int("workers", 8, "worker goroutines")
	cpuprofile := flag.String("cpuprofile", "", "also write Go's own CPU profile to this file (needs -d)")
	flag.Parse()
	if *work > 0 {
		workPerRequest = *work
	}

	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "demo:", err)
			os.Exit(1)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "demo:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}

	setup()
	fmt.Printf("demo service running, pid %d\n", os.Getpid())

	queue := make(chan *request, 256)
	for i := 0; i < *workers; i++ {
		go worker(queue)
	}
	go database()
	go janitor()
	go batchJob()
	go threadChurner()
	go loadGenerator(queue, *rate)

	if *dur > 0 {
		time.Sleep(*dur)
		return
	}
	select {}
}
