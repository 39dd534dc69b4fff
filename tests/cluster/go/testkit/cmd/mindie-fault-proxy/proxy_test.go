package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// capWait bounds every wait of these tests: a guard against a hanging test, never a synchronisation.
const capWait = 20 * time.Second

// logSink is the request log of a test proxy: it keeps the lines and hands each one to `lines` as it is written.
type logSink struct {
	mu    sync.Mutex
	raw   []string
	lines chan logLine
}

func newLogSink() *logSink { return &logSink{lines: make(chan logLine, 1000)} }

func (s *logSink) Write(b []byte) (int, error) {
	var l logLine
	if err := json.Unmarshal(b, &l); err != nil {
		panic(fmt.Sprintf("bad log line %q: %v", b, err))
	}
	if strings.Count(string(b), "\n") != 1 || !strings.HasSuffix(string(b), "\n") {
		panic(fmt.Sprintf("a log write is not one line: %q", b))
	}
	s.mu.Lock()
	s.raw = append(s.raw, string(b))
	s.mu.Unlock()
	s.lines <- l
	return len(b), nil
}

func (s *logSink) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.raw...)
}

// next returns the next line written.
func (s *logSink) next(t *testing.T) logLine {
	t.Helper()
	select {
	case l := <-s.lines:
		return l
	case <-time.After(capWait):
		t.Fatal("no request log line")
		return logLine{}
	}
}

type testEnv struct {
	t        *testing.T
	upstream *httptest.Server
	proxy    *proxy
	front    *httptest.Server
	log      *logSink
	quit     chan struct{} // closed at the end: upstream handlers that block watch it
}

const testToken = "Bearer secret-token-of-the-test"

// newEnv starts a fake API server (`upstream`) and the proxy in front of it, both TLS with HTTP/2 and HTTP/1.1.
func newEnv(t *testing.T, upstream http.HandlerFunc, faults ...string) *testEnv {
	return newEnvWith(t, upstream, config{}, faults...)
}

func newEnvWith(t *testing.T, upstream http.HandlerFunc, cfg config, faults ...string) *testEnv {
	t.Helper()
	e := &testEnv{t: t, log: newLogSink(), quit: make(chan struct{})}
	e.upstream = httptest.NewUnstartedServer(upstream)
	e.upstream.EnableHTTP2 = true
	e.upstream.StartTLS()
	roots := x509.NewCertPool()
	roots.AddCert(e.upstream.Certificate())
	cfg.Target, _ = url.Parse(e.upstream.URL)
	cfg.Transport = newTransport(roots)
	cfg.Log = e.log
	e.proxy = newProxy(cfg)
	for _, spec := range faults {
		r, err := parseFault(spec)
		if err != nil {
			t.Fatal(err)
		}
		e.proxy.faults.add(r)
	}
	e.front = httptest.NewUnstartedServer(e.proxy)
	e.front.Config.ErrorLog = log.New(io.Discard, "", 0) // TLS handshakes of clients that go away
	e.front.EnableHTTP2 = true
	e.front.StartTLS()
	t.Cleanup(func() {
		close(e.quit)
		e.front.CloseClientConnections()
		e.front.Close()
		e.upstream.CloseClientConnections()
		e.upstream.Close()
	})
	return e
}

// client speaks HTTP/2 (h2) or HTTP/1.1 to the proxy; the HTTP/1.1 one opens a connection per request, so that Go's
// retry of an idempotent request on a reused connection cannot blur what a fault did.
func (e *testEnv) client(h2 bool) *http.Client {
	roots := x509.NewCertPool()
	roots.AddCert(e.front.Certificate())
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: h2, DisableKeepAlives: !h2}
	if !h2 {
		tr.TLSClientConfig.NextProtos = []string{"http/1.1"}
	}
	e.t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func (e *testEnv) request(ctx context.Context, method, path, body string) *http.Request {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.front.URL+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", testToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// do runs a request to the end: status and body.
func (e *testEnv) do(c *http.Client, method, path, body string) (int, string, http.Header) {
	e.t.Helper()
	resp, err := c.Do(e.request(context.Background(), method, path, body))
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: reading the body: %v", method, path, err)
	}
	return resp.StatusCode, string(b), resp.Header
}

