// Command etcd is a minimal single-member etcd for the claimkit e2e control plane, built on
// go.etcd.io/etcd/server/v3/embed. It serves plain HTTP on loopback only; it is meant for
// throwaway test clusters, never for real data (fsync is off unless -fsync is given).
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func mustURL(flagName, raw string) url.URL {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		fmt.Fprintf(os.Stderr, "etcd: invalid -%s %q\n", flagName, raw)
		os.Exit(2)
	}
	return *u
}

func main() {
	dataDir := flag.String("data-dir", "", "directory for etcd data (required)")
	clientURL := flag.String("listen-client-url", "http://127.0.0.1:2379", "client URL to listen on and advertise")
	peerURL := flag.String("listen-peer-url", "http://127.0.0.1:2380", "peer URL to listen on and advertise")
	name := flag.String("name", "claimkit-e2e", "member name")
	logLevel := flag.String("log-level", "warn", "debug, info, warn, error")
	fsync := flag.Bool("fsync", false, "fsync writes (off by default: test data only)")
	quota := flag.Int64("quota-backend-bytes", 2<<30, "backend quota in bytes")
	flag.Parse()
	if *dataDir == "" {
		fmt.Fprintln(os.Stderr, "etcd: -data-dir is required")
		os.Exit(2)
	}

	cfg := embed.NewConfig()
	cfg.Name = *name
	cfg.Dir = *dataDir
	cu, pu := mustURL("listen-client-url", *clientURL), mustURL("listen-peer-url", *peerURL)
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{cu}, []url.URL{cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{pu}, []url.URL{pu}
	cfg.ListenMetricsUrls = nil
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = *logLevel
	cfg.UnsafeNoFsync = !*fsync
	cfg.QuotaBackendBytes = *quota
	cfg.AutoCompactionMode = "periodic"
	cfg.AutoCompactionRetention = "5m"

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: start: %v\n", err)
		os.Exit(1)
	}
	select {
	case <-e.Server.ReadyNotify():
		fmt.Fprintf(os.Stderr, "etcd: ready, serving %s\n", cu.String())
	case <-time.After(60 * time.Second):
		e.Server.Stop()
		fmt.Fprintln(os.Stderr, "etcd: not ready after 60s")
		os.Exit(1)
	}

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	select {
	case s := <-sigs:
		fmt.Fprintf(os.Stderr, "etcd: %v, stopping\n", s)
		e.Close()
	case err := <-e.Err():
		fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
		e.Close()
		os.Exit(1)
	}
}
