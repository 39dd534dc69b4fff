package main

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// reasonForCode is the Status reason kube-apiserver gives a code (metav1.StatusReason*):
// "Unknown" for the others.
func reasonForCode(code int) string {
	switch code {
	case 400:
		return "BadRequest"
	case 401:
		return "Unauthorized"
	case 403:
		return "Forbidden"
	case 404:
		return "NotFound"
	case 405:
		return "MethodNotAllowed"
	case 406:
		return "NotAcceptable"
	case 409:
		return "Conflict"
	case 410:
		return "Expired"
	case 413:
		return "RequestEntityTooLarge"
	case 415:
		return "UnsupportedMediaType"
	case 422:
		return "Invalid"
	case 429:
		return "TooManyRequests"
	case 500:
		return "InternalError"
	case 503:
		return "ServiceUnavailable"
	case 504:
		return "Timeout"
	}
	return "Unknown"
}

type statusDetails struct {
	RetryAfterSeconds int `json:"retryAfterSeconds,omitempty"`
}

// status is a metav1.Status failure, its fields in kube-apiserver's order.
type status struct {
	Kind       string         `json:"kind"`
	APIVersion string         `json:"apiVersion"`
	Metadata   struct{}       `json:"metadata"`
	Status     string         `json:"status"`
	Message    string         `json:"message"`
	Reason     string         `json:"reason"`
	Details    *statusDetails `json:"details,omitempty"`
	Code       int            `json:"code"`
}

// retryAfterSeconds is what a 429 asks the client to wait (Retry-After and details.retryAfterSeconds), as
// kube-apiserver's throttling does.
const retryAfterSeconds = 1

func statusBody(code int, message string) []byte {
	s := status{Kind: "Status", APIVersion: "v1", Status: "Failure", Message: message, Reason: reasonForCode(code),
		Code: code}
	if code == http.StatusTooManyRequests {
		s.Details = &statusDetails{RetryAfterSeconds: retryAfterSeconds}
	}
	b, _ := json.Marshal(s)
	return append(b, '\n')
}

// writeStatus answers `code` with a Status body (and Retry-After for 429), as kube-apiserver's generic errors read.
func writeStatus(w http.ResponseWriter, code int, message string) {
	body := statusBody(code, message)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if code == http.StatusTooManyRequests {
		h.Set("Retry-After", strconv.Itoa(retryAfterSeconds))
	}
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeStatus(w, http.StatusInternalServerError, "cannot encode the answer: "+err.Error())
		return
	}
	b = append(b, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	_, _ = w.Write(b)
}
