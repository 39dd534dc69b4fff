package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// defaultHangLimit bounds a hang fault: longer than the 1 s --request-timeout the e2e tests use, short enough that a
// client without a timeout sees a cut connection instead of waiting forever.
const defaultHangLimit = 5 * time.Second

// config is what newProxy needs; main builds it from the command line, the tests directly.
type config struct {
	Target       *url.URL          // the API server, https://HOST:PORT
	Transport    http.RoundTripper // to Target
	Log          io.Writer         // the request log (JSON lines); nil: none
	ControlToken string            // the bearer token /proxy/ requires; "": any bearer token
	HangLimit    time.Duration     // 0: defaultHangLimit
	ErrorLog     *log.Logger       // the proxy's own diagnostics; nil: discarded
	handlerDone  func()            // tests: called when the handler of a proxied request returns
}

// exchange is one proxied request on its way through the handler. Apart from cut and cancel (close-watches), its
// fields belong to the handler's goroutine (ModifyResponse and ErrorHandler run on it too).
type exchange struct {
	method, path, query, contentType string
	body                             []byte
	http1                            bool   // the client speaks HTTP/1.x (a cut closes its connection)
	fault                            string // the KIND applied, "" for none
	logged                           bool
	cancel                           context.CancelCauseFunc // of the upstream request
	cut                              atomic.Bool             // set by close-watches
	done                             chan struct{}           // closed when the handler has returned
}

type exchangeKey struct{}

// heldRequest is a request (hold) or an answer (hold-reply) waiting for POST /proxy/release.
type heldRequest struct {
	id      string
	kind    string
	ex      *exchange
	release chan struct{}
}

type proxy struct {
	cfg    config
	rp     *httputil.ReverseProxy
	faults faultSet
	logMu  sync.Mutex

	mu          sync.Mutex
	nextID      int
	held        []*heldRequest
	heldChanged chan struct{} // closed (and replaced) whenever held changes
	streams     map[*exchange]struct{}
}

var (
	errLoseReply  = errors.New("lose-reply: the answer is discarded")
	errClientGone = errors.New("the client went away while its answer was held")
	errWatchCut   = errors.New("cut by /proxy/close-watches")
)

func newProxy(cfg config) *proxy {
	if cfg.HangLimit == 0 {
		cfg.HangLimit = defaultHangLimit
	}
	if cfg.ErrorLog == nil {
		cfg.ErrorLog = log.New(io.Discard, "", 0)
	}
	p := &proxy{cfg: cfg, heldChanged: make(chan struct{}), streams: map[*exchange]struct{}{}}
	target := cfg.Target
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			// Untouched, including what Go's query parser would drop (ReverseProxy removes unparsable parameters).
			pr.Out.URL.RawQuery = pr.In.URL.RawQuery
		},
		Transport:      cfg.Transport,
		FlushInterval:  -1, // every write goes out at once: watches stream
		ErrorLog:       cfg.ErrorLog,
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.errorHandler,
	}
	return p
}

// newTransport is the client side towards the API server: TLS verified with `roots`, HTTP/2 when the server offers
// it, no proxy from the environment, no compression of its own (the client's Accept-Encoding passes through).
// Upgrade requests (exec, attach, port-forward: SPDY/3.1 or WebSocket) go over HTTP/1.1, the only protocol that can
// switch (Go's Transport keeps only WebSocket upgrades off HTTP/2 by itself).
func newTransport(roots *x509.CertPool) http.RoundTripper {
	h2 := &http.Transport{
		Proxy:               nil,
		TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:   true,
		DisableCompression:  true,
		MaxIdleConns:        100,
		MaxIdleConnsPerHost: 100,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	h1 := h2.Clone()
	h1.ForceAttemptHTTP2 = false
	h1.TLSClientConfig.NextProtos = []string{"http/1.1"}
	h1.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{} // no HTTP/2
	return &upstreamTransport{h2: h2, h1: h1}
}

type upstreamTransport struct{ h2, h1 *http.Transport }

func (t *upstreamTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Upgrade") != "" {
		return t.h1.RoundTrip(r)
	}
	return t.h2.RoundTrip(r)
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/proxy/") {
		p.serveControl(w, r)
		return
	}
	ex := &exchange{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery,
		contentType: r.Header.Get("Content-Type"), http1: r.ProtoMajor == 1, done: make(chan struct{})}
	defer func() {
		close(ex.done)
		if p.cfg.handlerDone != nil {
			p.cfg.handlerDone()
		}
	}()
	// The whole body first: it is logged, and forwarded with its length.
	body, err := io.ReadAll(r.Body)
	ex.body = body
	if err != nil {
		// The client went away (or its body broke off) before its request was complete.
		p.logRequest(ex, 0, 0)
		abort(w, ex)
		return
	}
	r.Body = http.NoBody
	if len(body) > 0 {
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	r.ContentLength = int64(len(body))
	r.TransferEncoding = nil

	kind, code := p.faults.match(r.Method, r.URL.Path)
	ex.fault = kind
	switch {
	case code != 0:
		p.logRequest(ex, code, 0)
		writeStatus(w, code, "injected fault for "+r.Method+" "+r.URL.Path)
		return
	case kind == kindDrop:
		p.logRequest(ex, 0, 0)
		abort(w, ex)
		return
	case kind == kindHang:
		p.logRequest(ex, 0, 0)
		t := time.NewTimer(p.cfg.HangLimit)
		defer t.Stop()
		select {
		case <-r.Context().Done():
		case <-t.C:
		}
		abort(w, ex)
		return
	case kind == kindHold:
		if !p.hold(r.Context(), ex, kind) {
			p.logRequest(ex, 0, 0)
			abort(w, ex)
			return
		}
	}
	p.forward(w, r, ex)
}

