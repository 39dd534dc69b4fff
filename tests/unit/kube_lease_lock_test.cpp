// kube::LeaseLock: taking, waiting for, taking over, renewing and freeing a coordination.k8s.io Lease, every write
// guarded by the resourceVersion read; on a scripted transport and a scripted clock (nothing sleeps).
#include <doctest/doctest.h>

#include <boost/json.hpp>

#include "cmd/lock.h"
#include "fake_transport.h"
#include "kube/lease_lock.h"

using namespace mindie;
namespace json = boost::json;
using test::FakeTransport;

namespace {

const std::string kPath = "/apis/coordination.k8s.io/v1/namespaces/ns/leases/lock";
const std::string kNotFound = R"({"kind":"Status","status":"Failure","reason":"NotFound","code":404})";
const std::string kConflict = R"({"kind":"Status","status":"Failure","reason":"Conflict","code":409})";
constexpr std::int64_t kNow = 1'780'000'000;  // 2026-05-28

/// Clocks that start at kNow and move only when slept on or told to: pass() moves both, as time passing does;
/// moving `now` alone is a jump of the wall clock (set by hand, stepped by NTP).
struct FakeClock {
  std::chrono::system_clock::time_point now = std::chrono::system_clock::time_point(std::chrono::seconds(kNow));
  std::chrono::steady_clock::time_point steady = std::chrono::steady_clock::time_point(std::chrono::hours(1));
  std::vector<std::chrono::milliseconds> slept;
  void pass(std::chrono::milliseconds d) {
    now += d;
    steady += d;
  }
  std::chrono::milliseconds slept_in_all() const {
    std::chrono::milliseconds sum{0};
    for (const auto d : slept) sum += d;
    return sum;
  }
  kube::LeaseClock clock() {
    kube::LeaseClock c;
    c.now = [this] { return now; };
    c.steady = [this] { return steady; };
    c.sleep = [this](std::chrono::milliseconds d) {
      slept.push_back(d);
      pass(d);
    };
    return c;
  }
};

kube::LeaseLockConfig lock_config(std::chrono::milliseconds wait = std::chrono::milliseconds(0)) {
  kube::LeaseLockConfig c;
  c.ns = "ns";
  c.name = "lock";
  c.identity = "me";
  c.holder_annotation = "example.com/holder";
  c.holder = {{"command", "scale"}};
  c.duration_seconds = 60;
  c.wait = wait;
  return c;
}

/// A Lease held by `holder`, renewed `renewed_ago` seconds before kNow (by the holder's clock: negative is "in the
/// future" of ours).
std::string lease(const std::string& holder, std::int64_t renewed_ago, const std::string& rv = "10") {
  json::object spec{{"leaseDurationSeconds", 60}, {"leaseTransitions", 2}};
  if (!holder.empty()) {
    spec["holderIdentity"] = holder;
    spec["acquireTime"] = kube::micro_time(kNow - renewed_ago - 5);
    spec["renewTime"] = kube::micro_time(kNow - renewed_ago);
  }
  return json::serialize(json::object{{"metadata",
                                       {{"name", "lock"},
                                        {"namespace", "ns"},
                                        {"resourceVersion", rv},
                                        {"annotations", {{"example.com/holder", R"({"command":"deploy","pid":42})"}}}}},
                                      {"spec", spec}});
}

bool never_gone(const kube::LeaseRecord&) { return false; }

}  // namespace

