package handlers

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"mime"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/internal/pattern"
	"github.com/apysup/apysup/plan"
)

// Bounds of http handlers.
const (
	MaxHTTPBodyBytes     = canonjson.MaxGuestBytes
	DefaultHTTPTimeout   = 10 * time.Second
	MaxHTTPTimeout       = 10 * time.Minute
	MaxHTTPHeaders       = 32
	maxPlaceholderBytes  = 1024
	maxResponseHeaderLen = 64 << 10
	maxMediaTypeLen      = 255
	defaultMediaType     = "application/octet-stream"
)

var (
	placeholderRE = regexp.MustCompile(`\{([^{}]*)\}`)
	placeholderID = pattern.New("a-z_", "a-z0-9_", 64)
	headerNameRE  = pattern.Run("A-Za-z0-9!#$%&'*+.^_`|~-", 1, 64)
	bodyMethods   = map[string]bool{"POST": true, "PUT": true, "PATCH": true}
	// Headers the transport owns; a config may not set them.
	reservedHeaders = map[string]bool{"Host": true, "Content-Length": true, "Transfer-Encoding": true, "Connection": true,
		"Keep-Alive": true, "Te": true, "Trailer": true, "Upgrade": true, "Proxy-Authorization": true, "Proxy-Connection": true}
	redirectStatus = map[int]bool{301: true, 302: true, 303: true, 307: true, 308: true}
)

// httpHandler performs one request per call (see doc.go). Everything that
// decides where the request goes is host configuration; the guest's
// arguments only fill placeholders in the path and query, and the body.
type httpHandler struct {
	method  string
	tmpl    []urlPart
	scheme  string
	host    string // host:port of the template, normalised
	path    string // the template's path up to its first placeholder ("/" when it has none)
	open    bool   // a placeholder continues path
	headers http.Header
	timeout time.Duration
	maxBody int
	grant   *plan.HTTPGrant
	allowed allowedHosts // grant.AllowedHosts, for the dialer
	client  *http.Client
}

// urlPart is a literal piece of the URL template or a {name} placeholder.
type urlPart struct {
	literal string
	name    string
	inQuery bool
}

func (b *builder) http(path string, c plan.ManifestCapability, g *plan.HTTPGrant, grantPath string) any {
	if c.Spec.Playback != plan.PlaybackCaptured {
		b.problems = append(b.problems, problem(CodeHandlerMismatch, path+".kind",
			"an http handler returns transport evidence; the capability's playback must be captured"))
	}
	h := &httpHandler{headers: http.Header{}, grant: g, allowed: allowedHosts{}}
	for _, hp := range g.AllowedHosts {
		h.allowed[hp] = true
	}
	f := b.fields(path, c)
	if f == nil {
		return nil
	}
	h.method = f.Str("method", true)
	if f.Has("method") && !slices.Contains(plan.HTTPMethods, h.method) {
		f.Problem("method", "must be one of "+strings.Join(plan.HTTPMethods, ", "))
	}
	if raw := f.Str("url", true); raw != "" {
		if msg := h.parseTemplate(raw); msg != "" {
			f.Problem("url", msg)
		}
	}
	h.timeout = f.Duration("timeout", DefaultHTTPTimeout, time.Millisecond, MaxHTTPTimeout)
	h.maxBody = int(f.IntegerIn("max_body_bytes", MaxHTTPBodyBytes, 1, MaxHTTPBodyBytes))
	hdrs, names := f.StringMap("headers")
	if len(names) > MaxHTTPHeaders {
		f.Problem("headers", "has too many entries")
	}
	for _, k := range names {
		v := hdrs[k]
		if !headerNameRE.MatchString(k) || reservedHeaders[http.CanonicalHeaderKey(k)] || strings.ContainsAny(v, "\r\n\x00") {
			f.Problem("headers", "names must be HTTP tokens other than transport headers (Host, Content-Length, ...) and values one line")
			break
		}
		h.headers.Set(k, v)
	}
	f.Done()
	// The config must stay inside the grant: every request it can make goes
	// to a granted host, with a granted method, under a granted path.
	notGranted := func(key, message string) {
		b.problems = append(b.problems, problem(CodeNotGranted, f.At(key), message+" ("+grantPath+".http)"))
	}
	switch {
	case h.host != "" && !g.AllowsHost(h.host):
		notGranted("url", "the URL's host:port is not in the grant's allowed_hosts")
	case h.host != "" && !g.CoversPath(h.path, h.open):
		notGranted("url", "the URL's path up to its first placeholder is not under the grant's path_prefixes")
	}
	if slices.Contains(plan.HTTPMethods, h.method) && !g.AllowsMethod(h.method) {
		notGranted("method", "is not one of the grant's methods")
	}
	h.client = b.httpClient(h.allowed)
	return h
}

