// An in-memory HttpTransport for unit tests: records every request and answers from a script, in order.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kube/transport.h"

namespace mindie::test {

/// Scripted transport. Queue answers with reply()/fail()/stream_reply(); each send() or stream() records the
/// request and consumes the next answer. A request with nothing queued throws std::logic_error naming it, so
/// unexpected calls fail the test. Thread-safe: a watch thread may consume answers while the test queues more or
/// waits for requests (wait_for_requests()); `requests` itself may only be read when no other thread sends.
class FakeTransport : public kube::HttpTransport {
 public:
  /// How a scripted stream ends after its chunks: the server closes it, the connection breaks (TransportError),
  /// or it stays open and idle (the sink gets empty pieces) until the sink returns false.
  enum class StreamEnd { Close, Break, Idle };

  explicit FakeTransport(std::string server = "https://fake.example:6443") : server_(std::move(server)) {}

  /// Queues a response. Header names should be lower-case, as real transports store them.
  FakeTransport& reply(int status, std::string body, std::vector<std::pair<std::string, std::string>> headers = {}) {
    Answer a;
    a.response.status = status;
    a.response.body = std::move(body);
    a.response.headers = std::move(headers);
    return push(std::move(a));
  }

  /// Queues a failure: the next send() or stream() throws TransportError(`message`) before any answer.
  FakeTransport& fail(std::string message) {
    Answer a;
    a.failure = std::move(message);
    return push(std::move(a));
  }

  /// Queues a 2xx stream: stream() hands `chunks` to the sink one by one (as pieces of the body, split where
  /// given), then ends as `end` says; Break throws TransportError(`break_message`). send() gets the chunks
  /// joined as the body.
  FakeTransport& stream_reply(std::vector<std::string> chunks, StreamEnd end = StreamEnd::Close,
                              std::string break_message = "The stream from the server broke: connection reset") {
    Answer a;
    a.response.status = 200;
    a.response.headers = {{"content-type", "application/json"}, {"transfer-encoding", "chunked"}};
    a.chunks = std::move(chunks);
    a.end = end;
    a.break_message = std::move(break_message);
    return push(std::move(a));
  }

  /// Holds the answer queued last (a stream) after its head, until release(): the sink gets only idle calls
  /// meanwhile. Lets a test look at a state before the stream's events change it.
  FakeTransport& hold() {
    std::lock_guard lock(mu_);
    script_.back().held = true;
    return *this;
  }
  /// Lets the next held stream go on (or the one reaching its hold later).
  void release() {
    std::lock_guard lock(mu_);
    ++releases_;
  }

  /// Lets the script answer access reviews too. Otherwise the fake's user may do everything: a SelfSubjectRulesReview
  /// or SelfSubjectAccessReview (deploy's and scale's rights check, cmd/rights.h) is answered so, unscripted and
  /// unrecorded, and the tests of what a command writes count only its other requests.
  FakeTransport& script_reviews() {
    script_reviews_ = true;
    return *this;
  }

  kube::HttpResponse send(const kube::HttpRequest& req) override {
    if (!script_reviews_ && req.method == "POST" &&
        req.path.rfind("/apis/authorization.k8s.io/v1/selfsubject", 0) == 0) {
      kube::HttpResponse allowed;
      allowed.status = 201;
      allowed.body = R"({"status":{"allowed":true,"incomplete":false,)"
                     R"("resourceRules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"]}]}})";
      return allowed;
    }
    Answer a = next(req);
    if (!a.failure.empty()) throw kube::TransportError(a.failure);
    for (const auto& c : a.chunks) a.response.body += c;
    return a.response;
  }

  using kube::HttpTransport::stream;
  kube::HttpResponse stream(const kube::HttpRequest& req, const kube::StreamSink& sink,
                            const kube::StreamHeadObserver& on_head) override {
    Answer a = next(req);  // the lock is not held while the sink runs
    if (!a.failure.empty()) throw kube::TransportError(a.failure);
    kube::HttpResponse resp = a.response;
    if (resp.status < 200 || resp.status > 299) return resp;
    if (on_head) on_head(resp);
    const auto stopped = [&] {
      std::lock_guard lock(mu_);
      ++aborted_;
      resp.aborted = true;
      return resp;
    };
    while (a.held) {
      {
        std::lock_guard lock(mu_);
        if (releases_ > 0) {
          --releases_;
          break;
        }
      }
      if (!sink({})) return stopped();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // paces the idle calls only
    }
    for (const auto& chunk : a.chunks)
      if (!sink(chunk)) return stopped();
    if (a.end == StreamEnd::Break) throw kube::TransportError(a.break_message);
    while (a.end == StreamEnd::Idle) {
      if (!sink({})) return stopped();
      // Only paces the idle calls (as libcurl's progress callback does); nothing waits on it.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return resp;
  }

  std::string server() const override { return server_; }

  /// Answers queued but not yet consumed.
  std::size_t pending() const {
    std::lock_guard lock(mu_);
    return script_.size();
  }

  /// Blocks until at least `n` requests were made; false if that takes longer than `limit` (a failsafe against a
  /// hanging test, not a timing assertion).
  bool wait_for_requests(std::size_t n, std::chrono::seconds limit = std::chrono::seconds(20)) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, limit, [&] { return requests.size() >= n; });
  }

  /// A copy of request `i` (taken under the lock, so usable while another thread sends).
  kube::HttpRequest request(std::size_t i) const {
    std::lock_guard lock(mu_);
    return requests.at(i);
  }
  std::size_t request_count() const {
    std::lock_guard lock(mu_);
    return requests.size();
  }
  /// Streams the sink stopped.
  int aborted_streams() const {
    std::lock_guard lock(mu_);
    return aborted_;
  }

  /// Every request sent, in order.
  std::vector<kube::HttpRequest> requests;

 private:
  bool script_reviews_ = false;

  struct Answer {
    kube::HttpResponse response;
    std::string failure;  // non-empty: throw TransportError instead of answering
    std::vector<std::string> chunks;
    StreamEnd end = StreamEnd::Close;
    std::string break_message;
    bool held = false;
  };

  FakeTransport& push(Answer a) {
    std::lock_guard lock(mu_);
    script_.push_back(std::move(a));
    return *this;
  }

  Answer next(const kube::HttpRequest& req) {
    std::lock_guard lock(mu_);
    requests.push_back(req);
    cv_.notify_all();
    if (script_.empty()) throw std::logic_error("FakeTransport: unexpected request " + req.method + " " + req.path);
    Answer a = std::move(script_.front());
    script_.pop_front();
    return a;
  }

  std::string server_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Answer> script_;
  int aborted_ = 0;
  int releases_ = 0;
};

/// A non-owning handle to a transport the test keeps (e.g. a FakeTransport), for APIs that take ownership of
/// theirs (Informer's transport factory).
class TransportRef : public kube::HttpTransport {
 public:
  explicit TransportRef(kube::HttpTransport& inner) : inner_(inner) {}
  kube::HttpResponse send(const kube::HttpRequest& req) override { return inner_.send(req); }
  using kube::HttpTransport::stream;
  kube::HttpResponse stream(const kube::HttpRequest& req, const kube::StreamSink& sink,
                            const kube::StreamHeadObserver& on_head) override {
    return inner_.stream(req, sink, on_head);
  }
  std::string server() const override { return inner_.server(); }

 private:
  kube::HttpTransport& inner_;
};

}  // namespace mindie::test
