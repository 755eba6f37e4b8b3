package apysup_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/apysup/apysup"
	"github.com/apysup/apysup/internal/serve"
)

// A run sent to an `apysup serve` server, then one started and followed
// through its event stream. (The example starts a server on a temporary
// socket; a program uses the one `apysup serve` listens on, by default
// unix:/run/apysup/api.sock.)
func ExampleClient() {
	socket, stop := exampleServer()
	defer stop()

	c, err := apysup.NewClient("unix:"+socket, "")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.Run(context.Background(), apysup.RemoteRequest{Source: "import sys\nprint(6*7, sys.argv[1])", Args: []string{"x"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, res.ExitCode)
	fmt.Print(res.Stdout)

	id, err := c.Start(context.Background(), apysup.RemoteRequest{Source: "print('streamed')"})
	if err != nil {
		log.Fatal(err)
	}
	for ev, err := range c.Events(context.Background(), id) {
		if err != nil {
			log.Fatal(err)
		}
		if ev.Name == "result" {
			var r apysup.RemoteResult
			if err := json.Unmarshal(ev.Data, &r); err != nil {
				log.Fatal(err)
			}
			fmt.Print(r.Status, " ", r.Stdout)
		}
	}
	// Output:
	// ok 0
	// 42 x
	// ok streamed
}

// exampleServer serves the API on a socket in a temporary directory, as
// `apysup serve --listen unix:PATH` does.
func exampleServer() (socket string, stop func()) {
	dir, err := os.MkdirTemp("", "as-")
	if err != nil {
		log.Fatal(err)
	}
	srv, err := serve.New(serve.Config{StateDir: dir})
	if err != nil {
		log.Fatal(err)
	}
	socket = filepath.Join(dir, "api.sock")
	l, err := serve.Listen("unix:"+socket, "")
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ctx, []*serve.Listener{l}, time.Minute) }()
	return socket, func() { cancel(); <-done; os.RemoveAll(dir) }
}
