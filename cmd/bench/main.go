// Command bench measures what maestro's guarantees cost: the same tool
// calls made directly, through a bare Temporal workflow and through
// maestro, side by side on one embedded stack.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/maestro-run/maestro/internal/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg, err := bench.ParseFlags("bench", os.Args[1:])
	if err == nil {
		err = bench.Run(ctx, cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench failed:", err)
		os.Exit(1)
	}
}
