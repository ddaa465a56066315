// Command demo runs maestro embedded and plays a scripted call through its
// HTTP API, reading every receipt back from the providers' own APIs.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/maestro-run/maestro/internal/demo"
)

func main() {
	hold := flag.Bool("hold", false, "after the scenario, leave a refund awaiting approval for you to decide in the console, and serve until Ctrl-C")
	addr := flag.String("addr", "127.0.0.1:0", "where to serve the API and the console")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := demo.Run(ctx, demo.Config{Hold: *hold, HTTPAddr: *addr}); err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		os.Exit(1)
	}
}
