// RetryingTransport (kube/retrying_transport.h): which requests are repeated, on which answers, how long it waits
// and how it gives up. The Sleeper is a recorder, so nothing sleeps and every wait is asserted exactly.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "fake_transport.h"
#include "kube/client.h"
#include "kube/retrying_transport.h"

using mindie::kube::ApiError;
using mindie::kube::HttpRequest;
using mindie::kube::RetryingTransport;
using mindie::kube::RetryPolicy;
using mindie::kube::TransportError;
using mindie::test::FakeTransport;
using std::chrono::milliseconds;

namespace {

class RecordingSleeper : public mindie::kube::Sleeper {
 public:
  void sleep(milliseconds d) override { waits.push_back(d); }
  std::vector<milliseconds> waits;
};

HttpRequest request(std::string method, std::string content_type = "", std::string body = "") {
  HttpRequest r;
  r.method = std::move(method);
  r.path = "/api/v1/namespaces/ns/configmaps/motor-config";
  r.content_type = std::move(content_type);
  r.body = std::move(body);
  return r;
}

const char* kUnavailable = R"({"kind":"Status","reason":"ServiceUnavailable","message":"etcd is down","code":503})";

// The jitter source always yields 0.5, so a wait is base · 1.25 with the default 50 % jitter.
RetryingTransport retrying(FakeTransport& t, RecordingSleeper& s, RetryPolicy p = {}) {
  return RetryingTransport(t, p, s, [] { return 0.5; });
}

}  // namespace

TEST_CASE("safe to retry: GET, apply, test-guarded JSON patches, resourceVersion-guarded merge patches and PUTs") {
  using mindie::kube::is_safe_to_retry;
  CHECK(is_safe_to_retry(request("GET")));
  CHECK(is_safe_to_retry(request("PATCH", "application/apply-patch+yaml", R"({"kind":"ConfigMap"})")));
  CHECK(is_safe_to_retry(request("PATCH", "application/json-patch+json",
                                 R"([{"op":"test","path":"/a","value":1},{"op":"replace","path":"/a","value":2}])")));
  CHECK(is_safe_to_retry(request("PATCH", "application/merge-patch+json; charset=utf-8",
                                 R"({"metadata":{"resourceVersion":"12"},"data":{"k":"v"}})")));
  CHECK(is_safe_to_retry(request("PUT", "application/json", R"({"metadata":{"resourceVersion":"12"}})")));

  CHECK_FALSE(is_safe_to_retry(request("POST", "application/json", R"({"metadata":{"resourceVersion":"12"}})")));
  CHECK_FALSE(is_safe_to_retry(request("DELETE")));
  // A test op later in the patch does not guard the ops before it.
  CHECK_FALSE(
      is_safe_to_retry(request("PATCH", "application/json-patch+json",
                               R"([{"op":"add","path":"/a/-","value":1},{"op":"test","path":"/b","value":1}])")));
  CHECK_FALSE(is_safe_to_retry(request("PATCH", "application/json-patch+json", "[]")));
  CHECK_FALSE(is_safe_to_retry(request("PATCH", "application/json-patch+json", "not json")));
  CHECK_FALSE(is_safe_to_retry(request("PATCH", "application/merge-patch+json", R"({"data":{"k":"v"}})")));
  CHECK_FALSE(
      is_safe_to_retry(request("PATCH", "application/merge-patch+json", R"({"metadata":{"resourceVersion":""}})")));
  CHECK_FALSE(is_safe_to_retry(
      request("PATCH", "application/strategic-merge-patch+json", R"({"metadata":{"resourceVersion":"1"}})")));
  CHECK_FALSE(is_safe_to_retry(request("PUT", "application/json", R"({"metadata":{"name":"x"}})")));
}

TEST_CASE("retryable answers: 429 and 500/502/503/504, nothing else") {
  using mindie::kube::is_retryable_status;
  for (int code : {429, 500, 502, 503, 504}) CHECK(is_retryable_status(code));
  for (int code : {200, 201, 400, 401, 403, 404, 409, 410, 415, 422, 501}) CHECK_FALSE(is_retryable_status(code));
}

TEST_CASE("a GET answered 503 twice is sent a third time after exponential backoff with jitter") {
  FakeTransport t;
  RecordingSleeper s;
  auto r = retrying(t, s);
  t.reply(503, kUnavailable).reply(503, kUnavailable).reply(200, "{}");
  const auto resp = r.send(request("GET"));
  CHECK(resp.status == 200);
  CHECK(resp.attempts == 3);
  CHECK(t.requests.size() == 3);
  CHECK(s.waits == std::vector<milliseconds>{milliseconds(250), milliseconds(500)});
}

