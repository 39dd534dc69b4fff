// mindie-fault-proxy: a TLS reverse proxy in front of a real kube-apiserver for kubectl-mindie's end-to-end tests.
// It logs every request (JSON lines) and injects the faults the tests ask for.
//
//	mindie-fault-proxy --upstream https://127.0.0.1:PORT --upstream-ca FILE --cert FILE --key FILE
//	                   [--listen 127.0.0.1:0] [--request-log FILE] [--control-token FILE]
//	                   [--fault METHOD:PATH_REGEX:KIND[:COUNT[:AFTER]]]... [--exit-on-stdin-eof]
//
// Prints `ready https://HOST:PORT` once it listens; runs until SIGTERM/SIGINT (or stdin's EOF with
// --exit-on-stdin-eof) and exits 0. See usageText for the faults and the control endpoints.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

const usageText = `usage: mindie-fault-proxy --upstream https://HOST:PORT --upstream-ca FILE --cert FILE --key FILE
                          [--listen HOST:PORT|[IPV6]:PORT] [--request-log FILE] [--control-token FILE]
                          [--fault METHOD:PATH_REGEX:KIND[:COUNT[:AFTER]]]... [--exit-on-stdin-eof] [--verbose]
Forwards every request (HTTP/2 or HTTP/1.1, TLS with --cert/--key) to --upstream, verified with --upstream-ca,
streaming the answers; prints "ready https://HOST:PORT" once listening (default --listen 127.0.0.1:0).
--request-log: one JSON line per request, appended before the client gets its answer:
  {"method","path","query","contentType","body","status"(0: no answer),"fault"?,"upstreamStatus"?}
--fault: the first rule whose METHOD (* = any) and PATH_REGEX (RE2, the whole path without the query) match
  decides; it lets AFTER (default 0) matching requests through, then faults COUNT (default every one) of them.
  KIND: 400..599  answered with a Status of that code (429: Retry-After: 1), not forwarded
        hang      not forwarded, no answer until the client goes away or 5 s pass, then cut
        drop      not forwarded, cut at once
        lose-reply forwarded; the API server's answer is discarded and the client cut
        hold      held before forwarding until released (or the client goes away)
        hold-reply forwarded; the answer is held until released, then delivered
  "cut": HTTP/1.1 closes the connection (no TLS close_notify, no final chunk), HTTP/2 resets the stream.
--exit-on-stdin-eof: exit when stdin reaches EOF (give it a pipe the test harness holds).
--control-token: the bearer token the control endpoints require (default: any "Authorization: Bearer" header).
Control endpoints (same listener; not logged, never faulted):
  GET    /proxy/faults          {"faults":[{"spec","method","path","kind","remaining"(-1: all),"after"}]}
  POST   /proxy/faults          {"spec":SPEC} adds a rule at the end (400 on a bad SPEC)
  DELETE /proxy/faults          removes every rule: {"deleted":N}
  POST   /proxy/close-watches   cuts every open watch (and ?follow=true stream): {"closed":N}
  GET    /proxy/held?min=N&timeoutSeconds=T   waits until N (default 0) requests are held, at most T s
                                (default 60): {"held":[{"id","method","path","query","kind"}]}, or 504
  POST   /proxy/release         {"id":ID} releases that held request (404 if none), {} all: {"released":N}
`

// options is the parsed command line.
type options struct {
	upstream       *url.URL
	upstreamCA     string
	cert, key      string
	listen         string
	requestLog     string
	controlToken   string
	faults         []*rule
	exitOnStdinEOF bool
	verbose        bool
}

type faultFlags []string

func (f *faultFlags) String() string     { return strings.Join(*f, " ") }
func (f *faultFlags) Set(v string) error { *f = append(*f, v); return nil }

