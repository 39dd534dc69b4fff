// A transport decorator that logs like kubectl's -v levels: 6 = method, URL, status and latency;
// 8 = also request/response headers (Authorization redacted) and bodies.
#pragma once

#include <ostream>

#include "kube/transport.h"

namespace mindie::kube {

/// Wraps `inner`, logging each request to `log` at `verbosity` (< 6 logs nothing). Never prints a token:
/// Authorization values appear as "Bearer <masked>" as kubectl does.
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
