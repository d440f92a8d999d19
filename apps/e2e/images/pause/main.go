// The sandbox ("pause") image's program for containerd's CRI, built by ../build-images.sh
// (GOTOOLCHAIN=local CGO_ENABLED=0, one file, no module). It holds the pod's namespaces: sleeps
// forever, reaps zombie children (it is PID 1 of a pod that shares its PID namespace), and exits 0
// on SIGTERM or SIGINT, like registry.k8s.io/pause.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "-v" || os.Args[1] == "--version") {
		fmt.Println("pause 3.10-local (claimkit)")
		return
	}
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "Warning: pause should be the first process")
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sigs {
		switch s {
		case syscall.SIGTERM, syscall.SIGINT:
			fmt.Fprintf(os.Stderr, "Shutting down, got signal: %v\n", s)
			os.Exit(0)
		case syscall.SIGCHLD:
			// Reap every child that has exited (signals coalesce: one SIGCHLD may stand for many).
			for {
				var ws syscall.WaitStatus
				pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
		}
	}
}