// control calls a /proxy/ endpoint (HTTP/2) and decodes its JSON answer into v (when not nil).
func (e *testEnv) control(method, path, body string, v any) int {
	e.t.Helper()
	code, b, _ := e.do(e.client(true), method, path, body)
	if v != nil {
		if err := json.Unmarshal([]byte(b), v); err != nil {
			e.t.Fatalf("%s %s: %v in %q", method, path, err, b)
		}
	}
	return code
}

type result struct {
	resp *http.Response
	body string
	err  error
}

// start runs a request in the background; its result (body read to the end) arrives on the channel.
func (e *testEnv) start(c *http.Client, req *http.Request) <-chan result {
	ch := make(chan result, 1)
	go func() {
		resp, err := c.Do(req)
		if err != nil {
			ch <- result{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		ch <- result{resp: resp, body: string(b), err: err}
	}()
	return ch
}

func wait(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(capWait):
		t.Fatal("the request did not end")
		return result{}
	}
}

// pending: the request has not ended yet.
func pending(ch <-chan result) bool {
	select {
	case <-ch:
		return false
	default:
		return true
	}
}

// forEachProtocol runs f with an HTTP/1.1 and an HTTP/2 client.
func forEachProtocol(t *testing.T, f func(t *testing.T, h2 bool)) {
	for _, h2 := range []bool{false, true} {
		name := "http1"
		if h2 {
			name = "http2"
		}
		t.Run(name, func(t *testing.T) { f(t, h2) })
	}
}

// counter is a fake API server that answers `status` with `body` and counts what it got.
type counter struct {
	hits atomic.Int32
	last atomic.Value // *seen
}

type seen struct {
	method, path, rawQuery, auth, contentType, body string
}

func (c *counter) handler(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.last.Store(&seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"),
			r.Header.Get("Content-Type"), string(b)})
		c.hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func TestForwardsAndLogsBeforeTheAnswer(t *testing.T) {
	forEachProtocol(t, func(t *testing.T, h2 bool) {
		var got atomic.Value
		proceed := make(chan struct{})
		e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			got.Store(&seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"),
				r.Header.Get("Content-Type"), string(b)})
			w.Header().Set("X-Upstream", "yes")
			w.WriteHeader(http.StatusCreated)
			w.(http.Flusher).Flush() // the header goes out; the body waits for the test
			select {
			case <-proceed:
			case <-r.Context().Done():
				return
			}
			_, _ = io.WriteString(w, `{"kind":"ConfigMap"}`)
		})
		body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"<a&b>"}}`
		path := "/api/v1/namespaces/ns/configmaps?fieldManager=kubectl-mindie&x=%2F%3B;raw"
		resp, err := e.client(h2).Do(e.request(context.Background(), "POST", path, body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if (resp.ProtoMajor == 2) != h2 {
			t.Errorf("the client speaks %s", resp.Proto)
		}
		// The client has the answer's header: the request is logged already.
		lines := e.log.all()
		if len(lines) != 1 {
			t.Fatalf("log lines when the answer arrived: %q", lines)
		}
		want := `{"method":"POST","path":"/api/v1/namespaces/ns/configmaps",` +
			`"query":"fieldManager=kubectl-mindie&x=%2F%3B;raw","contentType":"application/json",` +
			`"body":"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"<a&b>\"}}",` +
			`"status":201,"upstreamStatus":201}` + "\n"
		if lines[0] != want {
			t.Errorf("log line\n got %s\nwant %s", lines[0], want)
		}
		if strings.Contains(lines[0], "secret-token") {
			t.Error("the token is in the log")
		}
		close(proceed)
		b, err := io.ReadAll(resp.Body)
		if err != nil || string(b) != `{"kind":"ConfigMap"}` || resp.StatusCode != 201 ||
			resp.Header.Get("X-Upstream") != "yes" {
			t.Errorf("answer %d %q %v %v", resp.StatusCode, b, resp.Header, err)
		}
		s := got.Load().(*seen)
		if *s != (seen{"POST", "/api/v1/namespaces/ns/configmaps", "fieldManager=kubectl-mindie&x=%2F%3B;raw",
			testToken, "application/json", body}) {
			t.Errorf("the API server got %+v", s)
		}
	})
}

func TestStatusFaults(t *testing.T) {
	var c counter
	e := newEnv(t, c.handler(200, "{}"))
	for _, code := range []int{400, 401, 403, 404, 405, 406, 409, 410, 413, 415, 422, 429, 500, 503, 504, 418, 599} {
		e.proxy.faults.clear()
		r, err := parseFault(fmt.Sprintf("GET:/api/v1/pods:%d:1", code))
		if err != nil {
			t.Fatal(err)
		}
		e.proxy.faults.add(r)
		status, body, h := e.do(e.client(true), "GET", "/api/v1/pods?limit=500", "")
		if status != code || h.Get("Content-Type") != "application/json" {
			t.Errorf("%d: got %d %q", code, status, h.Get("Content-Type"))
		}
		retry := ""
		details := ""
		if code == 429 {
			retry = "1"
			details = `"details":{"retryAfterSeconds":1},`
		}
		want := fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",`+
			`"message":"injected fault for GET /api/v1/pods","reason":%q,%s"code":%d}`+"\n",
			reasonForCode(code), details, code)
		if body != want || h.Get("Retry-After") != retry {
			t.Errorf("%d: body %s want %s, Retry-After %q", code, body, want, h.Get("Retry-After"))
		}
		l := e.log.next(t)
		if l.Status != code || l.Fault != fmt.Sprint(code) || l.UpstreamStatus != 0 || l.Query != "limit=500" {
			t.Errorf("%d: log %+v", code, l)
		}
		// The next one passes (COUNT 1).
		if status, _, _ := e.do(e.client(true), "GET", "/api/v1/pods", ""); status != 200 {
			t.Errorf("%d: the second request got %d", code, status)
		}
		if l := e.log.next(t); l.Status != 200 || l.Fault != "" || l.UpstreamStatus != 200 {
			t.Errorf("%d: log %+v", code, l)
		}
	}
	if n := c.hits.Load(); n != 17 {
		t.Errorf("the API server got %d requests, want the 17 unfaulted ones", n)
	}
}