TEST_CASE("LeaseLock: an absent lease is created with this holder, and freed by clearing the holder") {
  FakeTransport t;
  FakeClock clock;
  kube::Client client(t);
  kube::LeaseLock lock(client, lock_config(), never_gone, clock.clock());
  t.reply(404, kNotFound);
  lock.observe();
  t.reply(201, lease("me", 0, "11"));
  const auto got = lock.acquire();
  CHECK_FALSE(got.takeover);
  CHECK_FALSE(got.contended);
  CHECK(lock.held());
  REQUIRE(t.requests.size() == 2);  // observe's read served as the first look
  CHECK(t.requests[1].method == "POST");
  const json::object created = json::parse(t.requests[1].body).as_object();
  CHECK(created.at("spec").at("holderIdentity") == "me");
  CHECK(created.at("spec").at("leaseDurationSeconds") == 60);
  CHECK(created.at("spec").at("renewTime").as_string() == kube::micro_time(kNow));
  CHECK(created.at("metadata").at("annotations").at("example.com/holder") == R"({"command":"scale"})");

  t.reply(200, lease("", 0, "12"));
  CHECK(lock.release());
  CHECK_FALSE(lock.held());
  REQUIRE(t.requests.size() == 3);
  CHECK(t.requests[2].method == "PATCH");
  CHECK(t.requests[2].content_type == "application/merge-patch+json");
  const json::object freed = json::parse(t.requests[2].body).as_object();
  CHECK(freed.at("metadata").at("resourceVersion") == "11");  // guarded by our own write's version
  CHECK(freed.at("spec").at("holderIdentity").is_null());
  CHECK_FALSE(lock.release());  // not held: nothing sent
  CHECK(t.requests.size() == 3);
}

TEST_CASE("LeaseLock: a lease held by a live holder fails at once with --lock-timeout 0, writing nothing") {
  FakeTransport t;
  FakeClock clock;
  kube::Client client(t);
  kube::LeaseLock lock(client, lock_config(), never_gone, clock.clock());
  t.reply(200, lease("other", 5));
  lock.observe();
  try {
    lock.acquire();
    FAIL("acquire() did not throw");
  } catch (const kube::LeaseHeld& e) {
    CHECK(e.holder().identity == "other");
    CHECK(e.holder().holder.at("pid") == 42);
    CHECK(e.holder().renewed == kNow - 5);
  }
  CHECK(t.requests.size() == 1);
  CHECK_FALSE(lock.held());
  CHECK(clock.slept.empty());
}

TEST_CASE("LeaseLock: waits for a held lease, polling, and takes it once freed; the read before is stale") {
  FakeTransport t;
  FakeClock clock;
  kube::Client client(t);
  kube::LeaseLock lock(client, lock_config(std::chrono::seconds(30)), never_gone, clock.clock());
  t.reply(200, lease("other", 5));
  lock.observe();
  t.reply(200, lease("other", 4));     // still held after one poll
  t.reply(200, lease("", 0, "20"));    // freed
  t.reply(200, lease("me", 0, "21"));  // taken
  int waits = 0;
  const auto got = lock.acquire([&](const kube::LeaseRecord& holder) {
    ++waits;
    CHECK(holder.identity == "other");
  });
  CHECK(waits == 1);  // one notice, however long the wait
  CHECK(clock.slept.size() == 2);
  CHECK_FALSE(got.takeover);
  CHECK(got.contended);  // someone held it since observe(): what the caller read may be stale
  REQUIRE(t.requests.size() == 4);
  const json::object patch = json::parse(t.requests[3].body).as_object();
  CHECK(patch.at("metadata").at("resourceVersion") == "20");
  CHECK(patch.at("spec").at("holderIdentity") == "me");
  CHECK(patch.at("spec").at("leaseTransitions") == 3);
}

TEST_CASE("LeaseLock: gives up when the wait passes, never sleeping past it") {
  FakeTransport t;
  FakeClock clock;
  kube::Client client(t);
  kube::LeaseLockConfig c = lock_config(std::chrono::milliseconds(2500));
  kube::LeaseLock lock(client, c, never_gone, clock.clock());
  t.reply(200, lease("other", 1));
  lock.observe();
  for (int i = 0; i < 3; ++i) t.reply(200, lease("other", 0));
  CHECK_THROWS_AS(lock.acquire(), kube::LeaseHeld);
  CHECK(clock.slept == std::vector<std::chrono::milliseconds>{std::chrono::milliseconds(1000),
                                                              std::chrono::milliseconds(1000),
                                                              std::chrono::milliseconds(500)});
  CHECK(t.pending() == 0);
}

