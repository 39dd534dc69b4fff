// A transport decorator that logs like kubectl's -v levels: 6 = method, URL, status and latency; 7 = also the
// request's Accept/Content-Type; 8 = also response headers and bodies (cut at 1024 characters); 9 = whole bodies.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "kube/transport.h"

namespace mindie::kube {

/// `text` with every credential after an HTTP auth scheme masked: "Bearer <x>", "Basic <x>" (any case) become
/// "Bearer <masked>", "Basic <masked>", as kubectl masks Authorization values in its -v logs.
std::string redact_credentials(std::string_view text);

/// Wraps `inner`, logging each request to `log` at `verbosity` (< 6 logs nothing) in klog's line format.
/// Never prints a token: credentials are added by the inner transport, below this decorator, and everything logged
/// (URL, bodies, response headers, errors) goes through redact_credentials; the values of response headers named
/// Authorization or Proxy-Authorization are masked whole. A TransportError from `inner` is logged (status="" and
/// the error) and rethrown.
class LoggingTransport : public HttpTransport {
 public:
  LoggingTransport(HttpTransport& inner, int verbosity, std::ostream& log);
  HttpResponse send(const HttpRequest& req) override;
  std::string server() const override { return inner_.server(); }

 private:
  HttpTransport& inner_;
  int verbosity_;
  std::ostream& log_;
};

}  // namespace mindie::kube