func TestCountAndAfter(t *testing.T) {
	var c counter
	e := newEnv(t, c.handler(200, "{}"), "GET:/api/v1/namespaces/[^/]+/pods:503:2:1", "*:/api/v1/namespaces/b/pods:409")
	cl := e.client(true)
	for i, step := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/api/v1/namespaces/a/pods", 200}, // AFTER: let through
		{"GET", "/api/v1/namespaces/a/pods/p", 200},
		{"GET", "/api/v1/namespaces/a/pods?watch=0", 503},
		{"DELETE", "/api/v1/namespaces/b/pods", 409}, // the first rule is for GET
		{"GET", "/api/v1/namespaces/b/pods", 503},
		{"GET", "/api/v1/namespaces/b/pods", 409}, // the first rule is spent
		{"GET", "/api/v1/namespaces/a/pods", 200},
	} {
		if got, _, _ := e.do(cl, step.method, step.path, ""); got != step.want {
			t.Errorf("step %d %s %s: %d, want %d", i, step.method, step.path, got, step.want)
		}
	}
	var list struct{ Faults []ruleView }
	e.control("GET", "/proxy/faults", "", &list)
	if len(list.Faults) != 2 || list.Faults[0].Remaining != 0 || list.Faults[1].Remaining != -1 {
		t.Errorf("faults %+v", list.Faults)
	}
}

