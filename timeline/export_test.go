package timeline

// BuilderWork says how many exchanges b has decoded and how many turns it
// has analysed since it was made.
func BuilderWork(b *Builder) (decoded, analysed int) { return b.decodes, b.memo.runs }
