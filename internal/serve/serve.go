package serve

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"
)

// Serve serves the API on every listener until ctx ends, then drains:
// nothing more is admitted, admitted runs have grace to finish before
// they are cancelled, the Supervisor is closed (Shutdown), and the
// listeners close. Streams of finished runs end with their result.
func (s *Server) Serve(ctx context.Context, ls []*Listener, grace time.Duration) error {
	api := s.Handler()
	var servers []*http.Server
	errs := make(chan error, len(ls))
	var wg sync.WaitGroup
	for _, l := range ls {
		srv := &http.Server{
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if e := l.check(r); e != nil {
					s.fail(w, e)
					return
				}
				api.ServeHTTP(w, r)
			}),
			ConnContext: l.conn,
			// "OPTIONS *" is the API's to answer (a typed error), not
			// net/http's plain 200.
			DisableGeneralOptionsHandler: true,
			ReadHeaderTimeout:            10 * time.Second,
			MaxHeaderBytes:               64 << 10,
		}
		servers = append(servers, srv)
		wg.Go(func() {
			if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
				errs <- err
			}
		})
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errs:
	}
	graceCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := s.Shutdown(graceCtx)
	for _, srv := range servers {
		// Runs have ended: what is left are idle connections and streams
		// that end now.
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		if srv.Shutdown(closeCtx) != nil {
			srv.Close()
		}
		cancel()
	}
	wg.Wait()
	return errors.Join(serveErr, err)
}