func TestDrop(t *testing.T) {
	forEachProtocol(t, func(t *testing.T, h2 bool) {
		var c counter
		e := newEnv(t, c.handler(200, "{}"), "POST:/api/v1/namespaces/a/configmaps:drop:1")
		_, err := e.client(h2).Do(e.request(context.Background(), "POST", "/api/v1/namespaces/a/configmaps", "{}"))
		if err == nil {
			t.Fatal("the client got an answer")
		}
		if l := e.log.next(t); l.Status != 0 || l.Fault != "drop" || l.UpstreamStatus != 0 || l.Body != "{}" {
			t.Errorf("log %+v", l)
		}
		if c.hits.Load() != 0 {
			t.Error("the request was forwarded")
		}
		// COUNT 1: the next one goes through, on HTTP/2 on the same connection.
		if code, _, _ := e.do(e.client(h2), "POST", "/api/v1/namespaces/a/configmaps", "{}"); code != 200 {
			t.Errorf("then %d", code)
		}
	})
}

func TestHang(t *testing.T) {
	forEachProtocol(t, func(t *testing.T, h2 bool) {
		var c counter
		handlerDone := make(chan struct{}, 10)
		// A hang limit beyond the test's cap: the handler can only end because the client went away.
		e := newEnvWith(t, c.handler(200, "{}"), config{HangLimit: 2 * capWait,
			handlerDone: func() { handlerDone <- struct{}{} }}, "GET:/api/v1/pods:hang:1")
		ctx, cancel := context.WithCancel(context.Background())
		done := e.start(e.client(h2), e.request(ctx, "GET", "/api/v1/pods", ""))
		if l := e.log.next(t); l.Status != 0 || l.Fault != "hang" {
			t.Errorf("log %+v", l)
		}
		if !pending(done) {
			t.Error("the client got an answer")
		}
		cancel() // the client gives up, as on its --request-timeout
		if r := wait(t, done); !errors.Is(r.err, context.Canceled) {
			t.Errorf("the client got %+v", r)
		}
		select {
		case <-handlerDone:
		case <-time.After(capWait):
			t.Fatal("the proxy still hangs after the client went away")
		}
		if c.hits.Load() != 0 {
			t.Error("the request was forwarded")
		}
	})
}

func TestHangLimit(t *testing.T) {
	forEachProtocol(t, func(t *testing.T, h2 bool) {
		var c counter
		e := newEnvWith(t, c.handler(200, "{}"), config{HangLimit: 20 * time.Millisecond}, "GET:/api/v1/pods:hang")
		// A client without a timeout: the proxy cuts it once the limit passed.
		r := wait(t, e.start(e.client(h2), e.request(context.Background(), "GET", "/api/v1/pods", "")))
		if r.err == nil || errors.Is(r.err, context.Canceled) {
			t.Errorf("the client got %+v", r)
		}
		if c.hits.Load() != 0 {
			t.Error("the request was forwarded")
		}
	})
}

func TestLoseReply(t *testing.T) {
	forEachProtocol(t, func(t *testing.T, h2 bool) {
		var c counter
		e := newEnv(t, c.handler(201, `{"kind":"ConfigMap"}`), "POST:/api/v1/namespaces/a/configmaps:lose-reply:1")
		_, err := e.client(h2).Do(e.request(context.Background(), "POST", "/api/v1/namespaces/a/configmaps", `{"x":1}`))
		if err == nil {
			t.Fatal("the client got an answer")
		}
		if c.hits.Load() != 1 || c.last.Load().(*seen).body != `{"x":1}` {
			t.Errorf("the API server got %d requests", c.hits.Load())
		}
		if l := e.log.next(t); l.Status != 0 || l.Fault != "lose-reply" || l.UpstreamStatus != 201 {
			t.Errorf("log %+v", l)
		}
		if code, _, _ := e.do(e.client(h2), "POST", "/api/v1/namespaces/a/configmaps", "{}"); code != 201 {
			t.Errorf("then %d", code)
		}
	})
}

