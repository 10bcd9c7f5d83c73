package decode

// CatalogTexts returns the deferred-tool announcements a message text
// holds, each as the text it takes (its header line and its names, or its
// <available-deferred-tools> block), in text order: what of a text the
// catalog is read from. A redacted copy of a request keeps these and
// nothing else of the text, and decodes to the same catalog.
func CatalogTexts(text string) []string {
	var out []string
	for _, a := range scanAnnouncements(text) {
		if a.end > a.pos && a.end <= len(text) {
			out = append(out, text[a.pos:a.end])
		}
	}
	return out
}
