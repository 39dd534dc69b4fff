#include "kube/retrying_transport.h"

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <thread>

#include "kube/client.h"

namespace mindie::kube {

namespace {

class ThreadSleeper : public Sleeper {
 public:
  void sleep(std::chrono::milliseconds duration) override { std::this_thread::sleep_for(duration); }
};

// A media type without parameters ("application/json; charset=utf-8" -> "application/json").
std::string_view media_type(std::string_view content_type) {
  content_type = content_type.substr(0, content_type.find(';'));
  while (!content_type.empty() && content_type.back() == ' ') content_type.remove_suffix(1);
  return content_type;
}

// The body's metadata.resourceVersion is a non-empty string: the server checks it (optimistic concurrency, API
// conventions "Concurrency Control and Consistency"), so a second copy of an applied write fails with 409.
bool carries_resource_version(const std::string& body) {
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(body, ec);
  if (ec || !v.is_object()) return false;
  const auto* md = v.get_object().if_contains("metadata");
  if (md == nullptr || !md->is_object()) return false;
  const auto* rv = md->get_object().if_contains("resourceVersion");
  return rv != nullptr && rv->is_string() && !rv->get_string().empty();
}

// The JSON Patch's first operation is a `test`: RFC 6902 applies a patch all or nothing, so the guard decides
// whether anything changes.
bool starts_with_test_op(const std::string& body) {
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(body, ec);
  if (ec || !v.is_array() || v.get_array().empty() || !v.get_array().front().is_object()) return false;
  const auto* op = v.get_array().front().get_object().if_contains("op");
  return op != nullptr && op->is_string() && op->get_string() == "test";
}

// A review is asked, never stored (kubernetes/kubernetes pkg/registry/authorization/selfsubject*review/rest.go).
bool is_self_subject_review(std::string_view path) {
  path = path.substr(0, path.find('?'));
  return path == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews" ||
         path == "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews";
}

}  // namespace

Sleeper& real_sleeper() {
  static ThreadSleeper sleeper;
  return sleeper;
}

bool is_safe_to_retry(const HttpRequest& req) {
  if (req.method == "GET" || req.method == "HEAD") return true;
  const std::string_view type = media_type(req.content_type);
  if (req.method == "PATCH") {
    if (type == "application/apply-patch+yaml") return true;
    if (type == "application/json-patch+json") return starts_with_test_op(req.body);
    if (type == "application/merge-patch+json") return carries_resource_version(req.body);
    return false;
  }
  if (req.method == "PUT") return carries_resource_version(req.body);
  if (req.method == "POST") return is_self_subject_review(req.path);
  return false;
}

bool is_retryable_status(int status) {
  return status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

RetryingTransport::RetryingTransport(HttpTransport& inner, RetryPolicy policy, Sleeper& sleeper,
                                     std::function<double()> random)
    : inner_(inner), policy_(policy), sleeper_(sleeper), random_(std::move(random)) {
  if (!random_) {
    auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
    random_ = [engine] { return std::uniform_real_distribution<double>(0.0, 1.0)(*engine); };
  }
  policy_.max_attempts = std::max(1, policy_.max_attempts);
}

std::chrono::milliseconds RetryingTransport::backoff(int attempt) {
  const double base = static_cast<double>(policy_.initial_backoff.count()) * std::pow(2.0, std::max(0, attempt - 1));
  const double r = std::clamp(random_(), 0.0, 1.0);
  const double jittered = base * (1.0 + policy_.jitter * r);
  const double capped = std::min(jittered, static_cast<double>(policy_.max_backoff.count()));
  return std::chrono::milliseconds(static_cast<std::int64_t>(capped));
}

std::chrono::milliseconds RetryingTransport::budget_of(const HttpRequest& req) const {
  if (req.timeout.count() > 0 && (policy_.budget.count() == 0 || req.timeout < policy_.budget)) return req.timeout;
  return policy_.budget;
}

bool RetryingTransport::go_on(const HttpRequest& req, std::chrono::milliseconds spent, std::chrono::milliseconds wait,
                              int attempt, const std::string& why) const {
  const auto budget = budget_of(req);
  if (budget.count() > 0 && spent + wait >= budget) return false;
  if (policy_.notice) {
    char secs[32];
    if (wait.count() < 1000) std::snprintf(secs, sizeof secs, "%lldms", static_cast<long long>(wait.count()));
    else std::snprintf(secs, sizeof secs, "%.1fs", static_cast<double>(wait.count()) / 1000.0);
    policy_.notice("retrying " + req.method + " " + req.path.substr(0, req.path.find('?')) + " in " + secs + " after " +
                   why + " (attempt " + std::to_string(attempt + 1) + "/" + std::to_string(policy_.max_attempts) + ")");
  }
  return true;
}

namespace {

std::chrono::milliseconds since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t);
}

std::string gave_up(const TransportError& e, int attempt, const std::string& budget) {
  return std::string(e.what()) + " (gave up after " + std::to_string(attempt) +
         (attempt == 1 ? " attempt" : " attempts") + (budget.empty() ? "" : ": " + budget) + ")";
}

}  // namespace