type heldList struct {
	Held []heldView `json:"held"`
}

func TestHold(t *testing.T) {
	forEachProtocol(t, func(t *testing.T, h2 bool) {
		var c counter
		e := newEnv(t, c.handler(200, `{"items":[]}`), "GET:/api/v1/pods:hold:1")
		done := e.start(e.client(h2), e.request(context.Background(), "GET", "/api/v1/pods", ""))
		var held heldList
		if code := e.control("GET", "/proxy/held?min=1", "", &held); code != 200 || len(held.Held) != 1 {
			t.Fatalf("held: %d %+v", code, held)
		}
		if h := held.Held[0]; h.Method != "GET" || h.Path != "/api/v1/pods" || h.Kind != "hold" || h.ID == "" {
			t.Errorf("held %+v", h)
		}
		// Held before forwarding: the API server has not seen it, the client has no answer, nothing is logged.
		if c.hits.Load() != 0 || len(e.log.all()) != 0 || !pending(done) {
			t.Error("the held request went on")
		}
		var rel map[string]int
		if code := e.control("POST", "/proxy/release", `{"id":"nope"}`, nil); code != 404 {
			t.Errorf("release of an unknown id: %d", code)
		}
		if code := e.control("POST", "/proxy/release", fmt.Sprintf(`{"id":%q}`, held.Held[0].ID), &rel); code != 200 ||
			rel["released"] != 1 {
			t.Errorf("release: %d %v", code, rel)
		}
		if r := wait(t, done); r.err != nil || r.resp.StatusCode != 200 || r.body != `{"items":[]}` {
			t.Errorf("after release: %+v", r)
		}
		if l := e.log.next(t); l.Status != 200 || l.Fault != "hold" || l.UpstreamStatus != 200 {
			t.Errorf("log %+v", l)
		}
		if code := e.control("GET", "/proxy/held", "", &held); code != 200 || len(held.Held) != 0 {
			t.Errorf("held after release: %+v", held)
		}
		if code := e.control("POST", "/proxy/release", "{}", &rel); code != 200 || rel["released"] != 0 {
			t.Errorf("release of none: %d %v", code, rel)
		}
	})
}

func TestHoldClientGoesAway(t *testing.T) {
	forEachProtocol(t, func(t *testing.T, h2 bool) {
		var c counter
		e := newEnv(t, c.handler(200, "{}"), "GET:/api/v1/pods:hold")
		ctx, cancel := context.WithCancel(context.Background())
		done := e.start(e.client(h2), e.request(ctx, "GET", "/api/v1/pods", ""))
		var held heldList
		if e.control("GET", "/proxy/held?min=1", "", &held); len(held.Held) != 1 {
			t.Fatalf("held %+v", held)
		}
		cancel()
		wait(t, done)
		// The line is written once the request left the held list.
		if l := e.log.next(t); l.Status != 0 || l.Fault != "hold" || l.UpstreamStatus != 0 {
			t.Errorf("log %+v", l)
		}
		if e.control("GET", "/proxy/held", "", &held); len(held.Held) != 0 {
			t.Errorf("still held: %+v", held)
		}
		if c.hits.Load() != 0 {
			t.Error("forwarded")
		}
	})
}

