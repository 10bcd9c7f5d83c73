package sessionfiles

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
)

// FuzzMember holds member to encoding/json: on valid JSON, what it finds
// (when it says it can tell) is what decoding into a struct field gives.
func FuzzMember(f *testing.F) {
	for _, s := range []string{
		`{"content":[1,2]}`, `{"Content":"a","content":"b"}`, `{"content":"a","CONTENT":{"x":1}}`,
		`{"model":"m","content":null}`, `{ "content" : [ {"a":"}"} ] , "x":1}`, `{"\u0063ontent":1}`,
		`{"content":1,"cont\u00e9nt":2}`, `[]`, `null`, `"s"`, `{}`, `{"other":{"content":5}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		var want struct {
			Content json.RawMessage `json:"content"`
		}
		werr := json.Unmarshal(b, &want)
		got, ok := member(b, "content")
		if !ok {
			return
		}
		if werr != nil {
			t.Fatalf("member read %q of %q, which encoding/json refuses: %v", got, b, werr)
		}
		if !bytes.Equal(got, want.Content) {
			t.Fatalf("member(%q) = %q, encoding/json %q", b, got, want.Content)
		}
	})
}

// publicAnswers are the answers of every public session, and the files
// read.
func publicAnswers(t *testing.T) (answers [][]*record, files []string) {
	t.Helper()
	files, _ = filepath.Glob(filepath.Join("..", "source", "testdata", "public", "*", "*.jsonl"))
	for _, f := range files {
		s, err := Open(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range s.reqs {
			if len(q.answer) > 0 {
				answers = append(answers, q.answer)
			}
		}
	}
	return answers, files
}

// TestAnswerBodyAsEncodingJSON holds the answer bodies written from the
// records' bytes to those encoding/json writes, on every answer of the
// public sessions and on hand-made shapes (keys out of order, repeated,
// HTML's characters, white space, content that is no list).
func TestAnswerBodyAsEncodingJSON(t *testing.T) {
	answers, files := publicAnswers(t)
	if len(files) > 0 && len(answers) < 100 {
		t.Fatalf("%d answers in %d public files", len(answers), len(files))
	}
	for _, msgs := range [][]string{
		{`{"id":"m","role":"assistant","content":[{"type":"text","text":"a <b> & c \u2028"}],"model":"x","usage":{"output_tokens":1}}`},
		{`{ "z" : 1 , "content" : [ { "type" : "text" , "text" : "x y" } ] , "a" : [ 1 , 2 ] }`, `{"z":2,"z":3,"content":[{"type":"tool_use","input":{"q":"<&>"}}]}`},
		{`{"content":"a string"}`}, {`{"content":null,"b":true}`}, {`{"Content":[1],"content":[2]}`}, {`{"k\"q":1,"content":[]}`},
		{`[]`}, {`{"a":1}`},
	} {
		var rs []*record
		for _, m := range msgs {
			rs = append(rs, &record{Message: json.RawMessage(m)})
		}
		answers = append(answers, rs)
	}
	fast := 0
	for i, rs := range answers {
		want := answerBodySlow(rs)
		a, ok := answerOf(rs)
		if !ok {
			continue
		}
		got := a.body()
		if a.Size != len(got) {
			t.Fatalf("answer %d: counted %d bytes, wrote %d", i, a.Size, len(got))
		}
		fast++
		if !bytes.Equal(got, want) {
			t.Fatalf("answer %d: written from the bytes\n%s\nencoding/json\n%s", i, got, want)
		}
	}
	if fast < len(answers)/2 {
		t.Errorf("only %d of %d answers written from the bytes", fast, len(answers))
	}
}

// TestAnswerModelAsMessageModel holds the model read from an answer's
// parts to messageModel's reading of its last record, where the parts
// answer: on every answer of the public sessions and on keys in other
// cases, repeated, not strings, and Claude Code's own.
func TestAnswerModelAsMessageModel(t *testing.T) {
	answers, files := publicAnswers(t)
	for _, m := range []string{`{"model":"a","content":[]}`, `{"Model":"b","model":"a"}`, `{"model":"a","MODEL":"c"}`, `{"model":1}`,
		`{"model":"` + syntheticModel + `"}`, `{"model":"a","model":"d"}`, `{}`} {
		answers = append(answers, []*record{{Message: json.RawMessage(m)}})
	}
	decided := 0
	for i, rs := range answers {
		a, ok := answerOf(rs)
		if !ok {
			continue
		}
		got, ok := a.model()
		if !ok {
			continue
		}
		decided++
		if want := messageModel(rs[len(rs)-1].Message); got != want {
			t.Errorf("answer %d (%s): model %q from the parts, %q from the message", i, rs[len(rs)-1].Message, got, want)
		}
	}
	if len(files) > 0 && decided < 100 {
		t.Errorf("%d answers' models read from the parts", decided)
	}
}