// forward hands the request to the ReverseProxy, on a context close-watches can cancel.
func (p *proxy) forward(w http.ResponseWriter, r *http.Request, ex *exchange) {
	ctx, cancel := context.WithCancelCause(r.Context())
	ex.cancel = cancel
	defer cancel(nil)
	defer p.removeStream(ex)
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				panic(v)
			}
			// The ReverseProxy gave up on a broken stream (a cut watch, an upstream that broke off, a client
			// gone): the client must not get a clean end of it.
			p.logRequest(ex, 0, 0)
			abort(w, ex)
		}
	}()
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(ctx, exchangeKey{}, ex)))
	if ex.cut.Load() {
		// Cut while its last bytes came: still no final chunk.
		abort(w, ex)
	}
}

// abort ends the exchange without an answer (or without the rest of one): on HTTP/1.x the TCP connection is closed
// under TLS, with no close_notify and no final chunk, as a dropped connection; on HTTP/2 the stream is reset.
func abort(w http.ResponseWriter, ex *exchange) {
	if ex.http1 {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			if tc, ok := conn.(*tls.Conn); ok {
				_ = tc.NetConn().Close()
			} else {
				_ = conn.Close()
			}
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// modifyResponse runs once the API server's answer (its header) is in, before anything of it goes to the client.
func (p *proxy) modifyResponse(resp *http.Response) error {
	ex, _ := resp.Request.Context().Value(exchangeKey{}).(*exchange)
	if ex == nil {
		return nil
	}
	switch ex.fault {
	case kindLoseReply:
		p.logRequest(ex, 0, resp.StatusCode)
		return errLoseReply
	case kindHoldReply:
		if !p.hold(resp.Request.Context(), ex, kindHoldReply) {
			p.logRequest(ex, 0, resp.StatusCode)
			return errClientGone
		}
	}
	p.logRequest(ex, resp.StatusCode, resp.StatusCode)
	if resp.StatusCode != http.StatusSwitchingProtocols && isStreaming(ex, resp) {
		p.mu.Lock()
		p.streams[ex] = struct{}{}
		p.mu.Unlock()
	}
	return nil
}

func (p *proxy) errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	ex, _ := r.Context().Value(exchangeKey{}).(*exchange)
	if ex == nil {
		writeStatus(w, http.StatusBadGateway, "mindie-fault-proxy: "+err.Error())
		return
	}
	switch {
	case errors.Is(err, errLoseReply):
		abort(w, ex)
	case ex.logged: // hold-reply whose client went away
		abort(w, ex)
	case r.Context().Err() != nil: // the client went away before the answer came
		p.logRequest(ex, 0, 0)
		abort(w, ex)
	default:
		p.cfg.ErrorLog.Printf("%s %s: %v", ex.method, ex.path, err)
		p.logRequest(ex, http.StatusBadGateway, 0)
		writeStatus(w, http.StatusBadGateway, "mindie-fault-proxy: the API server did not answer: "+err.Error())
	}
}

// isStreaming: the exchanges close-watches cuts: watches (?watch=true|1, the legacy /watch/ paths, a
// `stream=watch` content type) and followed logs (?follow=true).
func isStreaming(ex *exchange, resp *http.Response) bool {
	q, _ := url.ParseQuery(ex.query)
	for _, name := range []string{"watch", "follow"} {
		if b, err := strconv.ParseBool(q.Get(name)); err == nil && b {
			return true
		}
	}
	return strings.Contains(ex.path, "/watch/") || strings.Contains(resp.Header.Get("Content-Type"), "stream=watch")
}

func (p *proxy) removeStream(ex *exchange) {
	p.mu.Lock()
	delete(p.streams, ex)
	p.mu.Unlock()
}

// closeWatches cuts every open stream and waits (at most `limit`) until their handlers are done; returns how many.
func (p *proxy) closeWatches(limit time.Duration) int {
	p.mu.Lock()
	cut := make([]*exchange, 0, len(p.streams))
	for ex := range p.streams {
		cut = append(cut, ex)
		delete(p.streams, ex)
	}
	p.mu.Unlock()
	for _, ex := range cut {
		ex.cut.Store(true)
		ex.cancel(errWatchCut)
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	for _, ex := range cut {
		select {
		case <-ex.done:
		case <-t.C:
			return len(cut)
		}
	}
	return len(cut)
}

// hold parks the exchange until POST /proxy/release lets it go (true) or ctx ends (false: the client went away).
func (p *proxy) hold(ctx context.Context, ex *exchange, kind string) bool {
	h := &heldRequest{kind: kind, ex: ex, release: make(chan struct{})}
	p.mu.Lock()
	p.nextID++
	h.id = strconv.Itoa(p.nextID)
	p.held = append(p.held, h)
	p.changedLocked()
	p.mu.Unlock()
	select {
	case <-h.release:
		return true
	case <-ctx.Done():
		p.mu.Lock()
		for i, x := range p.held {
			if x == h {
				p.held = append(p.held[:i], p.held[i+1:]...)
				p.changedLocked()
				break
			}
		}
		p.mu.Unlock()
		return false
	}
}

func (p *proxy) changedLocked() {
	close(p.heldChanged)
	p.heldChanged = make(chan struct{})
}

// release lets the held request `id` go, or every one when id is ""; returns how many.
func (p *proxy) release(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	kept := p.held[:0]
	n := 0
	for _, h := range p.held {
		if id == "" || h.id == id {
			close(h.release)
			n++
		} else {
			kept = append(kept, h)
		}
	}
	clear(p.held[len(kept):])
	p.held = kept
	if n > 0 {
		p.changedLocked()
	}
	return n
}

// heldView is a held request as GET /proxy/held lists it.
type heldView struct {
	ID     string `json:"id"`
	Method string `json:"method"`
	Path   string `json:"path"`
	Query  string `json:"query"`
	Kind   string `json:"kind"`
}

// heldSnapshot returns the held requests (oldest first) and a channel closed at their next change.
func (p *proxy) heldSnapshot() ([]heldView, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]heldView, 0, len(p.held))
	for _, h := range p.held {
		out = append(out, heldView{ID: h.id, Method: h.ex.method, Path: h.ex.path, Query: h.ex.query, Kind: h.kind})
	}
	return out, p.heldChanged
}