func TestHoldReply(t *testing.T) {
	forEachProtocol(t, func(t *testing.T, h2 bool) {
		var c counter
		e := newEnv(t, c.handler(201, `{"kind":"ConfigMap"}`), "POST:/api/v1/namespaces/a/configmaps:hold-reply")
		cl := e.client(h2)
		first := e.start(cl, e.request(context.Background(), "POST", "/api/v1/namespaces/a/configmaps", `{"n":1}`))
		var held heldList
		if e.control("GET", "/proxy/held?min=1", "", &held); len(held.Held) != 1 || held.Held[0].Kind != "hold-reply" {
			t.Fatalf("held %+v", held)
		}
		// The API server has applied it; the client has no answer yet, nor has the log a line.
		if c.hits.Load() != 1 || len(e.log.all()) != 0 || !pending(first) {
			t.Error("the held answer went on")
		}
		// A second one: held?min=2 waits for it.
		second := e.start(cl, e.request(context.Background(), "POST", "/api/v1/namespaces/a/configmaps", `{"n":2}`))
		if e.control("GET", "/proxy/held?min=2", "", &held); len(held.Held) != 2 || held.Held[0].ID == held.Held[1].ID {
			t.Fatalf("held %+v", held)
		}
		var rel map[string]int
		if e.control("POST", "/proxy/release", "", &rel); rel["released"] != 2 {
			t.Errorf("released %v", rel)
		}
		for _, ch := range []<-chan result{first, second} {
			if r := wait(t, ch); r.err != nil || r.resp.StatusCode != 201 || r.body != `{"kind":"ConfigMap"}` {
				t.Errorf("after release: %+v", r)
			}
		}
		for range 2 {
			if l := e.log.next(t); l.Status != 201 || l.Fault != "hold-reply" || l.UpstreamStatus != 201 {
				t.Errorf("log %+v", l)
			}
		}
		if c.hits.Load() != 2 {
			t.Errorf("hits %d", c.hits.Load())
		}
	})
}

func TestHoldReplyClientGoesAway(t *testing.T) {
	var c counter
	e := newEnv(t, c.handler(201, "{}"), "POST:/x:hold-reply")
	ctx, cancel := context.WithCancel(context.Background())
	done := e.start(e.client(true), e.request(ctx, "POST", "/x", "{}"))
	var held heldList
	e.control("GET", "/proxy/held?min=1", "", &held)
	cancel()
	wait(t, done)
	if l := e.log.next(t); l.Status != 0 || l.Fault != "hold-reply" || l.UpstreamStatus != 201 {
		t.Errorf("log %+v", l)
	}
}

func TestHeldTimeoutAndBadQuery(t *testing.T) {
	var c counter
	e := newEnv(t, c.handler(200, "{}"))
	var s status
	if code := e.control("GET", "/proxy/held?min=1&timeoutSeconds=0.01", "", &s); code != 504 || s.Reason != "Timeout" {
		t.Errorf("held: %d %+v", code, s)
	}
	for _, q := range []string{"min=x", "min=-1", "timeoutSeconds=-1", "timeoutSeconds=abc"} {
		if code := e.control("GET", "/proxy/held?"+q, "", &s); code != 400 || s.Reason != "BadRequest" {
			t.Errorf("%s: %d %+v", q, code, s)
		}
	}
}

