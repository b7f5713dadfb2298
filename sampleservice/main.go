package sampleservice

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Main runs the sample data service standalone until SIGINT or SIGTERM.
// args are the command-line arguments after the command name; run with
// -help for the flags.
func Main(args []string, stdout io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return run(ctx, args, stdout)
}

// run is Main until ctx is done.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("sample-upstream", flag.ContinueOnError)
	fs.SetOutput(stdout)
	listen := fs.String("listen", "127.0.0.1:9090", "address to listen on")
	seed := fs.Int64("seed", 1, "dataset seed: the same seed always gives the same data")
	scale := fs.Int("scale", 1, "dataset scale: multiplies the number of transactions (200 gives about a million)")
	limitOn := fs.Bool("rate-limit", false, "enable the data node's per-IP rate limit")
	limitRate := fs.Float64("rate", 20, "rate limit: requests per second per client IP")
	burst := fs.Int("burst", 100, "rate limit: burst size")
	ban := fs.Duration("ban", 10*time.Minute, "rate limit: how long a client that keeps calling while limited is banned")
	banAfter := fs.Int("ban-after", 10, "rate limit: consecutive 429s that lead to a ban")
	defectsFlag := fs.String("defects", "on",
		"upstream defects to reproduce: on, off, or a comma-separated list of "+strings.Join(defectNames, ", "))
	cache := fs.Int("cache", defaultCacheEntries, "response cache entries (0 disables the cache)")
	blockInterval := fs.Duration("block-interval", 0,
		"append a new block of transactions this often, e.g. 2s, so the explorer's head moves (0: off)")
	blockSize := fs.Int("block-size", defaultBlockSize,
		"most transactions in a new block (each holds 1 to this many), 1.."+strconv.Itoa(maxBlockSize))
	control := fs.Bool("control", false,
		"serve the control route POST "+controlBlocksPath+"[?transactions=N], which appends a block now (for end-to-end tests)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	defects, err := ParseDefects(*defectsFlag)
	if err != nil {
		return err
	}
	if *cache == 0 {
		*cache = -1
	}

	start := time.Now()
	srv, err := Start(Config{
		Dataset: DatasetOptions{Seed: *seed, Scale: *scale},
		RateLimit: RateLimitConfig{
			Enabled: *limitOn, Rate: *limitRate, Burst: *burst, BanAfter: *banAfter, BanDuration: *ban,
		},
		Defects:      defects,
		CacheEntries: *cache,
		Blocks:       BlocksConfig{Interval: *blockInterval, PerBlock: *blockSize},
		Control:      *control,
	}, *listen)
	if err != nil {
		return err
	}
	d := srv.Service.Dataset()
	n := 0
	if d.Transactions != nil {
		n = d.Transactions.Len()
	}
	fmt.Fprintf(stdout, "sample data service ready in %s: %d assets, %d funding payments, %d delegations, %d transactions\n",
		time.Since(start).Round(time.Millisecond), len(d.Assets), len(d.FundingPayments), len(d.Delegations), n)
	fmt.Fprintf(stdout, "data node: %s/api/v2/assets  explorer: %s/rest/transactions\n", srv.URL, srv.URL)
	fmt.Fprintf(stdout, "defects: %s  rate limit: %v\n", FormatDefects(defects), *limitOn)
	if *blockInterval > 0 {
		fmt.Fprintf(stdout, "new blocks: every %s, 1 to %d transactions each\n", *blockInterval, *blockSize)
	}
	if *control {
		fmt.Fprintf(stdout, "control: POST %s%s\n", srv.URL, controlBlocksPath)
	}

	<-ctx.Done()
	fmt.Fprintln(stdout, "shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// defectNames are the -defects names, in Defects field order.
var defectNames = []string{"funding-cursors", "explorer-windows", "asset-paging-500"}

// ParseDefects reads a -defects value: "on" (all, as on the real network),
// "off" (none), or a comma-separated list of defect names
// (funding-cursors, explorer-windows, asset-paging-500).
func ParseDefects(s string) (Defects, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "on", "all", "true":
		return DefaultDefects(), nil
	case "off", "none", "false", "":
		return Defects{}, nil
	}
	var d Defects
	for name := range strings.SplitSeq(s, ",") {
		switch strings.ToLower(strings.TrimSpace(name)) {
		case defectNames[0]:
			d.FundingCursors = true
		case defectNames[1]:
			d.ExplorerTwoCursorWindows = true
		case defectNames[2]:
			d.AssetPagingErrors500 = true
		default:
			return Defects{}, fmt.Errorf("unknown defect %q (want on, off or some of %s)", name, strings.Join(defectNames, ", "))
		}
	}
	return d, nil
}

// FormatDefects is the -defects value that gives d.
func FormatDefects(d Defects) string {
	var names []string
	for i, on := range []bool{d.FundingCursors, d.ExplorerTwoCursorWindows, d.AssetPagingErrors500} {
		if on {
			names = append(names, defectNames[i])
		}
	}
	switch len(names) {
	case 0:
		return "off"
	case len(defectNames):
		return "on"
	}
	return strings.Join(names, ",")
}