TEST_CASE("LeaseLock: an expired lease or one whose holder is gone is taken over, saying whose it was") {
  FakeTransport t;
  FakeClock clock;
  kube::Client client(t);
  SUBCASE("expired: its record unchanged for its duration since observe() read it") {
    kube::LeaseLock lock(client, lock_config(), never_gone, clock.clock());
    t.reply(200, lease("other", 61));
    lock.observe();
    clock.pass(std::chrono::seconds(60));  // the command read and planned meanwhile
    t.reply(200, lease("me", 0, "11"));
    const auto got = lock.acquire();
    REQUIRE(got.takeover);
    CHECK(got.takeover->expired);
    CHECK(got.takeover->previous.identity == "other");
    CHECK(got.contended);
  }
  SUBCASE("renewed within its duration, but its process is gone") {
    kube::LeaseLock lock(
        client, lock_config(), [](const kube::LeaseRecord& r) { return r.identity == "other"; }, clock.clock());
    t.reply(200, lease("other", 1));
    lock.observe();
    t.reply(200, lease("me", 0, "11"));
    const auto got = lock.acquire();
    REQUIRE(got.takeover);
    CHECK_FALSE(got.takeover->expired);
  }
  REQUIRE(t.requests.size() == 2);
  CHECK(json::parse(t.requests[1].body).at("metadata").at("resourceVersion") == "10");
}

TEST_CASE("LeaseLock: a rival's write between our read and ours (409, AlreadyExists) makes it look again") {
  FakeTransport t;
  FakeClock clock;
  kube::Client client(t);
  kube::LeaseLock lock(client, lock_config(), never_gone, clock.clock());
  t.reply(404, kNotFound);
  lock.observe();
  t.reply(409, R"({"kind":"Status","status":"Failure","reason":"AlreadyExists","code":409})");
  t.reply(200, lease("rival", 0));
  CHECK_THROWS_AS(lock.acquire(), kube::LeaseHeld);
  CHECK(t.requests.size() == 3);
  CHECK_FALSE(lock.held());
}

TEST_CASE("LeaseLock: a repeat of our own applied write meeting 409 finds the lease ours") {
  FakeTransport t;
  FakeClock clock;
  kube::Client client(t);
  kube::LeaseLock lock(client, lock_config(), never_gone, clock.clock());
  t.reply(200, lease("", 0, "10"));
  lock.observe();
  t.reply(409, kConflict);  // the retried patch after a lost reply: the first one was stored
  t.reply(200, lease("me", 0, "11"));
  const auto got = lock.acquire();
  CHECK(lock.held());
  CHECK_FALSE(got.contended);
  CHECK(lock.record().resource_version == "11");
}

TEST_CASE("LeaseLock: renews only when a third of the duration has passed; a lease taken meanwhile is lost") {
  FakeTransport t;
  FakeClock clock;
  kube::Client client(t);
  kube::LeaseLock lock(client, lock_config(), never_gone, clock.clock());
  t.reply(404, kNotFound);
  lock.observe();
  t.reply(201, lease("me", 0, "11"));
  lock.acquire();
  clock.pass(std::chrono::seconds(19));
  lock.renew_if_due();
  CHECK(t.requests.size() == 2);  // not due: nothing sent
  clock.pass(std::chrono::seconds(1));
  t.reply(200, lease("me", 0, "12"));
  lock.renew_if_due();
  REQUIRE(t.requests.size() == 3);
  const json::object renew = json::parse(t.requests[2].body).as_object();
  CHECK(renew.at("metadata").at("resourceVersion") == "11");
  CHECK(renew.at("spec").at("renewTime").as_string() == kube::micro_time(kNow + 20));

  clock.pass(std::chrono::seconds(25));
  t.reply(409, kConflict);
  t.reply(200, lease("thief", 0, "13"));
  CHECK_THROWS_WITH_AS(lock.renew_if_due(), doctest::Contains("taken over by thief"), kube::LeaseLost);
  CHECK_FALSE(lock.held());
  CHECK_FALSE(lock.release());  // not ours: left to its holder
}

TEST_CASE("LeaseRecord: decoding tolerates anything a writer may have left") {
  const auto r = kube::LeaseRecord::from(
      json::parse(R"({"metadata":{"annotations":{"example.com/holder":"not json"}},"spec":{"holderIdentity":"x",)"
                  R"("renewTime":"yesterday","leaseDurationSeconds":"60"}})")
          .as_object(),
      "example.com/holder");
  CHECK(r.identity == "x");
  CHECK(r.holder.empty());
  CHECK_FALSE(r.renewed);
  CHECK(r.duration_seconds == 0);
  CHECK(kube::micro_time(0) == "1970-01-01T00:00:00.000000Z");
}