HttpResponse RetryingTransport::send(const HttpRequest& req) {
  if (!is_safe_to_retry(req)) return inner_.send(req);
  // Time spent: the attempts (measured) and the waits (as asked of the sleeper, which tests replace).
  std::chrono::milliseconds spent{0};
  HttpRequest next = req;
  for (int attempt = 1;; ++attempt) {
    std::chrono::milliseconds wait{0};
    // A retry is bounded by what is left of the budget (go_on made sure something is).
    if (attempt > 1 && budget_of(req).count() > 0) next.timeout = budget_of(req) - spent;
    const auto start = std::chrono::steady_clock::now();
    try {
      HttpResponse resp = inner_.send(next);
      resp.attempts = attempt;
      if (!is_retryable_status(resp.status) || attempt >= policy_.max_attempts) return resp;
      wait = retry_wait(req, resp, attempt);
      spent += since(start);
      if (!go_on(req, spent, wait, attempt, std::to_string(resp.status))) return resp;
    } catch (const TransportError& e) {
      if (!e.retryable() || (attempt == 1 && policy_.max_attempts == 1)) throw;
      if (attempt >= policy_.max_attempts) throw TransportError(gave_up(e, attempt, ""));
      wait = backoff(attempt);
      spent += since(start);
      if (!go_on(req, spent, wait, attempt, "a connection error"))
        throw TransportError(gave_up(e, attempt, policy_.budget_name));
    }
    sleeper_.sleep(wait);
    spent += wait;
  }
}

std::chrono::milliseconds RetryingTransport::retry_wait(const HttpRequest& req, const HttpResponse& resp, int attempt) {
  // Retry-After in the header or the Status body (the API server sets both for 429 and some 5xx).
  const int retry_after = decode_api_error(req, resp).retry_after_seconds();
  return retry_after > 0
             ? std::min<std::chrono::milliseconds>(std::chrono::seconds(retry_after), policy_.max_retry_after)
             : backoff(attempt);
}

HttpResponse RetryingTransport::stream(const HttpRequest& req, const StreamSink& sink,
                                       const StreamHeadObserver& on_head) {
  if (!is_safe_to_retry(req)) return inner_.stream(req, sink, on_head);
  bool saw_data = false;
  const StreamSink watching = [&](std::string_view chunk) {
    saw_data = saw_data || !chunk.empty();
    return sink(chunk);
  };
  std::chrono::milliseconds spent{0};
  HttpRequest next = req;
  for (int attempt = 1;; ++attempt) {
    std::chrono::milliseconds wait{0};
    if (attempt > 1 && budget_of(req).count() > 0) next.timeout = budget_of(req) - spent;
    const auto start = std::chrono::steady_clock::now();
    try {
      HttpResponse resp = inner_.stream(next, watching, on_head);
      resp.attempts = attempt;
      if (resp.aborted || !is_retryable_status(resp.status) || attempt >= policy_.max_attempts) return resp;
      wait = retry_wait(req, resp, attempt);
      spent += since(start);
      if (!go_on(req, spent, wait, attempt, std::to_string(resp.status))) return resp;
    } catch (const TransportError& e) {
      // Once the caller has seen part of the body, a second attempt would hand it the body again from the start.
      if (saw_data || !e.retryable() || (attempt == 1 && policy_.max_attempts == 1)) throw;
      if (attempt >= policy_.max_attempts) throw TransportError(gave_up(e, attempt, ""));
      wait = backoff(attempt);
      spent += since(start);
      if (!go_on(req, spent, wait, attempt, "a connection error"))
        throw TransportError(gave_up(e, attempt, policy_.budget_name));
    }
    spent += wait;
    // Waits in slices of at most a second with the sink's idle call in between, so the caller can still stop.
    while (wait.count() > 0) {
      const auto slice = std::min<std::chrono::milliseconds>(wait, std::chrono::seconds(1));
      sleeper_.sleep(slice);
      wait -= slice;
      if (!sink(std::string_view())) {
        HttpResponse stopped;
        stopped.aborted = true;
        stopped.attempts = attempt;
        return stopped;
      }
    }
  }
}

}  // namespace mindie::kube