// parseArgs returns flag.ErrHelp for --help, another error for a usage error.
func parseArgs(args []string) (*options, error) {
	fs := flag.NewFlagSet("mindie-fault-proxy", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var o options
	var upstream string
	var faults faultFlags
	fs.StringVar(&upstream, "upstream", "", "")
	fs.StringVar(&o.upstreamCA, "upstream-ca", "", "")
	fs.StringVar(&o.cert, "cert", "", "")
	fs.StringVar(&o.key, "key", "", "")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:0", "")
	fs.StringVar(&o.requestLog, "request-log", "", "")
	fs.StringVar(&o.controlToken, "control-token", "", "")
	fs.Var(&faults, "fault", "")
	fs.BoolVar(&o.exitOnStdinEOF, "exit-on-stdin-eof", false, "")
	fs.BoolVar(&o.verbose, "verbose", false, "")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, f := range []struct{ name, value string }{{"--upstream", upstream}, {"--upstream-ca", o.upstreamCA},
		{"--cert", o.cert}, {"--key", o.key}} {
		if f.value == "" {
			return nil, fmt.Errorf("%s is required", f.name)
		}
	}
	u, err := url.Parse(upstream)
	if err != nil || u.Scheme != "https" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, fmt.Errorf("--upstream expects https://HOST:PORT, not %q", upstream)
	}
	u.Path = ""
	o.upstream = u
	if _, _, err := net.SplitHostPort(o.listen); err != nil {
		return nil, fmt.Errorf("--listen expects HOST:PORT or [IPV6]:PORT, not %q", o.listen)
	}
	for _, spec := range faults {
		r, err := parseFault(spec)
		if err != nil {
			return nil, fmt.Errorf("--fault: %v", err)
		}
		o.faults = append(o.faults, r)
	}
	return &o, nil
}

// run is the whole program: exit status 0 after `stop` (or stdin's EOF), 2 for a usage error, 1 for another one.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, stop <-chan struct{}) int {
	o, err := parseArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		_, _ = io.WriteString(stdout, usageText)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "mindie-fault-proxy: %v (see --help)\n", err)
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "mindie-fault-proxy: %v\n", err)
		return 1
	}
	caPEM, err := os.ReadFile(o.upstreamCA)
	if err != nil {
		return fail(fmt.Errorf("--upstream-ca: %w", err))
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return fail(fmt.Errorf("--upstream-ca: no PEM certificate in %s", o.upstreamCA))
	}
	cert, err := tls.LoadX509KeyPair(o.cert, o.key)
	if err != nil {
		return fail(fmt.Errorf("--cert/--key: %w", err))
	}
	token := ""
	if o.controlToken != "" {
		b, err := os.ReadFile(o.controlToken)
		if err != nil {
			return fail(fmt.Errorf("--control-token: %w", err))
		}
		if token = strings.TrimSpace(string(b)); token == "" {
			return fail(fmt.Errorf("--control-token: %s is empty", o.controlToken))
		}
	}
	errorLog := log.New(io.Discard, "", 0)
	if o.verbose {
		errorLog = log.New(stderr, "mindie-fault-proxy: ", log.LstdFlags|log.Lmicroseconds)
	}
	var requestLog io.Writer
	if o.requestLog != "" {
		f, err := os.OpenFile(o.requestLog, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return fail(fmt.Errorf("--request-log: %w", err))
		}
		defer f.Close()
		requestLog = f // unbuffered: each line is one write(2)
	}
	p := newProxy(config{Target: o.upstream, Transport: newTransport(roots), Log: requestLog, ControlToken: token,
		ErrorLog: errorLog})
	for _, r := range o.faults {
		p.faults.add(r)
	}

	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fail(err)
	}
	srv := &http.Server{
		Handler:   p,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ErrorLog:  errorLog, // TLS handshake errors of clients that give up, and the like
	}
	served := make(chan error, 1)
	go func() { served <- srv.ServeTLS(ln, "", "") }() // HTTP/2 and HTTP/1.1 by ALPN
	defer srv.Close()

	addr := ln.Addr().(*net.TCPAddr)
	// The socket listens: connections made from here on queue until Serve accepts them.
	if _, err := fmt.Fprintf(stdout, "ready https://%s\n", net.JoinHostPort(addr.IP.String(),
		strconv.Itoa(addr.Port))); err != nil {
		return fail(fmt.Errorf("cannot write the ready line: %w", err))
	}
	var stdinEOF chan struct{}
	if o.exitOnStdinEOF {
		stdinEOF = make(chan struct{})
		go func() {
			_, _ = io.Copy(io.Discard, stdin)
			close(stdinEOF)
		}()
	}
	select {
	case <-stop:
	case <-stdinEOF:
	case err := <-served:
		return fail(fmt.Errorf("the server stopped: %w", err))
	}
	_ = srv.Close() // every connection, watches and held requests with them
	return 0
}

func main() {
	// A harness that closes its end of stdout/stderr must not kill the proxy with SIGPIPE.
	signal.Ignore(syscall.SIGPIPE)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	stop := make(chan struct{})
	go func() {
		<-signals
		close(stop)
	}()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, stop))
}