TEST_CASE("429 waits the Retry-After header's seconds, else details.retryAfterSeconds, capped by the policy") {
  FakeTransport t;
  RecordingSleeper s;
  RetryPolicy p;
  p.max_retry_after = std::chrono::seconds(10);
  auto r = retrying(t, s, p);
  t.reply(429, R"({"kind":"Status","reason":"TooManyRequests","code":429})", {{"retry-after", "3"}})
      .reply(429, R"({"kind":"Status","reason":"TooManyRequests","code":429,"details":{"retryAfterSeconds":2}})")
      .reply(429, "slow down", {{"retry-after", "3600"}})
      .reply(200, "{}");
  CHECK(r.send(request("GET")).status == 200);
  CHECK(s.waits == std::vector<milliseconds>{milliseconds(3000), milliseconds(2000), milliseconds(10000)});
}

TEST_CASE("backoff doubles per attempt, jitter adds up to the policy's fraction, and max_backoff caps it") {
  FakeTransport t;
  RecordingSleeper s;
  RetryPolicy p;
  p.initial_backoff = milliseconds(100);
  p.max_backoff = milliseconds(1000);
  p.jitter = 0.5;
  double next = 0.0;
  RetryingTransport r(t, p, s, [&] { return next; });
  CHECK(r.backoff(1) == milliseconds(100));
  CHECK(r.backoff(2) == milliseconds(200));
  CHECK(r.backoff(4) == milliseconds(800));
  CHECK(r.backoff(5) == milliseconds(1000));
  next = 0.999;
  CHECK(r.backoff(1) == milliseconds(149));
  CHECK(r.backoff(4) == milliseconds(1000));
  next = 7.0;  // an out-of-range random source cannot stretch a wait beyond the jitter fraction
  CHECK(r.backoff(1) == milliseconds(150));
}

TEST_CASE("after max_attempts the last answer is returned and the ApiError says how often it was tried") {
  FakeTransport t;
  RecordingSleeper s;
  RetryPolicy p;
  p.max_attempts = 3;
  auto r = retrying(t, s, p);
  for (int i = 0; i < 3; ++i) t.reply(503, kUnavailable);
  mindie::kube::Client c(r);
  try {
    c.get(mindie::kube::gvr::kConfigMaps, "ns", "motor-config");
    FAIL("expected ApiError");
  } catch (const ApiError& e) {
    CHECK(e.code() == 503);
    CHECK(e.reason() == "ServiceUnavailable");
    CHECK(e.attempts() == 3);
    CHECK(e.render() ==
          "Error from server (ServiceUnavailable): etcd is down\n"
          "(HTTP 503, GET /api/v1/namespaces/ns/configmaps/motor-config, gave up after 3 attempts)");
  }
  CHECK(t.requests.size() == 3);
  CHECK(s.waits.size() == 2);
}

TEST_CASE("connection failures of a safe request are retried; the last one is rethrown with the attempt count") {
  FakeTransport t;
  RecordingSleeper s;
  RetryPolicy p;
  p.max_attempts = 2;
  auto r = retrying(t, s, p);
  t.fail("Unable to connect to the server https://fake.example:6443: Connection reset by peer").reply(200, "{}");
  CHECK(r.send(request("PATCH", "application/apply-patch+yaml", "{}")).attempts == 2);

  t.fail("reset 1").fail("reset 2");
  try {
    r.send(request("GET"));
    FAIL("expected TransportError");
  } catch (const TransportError& e) {
    CHECK(std::string(e.what()) == "reset 2 (gave up after 2 attempts)");
  }
  CHECK(t.pending() == 0);
}

TEST_CASE("POST, DELETE and unguarded patches are sent once, whatever the answer") {
  FakeTransport t;
  RecordingSleeper s;
  auto r = retrying(t, s);
  t.reply(503, kUnavailable);
  CHECK(r.send(request("POST", "application/json", "{}")).status == 503);
  t.reply(429, "", {{"retry-after", "1"}});
  CHECK(r.send(request("DELETE")).status == 429);
  t.fail("Connection reset by peer");
  CHECK_THROWS_AS(r.send(request("PATCH", "application/merge-patch+json", R"({"data":{"k":"v"}})")), TransportError);
  CHECK(t.requests.size() == 3);
  CHECK(s.waits.empty());
}

TEST_CASE("answers that are not transient end the retries at once: 409, 422, 404 and success") {
  FakeTransport t;
  RecordingSleeper s;
  auto r = retrying(t, s);
  for (int code : {409, 422, 404, 200}) {
    t.reply(code, "{}");
    const auto resp =
        r.send(request("PATCH", "application/json-patch+json", R"([{"op":"test","path":"/a","value":1}])"));
    CHECK(resp.status == code);
    CHECK(resp.attempts == 1);
  }
  CHECK(s.waits.empty());
}

