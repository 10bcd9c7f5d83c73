package decode

import (
	"reflect"
	"testing"
)

// TestSameSearchSeesEveryField: a search that differs from another in any
// one field is not the same search. A field added to Search and forgotten
// by sameSearch would make a turn show an earlier turn's value.
func TestSameSearchSeesEveryField(t *testing.T) {
	base := Search{ToolUseID: "t", Tool: "ToolSearch", Query: "q", Mode: ModeKeyword, Selected: []string{"a"},
		Input: []byte(`{}`), Results: []string{"a"}, Text: "x", ErrorCode: "e", MaxResults: 3}
	if !sameSearch(&base, &base) {
		t.Fatal("a search is not the same as itself")
	}
	typ := reflect.TypeOf(base)
	for i := 0; i < typ.NumField(); i++ {
		other := base
		f := reflect.ValueOf(&other).Elem().Field(i)
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.String:
			f.SetString(f.String() + "!")
		case reflect.Int, reflect.Int64:
			f.SetInt(f.Int() + 1)
		case reflect.Slice:
			if f.Type().Elem().Kind() == reflect.String {
				f.Set(reflect.ValueOf([]string{"a", "b"}))
			} else {
				f.SetBytes([]byte(`{"a":1}`))
			}
		case reflect.Struct:
			f.Field(0).Set(reflect.ValueOf(!f.Field(0).Bool()).Convert(f.Field(0).Type()))
		default:
			t.Fatalf("field %s: kind %s not handled by this test", typ.Field(i).Name, f.Kind())
		}
		if sameSearch(&base, &other) {
			t.Errorf("searches differing in %s are the same to sameSearch", typ.Field(i).Name)
		}
	}
}
