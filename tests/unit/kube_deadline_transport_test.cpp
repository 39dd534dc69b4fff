// DeadlineTransport (issue 17: wait --timeout must bound a request that hangs).
#include <doctest/doctest.h>

#include <chrono>

#include "fake_transport.h"
#include "kube/deadline_transport.h"

using mindie::kube::DeadlineTransport;
using mindie::kube::HttpRequest;
using mindie::kube::TransportError;
using mindie::test::FakeTransport;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

HttpRequest get(const std::string& path) {
  HttpRequest r;
  r.method = "GET";
  r.path = path;
  return r;
}

}  // namespace

TEST_CASE("each request is bounded by what is left until the deadline; none is sent after it") {
  FakeTransport t;
  t.reply(200, "{}").reply(200, "{}");
  DeadlineTransport d(t, steady_clock::now() + std::chrono::hours(1),
                      "timed out waiting for the condition (--timeout 1h)");
  CHECK(d.send(get("/api/v1/pods")).status == 200);
  REQUIRE(t.requests.size() == 1);
  CHECK(t.requests[0].timeout > milliseconds(3'500'000));
  CHECK(t.requests[0].timeout <= milliseconds(3'600'000));
  // A shorter bound of the request's own stays.
  HttpRequest shorter = get("/api/v1/pods");
  shorter.timeout = milliseconds(5);
  CHECK(d.send(shorter).status == 200);
  CHECK(t.requests[1].timeout == milliseconds(5));

  FakeTransport u;
  DeadlineTransport late(u, steady_clock::now() - milliseconds(1),
                         "timed out waiting for the condition (--timeout 5s)");
  CHECK_THROWS_WITH_AS(
      late.send(get("/api/v1/namespaces/ns/pods?labelSelector=a%3Db")),
      "timed out waiting for the condition (--timeout 5s): no answer to GET /api/v1/namespaces/ns/pods "
      "in time",
      TransportError);
  CHECK(u.requests.empty());
  try {
    late.send(get("/x"));
  } catch (const TransportError& e) {
    CHECK_FALSE(e.retryable());  // nothing is left to retry in
  }
}

TEST_CASE("a transport failure after the deadline is reported as the deadline's, one before it as itself") {
  FakeTransport t;
  t.fail("Unable to connect to the server https://x: Operation timed out");
  DeadlineTransport d(t, steady_clock::now() + std::chrono::hours(1), "timed out (--timeout 1h)");
  CHECK_THROWS_WITH_AS(d.send(get("/a")), "Unable to connect to the server https://x: Operation timed out",
                       TransportError);
}
