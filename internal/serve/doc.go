// Package serve is `apysup serve`: a long-lived run service over HTTP/JSON
// (the /v1 API of docs/api.md, described by openapi.json) in front of one
// supervisor.Supervisor, and the thin client that speaks it.
//
// It owns admission (a bounded number of runs at once plus a bounded
// queue; beyond that 429), the listeners and who may use them (a Unix
// socket checked by SO_PEERCRED; TCP only with a bearer token), a bounded
// cache of sealed Plans, a bounded history of finished runs, each run's
// event stream and approval controller, and the metrics. It never lets a
// grant policy out in a response, never runs a handler kind the operator
// did not allow, and never echoes request bodies in its errors.
package serve
