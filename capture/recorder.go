package capture

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tsinspect/tsinspect/contentcoding"
	"github.com/tsinspect/tsinspect/exchange"
)

// Sink is where recorded exchanges go; store.DB implements it. Insert
// must set ex.ID.
type Sink interface {
	Insert(ctx context.Context, ex *exchange.Exchange) error
	Update(ctx context.Context, ex *exchange.Exchange) error
}

// Stats counts what a recorder did.
type Stats struct {
	Exchanges     int   // exchanges seen on intercepted hosts
	Complete      int   // of which ended complete
	Failed        int   // upstream failed or client aborted
	ReqBytes      int64 // request body bytes
	RespBytes     int64 // response body bytes as received
	RecordErrors  int   // writes to the capture that failed
	FirstRecordEr string
	// Lost counts the exchanges whose final state never reached the
	// capture (absent, or left in flight there). A write that fails does
	// not stop the recorder: the next one of the same exchange inserts it
	// afresh if it was never stored, so recording resumes once the capture
	// can be written again.
	Lost int
	// Dropped counts the writes given up because the writer was more than
	// MaxQueuedBytes behind (each also counted in RecordErrors).
	Dropped int
}

// MaxQueuedBytes bounds the bodies waiting for the writer: a write that
// would take the queue past it is dropped and counted rather than let
// memory grow without end.
const MaxQueuedBytes = 256 << 20

// coalesceAbove: once the queue holds more body bytes than this, a newer
// state of an exchange replaces its write still queued. Below it every
// state is written (and notified) in turn.
const coalesceAbove = 32 << 20

// op is one queued write: an insert (first time a key is seen) or an
// update of an already inserted exchange.
type op struct {
	key   int64
	ex    exchange.Exchange // a snapshot: the proxy goroutine keeps its own
	final bool              // the exchange has ended: decode its body
}

// Recorder writes exchanges to a Sink from one goroutine, so that the proxy
// never waits on the disk. A failed write is counted and reported once on
// errw; traffic is never affected.
type Recorder struct {
	sink Sink
	errw io.Writer

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []*op
	queued  map[int64]*op // key -> its write still in the queue
	bytes   int64         // body bytes in the queue
	closed  bool
	nextKey int
	stats   Stats
	ids     map[int64]int64  // key -> store ID
	held    map[int64]*entry // key -> an entry whose first write is held back
	done    chan struct{}
	notify  func(ex *exchange.Exchange)
}

// NewRecorder starts a recorder writing to sink. Errors are reported on
// errw (once; later ones are only counted). notify, when not nil, is called
// from the writer goroutine after each write with the exchange as written
// (its ID set; its State says whether it is still in flight).
func NewRecorder(sink Sink, errw io.Writer, notify func(ex *exchange.Exchange)) *Recorder {
	r := &Recorder{sink: sink, errw: errw, ids: map[int64]int64{}, queued: map[int64]*op{}, held: map[int64]*entry{}, done: make(chan struct{}), notify: notify}
	r.cond = sync.NewCond(&r.mu)
	go r.loop()
	return r
}

// entry is an exchange the recorder has been told of: its key and its
// first write, an insert of its state when it began. That write is held
// back rather than queued at once, so that the writer's work (compressing
// the request, the SQLite insert) does not compete for the processor with
// forwarding the response: an exchange that ends while it is held is
// written once, in its final state.
type entry struct {
	r     *Recorder
	key   int64
	first op
	once  sync.Once
	timer *time.Timer // queues the first write when the hold is over
}

// begin assigns a key to a new exchange and takes a snapshot of it for
// its first write. With hold > 0 that write waits for finish, and at most
// hold: an exchange under way longer (a slow upstream, a long stream) is
// in the capture, and the live view, in flight meanwhile. With hold <= 0
// it is queued at once.
func (r *Recorder) begin(ex *exchange.Exchange, hold time.Duration) *entry {
	e := &entry{r: r, first: op{ex: snapshot(ex)}}
	if hold > 0 {
		e.timer = time.AfterFunc(hold, e.queue)
	}
	r.mu.Lock()
	r.nextKey++
	e.key = int64(r.nextKey)
	e.first.key = e.key
	r.stats.Exchanges++
	r.stats.ReqBytes += int64(len(ex.ReqBody))
	if hold > 0 {
		r.held[e.key] = e
	}
	r.mu.Unlock()
	if hold <= 0 {
		e.queue()
	}
	return e
}

// queue queues the first write unless it was queued or dropped already.
func (e *entry) queue() {
	e.once.Do(func() {
		e.r.mu.Lock()
		delete(e.r.held, e.key)
		e.r.push(e.first)
		e.r.mu.Unlock()
		e.first = op{}
	})
}

// finish queues the final state of an exchange. If its first write is
// still held, that write is dropped: the final state is inserted instead.
func (r *Recorder) finish(e *entry, ex *exchange.Exchange) {
	if e.timer != nil {
		e.timer.Stop()
	}
	e.once.Do(func() { e.first = op{} })
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.held, e.key)
	r.stats.RespBytes += int64(len(ex.RespBody))
	switch ex.State {
	case exchange.StateComplete:
		r.stats.Complete++
	case exchange.StateUpstreamFailed, exchange.StateClientAborted:
		r.stats.Failed++
	}
	r.push(op{key: e.key, ex: snapshot(ex), final: true})
}

