#include "kube/deadline_transport.h"

namespace mindie::kube {

DeadlineTransport::DeadlineTransport(HttpTransport& inner, std::chrono::steady_clock::time_point deadline,
                                     std::string what)
    : inner_(inner), deadline_(deadline), what_(std::move(what)) {}

void DeadlineTransport::late(const HttpRequest& req) const {
  throw TransportError(
      what_ + ": no answer to " + req.method + " " + req.path.substr(0, req.path.find('?')) + " in time", false);
}

HttpRequest DeadlineTransport::bounded(const HttpRequest& req) const {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now());
  if (left.count() <= 0) late(req);
  HttpRequest r = req;
  if (r.timeout.count() == 0 || left < r.timeout) r.timeout = left;
  return r;
}

bool DeadlineTransport::ran_out(const HttpRequest& req, const HttpRequest& bounded) const {
  // The deadline was the tighter bound and (nearly) passed: retries give up a backoff (at most ~10 s) early, when
  // the next one would not fit.
  const bool deadline_bound = req.timeout.count() == 0 || bounded.timeout < req.timeout;
  return deadline_bound && std::chrono::steady_clock::now() + std::chrono::seconds(10) >= deadline_;
}

HttpResponse DeadlineTransport::send(const HttpRequest& req) {
  const HttpRequest r = bounded(req);
  try {
    return inner_.send(r);
  } catch (const TransportError&) {
    if (ran_out(req, r)) late(req);
    throw;
  }
}

HttpResponse DeadlineTransport::stream(const HttpRequest& req, const StreamSink& sink,
                                       const StreamHeadObserver& on_head) {
  const HttpRequest r = bounded(req);
  try {
    return inner_.stream(r, sink, on_head);
  } catch (const TransportError&) {
    if (ran_out(req, r)) late(req);
    throw;
  }
}

}  // namespace mindie::kube
