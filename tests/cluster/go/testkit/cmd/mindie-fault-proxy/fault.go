package main

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The fault KINDs that are not an HTTP status code.
const (
	kindHang      = "hang"       // not forwarded; no answer until the client goes away or hangLimit passes, then cut
	kindDrop      = "drop"       // not forwarded; cut at once
	kindLoseReply = "lose-reply" // forwarded; the server's answer is discarded and the client's request cut
	kindHold      = "hold"       // held before forwarding until released (POST /proxy/release)
	kindHoldReply = "hold-reply" // forwarded; the server's answer is held until released, then delivered
)

const faultSyntax = "expected METHOD:PATH_REGEX:KIND[:COUNT[:AFTER]] " +
	"(KIND: a code 400..599, hang, drop, lose-reply, hold or hold-reply)"

func isKeyword(s string) bool {
	switch s {
	case kindHang, kindDrop, kindLoseReply, kindHold, kindHoldReply:
		return true
	}
	return false
}

// isNumber: what the fault syntax takes for a number (1 to 8 digits), plus "-1" (COUNT: unlimited).
func isNumber(s string) bool {
	if s == "-1" {
		return true
	}
	if s == "" || len(s) >= 9 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// rule is one fault rule: after letting the first `after` matching requests through, the next `remaining`
// requests (-1: every one) whose method (`*` = any) and whole path (without the query) match get `kind`.
type rule struct {
	spec      string
	method    string
	pattern   string
	re        *regexp.Regexp
	kind      string // "409", "hang", ...
	code      int    // the status when kind is a code, else 0
	remaining int
	after     int
}

// parseFault parses METHOD:PATH_REGEX:KIND[:COUNT[:AFTER]], the syntax the e2e tests have always written: the
// regex may itself contain ':', so KIND, COUNT and AFTER are taken from the right (numbers, up to a keyword KIND or
// three fields). The regex (RE2 syntax) must match the whole path.
func parseFault(spec string) (*rule, error) {
	first := strings.IndexByte(spec, ':')
	if first < 0 {
		return nil, errors.New(faultSyntax)
	}
	var fields []string // the trailing fields, left to right: KIND[, COUNT[, AFTER]]
	rest := spec[first+1:]
	for len(fields) < 3 {
		colon := strings.LastIndexByte(rest, ':')
		if colon < 0 {
			break
		}
		field := rest[colon+1:]
		if !isNumber(field) && !isKeyword(field) {
			break
		}
		fields = append([]string{field}, fields...)
		rest = rest[:colon]
		if isKeyword(field) {
			break // a keyword KIND is the leftmost trailing field
		}
	}
	if len(fields) == 0 {
		return nil, fmt.Errorf("missing KIND in fault %s: %s", spec, faultSyntax)
	}
	r := &rule{spec: spec, method: spec[:first], pattern: rest, kind: fields[0], remaining: -1}
	if r.method == "" {
		return nil, fmt.Errorf("missing METHOD in fault %s (use * for any)", spec)
	}
	if !isKeyword(r.kind) {
		code, err := strconv.Atoi(r.kind)
		if err != nil || code < 400 || code > 599 {
			return nil, fmt.Errorf("fault CODE must be 4xx or 5xx: %s", spec)
		}
		r.code = code
	}
	if len(fields) >= 2 {
		r.remaining, _ = strconv.Atoi(fields[1])
	}
	if len(fields) == 3 {
		r.after, _ = strconv.Atoi(fields[2])
		if r.after < 0 {
			return nil, fmt.Errorf("fault AFTER must be a number >= 0: %s", spec)
		}
	}
	re, err := regexp.Compile(`^(?:` + r.pattern + `)$`)
	if err != nil {
		return nil, fmt.Errorf("bad PATH_REGEX in fault %s: %v", spec, err)
	}
	r.re = re
	return r, nil
}

// faultSet is the ordered list of rules; the first rule that matches a request decides its fate.
type faultSet struct {
	mu    sync.Mutex
	rules []*rule
}

func (s *faultSet) add(r *rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules, r)
}

func (s *faultSet) clear() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.rules)
	s.rules = nil
	return n
}

// match returns the KIND (and code) for a request, counting it against the rule that applies; "" when none does.
// A rule counts every matching request: first its AFTER requests, let through, then its COUNT, faulted.
func (s *faultSet) match(method, path string) (kind string, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.rules {
		if r.remaining == 0 || (r.method != "*" && r.method != method) || !r.re.MatchString(path) {
			continue
		}
		if r.after > 0 {
			r.after--
			continue
		}
		if r.remaining > 0 {
			r.remaining--
		}
		return r.kind, r.code
	}
	return "", 0
}

// ruleView is a rule as GET /proxy/faults shows it.
type ruleView struct {
	Spec      string `json:"spec"`
	Method    string `json:"method"`
	Path      string `json:"path"`
	Kind      string `json:"kind"`
	Remaining int    `json:"remaining"` // -1: every matching request
	After     int    `json:"after"`     // matching requests still to let through first
}

func (r *rule) view() ruleView {
	return ruleView{Spec: r.spec, Method: r.method, Path: r.pattern, Kind: r.kind, Remaining: r.remaining, After: r.after}
}

func (s *faultSet) list() []ruleView {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ruleView, 0, len(s.rules))
	for _, r := range s.rules {
		out = append(out, r.view())
	}
	return out
}