func TestCloseWatches(t *testing.T) {
	forEachProtocol(t, func(t *testing.T, h2 bool) {
		watchGone := make(chan struct{})
		slowGo := make(chan struct{})
		var e *testEnv
		e = newEnv(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			_, _ = io.WriteString(w, `{"type":"ADDED"}`+"\n")
			w.(http.Flusher).Flush()
			if r.URL.Query().Get("watch") != "" {
				<-r.Context().Done() // the proxy cancels its upstream request
				close(watchGone)
				return
			}
			select { // a long answer, but no watch: close-watches leaves it alone
			case <-slowGo:
			case <-e.quit:
			}
			_, _ = io.WriteString(w, "rest\n")
		})
		cl := e.client(h2)
		var closed map[string]int
		if e.control("POST", "/proxy/close-watches", "", &closed); closed["closed"] != 0 {
			t.Errorf("closed %v with no watch", closed)
		}
		watch, err := cl.Do(e.request(context.Background(), "GET", "/api/v1/pods?watch=true&resourceVersion=1", ""))
		if err != nil {
			t.Fatal(err)
		}
		defer watch.Body.Close()
		if len(e.log.all()) != 1 {
			t.Errorf("the watch is not logged when its header arrived: %q", e.log.all())
		}
		slow, err := cl.Do(e.request(context.Background(), "GET", "/api/v1/pods", ""))
		if err != nil {
			t.Fatal(err)
		}
		defer slow.Body.Close()
		br := bufio.NewReader(watch.Body)
		if line, err := br.ReadString('\n'); err != nil || line != `{"type":"ADDED"}`+"\n" {
			t.Fatalf("first event %q %v", line, err)
		}
		if e.control("POST", "/proxy/close-watches", "", &closed); closed["closed"] != 1 {
			t.Errorf("closed %v", closed)
		}
		// Broken off, not ended: an error, not io.EOF.
		if rest, err := io.ReadAll(br); err == nil || len(rest) != 0 {
			t.Errorf("after close-watches: %q, %v", rest, err)
		}
		select {
		case <-watchGone:
		case <-time.After(capWait):
			t.Error("the API server's watch is still open")
		}
		close(slowGo)
		if b, err := io.ReadAll(slow.Body); err != nil || string(b) != `{"type":"ADDED"}`+"\nrest\n" {
			t.Errorf("the other answer: %q %v", b, err)
		}
		for _, l := range []logLine{e.log.next(t), e.log.next(t)} {
			if l.Status != 200 || l.UpstreamStatus != 200 || l.Fault != "" {
				t.Errorf("log %+v", l)
			}
		}
	})
}

func TestControlEndpoints(t *testing.T) {
	var c counter
	e := newEnv(t, c.handler(200, "{}"))
	var v ruleView
	if code := e.control("POST", "/proxy/faults", `{"spec":"*:.*:500"}`, &v); code != 200 || v.Kind != "500" ||
		v.Remaining != -1 || v.Path != ".*" || v.Method != "*" {
		t.Errorf("add: %d %+v", code, v)
	}
	// Control requests are never faulted (the rule matches every path) and never logged.
	var list struct{ Faults []ruleView }
	if code := e.control("GET", "/proxy/faults", "", &list); code != 200 || len(list.Faults) != 1 {
		t.Errorf("list: %d %+v", code, list)
	}
	if code, _, _ := e.do(e.client(true), "GET", "/api/v1/pods", ""); code != 500 {
		t.Errorf("faulted request: %d", code)
	}
	var s status
	for _, body := range []string{`{"spec":"GET:/x"}`, `{}`, ``, `{"spec":1}`, `{"spec":"GET:/x:500","x":1}`} {
		if code := e.control("POST", "/proxy/faults", body, &s); code != 400 || s.Reason != "BadRequest" {
			t.Errorf("add %s: %d %+v", body, code, s)
		}
	}
	var deleted map[string]int
	if code := e.control("DELETE", "/proxy/faults", "", &deleted); code != 200 || deleted["deleted"] != 1 {
		t.Errorf("delete: %d %v", code, deleted)
	}
	if code, _, _ := e.do(e.client(true), "GET", "/api/v1/pods", ""); code != 200 {
		t.Errorf("after delete: %d", code)
	}
	if code := e.control("GET", "/proxy/nothing", "", &s); code != 404 || s.Reason != "NotFound" {
		t.Errorf("unknown endpoint: %d %+v", code, s)
	}
	if code := e.control("GET", "/proxy/release", "", &s); code != 405 || s.Reason != "MethodNotAllowed" {
		t.Errorf("wrong method: %d %+v", code, s)
	}
	if code := e.control("POST", "/proxy/release", `{"id":[1]}`, &s); code != 400 {
		t.Errorf("bad id: %d %+v", code, s)
	}
	lines := e.log.all()
	if len(lines) != 2 || !strings.Contains(lines[0], `"status":500`) || !strings.Contains(lines[1], `"status":200`) {
		t.Errorf("log %q", lines)
	}
}

