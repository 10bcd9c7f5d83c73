package sessionfiles

import "testing"

// TestErrorMessageAfterRetries counts the failed requests of a retried
// error that Claude Code gave up on: each api_error record is an attempt it
// tried again, and its error message the attempt after the last record
// (public session 39, 2.1.5: ten records, then the message for the
// eleventh attempt under its own request ID) — unless the message names
// the request ID the record before it named.
func TestErrorMessageAfterRetries(t *testing.T) {
	for _, c := range []struct {
		name       string
		messageReq string // the request ID the error message names
		want       int    // requests in the file
	}{
		{"the attempt after the retries", "req_B", 2},
		{"the same request told twice", "req_A", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			lines := []string{
				`{"type":"user","parentUuid":null,"uuid":"u1","sessionId":"s","version":"2.1.5","timestamp":"2026-01-14T10:41:15.000Z","message":{"role":"user","content":"hello"}}`,
				`{"type":"system","subtype":"api_error","parentUuid":"u1","uuid":"e1","sessionId":"s","version":"2.1.5","timestamp":"2026-01-14T10:41:23.000Z","level":"error","error":{"status":529,"requestID":"req_A","error":{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}},"retryInMs":500,"retryAttempt":1,"maxRetries":1}`,
				`{"type":"assistant","parentUuid":"e1","uuid":"a1","sessionId":"s","version":"2.1.5","timestamp":"2026-01-14T10:41:30.000Z","isApiErrorMessage":true,"message":{"id":"x","model":"<synthetic>","role":"assistant","type":"message","content":[{"type":"text","text":"API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"},\"request_id\":\"` + c.messageReq + `\"}"}],"stop_reason":"stop_sequence","usage":{"input_tokens":0,"output_tokens":0}}}`,
			}
			s := openLines(t, lines)
			if s.Len() != c.want {
				t.Fatalf("%d requests, want %d", s.Len(), c.want)
			}
			for i := range s.Len() {
				if ex := s.Exchange(i); ex.Status != 529 {
					t.Errorf("request %d: status %d, want 529", i+1, ex.Status)
				}
			}
		})
	}
}