// logLine is one line of the request log; the first six keys are what tests/e2e/harness.cpp reads.
type logLine struct {
	Method         string `json:"method"`
	Path           string `json:"path"`
	Query          string `json:"query"`
	ContentType    string `json:"contentType"`
	Body           string `json:"body"`
	Status         int    `json:"status"`                   // what the client got; 0: no answer
	Fault          string `json:"fault,omitempty"`          // the KIND applied
	UpstreamStatus int    `json:"upstreamStatus,omitempty"` // what the API server answered, when it was asked
}

// logRequest writes the exchange's log line, once, before the client gets anything of the answer.
func (p *proxy) logRequest(ex *exchange, status, upstream int) {
	if ex.logged {
		return
	}
	ex.logged = true
	if p.cfg.Log == nil {
		return
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	// Invalid UTF-8 in a body (protobuf) becomes U+FFFD: the log stays valid JSON.
	_ = enc.Encode(logLine{Method: ex.method, Path: ex.path, Query: ex.query, ContentType: ex.contentType,
		Body: string(ex.body), Status: status, Fault: ex.fault, UpstreamStatus: upstream})
	p.logMu.Lock()
	defer p.logMu.Unlock()
	if _, err := p.cfg.Log.Write(b.Bytes()); err != nil {
		p.cfg.ErrorLog.Printf("request log: %v", err)
	}
}
