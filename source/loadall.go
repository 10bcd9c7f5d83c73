package source

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/tsinspect/tsinspect/timeline"
)

// LoadAll reads the capture files (or sessions) at paths at once, each as
// ReadFile does, naming on warn the rows each could not read; errs[i] is
// the error of paths[i]. Reading two takes about as long as reading the
// longer.
func LoadAll(paths []string, warn io.Writer) (bs []*timeline.Builder, errs []error) {
	bs, errs = make([]*timeline.Builder, len(paths)), make([]error, len(paths))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, path := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			resolved, err := Resolve(path, warn)
			mu.Unlock()
			if err != nil {
				errs[i] = err
				return
			}
			b, problems, err := ReadFile(context.Background(), resolved)
			if len(problems) > 0 {
				mu.Lock()
				fmt.Fprintf(warn, "tsinspect: warning: %s: %s\n", path, Summary(problems))
				mu.Unlock()
			}
			bs[i], errs[i] = b, err
		}()
	}
	wg.Wait()
	return bs, errs
}
