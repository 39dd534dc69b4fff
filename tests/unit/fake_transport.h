// An in-memory HttpTransport for unit tests: records every request and answers from a script, in order.
#pragma once

#include <deque>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kube/transport.h"

namespace mindie::test {

/// Scripted transport. Queue answers with reply()/fail(); each send() records the request and consumes the next
/// answer. A request with nothing queued throws std::logic_error naming it, so unexpected calls fail the test.
class FakeTransport : public kube::HttpTransport {
 public:
  explicit FakeTransport(std::string server = "https://fake.example:6443") : server_(std::move(server)) {}

  /// Queues a response. Header names should be lower-case, as real transports store them.
  FakeTransport& reply(int status, std::string body,
                       std::vector<std::pair<std::string, std::string>> headers = {}) {
    kube::HttpResponse r;
    r.status = status;
    r.body = std::move(body);
    r.headers = std::move(headers);
    script_.push_back(Answer{std::move(r), {}});
    return *this;
  }

  /// Queues a failure: the next send() throws TransportError(`message`).
  FakeTransport& fail(std::string message) {
    script_.push_back(Answer{{}, std::move(message)});
    return *this;
  }

  kube::HttpResponse send(const kube::HttpRequest& req) override {
    requests.push_back(req);
    if (script_.empty()) throw std::logic_error("FakeTransport: unexpected request " + req.method + " " + req.path);
    Answer a = std::move(script_.front());
    script_.pop_front();
    if (!a.failure.empty()) throw kube::TransportError(a.failure);
    return a.response;
  }

  std::string server() const override { return server_; }

  /// Answers queued but not yet consumed.
  std::size_t pending() const { return script_.size(); }

  /// Every request sent, in order.
  std::vector<kube::HttpRequest> requests;

 private:
  struct Answer {
    kube::HttpResponse response;
    std::string failure;  // non-empty: throw TransportError instead of answering
  };
  std::string server_;
  std::deque<Answer> script_;
};

}  // namespace mindie::test
