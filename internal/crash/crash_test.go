package crash

import (
	"errors"
	"strings"
	"testing"
)

func boom(s []int, k int) (err error) {
	defer Recover("read x.jsonl", &err)
	_ = s[:k]
	return nil
}

func TestRecoverNamesTheOpAndThePlace(t *testing.T) {
	err := boom(nil, -1)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{"read x.jsonl: internal error at crash.boom (crash_test.go:", "slice bounds out of range", "please report"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("more than one line: %q", msg)
	}
	if err := boom([]int{1}, 1); err != nil {
		t.Errorf("no panic, error %v", err)
	}
}

func TestErrorOfAValue(t *testing.T) {
	err := func() (err error) {
		defer Recover("op", &err)
		panic(errors.New("custom"))
	}()
	if err == nil || !strings.Contains(err.Error(), "op: internal error at crash.TestErrorOfAValue") || !strings.Contains(err.Error(), "custom") {
		t.Errorf("%v", err)
	}
}
