package main

import (
	"context"
	"fmt"
)

func notYet(ctx context.Context, env *cmdEnv, args []string) int {
	fmt.Fprintln(env.stderr, "dtekit: not implemented yet")
	return 2
}

var (
	runEmit   = notYet
	runEnvio  = notYet
	runVerify = notYet
	runCAF    = notYet
	runDemo   = notYet
)
