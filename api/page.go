package api

// Page is one page of a list: the items, the cursor of the next page
// (nil on the last) and how many items the whole list holds (contract §8).
type Page[T any] struct {
	Data       []T     `json:"data"`
	NextCursor *string `json:"next_cursor"`
	TotalCount int64   `json:"total_count"`
}

// ListParams pages a list. Every list's options type embeds it.
type ListParams struct {
	// Cursor is the NextCursor of the previous page; "" is the first.
	Cursor string
	// Limit is the page size, 1 to MaxLimit; 0 means DefaultLimit.
	Limit int
}

// Page-size bounds (contract §8).
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// AmbienteTodos, as the Ambiente of a list's options, lists both
// environments. An empty Ambiente lists the company's current environment
// only, and "certificacion" or "produccion" that environment.
const AmbienteTodos = "todos"
