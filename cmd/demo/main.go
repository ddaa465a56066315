// Command demo runs maestro embedded and plays a scripted call through its
// HTTP API, reading every receipt back from the providers' own APIs.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/maestro-run/maestro/internal/demo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := demo.Run(ctx, demo.Config{}); err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		os.Exit(1)
	}
}
