package sessionfiles

import (
	"bufio"
	"bytes"
	"testing"
)

// TestSniffLineAsAWholeBuffer holds sniffLine, which starts with a small
// buffer and gathers a longer line, to ReadSlice from a buffer of
// sniffHead bytes, at the lengths where they could part: around the small
// buffer's size and around sniffHead, ended by a newline or by the end of
// the file.
func TestSniffLineAsAWholeBuffer(t *testing.T) {
	for _, n := range []int{10, sniffBuffer - 1, sniffBuffer, sniffBuffer + 1, sniffHead - 1, sniffHead, sniffHead + 1, 2*sniffHead + 5} {
		for _, end := range []string{"\n", ""} {
			data := append(bytes.Repeat([]byte{'x'}, n), end...)
			data = append(data, "second\n"...)
			if end == "" {
				data = data[:n]
			}
			want, wantErr := bufio.NewReaderSize(bytes.NewReader(data), sniffHead).ReadSlice('\n')
			got, gotErr := sniffLine(bufio.NewReaderSize(bytes.NewReader(data), sniffBuffer))
			if !bytes.Equal(got, want) || gotErr != wantErr {
				t.Errorf("line of %d bytes (end %q): got %d bytes, %v; want %d bytes, %v", n, end, len(got), gotErr, len(want), wantErr)
			}
		}
	}
}
