package main

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// closeWatchesWait bounds how long POST /proxy/close-watches waits for the cut streams' handlers to finish.
const closeWatchesWait = 5 * time.Second

// defaultHeldTimeout is GET /proxy/held's timeoutSeconds when absent.
const defaultHeldTimeout = 60 * time.Second

// serveControl answers the /proxy/ endpoints: never logged, never faulted. Errors are Status objects, so that
// kubectl's --raw prints "Error from server (Reason): message".
func (p *proxy) serveControl(w http.ResponseWriter, r *http.Request) {
	if !p.authorized(r) {
		writeStatus(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		writeStatus(w, http.StatusBadRequest, "cannot read the body: "+err.Error())
		return
	}
	endpoints := map[string]map[string]func(http.ResponseWriter, *http.Request, []byte){
		"/proxy/faults": {
			http.MethodGet:    p.listFaults,
			http.MethodPost:   p.addFault,
			http.MethodDelete: p.clearFaults,
		},
		"/proxy/close-watches": {http.MethodPost: p.serveCloseWatches},
		"/proxy/held":          {http.MethodGet: p.serveHeld},
		"/proxy/release":       {http.MethodPost: p.serveRelease},
	}
	methods, ok := endpoints[r.URL.Path]
	if !ok {
		writeStatus(w, http.StatusNotFound, "the server could not find the requested resource")
		return
	}
	handle, ok := methods[r.Method]
	if !ok {
		allowed := make([]string, 0, len(methods))
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			if methods[m] != nil {
				allowed = append(allowed, m)
			}
		}
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		writeStatus(w, http.StatusMethodNotAllowed, r.URL.Path+" takes "+strings.Join(allowed, " or "))
		return
	}
	handle(w, r, body)
}

// authorized: with --control-token, exactly `Authorization: Bearer TOKEN`; without, any bearer token (the
// endpoints are for tests on loopback; requiring the header keeps a client without credentials out).
func (p *proxy) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return false
	}
	if p.cfg.ControlToken == "" {
		return true
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), []byte(p.cfg.ControlToken)) == 1
}

// decodeBody decodes a JSON object body into v; an empty body is {}.
func decodeBody(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("more than one JSON value")
	}
	return nil
}

func (p *proxy) listFaults(w http.ResponseWriter, _ *http.Request, _ []byte) {
	writeJSON(w, http.StatusOK, map[string]any{"faults": p.faults.list()})
}

func (p *proxy) addFault(w http.ResponseWriter, _ *http.Request, body []byte) {
	var req struct {
		Spec *string `json:"spec"`
	}
	if err := decodeBody(body, &req); err != nil || req.Spec == nil {
		msg := `the body must be {"spec":"METHOD:PATH_REGEX:KIND[:COUNT[:AFTER]]"}`
		if err != nil {
			msg += ": " + err.Error()
		}
		writeStatus(w, http.StatusBadRequest, msg)
		return
	}
	rule, err := parseFault(*req.Spec)
	if err != nil {
		writeStatus(w, http.StatusBadRequest, err.Error())
		return
	}
	p.faults.add(rule)
	writeJSON(w, http.StatusOK, rule.view())
}

func (p *proxy) clearFaults(w http.ResponseWriter, _ *http.Request, _ []byte) {
	writeJSON(w, http.StatusOK, map[string]int{"deleted": p.faults.clear()})
}

func (p *proxy) serveCloseWatches(w http.ResponseWriter, _ *http.Request, _ []byte) {
	writeJSON(w, http.StatusOK, map[string]int{"closed": p.closeWatches(closeWatchesWait)})
}

// serveHeld: GET /proxy/held?min=N&timeoutSeconds=T waits until at least N (default 0) requests are held, or T
// seconds (default 60) pass: 200 {"held":[...]} or 504.
func (p *proxy) serveHeld(w http.ResponseWriter, r *http.Request, _ []byte) {
	q := r.URL.Query()
	want := 0
	if v := q.Get("min"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeStatus(w, http.StatusBadRequest, "min must be a number >= 0, not "+strconv.Quote(v))
			return
		}
		want = n
	}
	timeout := defaultHeldTimeout
	if v := q.Get("timeoutSeconds"); v != "" {
		s, err := strconv.ParseFloat(v, 64)
		if err != nil || s < 0 || math.IsInf(s, 0) || math.IsNaN(s) || s > 86400 {
			writeStatus(w, http.StatusBadRequest, "timeoutSeconds must be a number of seconds >= 0, not "+
				strconv.Quote(v))
			return
		}
		timeout = time.Duration(s * float64(time.Second))
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		held, changed := p.heldSnapshot()
		if len(held) >= want {
			writeJSON(w, http.StatusOK, map[string]any{"held": held})
			return
		}
		select {
		case <-changed:
		case <-t.C:
			writeStatus(w, http.StatusGatewayTimeout, fmt.Sprintf("%d held request(s) after %s, waiting for %d",
				len(held), timeout, want))
			return
		case <-r.Context().Done():
			return
		}
	}
}

// serveRelease: POST /proxy/release {"id":ID} releases that held request (404 when none has the id), {} every one.
func (p *proxy) serveRelease(w http.ResponseWriter, _ *http.Request, body []byte) {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	if err := decodeBody(body, &req); err != nil {
		writeStatus(w, http.StatusBadRequest, `the body must be {"id":ID} or {}: `+err.Error())
		return
	}
	id := ""
	if raw := bytes.TrimSpace(req.ID); len(raw) > 0 && string(raw) != "null" {
		var s string
		var n json.Number
		switch {
		case json.Unmarshal(raw, &s) == nil && s != "":
			id = s
		case json.Unmarshal(raw, &n) == nil:
			id = n.String()
		default:
			writeStatus(w, http.StatusBadRequest, "id must be a held request's id (string or number), not "+
				string(raw))
			return
		}
	}
	n := p.release(id)
	if id != "" && n == 0 {
		writeStatus(w, http.StatusNotFound, "no held request has id "+strconv.Quote(id))
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"released": n})
}
