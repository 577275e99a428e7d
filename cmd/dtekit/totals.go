package main

import (
	"context"
	"fmt"
)

func runTotals(ctx context.Context, env *cmdEnv, args []string) int {
	fmt.Fprintln(env.stderr, "dtekit: not implemented yet")
	return 2
}
