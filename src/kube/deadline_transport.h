// A deadline over every request of a command that must end by a given time (wait, and deploy/scale --wait:
// --timeout bounds the whole wait, a request that hangs included; issue 17).
#pragma once

#include <chrono>
#include <string>

#include "kube/transport.h"

namespace mindie::kube {

/// Wraps `inner`: each request is bounded by what is left until `deadline` (HttpRequest::timeout, which
/// RetryingTransport and CurlTransport honour; a stream's bound is the wait for its answer's headers, as with
/// --request-timeout), and none is sent once it has passed. A request bounded by the deadline that fails when
/// (nearly: within a retry's backoff) out of time throws
/// TransportError("`what`: no answer to GET /path in time", not retryable), e.g. `what` = "timed out waiting for
/// the condition (--timeout 5s)".
class DeadlineTransport : public HttpTransport {
 public:
  DeadlineTransport(HttpTransport& inner, std::chrono::steady_clock::time_point deadline, std::string what);
  HttpResponse send(const HttpRequest& req) override;
  using HttpTransport::stream;
  HttpResponse stream(const HttpRequest& req, const StreamSink& sink, const StreamHeadObserver& on_head) override;
  std::string server() const override { return inner_.server(); }

 private:
  // `req` bounded by the time left; throws when none is.
  HttpRequest bounded(const HttpRequest& req) const;
  [[noreturn]] void late(const HttpRequest& req) const;
  // True when a failure of `bounded` (`req` with the deadline applied) is the deadline's doing.
  bool ran_out(const HttpRequest& req, const HttpRequest& bounded) const;
  HttpTransport& inner_;
  std::chrono::steady_clock::time_point deadline_;
  std::string what_;
};

}  // namespace mindie::kube
