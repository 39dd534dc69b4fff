// The HTTP transport behind the kube client: one small interface so that unit tests can use an in-memory fake
// (as ninja hides the disk behind DiskInterface) while the product uses libcurl.
#pragma once

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
  std::string method;                 ///< GET, POST, PUT, PATCH, DELETE
  std::string path;                   ///< path + query
  std::string content_type;           ///< empty when there is no body
  std::string body;
  std::string accept = "application/json";
};

/// The answer to one request. Header names are stored lower-case.
struct HttpResponse {
  int status = 0;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  /// How many times the request was sent to get this answer (RetryingTransport counts its retries here), so that
  /// an error can say the client gave up after retrying.
  int attempts = 1;

  /// Value of the first header named `name` (case-insensitive), or "" when absent.
  std::string header(std::string_view name) const;
};

/// Raised when no HTTP response was received at all (DNS, connect, TLS handshake, reset, timeout).
/// The message names the server and the underlying cause.
class TransportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Sends requests to one API server. Implementations: CurlTransport (product), FakeTransport (unit tests),
/// LoggingTransport (decorator for -v).
class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  /// Sends `req` and returns the response whatever its status code; throws TransportError when there is none.
  virtual HttpResponse send(const HttpRequest& req) = 0;
  /// The server's base URL, e.g. "https://127.0.0.1:6443" (for messages and -v logs).
  virtual std::string server() const = 0;
};

}  // namespace mindie::kube
