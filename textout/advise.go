package textout

import (
	"fmt"
	"io"

	"github.com/tsinspect/tsinspect/advice"
	"github.com/tsinspect/tsinspect/internal/numfmt"
	"github.com/tsinspect/tsinspect/pricing"
)

// ToolCosts writes what each tool, or each MCP server's tools (by:
// advice.ByTool or advice.ByServer), did and cost over the sessions
// read, the costliest first, with a line saying what the dollars count.
func ToolCosts(w io.Writer, rows []advice.ToolCost, by string) error {
	name := "tool"
	if by == advice.ByServer {
		name = "MCP server"
	}
	cols := []column{{head: name}, {head: "sessions", right: true}, {head: "calls", right: true}, {head: "errors", right: true},
		{head: "result tok", right: true}, {head: "schema tok", right: true}, {head: "searches", right: true}, {head: "blind", right: true},
		{head: "results", right: true}, {head: "searches $", right: true}, {head: "schema $", right: true}, {head: "blind $", right: true},
		{head: "rewrites $", right: true}, {head: "cost", right: true}}
	table := [][]string{header(cols)}
	var total float64
	for _, r := range rows {
		schema := "?"
		if r.SchemaTokens > 0 {
			schema = numfmt.Thousands(r.SchemaTokens)
		}
		total += r.CostUSD
		table = append(table, []string{r.Name, fmt.Sprint(r.Sessions), numfmt.Thousands(int64(r.Calls)), fmt.Sprint(r.Errors),
			numfmt.Thousands(r.ResultTokens), schema, fmt.Sprint(r.Searches), fmt.Sprint(r.Blind),
			usd(r.ResultUSD), usd(r.SearchUSD), usd(r.SchemaUSD), usd(r.BlindUSD), usd(r.RewriteUSD), usd(r.CostUSD)})
	}
	if err := writeTable(w, cols, table); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%s, %s in all. The dollars count each result once, at the rate its request wrote new tokens (later requests read it from the cache, not counted); the searches that loaded a tool before its first call (their round trips); its schema where sent whole without a search; the blind calls Claude Code refused; and its share of the cache rewrites right after a search loaded it. Schema sizes are those the requests or the files show (? where none did); result tokens are estimates from their text.\n",
		numfmt.Count(len(rows), name, name+"s"), usd(total))
	return err
}

// AdviseCosts writes advise --by's table (by: advice.ByTool or
// advice.ByServer), or its rows as JSON Lines.
func AdviseCosts(w io.Writer, r *advice.Result, by string, asJSON bool) error {
	rows := r.Tools
	if by == advice.ByServer {
		rows = r.Servers
	}
	if asJSON {
		return JSONLines(w, rows)
	}
	return ToolCosts(w, rows, by)
}

// usd writes dollars as every listing does.
func usd(v float64) string { return pricing.Format(v, true) }