// progress queues the state of an exchange whose response is still
// arriving, so that the capture (and a live view of it) shows how far it
// has come. While the first write is held back nothing is queued: the
// exchange may yet be written once, whole.
func (r *Recorder) progress(e *entry, ex *exchange.Exchange) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, held := r.held[e.key]; held {
		return
	}
	r.push(op{key: e.key, ex: snapshot(ex)})
}

func (r *Recorder) push(o op) {
	if r.closed {
		return
	}
	if q, ok := r.queued[o.key]; ok && r.bytes > coalesceAbove {
		// Behind, and not written yet: write the newer state in its place.
		r.bytes += bodyBytes(&o.ex) - bodyBytes(&q.ex)
		q.ex, q.final = o.ex, q.final || o.final
		return
	}
	if n := bodyBytes(&o.ex); r.bytes+n > MaxQueuedBytes {
		r.stats.Dropped++
		if o.final {
			r.stats.Lost++
		}
		r.mu.Unlock()
		r.recordError(fmt.Errorf("the writer is more than %d MB behind: an exchange was not recorded", MaxQueuedBytes>>20))
		r.mu.Lock()
		return
	}
	q := &o
	r.queue = append(r.queue, q)
	r.queued[o.key] = q
	r.bytes += bodyBytes(&o.ex)
	r.cond.Signal()
}

func bodyBytes(ex *exchange.Exchange) int64 {
	return int64(len(ex.ReqBody) + len(ex.RespBody) + len(ex.RespBodyDecoded))
}

func snapshot(ex *exchange.Exchange) exchange.Exchange {
	c := *ex
	c.ReqHeaders = exchange.Scrub(append([]exchange.Header(nil), ex.ReqHeaders...))
	c.RespHeaders = exchange.Scrub(append([]exchange.Header(nil), ex.RespHeaders...))
	c.Chunks = append([]exchange.Chunk(nil), ex.Chunks...)
	return c
}

func (r *Recorder) loop() {
	defer close(r.done)
	ctx := context.Background()
	for {
		r.mu.Lock()
		for len(r.queue) == 0 && !r.closed {
			r.cond.Wait()
		}
		if len(r.queue) == 0 && r.closed {
			r.mu.Unlock()
			return
		}
		o := *r.queue[0]
		r.queue[0] = nil
		r.queue = r.queue[1:]
		delete(r.queued, o.key)
		r.bytes -= bodyBytes(&o.ex)
		id, seen := r.ids[o.key]
		r.mu.Unlock()

		if o.final {
			decodeBody(&o.ex)
		}
		var err error
		if seen {
			o.ex.ID = id
			err = r.sink.Update(ctx, &o.ex)
		} else {
			err = r.sink.Insert(ctx, &o.ex)
			if err == nil {
				r.mu.Lock()
				r.ids[o.key] = o.ex.ID
				r.mu.Unlock()
			}
		}
		if err != nil {
			r.recordError(err)
			if o.final {
				r.mu.Lock()
				r.stats.Lost++
				r.mu.Unlock()
			}
			continue
		}
		if r.notify != nil {
			r.notify(&o.ex)
		}
	}
}

func (r *Recorder) recordError(err error) {
	r.mu.Lock()
	first := r.stats.RecordErrors == 0
	r.stats.RecordErrors++
	if first {
		r.stats.FirstRecordEr = err.Error()
	}
	r.mu.Unlock()
	if first && r.errw != nil {
		fmt.Fprintf(r.errw, "tsinspect: cannot write to the capture (traffic goes on, later errors are only counted): %v\n", err)
	}
}

// Stats returns a copy of the counters.
func (r *Recorder) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// Close writes everything still queued and stops the writer.
func (r *Recorder) Close() Stats {
	// Exchanges begun within the hold are still under way: write them in
	// flight now, as the ones begun earlier are.
	r.mu.Lock()
	held := make([]*entry, 0, len(r.held))
	for _, e := range r.held {
		held = append(held, e)
	}
	r.mu.Unlock()
	slices.SortFunc(held, func(a, b *entry) int { return int(a.key - b.key) })
	for _, e := range held {
		if e.timer != nil {
			e.timer.Stop()
		}
		e.queue()
	}
	r.mu.Lock()
	r.closed = true
	r.cond.Broadcast()
	r.mu.Unlock()
	<-r.done
	return r.Stats()
}

// decodeBody sets RespBodyDecoded of an ended exchange whose response was
// sent with a Content-Encoding. It runs on the writer goroutine, one body
// at a time, so decoding neither delays the client nor multiplies memory
// by the number of streams; contentcoding bounds the decoded size.
func decodeBody(ex *exchange.Exchange) {
	ce := headerValue(ex.RespHeaders, "Content-Encoding")
	if ce == "" || strings.EqualFold(ce, "identity") || ex.RespBodyDecoded != nil {
		return
	}
	dec, err := contentcoding.Decode(ce, ex.RespBody)
	switch {
	case err == nil:
		ex.RespBodyDecoded = dec
	case ex.State == exchange.StateComplete && ex.Error == "":
		ex.Error = "recorded body could not be decoded: " + err.Error()
	}
}