TEST_CASE("max_attempts 1 turns retries off and leaves errors untouched") {
  FakeTransport t;
  RecordingSleeper s;
  RetryPolicy p;
  p.max_attempts = 1;
  auto r = retrying(t, s, p);
  t.fail("refused");
  try {
    r.send(request("GET"));
    FAIL("expected TransportError");
  } catch (const TransportError& e) {
    CHECK(std::string(e.what()) == "refused");
  }
  t.reply(503, kUnavailable);
  CHECK(r.send(request("GET")).attempts == 1);
  CHECK(s.waits.empty());
}

// ---------------------------------------------------------------------------------------------------------------
// stream(): only the establishing of a stream is retried

namespace {

// A sink that collects the body and counts its idle calls; it stops the stream after `stop_after_idle` of them
// (negative: never).
struct Sink {
  std::string body;
  int idle = 0;
  int stop_after_idle = -1;
  mindie::kube::StreamSink fn() {
    return [this](std::string_view chunk) {
      if (!chunk.empty()) {
        body.append(chunk);
        return true;
      }
      ++idle;
      return stop_after_idle < 0 || idle < stop_after_idle;
    };
  }
};

}  // namespace

TEST_CASE("stream: failures before the first body byte are retried like a GET's") {
  FakeTransport t;
  RecordingSleeper s;
  auto r = retrying(t, s);
  t.fail("Unable to connect to the server https://fake.example:6443: Connection refused")
      .reply(503, kUnavailable, {{"retry-after", "2"}})
      .stream_reply({"a\n", "b\n"});
  Sink sink;
  const auto resp = r.stream(request("GET"), sink.fn());
  CHECK(resp.status == 200);
  CHECK(resp.attempts == 3);
  CHECK(sink.body == "a\nb\n");  // once: the failed attempts gave the sink nothing
  // 250 ms backoff, then the 2 s Retry-After in slices of at most a second with an idle call after each.
  CHECK(s.waits == std::vector<milliseconds>{milliseconds(250), milliseconds(1000), milliseconds(1000)});
  CHECK(sink.idle == 3);
}

TEST_CASE("stream: a stream that broke after the sink saw data is never repeated") {
  FakeTransport t;
  RecordingSleeper s;
  auto r = retrying(t, s);
  t.stream_reply({"{\"type\":"}, FakeTransport::StreamEnd::Break, "The stream from the server x broke: reset");
  t.stream_reply({"never sent\n"});
  Sink sink;
  CHECK_THROWS_WITH_AS(r.stream(request("GET"), sink.fn()), "The stream from the server x broke: reset",
                       TransportError);
  CHECK(t.requests.size() == 1);
  CHECK(sink.body == "{\"type\":");
  CHECK(s.waits.empty());
}

TEST_CASE("stream: a 2xx head and then a break before any body byte is retried") {
  FakeTransport t;
  RecordingSleeper s;
  auto r = retrying(t, s);
  t.stream_reply({}, FakeTransport::StreamEnd::Break).stream_reply({"x\n"});
  int heads = 0;
  Sink sink;
  const auto resp = r.stream(request("GET"), sink.fn(), [&](const mindie::kube::HttpResponse&) { ++heads; });
  CHECK(resp.attempts == 2);
  CHECK(sink.body == "x\n");
  CHECK(heads == 2);
}

TEST_CASE("stream: non-retryable answers return at once; exhausted attempts return the last answer") {
  FakeTransport t;
  RecordingSleeper s;
  RetryPolicy p;
  p.max_attempts = 2;
  auto r = retrying(t, s, p);
  t.reply(403, "{}");
  Sink sink;
  CHECK(r.stream(request("GET"), sink.fn()).status == 403);
  t.reply(503, kUnavailable).reply(503, kUnavailable);
  const auto resp = r.stream(request("GET"), sink.fn());
  CHECK(resp.status == 503);
  CHECK(resp.attempts == 2);
  CHECK(sink.body.empty());
  t.fail("refused 1").fail("refused 2");
  CHECK_THROWS_WITH_AS(r.stream(request("GET"), sink.fn()), "refused 2 (gave up after 2 attempts)", TransportError);
}

TEST_CASE("stream: the sink can stop the retries during a wait") {
  FakeTransport t;
  RecordingSleeper s;
  auto r = retrying(t, s);
  t.reply(429, "", {{"retry-after", "5"}});
  Sink sink;
  sink.stop_after_idle = 2;  // the second idle call says stop
  const auto resp = r.stream(request("GET"), sink.fn());
  CHECK(resp.aborted);
  CHECK(resp.status == 0);
  CHECK(t.requests.size() == 1);
  CHECK(s.waits == std::vector<milliseconds>{milliseconds(1000), milliseconds(1000)});
}

