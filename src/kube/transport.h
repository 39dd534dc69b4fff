// The HTTP transport behind the kube client: one small interface so that unit tests can use an in-memory fake
// (as ninja hides the disk behind DiskInterface) while the product uses libcurl.
#pragma once

#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mindie::kube {

/// One HTTP request to the API server. `path` is the absolute path with its query string, already escaped
/// (e.g. "/api/v1/namespaces/ns/configmaps?labelSelector=a%3Db"); the transport prefixes the server URL and adds
/// authentication.
struct HttpRequest {
  std::string method;        ///< GET, POST, PUT, PATCH, DELETE
  std::string path;          ///< path + query
  std::string content_type;  ///< empty when there is no body
  std::string body;
  std::string accept = "application/json";
  /// A bound of this request shorter than the transport's own (--request-timeout): what is left of it after earlier
  /// attempts (RetryingTransport). 0: the transport's own.
  std::chrono::milliseconds timeout{0};
};

/// The answer to one request. Header names are stored lower-case.
struct HttpResponse {
  int status = 0;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  /// How many times the request was sent to get this answer (RetryingTransport counts its retries here), so that
  /// an error can say the client gave up after retrying.
  int attempts = 1;
  /// stream() only: true when the caller's sink stopped the transfer (returned false). Not an error; `status` is
  /// the answer's status, or 0 when the transfer was stopped before any answer arrived.
  bool aborted = false;

  /// Value of the first header named `name` (case-insensitive), or "" when absent.
  std::string header(std::string_view name) const;
};

/// Raised when no HTTP response was received at all (DNS, connect, TLS handshake, reset, timeout), or when a
/// stream's connection broke mid-body. The message names the server and the underlying cause.
class TransportError : public std::runtime_error {
 public:
  /// `retryable` false: the failure cannot go away by itself (the server's certificate fails verification, a
  /// client key that does not match its certificate, a URL that cannot be parsed), so retrying is pointless.
  explicit TransportError(const std::string& what, bool retryable = true)
      : std::runtime_error(what), retryable_(retryable) {}
  bool retryable() const { return retryable_; }

 private:
  bool retryable_;
};

/// Receives a streamed body (stream()). Called with each piece of a 2xx answer's body as it arrives, and with an
/// EMPTY piece about once a second (or more often) while nothing arrives — before the answer too — so the caller
/// can check a deadline or a stop flag. Returning false stops the transfer (HttpResponse::aborted). A piece can
/// hold part of a line or several lines: framing is the caller's job.
using StreamSink = std::function<bool(std::string_view chunk)>;

/// Called once per stream() when a 2xx answer's status line and headers have arrived, before any body piece
/// (`head.body` is empty), e.g. to log the status or to count the stream as established.
using StreamHeadObserver = std::function<void(const HttpResponse& head)>;

/// Sends requests to one API server. Implementations: CurlTransport (product), FakeTransport (unit tests),
/// LoggingTransport (decorator for -v), RetryingTransport (decorator for transient failures).
class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  /// Sends `req` and returns the response whatever its status code; throws TransportError when there is none.
  virtual HttpResponse send(const HttpRequest& req) = 0;
  /// Sends `req` and hands a 2xx answer's body to `sink` piece by piece as it arrives, for long-running requests
  /// (watches). Returns when the body ended, when `sink` returned false (`aborted` set) or, for a non-2xx answer,
  /// with that answer's body collected in the response (`sink` never sees its bytes). `on_head` (may be empty)
  /// is told about a 2xx answer's headers first. Throws TransportError when no answer arrives or the connection
  /// breaks mid-body (the message names the server and says the stream broke); an exception from `sink` or
  /// `on_head` ends the transfer and propagates.
  virtual HttpResponse stream(const HttpRequest& req, const StreamSink& sink, const StreamHeadObserver& on_head) = 0;
  /// stream() without a head observer.
  HttpResponse stream(const HttpRequest& req, const StreamSink& sink) { return stream(req, sink, {}); }
  /// The server's base URL, e.g. "https://127.0.0.1:6443" (for messages and -v logs).
  virtual std::string server() const = 0;
  /// From now on every request ends by `deadline` (DeadlineTransport; `what` heads the error of one that does not),
  /// where the transport supports it (a Session's chain); others ignore it.
  virtual void bound_until(std::chrono::steady_clock::time_point deadline, const std::string& what) {
    (void)deadline;
    (void)what;
  }
  /// Lifts what bound_until() set, back to the deadline before it (none, or a --timeout's).
  virtual void lift_bound() {}
};

}  // namespace mindie::kube
