package main

import (
	"strings"
	"testing"
)

func TestParseFault(t *testing.T) {
	valid := []struct {
		spec, method, pattern, kind string
		code, remaining, after      int
	}{
		{"GET:/api/v1/pods:500", "GET", "/api/v1/pods", "500", 500, -1, 0},
		{"*:.*:hang:1:5", "*", ".*", "hang", 0, 1, 5},
		{"*:.*:drop", "*", ".*", "drop", 0, -1, 0},
		{"PATCH:/api/v1/namespaces/a/configmaps/motor-config:409:3:1", "PATCH",
			"/api/v1/namespaces/a/configmaps/motor-config", "409", 409, 3, 1},
		{"DELETE:.*/podgroups/pg-x-2:500:100", "DELETE", ".*/podgroups/pg-x-2", "500", 500, 100, 0},
		// The regex may contain ':'; the trailing fields are taken from the right.
		{"GET:/a:b/(x|y):c:429:2", "GET", "/a:b/(x|y):c", "429", 429, 2, 0},
		{"POST:/x:lose-reply:1", "POST", "/x", "lose-reply", 0, 1, 0},
		{"GET:/x:hold", "GET", "/x", "hold", 0, -1, 0},
		{"PUT:/x:hold-reply:2:3", "PUT", "/x", "hold-reply", 0, 2, 3},
		// A keyword KIND ends the scan: what is left of it belongs to the regex, digits too.
		{"GET:/x:7:drop", "GET", "/x:7", "drop", 0, -1, 0},
		{"GET:/x:503:-1:2", "GET", "/x", "503", 503, -1, 2},
		{"GET:/x:503:0", "GET", "/x", "503", 503, 0, 0},
		{"GET::404", "GET", "", "404", 404, -1, 0},
	}
	for _, c := range valid {
		r, err := parseFault(c.spec)
		if err != nil {
			t.Errorf("parseFault(%q): %v", c.spec, err)
			continue
		}
		if r.method != c.method || r.pattern != c.pattern || r.kind != c.kind || r.code != c.code ||
			r.remaining != c.remaining || r.after != c.after {
			t.Errorf("parseFault(%q) = %+v, want %+v", c.spec, r.view(), c)
		}
	}
	invalid := map[string]string{
		"":                   "expected METHOD:PATH_REGEX:KIND",
		"GET":                "expected METHOD:PATH_REGEX:KIND",
		"GET:/x":             "missing KIND",
		"GET:/x:teapot":      "missing KIND",
		":/x:500":            "missing METHOD",
		"GET:/x:600":         "must be 4xx or 5xx",
		"GET:/x:399":         "must be 4xx or 5xx",
		"GET:/x:1:2:3":       "must be 4xx or 5xx", // three numbers: KIND is the first
		"GET:/x:-1":          "must be 4xx or 5xx",
		"GET:/x:500:1:-1":    "AFTER",
		"GET:(:500":          "bad PATH_REGEX",
		"GET:/x:123456789":   "missing KIND", // 9 digits are no number (as the C++ parser)
		"GET:/x:hang:1:2:3:": "missing KIND",
	}
	for spec, want := range invalid {
		if _, err := parseFault(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseFault(%q) = %v, want an error with %q", spec, err, want)
		}
	}
}

func newFaultSet(t *testing.T, specs ...string) *faultSet {
	t.Helper()
	var s faultSet
	for _, spec := range specs {
		r, err := parseFault(spec)
		if err != nil {
			t.Fatal(err)
		}
		s.add(r)
	}
	return &s
}

type matchStep struct{ method, path, kind string }

func checkSteps(t *testing.T, s *faultSet, steps []matchStep) {
	t.Helper()
	for i, st := range steps {
		if kind, _ := s.match(st.method, st.path); kind != st.kind {
			t.Fatalf("step %d: %s %s got %q, want %q", i, st.method, st.path, kind, st.kind)
		}
	}
}

func TestFaultSetMatch(t *testing.T) {
	s := newFaultSet(t, "GET:/a:409:2:1", "GET:/a:500:1", "*:/b/.*:drop")
	checkSteps(t, s, []matchStep{
		{"POST", "/a", ""},  // another method: not counted
		{"GET", "/a/x", ""}, // the whole path must match
		{"GET", "/xa", ""},
		// AFTER 1 lets the request through the first rule, on to the next ones (the fault syntax's rule).
		{"GET", "/a", "500"},
		{"GET", "/a", "409"}, // COUNT 2
		{"GET", "/a", "409"},
		{"GET", "/a", ""}, // both spent
		{"DELETE", "/b/c", "drop"},
		{"GET", "/b/", "drop"},
	})
	list := s.list()
	if len(list) != 3 || list[0].Remaining != 0 || list[0].After != 0 || list[1].Remaining != 0 ||
		list[2].Remaining != -1 {
		t.Fatalf("list = %+v", list)
	}
	if n := s.clear(); n != 3 || len(s.list()) != 0 {
		t.Fatalf("clear = %d, list %+v", n, s.list())
	}
	// The request with ordinal N (0-based) of the proxy's life: *:.*:KIND:1:N.
	s = newFaultSet(t, "*:.*:hang:1:2")
	checkSteps(t, s, []matchStep{{"GET", "/x", ""}, {"PATCH", "/y", ""}, {"GET", "/x", "hang"}, {"GET", "/x", ""}})
}

func TestReasons(t *testing.T) {
	want := map[int]string{400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
		405: "MethodNotAllowed", 406: "NotAcceptable", 409: "Conflict", 410: "Expired", 413: "RequestEntityTooLarge",
		415: "UnsupportedMediaType", 422: "Invalid", 429: "TooManyRequests", 500: "InternalError",
		503: "ServiceUnavailable", 504: "Timeout", 418: "Unknown", 502: "Unknown", 599: "Unknown"}
	for code, reason := range want {
		if got := reasonForCode(code); got != reason {
			t.Errorf("reasonForCode(%d) = %q, want %q", code, got, reason)
		}
	}
}
