package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/tsinspect/tsinspect/report"
	"github.com/tsinspect/tsinspect/source"
)

func main() {
	f, _ := os.Create(os.Args[2])
	pprof.StartCPUProfile(f)
	t := time.Now()
	b, err := source.Load(os.Args[1], os.Stderr)
	if err != nil {
		panic(err)
	}
	t1 := time.Since(t)
	s := b.Session()
	t2 := time.Since(t)
	r := report.Build(s, "x")
	t3 := time.Since(t)
	pprof.StopCPUProfile()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Println(len(r.Turns), t1, t2, t3, ms.HeapInuse>>20, "MiB in use")
	h, _ := os.Create(os.Args[2] + ".heap")
	pprof.WriteHeapProfile(h)
}