TEST_CASE("stream: requests that are not safe to retry pass through once") {
  FakeTransport t;
  RecordingSleeper s;
  auto r = retrying(t, s);
  t.fail("refused");
  Sink sink;
  CHECK_THROWS_AS(r.stream(request("POST", "application/json", "{}"), sink.fn()), TransportError);
  CHECK(t.requests.size() == 1);
}

TEST_CASE("a failure that retrying cannot cure (certificate verification, a bad URL) is not retried") {
  RecordingSleeper s;
  struct Permanent : mindie::kube::HttpTransport {
    int sends = 0;
    mindie::kube::HttpResponse send(const HttpRequest&) override {
      ++sends;
      throw TransportError("Unable to connect to the server https://x: SSL certificate problem", false);
    }
    mindie::kube::HttpResponse stream(const HttpRequest&, const mindie::kube::StreamSink&,
                                      const mindie::kube::StreamHeadObserver&) override {
      ++sends;
      throw TransportError("Unable to connect to the server https://x: SSL certificate problem", false);
    }
    std::string server() const override { return "https://x"; }
  } permanent;
  RetryingTransport direct(permanent, {}, s, [] { return 0.5; });
  CHECK_THROWS_WITH_AS(direct.send(request("GET")),
                       "Unable to connect to the server https://x: SSL certificate problem", TransportError);
  CHECK(permanent.sends == 1);
  CHECK_THROWS_AS(direct.stream(request("GET"), [](std::string_view) { return true; }, {}), TransportError);
  CHECK(permanent.sends == 2);
  CHECK(s.waits.empty());
}

TEST_CASE("retries stop when the next wait would pass the budget (--request-timeout), and each is announced") {
  FakeTransport t;
  for (int i = 0; i < 5; ++i) t.reply(503, kUnavailable);
  RecordingSleeper s;
  RetryPolicy p;
  p.budget = milliseconds(1000);
  std::vector<std::string> notices;
  p.notice = [&](const std::string& line) { notices.push_back(line); };
  RetryingTransport r = retrying(t, s, p);
  const auto resp = r.send(request("GET"));
  CHECK(resp.status == 503);
  // Waits 250 and 500 ms fit in 1 s (the attempts take no time here); the third, 1000 ms, would not.
  CHECK(s.waits == std::vector<milliseconds>{milliseconds(250), milliseconds(500)});
  CHECK(resp.attempts == 3);
  REQUIRE(t.requests.size() == 3);
  // Each retry is bounded by what is left of the budget (the waits; the fake's attempts take no measurable time).
  CHECK(t.requests[0].timeout.count() == 0);
  CHECK(t.requests[1].timeout <= milliseconds(750));
  CHECK(t.requests[1].timeout > milliseconds(500));
  CHECK(t.requests[2].timeout <= milliseconds(250));
  CHECK(t.requests[2].timeout > milliseconds(0));
  REQUIRE(notices.size() == 2);
  CHECK(notices[0] == "retrying GET /api/v1/namespaces/ns/configmaps/motor-config in 250ms after 503 (attempt 2/5)");
  CHECK(notices[1] == "retrying GET /api/v1/namespaces/ns/configmaps/motor-config in 500ms after 503 (attempt 3/5)");

  // A connection that keeps failing gives up the same way, saying why.
  FakeTransport u;
  for (int i = 0; i < 5; ++i) u.fail("Unable to connect to the server: connection refused");
  RecordingSleeper s2;
  RetryingTransport r2 = retrying(u, s2, p);
  CHECK_THROWS_WITH_AS(r2.send(request("GET")),
                       "Unable to connect to the server: connection refused (gave up after 3 attempts: "
                       "--request-timeout)",
                       TransportError);
}

TEST_CASE("a request's own timeout (a caller's deadline) bounds its retries like --request-timeout") {
  FakeTransport t;
  for (int i = 0; i < 5; ++i) t.reply(503, kUnavailable);
  RecordingSleeper s;
  RetryingTransport r = retrying(t, s, RetryPolicy{});  // no --request-timeout
  HttpRequest req = request("GET");
  req.timeout = milliseconds(1000);
  const auto resp = r.send(req);
  CHECK(resp.status == 503);
  CHECK(s.waits == std::vector<milliseconds>{milliseconds(250), milliseconds(500)});
  REQUIRE(t.requests.size() == 3);
  CHECK(t.requests[0].timeout == milliseconds(1000));
  CHECK(t.requests[2].timeout <= milliseconds(250));
}