func TestControlAuthorization(t *testing.T) {
	for _, token := range []string{"", "secret-token-of-the-test"} {
		var c counter
		e := newEnvWith(t, c.handler(200, "{}"), config{ControlToken: token})
		for auth, want := range map[string]int{"": 401, "Basic eDp5": 401, "Bearer ": 401, testToken: 200,
			"bearer secret-token-of-the-test": 200, "Bearer other": map[bool]int{true: 200, false: 401}[token == ""]} {
			req := e.request(context.Background(), "GET", "/proxy/faults", "")
			req.Header.Del("Authorization")
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := e.client(true).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("token %q, Authorization %q: %d, want %d", token, auth, resp.StatusCode, want)
			}
		}
	}
}

func TestUpstreamDown(t *testing.T) {
	var c counter
	e := newEnv(t, c.handler(200, "{}"))
	// An address nobody listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	e.proxy.rp.Rewrite = func(pr *httputil.ProxyRequest) { pr.SetURL(&url.URL{Scheme: "https", Host: addr}) }
	code, body, _ := e.do(e.client(true), "GET", "/version", "")
	if code != 502 || !strings.Contains(body, "did not answer") {
		t.Errorf("%d %s", code, body)
	}
	if l := e.log.next(t); l.Status != 502 || l.UpstreamStatus != 0 {
		t.Errorf("log %+v", l)
	}
}

func TestIsStreaming(t *testing.T) {
	for _, c := range []struct {
		path, query, contentType string
		want                     bool
	}{
		{"/api/v1/pods", "watch=true&resourceVersion=5", "application/json", true},
		{"/api/v1/pods", "watch=1", "", true},
		{"/api/v1/pods", "watch=false", "", false},
		{"/api/v1/pods", "watch=0&x=1", "", false},
		{"/api/v1/watch/pods", "", "", true},
		{"/api/v1/namespaces/a/pods/p/log", "follow=true&container=c", "text/plain", true},
		{"/api/v1/pods", "", "application/vnd.kubernetes.protobuf;stream=watch", true},
		{"/api/v1/pods", "limit=500", "application/json", false},
	} {
		resp := &http.Response{Header: http.Header{"Content-Type": {c.contentType}}}
		if got := isStreaming(&exchange{path: c.path, query: c.query}, resp); got != c.want {
			t.Errorf("%s?%s %q: %v", c.path, c.query, c.contentType, got)
		}
	}
}

// An upgrade (exec, attach, port-forward over SPDY or WebSocket) passes through on HTTP/1.1.
func TestUpgrade(t *testing.T) {
	for _, protocol := range []string{"SPDY/3.1", "websocket"} {
		t.Run(protocol, func(t *testing.T) { testUpgrade(t, protocol) })
	}
}

func testUpgrade(t *testing.T, protocol string) {
	e := newEnv(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != protocol || r.Header.Get("Authorization") != testToken {
			w.WriteHeader(400)
			return
		}
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + protocol +
			"\r\n\r\n")
		_ = brw.Flush()
		line, _ := brw.ReadString('\n')
		_, _ = brw.WriteString("echo " + line)
		_ = brw.Flush()
	})
	roots := x509.NewCertPool()
	roots.AddCert(e.front.Certificate())
	conn, err := tls.Dial("tcp", e.front.Listener.Addr().String(),
		&tls.Config{RootCAs: roots, ServerName: "127.0.0.1", NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "GET /api/v1/namespaces/a/pods/p/exec?command=sh HTTP/1.1\r\nHost: x\r\n"+
		"Authorization: "+testToken+"\r\nConnection: Upgrade\r\nUpgrade: "+protocol+"\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%v %s %v", resp, b, err)
	}
	_, _ = io.WriteString(conn, "ping\n")
	if line, err := br.ReadString('\n'); err != nil || line != "echo ping\n" {
		t.Errorf("%q %v", line, err)
	}
	if l := e.log.next(t); l.Status != 101 || l.Path != "/api/v1/namespaces/a/pods/p/exec" || l.Query != "command=sh" {
		t.Errorf("log %+v", l)
	}
}