TEST_CASE("LeaseLock: a create that fails transiently is tried again after a fresh look, a lost one found ours") {
  FakeTransport t;
  FakeClock clock;
  kube::Client client(t);
  kube::LeaseLock lock(client, lock_config(), never_gone, clock.clock());
  t.reply(404, kNotFound);
  lock.observe();
  t.reply(503, R"({"kind":"Status","status":"Failure","reason":"ServiceUnavailable","code":503})");
  t.reply(404, kNotFound);             // the fresh look: still absent
  t.fail("connection reset");          // the second create: its outcome unknown
  t.reply(200, lease("me", 0, "11"));  // the fresh look: it was stored, ours
  const auto got = lock.acquire();
  CHECK(lock.held());
  CHECK_FALSE(got.contended);
  CHECK(t.requests.size() == 5);
  CHECK(clock.slept.size() == 2);  // backed off before each fresh look

  FakeTransport t2;
  kube::Client client2(t2);
  kube::LeaseLock refused(client2, lock_config(), never_gone, clock.clock());
  t2.reply(404, kNotFound);
  refused.observe();
  t2.reply(403, R"({"kind":"Status","status":"Failure","reason":"Forbidden","code":403})");
  CHECK_THROWS_AS(refused.acquire(), kube::ApiError);  // not transient: at once
  CHECK(t2.requests.size() == 2);
}

TEST_CASE("describe_lock_holder: names command, user, host, pid and since; scrubs what a writer may have put in") {
  kube::LeaseRecord r;
  r.identity = "h/1/x";
  r.holder = {{"command", "scale"}, {"user", "alice"}, {"host", "node-1"}, {"pid", 4711}};
  r.acquired = 0;
  CHECK(cmd::describe_lock_holder(r) == "scale by alice@node-1, pid 4711, since 00:00:00 UTC");
  r.holder = {{"command", "scale\x1b[2J"}, {"user", std::string(300, 'u')}};
  r.acquired.reset();
  const std::string text = cmd::describe_lock_holder(r);
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.rfind("scale?[2J by ", 0) == 0);
  CHECK(text.size() < 130);                                                        // each field at most 100 bytes
  CHECK(cmd::describe_lock_holder(kube::LeaseRecord{}).rfind("holder ", 0) == 0);  // no record: the identity
}

TEST_CASE("LeaseLock: a release refused (409) or unanswered is looked at and done again while the lease is ours") {
  for (const bool lost : {false, true}) {
    CAPTURE(lost);
    FakeTransport t;
    FakeClock clock;
    kube::Client client(t);
    kube::LeaseLock lock(client, lock_config(), never_gone, clock.clock());
    t.reply(404, kNotFound);
    lock.observe();
    t.reply(201, lease("me", 0, "11"));
    lock.acquire();
    if (lost) t.fail("Unable to connect to the server: Operation timed out");
    else t.reply(409, kConflict);
    t.reply(200, lease("me", 0, "14"));  // still ours (someone annotated it, or the reply was lost)
    t.reply(200, lease("", 0, "15"));
    CHECK(lock.release({"example.com/intent"}));
    REQUIRE(t.requests.size() == 5);
    CHECK(t.requests[3].method == "GET");
    const json::object again = json::parse(t.requests[4].body).as_object();
    CHECK(again.at("metadata").at("resourceVersion") == "14");
    CHECK(again.at("metadata").at("annotations").at("example.com/intent").is_null());
    CHECK(again.at("spec").at("holderIdentity").is_null());
  }
}

TEST_CASE("LeaseLock: a clock ahead of the holder's takes nothing at once: renewTime is never compared with ours") {
  // Issue 30: a command whose clock ran 2 minutes ahead took a live holder's lock at once.
  FakeTransport t;
  FakeClock clock;
  kube::Client client(t);
  kube::LeaseLock lock(client, lock_config(), never_gone, clock.clock());
  t.reply(200, lease("other", 125));  // renewed 5 s ago by the holder's clock, 2 min behind ours
  lock.observe();
  CHECK_THROWS_AS(lock.acquire(), kube::LeaseHeld);
  CHECK(t.requests.size() == 1);
  CHECK_FALSE(lock.held());
}

