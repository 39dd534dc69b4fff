// A transport decorator that repeats requests the API server failed transiently — throttling (429), server
// trouble (500/502/503/504) and connection failures — with bounded exponential backoff and jitter, but only when
// sending the request twice cannot apply it twice.
#pragma once

#include <chrono>
#include <functional>

#include "kube/transport.h"

namespace mindie::kube {

/// Waits between attempts. Injectable so that unit tests run instantly and can assert the waits exactly.
class Sleeper {
 public:
  virtual ~Sleeper() = default;
  virtual void sleep(std::chrono::milliseconds duration) = 0;
};

/// The process-wide Sleeper that really sleeps (std::this_thread::sleep_for).
Sleeper& real_sleeper();

/// How often and how long to retry. The defaults follow client-go's rest client: exponential backoff from a short
/// initial wait, doubling per attempt with up to 50 % jitter (wait.Backoff{Factor: 2, Jitter: 0.5}), and the
/// server's Retry-After honoured as given (capped here, so a misbehaving server cannot stall the command).
struct RetryPolicy {
  int max_attempts = 5;                            ///< attempts in total, the first one included
  std::chrono::milliseconds initial_backoff{200};  ///< wait before the second attempt, before jitter
  std::chrono::milliseconds max_backoff{5000};     ///< cap of one wait, jitter included
  double jitter = 0.5;                             ///< a wait grows by up to this fraction at random
  std::chrono::seconds max_retry_after{10};        ///< cap of one server-requested Retry-After wait
  /// --request-timeout when given: the attempts and waits of one request never run past it (0: no bound). A
  /// request's own shorter HttpRequest::timeout (a caller's deadline, DeadlineTransport) bounds it the same way.
  std::chrono::milliseconds budget{0};
  std::string budget_name = "--request-timeout";  ///< what set `budget`, as the give-up message names it
  /// Told before each wait, e.g. "retrying GET /api/v1/... in 0.4s after 503 (attempt 2/5)" (empty: nobody).
  std::function<void(const std::string&)> notice;
};

/// True when sending `req` again cannot change the outcome beyond what one successful send would (the API
/// conventions' notion of a request that is safe to retry, as client-go decides for connection failures):
/// GET and HEAD; server-side apply (PATCH application/apply-patch+yaml — the body is the whole intended state);
/// a JSON Patch whose first operation is a `test` (all-or-nothing: a repeat after success fails the test with 422
/// instead of applying twice); a merge patch or PUT whose body carries metadata.resourceVersion (a precondition:
/// a repeat after success fails with 409); a POST of a SelfSubjectAccessReview or SelfSubjectRulesReview (a
/// question: the server stores nothing). Never another POST, DELETE, or an unguarded patch or PUT.
bool is_safe_to_retry(const HttpRequest& req);

/// True for the answers worth another attempt: 429 TooManyRequests and 500/502/503/504 (server or proxy trouble
/// that says nothing about the request itself).
bool is_retryable_status(int status);

/// Wraps `inner`: a request that is safe to retry (is_safe_to_retry) and fails with a retryable status or a
/// retryable TransportError (TransportError::retryable) is sent again, at most policy.max_attempts times in total.
/// Between attempts it waits the server's Retry-After (header, else the Status body's details.retryAfterSeconds; capped
/// at policy.max_retry_after), else the exponential backoff with jitter. When the attempts run out it returns the last
/// response (its `attempts` field says how many were made) or rethrows the last TransportError with the attempt count
/// appended, so the caller reports the server's own reason. Other requests pass through once. stream() retries only the
/// establishing of a stream, with the same rules: a retryable answer, or a TransportError before the sink saw any body
/// byte; never after (the caller would see the body twice). Its waits are cut into slices of at most a second with the
/// sink's idle call in between; a sink returning false there ends the call with an `aborted` response (status 0).
class RetryingTransport : public HttpTransport {
 public:
  /// `random` yields values in [0, 1) for the jitter; empty: a generator seeded from std::random_device.
  RetryingTransport(HttpTransport& inner, RetryPolicy policy = {}, Sleeper& sleeper = real_sleeper(),
                    std::function<double()> random = {});
  HttpResponse send(const HttpRequest& req) override;
  using HttpTransport::stream;
  HttpResponse stream(const HttpRequest& req, const StreamSink& sink, const StreamHeadObserver& on_head) override;
  std::string server() const override { return inner_.server(); }

  /// The wait before attempt `attempt` + 1 (attempt >= 1) when the server gave no Retry-After: initial_backoff ·
  /// 2^(attempt-1) · (1 + jitter · random()), at most max_backoff.
  std::chrono::milliseconds backoff(int attempt);

 private:
  // The wait before retrying the retryable answer `resp`: its Retry-After (capped), else backoff(attempt).
  std::chrono::milliseconds retry_wait(const HttpRequest& req, const HttpResponse& resp, int attempt);
  // The bound of all attempts of `req`: its own timeout when shorter than policy_.budget (0: none).
  std::chrono::milliseconds budget_of(const HttpRequest& req) const;
  // True when another attempt after `wait` fits budget_of(req), given `spent` so far (attempts and waits); tells
  // policy_.notice ("after `why`") when it does.
  bool go_on(const HttpRequest& req, std::chrono::milliseconds spent, std::chrono::milliseconds wait, int attempt,
             const std::string& why) const;

  HttpTransport& inner_;
  RetryPolicy policy_;
  Sleeper& sleeper_;
  std::function<double()> random_;
};

}  // namespace mindie::kube
