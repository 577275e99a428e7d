package client

import (
	"context"
	"iter"

	"github.com/dtekit/dtekit/api"
)

// all iterates over every item of a list, page after page: fetch gets the
// page after cursor ("" for the first). The iteration stops at the last
// page, at the first error (yielded once, with a zero item), or when the
// loop breaks.
func all[T any](ctx context.Context, fetch func(ctx context.Context, cursor string) (*api.Page[T], error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		cursor := ""
		for {
			page, err := fetch(ctx, cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, item := range page.Data {
				if !yield(item, nil) {
					return
				}
			}
			if page.NextCursor == nil || *page.NextCursor == "" || len(page.Data) == 0 {
				return
			}
			cursor = *page.NextCursor
		}
	}
}