TEST_CASE("LeaseLock: a record that changes while observed starts the observation again") {
  FakeTransport t;
  FakeClock clock;
  kube::Client client(t);
  kube::LeaseLockConfig c = lock_config(std::chrono::seconds(120));
  c.poll = std::chrono::seconds(10);
  kube::LeaseLock lock(client, c, never_gone, clock.clock());
  t.reply(200, lease("other", 125, "10"));  // whatever its renewTime says
  lock.observe();
  for (int i = 0; i < 4; ++i) t.reply(200, lease("other", 125, "10"));  // at 10, 20, 30 and 40 s
  for (int i = 0; i < 7; ++i) t.reply(200, lease("other", 75, "11"));   // renewed: seen from 50 s
  t.reply(200, lease("me", 0, "12"));
  const auto got = lock.acquire();
  REQUIRE(got.takeover);
  CHECK(got.takeover->expired);
  CHECK(clock.slept_in_all() == std::chrono::seconds(110));  // 60 s after the renewal was first seen
  REQUIRE(t.requests.size() == 13);
  CHECK(t.requests[12].method == "PATCH");
  CHECK(json::parse(t.requests[12].body).at("metadata").at("resourceVersion") == "11");
}

TEST_CASE("LeaseLock: a lease renewed 'in the future' is taken only once unchanged for its duration, by one wait") {
  // Issue 30: a holder whose clock ran an hour ahead, killed, locked the namespace for an hour.
  FakeTransport t;
  FakeClock clock;
  kube::Client client(t);
  SUBCASE("--lock-timeout 30s: waited for beyond it while unchanged, then taken over") {
    kube::LeaseLock lock(client, lock_config(std::chrono::seconds(30)), never_gone, clock.clock());
    t.reply(200, lease("other", -3600));
    lock.observe();
    for (int i = 0; i < 60; ++i) t.reply(200, lease("other", -3600));
    t.reply(200, lease("me", 0, "11"));
    int waits = 0;
    const auto got = lock.acquire([&](const kube::LeaseRecord&) { ++waits; });
    CHECK(waits == 1);
    REQUIRE(got.takeover);
    CHECK(got.takeover->expired);
    CHECK(clock.slept_in_all() == std::chrono::seconds(60));
    CHECK(t.pending() == 0);
  }
  SUBCASE("--lock-timeout 0: one look cannot tell it from a live one, so it fails at once") {
    kube::LeaseLock lock(client, lock_config(), never_gone, clock.clock());
    t.reply(200, lease("other", -3600));
    lock.observe();
    CHECK_THROWS_AS(lock.acquire(), kube::LeaseHeld);
    CHECK(clock.slept.empty());
    CHECK(t.requests.size() == 1);
  }
}

TEST_CASE("LeaseLock: the holder's renewal cadence follows the monotonic clock, whatever the wall clock does") {
  FakeTransport t;
  FakeClock clock;
  kube::Client client(t);
  kube::LeaseLock lock(client, lock_config(), never_gone, clock.clock());
  t.reply(404, kNotFound);
  lock.observe();
  t.reply(201, lease("me", 0, "11"));
  lock.acquire();
  clock.now -= std::chrono::hours(1);  // the wall clock is set back an hour
  clock.pass(std::chrono::seconds(19));
  lock.renew_if_due();
  CHECK(t.requests.size() == 2);  // not due
  clock.pass(std::chrono::seconds(1));
  t.reply(200, lease("me", 0, "12"));
  lock.renew_if_due();  // due: 20 s have passed, though the wall clock says an hour less
  REQUIRE(t.requests.size() == 3);
  CHECK(json::parse(t.requests[2].body).at("spec").at("renewTime").as_string() ==
        kube::micro_time(kNow - 3600 + 20));  // what is written is the wall clock's, for people
  clock.now += std::chrono::hours(2);         // and jumps forward two
  lock.renew_if_due();
  CHECK(t.requests.size() == 3);  // not due: no time has passed
}
