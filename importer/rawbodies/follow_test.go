package rawbodies

import (
	"context"
	"errors"
	"testing"

	"github.com/tsinspect/tsinspect/exchange"
)

// memSink keeps what a Follower writes; fail makes every write fail.
type memSink struct {
	rows map[int64]exchange.Exchange
	next int64
	fail error
}

func (m *memSink) Insert(_ context.Context, ex *exchange.Exchange) error {
	if m.fail != nil {
		return m.fail
	}
	m.next++
	ex.ID = m.next
	m.rows[ex.ID] = *ex
	return nil
}

func (m *memSink) Update(_ context.Context, ex *exchange.Exchange) error {
	if m.fail != nil {
		return m.fail
	}
	m.rows[ex.ID] = *ex
	return nil
}

// TestFollower copies the recorded directory into a sink once, telling
// each ended exchange once, and counts a failing sink's writes, telling
// the first.
func TestFollower(t *testing.T) {
	sink := &memSink{rows: map[int64]exchange.Exchange{}}
	var ended []exchange.State
	f := NewFollower(Open(recorded, Options{}), sink, func(ex *exchange.Exchange) { ended = append(ended, ex.State) }, nil)
	f.Poll(context.Background(), false)
	f.Poll(context.Background(), true)
	st := f.Stats()
	if len(sink.rows) != 2 || st.Exchanges != 2 || st.Complete != 1 || st.Failed != 1 || len(ended) != 2 {
		t.Fatalf("rows %d, stats %+v, ended %v", len(sink.rows), st, ended)
	}

	bad := &memSink{rows: map[int64]exchange.Exchange{}, fail: errors.New("disk full")}
	var told []error
	f = NewFollower(Open(recorded, Options{}), bad, nil, func(err error) { told = append(told, err) })
	f.Poll(context.Background(), true)
	if st := f.Stats(); st.WriteErrors != 2 || st.FirstError != "disk full" || len(told) != 1 {
		t.Errorf("stats %+v, told %v", st, told)
	}
}
