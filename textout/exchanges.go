package textout

import (
	"fmt"
	"io"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/tsinspect/tsinspect/exchange"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/internal/termsafe"
	"github.com/tsinspect/tsinspect/store"
)

// Exchanges writes the table of the exchanges command, a line per
// exchange: time (local), method, path, status, response bytes, duration
// and state, with the error of one that did not complete.
func Exchanges(w io.Writer, rows []store.Summary) error {
	w = termsafe.Writer(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tTIME\tMETHOD\tPATH\tSTATUS\tBYTES\tDURATION\tSTATE")
	for _, r := range rows {
		path := r.URL
		if u, err := url.Parse(r.URL); err == nil {
			path = u.RequestURI()
		}
		status := "-"
		if r.Status != 0 {
			status = fmt.Sprint(r.Status)
		}
		dur := "-"
		if !r.End.IsZero() {
			dur = r.End.Sub(r.Start).Round(time.Millisecond).String()
		}
		state := string(r.State)
		if r.Error != "" && r.State != "complete" {
			state += ": " + r.Error
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Start.Local().Format("15:04:05.000"), r.Method, path, status, numfmt.Bytes(r.RespBytes), dur, state)
	}
	return tw.Flush()
}

// ExchangesLimits says, a line each, what the sources of rows keep less
// of than a recording (exchange.SourceLimits).
func ExchangesLimits(rows []store.Summary) []string {
	sources := make([]string, len(rows))
	for i, r := range rows {
		sources[i] = r.Source
	}
	return exchange.SourceLimits(sources)
}