// parseTemplate splits a URL template into parts, or returns what is wrong.
// Placeholders may stand in the path and the query only: the scheme, host
// and port are fixed by the config.
func (h *httpHandler) parseTemplate(raw string) string {
	matches := placeholderRE.FindAllStringSubmatchIndex(raw, -1)
	var sub strings.Builder
	last := 0
	for _, m := range matches {
		if !placeholderID.MatchString(raw[m[2]:m[3]]) {
			return "placeholder names must match " + placeholderID.String()
		}
		sub.WriteString(raw[last:m[0]])
		sub.WriteString("x")
		last = m[1]
	}
	sub.WriteString(raw[last:])
	if strings.ContainsAny(sub.String(), "{}") {
		return "has an unbalanced { or }"
	}
	u, err := url.Parse(sub.String())
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Opaque != "" ||
		u.Fragment != "" || strings.Contains(raw, "#") {
		return "must be an absolute http or https URL without user info or fragment"
	}
	authority := u.Scheme + "://" + u.Host
	if !strings.HasPrefix(raw, authority) || (len(matches) > 0 && matches[0][0] < len(authority)) {
		return "placeholders may stand only in the path and the query"
	}
	rest := raw[len(authority):]
	if rest != "" && rest[0] != '/' && rest[0] != '?' {
		return "must be an absolute http or https URL without user info or fragment"
	}
	host, ok := urlHostPort(u)
	if !ok {
		return "has an invalid host or port"
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return "has a . or .. segment in its path"
		}
	}
	// The path as written up to the first placeholder: every request
	// path starts with it, which is what the grant's path_prefixes bound.
	h.path, h.open = rest, false
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		h.path = rest[:i]
	}
	if len(matches) > 0 && matches[0][0]-len(authority) < len(h.path) {
		h.path, h.open = rest[:matches[0][0]-len(authority)], true
	}
	if h.path == "" {
		h.path = "/"
	}
	h.scheme, h.host = u.Scheme, host
	query := strings.IndexByte(raw, '?')
	last = 0
	for _, m := range matches {
		h.tmpl = append(h.tmpl, urlPart{literal: raw[last:m[0]]},
			urlPart{name: raw[m[2]:m[3]], inQuery: query >= 0 && m[0] > query})
		last = m[1]
	}
	h.tmpl = append(h.tmpl, urlPart{literal: raw[last:]})
	return ""
}

// CallWithEvidence performs the request and returns {"status": N, "body":
// <JSON value or text>} with the transport evidence of this very request.
func (h *httpHandler) CallWithEvidence(ctx context.Context, args json.RawMessage) (json.RawMessage, broker.TransportEvidence, error) {
	var none broker.TransportEvidence
	if err := ctx.Err(); err != nil {
		return nil, none, cancelled(err)
	}
	target, body, err := h.request(args)
	if err != nil {
		return nil, none, err
	}
	runCtx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(runCtx, h.method, target.String(), bytes.NewReader(body))
	if err != nil {
		return nil, none, fail(CodeHTTPFailed)
	}
	if body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	for k, v := range h.headers {
		req.Header[k] = append([]string(nil), v...)
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, none, h.transportError(ctx, runCtx, err)
	}
	defer resp.Body.Close()
	if redirectStatus[resp.StatusCode] {
		return nil, none, fail(CodeHTTPRedirectRefused)
	}
	raw, err := readBounded(resp.Body, h.maxBody)
	switch {
	case errors.Is(err, errTooLarge):
		return nil, none, fail(CodeHTTPBodyTooLarge)
	case err != nil:
		return nil, none, h.transportError(ctx, runCtx, err)
	}
	mediaType := defaultMediaType
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err == nil && len(mt) <= maxMediaTypeLen {
		mediaType = mt
	}
	value := json.RawMessage(raw)
	if !isJSONMediaType(mediaType) || canonjson.Validate(raw, MaxHTTPBodyBytes) != nil {
		if !utf8.Valid(raw) {
			return nil, none, fail(CodeHTTPBodyNotUTF8)
		}
		value, _ = json.Marshal(string(raw))
	}
	result := []byte(`{"status":` + strconv.Itoa(resp.StatusCode) + `,"body":`)
	result = append(append(result, value...), '}')
	return result, broker.TransportEvidence{
		Kind: "http", Status: resp.StatusCode, MediaType: mediaType,
		BodyBytes: int64(len(raw)), BodySHA256: canonjson.PlainDigest(raw),
	}, nil
}

// request fills the URL template from the arguments and builds the body:
// for POST, PUT and PATCH the canonical JSON object of the arguments not
// used by a placeholder; other methods take no body, so an argument no
// placeholder uses is refused rather than silently dropped.
func (h *httpHandler) request(args json.RawMessage) (*url.URL, []byte, error) {
	var values map[string]any
	if v, err := canonjson.ParseStrict(args, canonjson.MaxGuestBytes); err != nil {
		return nil, nil, fail(CodeBadArguments)
	} else if values, _ = v.(map[string]any); values == nil {
		return nil, nil, fail(CodeBadArguments)
	}
	used := map[string]bool{}
	var sb strings.Builder
	for _, p := range h.tmpl {
		if p.name == "" {
			sb.WriteString(p.literal)
			continue
		}
		v, ok := values[p.name]
		if !ok {
			return nil, nil, fail(CodeHTTPMissingPlaceholder)
		}
		var s string
		switch v := v.(type) {
		case string:
			s = v
		case json.Number:
			s = v.String()
		default:
			return nil, nil, fail(CodeHTTPBadArgument)
		}
		if s == "" || len(s) > maxPlaceholderBytes || (!p.inQuery && (s == "." || s == "..")) {
			return nil, nil, fail(CodeHTTPBadArgument)
		}
		if p.inQuery {
			sb.WriteString(url.QueryEscape(s))
		} else {
			sb.WriteString(url.PathEscape(s))
		}
		used[p.name] = true
	}
	target, err := url.Parse(sb.String())
	if err != nil {
		return nil, nil, fail(CodeHTTPBadArgument)
	}
	// The template fixes scheme, host and the start of the path; check the
	// final URL against the grant all the same.
	if hp, ok := urlHostPort(target); !ok || target.Scheme != h.scheme || hp != h.host || !h.allowed[hp] || target.User != nil {
		return nil, nil, fail(CodeHTTPHostRefused)
	}
	if p := target.Path; !h.grant.CoversPath(cmp.Or(p, "/"), false) {
		return nil, nil, fail(CodeHTTPPathRefused)
	}
	rest := map[string]any{}
	for k, v := range values {
		if !used[k] {
			rest[k] = v
		}
	}
	if !bodyMethods[h.method] {
		if len(rest) > 0 {
			return nil, nil, fail(CodeHTTPBadArgument)
		}
		return target, nil, nil
	}
	body, err := canonjson.Marshal(rest)
	if err != nil {
		return nil, nil, fail(CodeBadArguments)
	}
	return target, body, nil
}

// transportError maps a client error to a code. The error itself (which
// names the URL) never leaves this function.
func (h *httpHandler) transportError(ctx, runCtx context.Context, err error) error {
	var ne net.Error
	switch {
	case ctx.Err() != nil:
		return cancelled(ctx.Err())
	case errors.Is(err, errHostRefused):
		return fail(CodeHTTPHostRefused)
	case runCtx.Err() != nil || (errors.As(err, &ne) && ne.Timeout()):
		return fail(CodeHTTPTimeout)
	}
	return fail(CodeHTTPFailed)
}

func isJSONMediaType(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// allowedHosts is a grant's allowed_hosts, normalised (see normalHostPort).
type allowedHosts map[string]bool

var errHostRefused = errors.New("host not allowed")

// urlHostPort is the normalised host:port a URL connects to (the scheme's
// default port when it names none).
func urlHostPort(u *url.URL) (string, bool) {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if u.Hostname() == "" || port == "" {
		return "", false
	}
	return plan.NormalHostPort(net.JoinHostPort(u.Hostname(), port))
}

// httpClient makes the client of one handler: no proxy (a proxy from the
// environment would be a second, unchecked destination), no redirects, no
// transparent decompression (the evidence digests the bytes received), and
// a dialer that connects only to allowed hosts.
func (b *builder) httpClient(allowed allowedHosts) *http.Client {
	t := &http.Transport{
		Proxy:                  nil,
		DialContext:            allowed.dial,
		DisableCompression:     true,
		MaxResponseHeaderBytes: maxResponseHeaderLen,
		MaxIdleConns:           8,
		IdleConnTimeout:        30 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
	}
	b.transports = append(b.transports, t)
	return &http.Client{
		Transport:     t,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// dial connects to addr only if the grant allows it, and only to an address
// it resolved itself: the socket is checked against that address before
// connect, so neither a second resolution nor the transport can send the
// connection elsewhere.
func (a allowedHosts) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	hp, ok := plan.NormalHostPort(addr)
	if !ok || !a[hp] || (network != "tcp" && network != "tcp4" && network != "tcp6") {
		return nil, errHostRefused
	}
	host, port, _ := net.SplitHostPort(hp)
	var ips []net.IP
	if ip := net.ParseIP(host); ip != nil {
		ips = []net.IP{ip}
	} else {
		addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil {
			return nil, err
		}
		for _, a := range addrs {
			ips = append(ips, a.IP)
		}
	}
	err := error(errHostRefused)
	for _, ip := range ips {
		if ip.IsUnspecified() || ip.IsMulticast() {
			continue
		}
		target := net.JoinHostPort(ip.String(), port)
		d := net.Dialer{Control: func(_, address string, _ syscall.RawConn) error {
			if address != target {
				return errHostRefused
			}
			return nil
		}}
		var conn net.Conn
		if conn, err = d.DialContext(ctx, "tcp", target); err == nil {
			return conn, nil
		}
	}
	return nil, err
}
