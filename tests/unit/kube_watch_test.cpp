// Informer (kube/watch.h): LIST + WATCH over a scripted FakeTransport. Every wait is on an event — a change of the
// cache, a request reaching the fake, a backoff starting — bounded only by a generous failsafe; nothing sleeps to
// synchronise and nothing asserts timing. Backoffs are 1-4 ms and recorded.
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fake_transport.h"
#include "kube/client.h"
#include "kube/watch.h"

using mindie::kube::ApiError;
using mindie::kube::Informer;
using mindie::kube::InformerOptions;
using mindie::kube::TransportError;
using mindie::kube::WatchTarget;
using mindie::test::FakeTransport;
using mindie::test::TransportRef;
using std::chrono::milliseconds;
using End = FakeTransport::StreamEnd;

namespace {

std::string pod(const std::string& name, const std::string& rv, const std::string& phase = "Running",
                const std::string& ns = "ns") {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"(","namespace":")" + ns +
         R"(","resourceVersion":")" + rv + R"("},"status":{"phase":")" + phase + R"("}})";
}

std::string pod_list(const std::string& rv, const std::vector<std::string>& items, const std::string& cont = "") {
  std::string out = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":")" + rv + "\"";
  if (!cont.empty()) out += R"(,"continue":")" + cont + "\"";
  out += R"(},"items":[)";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + items[i];
  return out + "]}";
}

std::string event(const std::string& type, const std::string& object) {
  return R"({"type":")" + type + R"(","object":)" + object + "}\n";
}

std::string bookmark(const std::string& rv) {
  return event("BOOKMARK", R"({"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":")" + rv + "\"}}");
}

std::string status(int code, const std::string& reason, const std::string& message = "it failed") {
  return R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":")" + message +
         R"(","reason":")" + reason + R"(","code":)" + std::to_string(code) + "}";
}

// The query parameters of a request path, values as sent (still percent-encoded).
std::map<std::string, std::string> query(const std::string& path) {
  std::map<std::string, std::string> out;
  const auto q = path.find('?');
  if (q == std::string::npos) return out;
  std::string rest = path.substr(q + 1);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const std::string pair = rest.substr(0, amp);
    const auto eq = pair.find('=');
    out[pair.substr(0, eq)] = eq == std::string::npos ? "" : pair.substr(eq + 1);
    rest = amp == std::string::npos ? "" : rest.substr(amp + 1);
  }
  return out;
}

bool is_watch(const mindie::kube::HttpRequest& r) { return query(r.path).count("watch") == 1; }

WatchTarget pods(std::string label = {}, std::string field = {}) {
  return WatchTarget{mindie::kube::gvr::kPods, "ns", std::move(label), std::move(field)};
}

struct Backoffs {
  std::mutex mu;
  std::vector<milliseconds> waits;
  std::vector<milliseconds> get() {
    std::lock_guard lock(mu);
    return waits;
  }
};

InformerOptions fast(Backoffs& b) {
  InformerOptions o;
  o.initial_backoff = milliseconds(1);
  o.max_backoff = milliseconds(4);
  o.give_up_after = std::chrono::hours(1);
  o.random = [] { return 0.0; };
  o.on_backoff = [&b](std::size_t, milliseconds wait) {
    std::lock_guard lock(b.mu);
    b.waits.push_back(wait);
  };
  return o;
}

std::unique_ptr<Informer> informer(FakeTransport& t, InformerOptions o, std::vector<WatchTarget> targets = {pods()}) {
  return std::make_unique<Informer>([&t] { return std::make_unique<TransportRef>(t); }, std::move(targets),
                                    std::move(o));
}

std::vector<std::string> names(const Informer& inf, std::size_t target = 0) {
  std::vector<std::string> out;
  for (const auto& o : inf.objects(target)) {
    const auto& md = o.at("metadata").as_object();
    out.push_back(std::string(md.at("namespace").as_string()) + "/" + std::string(md.at("name").as_string()));
  }
  return out;
}

std::string phase(const Informer& inf, const std::string& name) {
  for (const auto& o : inf.objects(0))
    if (o.at("metadata").at("name").as_string() == name) return std::string(o.at("status").at("phase").as_string());
  return "(absent)";
}

constexpr auto kFailsafe = std::chrono::seconds(20);

// Waits for changes until `pred` holds; false if it still does not after the failsafe.
template <class Pred>
bool wait_until(Informer& inf, Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + kFailsafe;
  while (!pred())
    if (!inf.wait_for_change(deadline)) return pred();
  return true;
}

// The fatal error wait_for_change rethrows, as text ("" if none came before the failsafe).
std::string fatal_error(Informer& inf) {
  const auto deadline = std::chrono::steady_clock::now() + kFailsafe;
  try {
    while (inf.wait_for_change(deadline)) {
    }
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

using Names = std::vector<std::string>;

}  // namespace

TEST_CASE("Informer: LIST, then WATCH from the list's resourceVersion; ADDED/MODIFIED upsert, DELETED erases") {
  FakeTransport t;
  Backoffs b;
  t.reply(200, pod_list("10", {pod("b", "6"), pod("a", "5")}));
  t.stream_reply({event("ADDED", pod("c", "11")), event("MODIFIED", pod("a", "12", "Failed")),
                  event("DELETED", pod("b", "13"))},
                 End::Idle)
      .hold();
  auto inf = informer(t, fast(b), {pods("app=motor,role in (p,d)", "status.phase!=Succeeded")});
  inf->start();
  CHECK(names(*inf) == Names{"ns/a", "ns/b"});  // the list, ordered by name
  CHECK(inf->resource_version(0) == "10");
  t.release();
  CHECK(wait_until(*inf, [&] { return names(*inf) == Names{"ns/a", "ns/c"} && phase(*inf, "a") == "Failed"; }));
  CHECK(inf->resource_version(0) == "13");
  inf->stop();

  REQUIRE(t.requests.size() == 2);
  CHECK(t.requests[0].method == "GET");
  CHECK(t.requests[0].path ==
        "/api/v1/namespaces/ns/pods?labelSelector=app%3Dmotor%2Crole%20in%20%28p%2Cd%29"
        "&fieldSelector=status.phase%21%3DSucceeded&limit=500");
  CHECK(t.requests[1].method == "GET");
  CHECK(t.requests[1].path ==
        "/api/v1/namespaces/ns/pods?watch=true&resourceVersion=10&allowWatchBookmarks=true&timeoutSeconds=300"
        "&labelSelector=app%3Dmotor%2Crole%20in%20%28p%2Cd%29&fieldSelector=status.phase%21%3DSucceeded");
  CHECK(inf->requests_sent() == 2);
  CHECK(t.aborted_streams() == 1);  // stop() ended the idle stream
  CHECK(b.get().empty());
}

TEST_CASE("Informer: timeoutSeconds is spread over [min, 2·min) by the random source") {
  FakeTransport t;
  Backoffs b;
  auto o = fast(b);
  o.min_watch_timeout = std::chrono::seconds(300);
  o.random = [] { return 0.999; };
  t.reply(200, pod_list("1", {}));
  t.stream_reply({}, End::Idle);
  auto inf = informer(t, o);
  inf->start();
  REQUIRE(t.wait_for_requests(2));
  inf->stop();
  CHECK(query(t.request(1).path)["timeoutSeconds"] == "599");
}

TEST_CASE("Informer: event lines split across chunks, several in one chunk, the last without its newline") {
  FakeTransport t;
  Backoffs b;
  const std::string e1 = event("ADDED", pod("x", "21"));
  const std::string e2 = event("ADDED", pod("y", "22"));
  std::string e3 = event("MODIFIED", pod("x", "23", "Pending"));
  e3.pop_back();  // the server's last line before it closes the stream, without "\n"
  t.reply(200, pod_list("20", {}));
  t.stream_reply({e1.substr(0, 7), e1.substr(7, 30), e1.substr(37) + e2 + e3.substr(0, 15), e3.substr(15)});
  t.stream_reply({}, End::Idle);  // the re-watch after the server closed the first
  auto inf = informer(t, fast(b));
  inf->start();
  CHECK(wait_until(*inf, [&] { return names(*inf) == Names{"ns/x", "ns/y"} && phase(*inf, "x") == "Pending"; }));
  REQUIRE(t.wait_for_requests(3));
  inf->stop();
  CHECK(query(t.request(2).path)["resourceVersion"] == "23");
  CHECK(b.get().empty());  // a watch with events that the server ended is resumed at once
}

TEST_CASE("Informer: BOOKMARKs move the resourceVersion used on reconnect, without reporting a change") {
  FakeTransport t;
  Backoffs b;
  t.reply(200, pod_list("10", {pod("a", "5")}));
  t.stream_reply({bookmark("15"), bookmark("17")});
  t.stream_reply({}, End::Idle);
  auto inf = informer(t, fast(b));
  inf->start();
  REQUIRE(t.wait_for_requests(3));
  CHECK(inf->resource_version(0) == "17");
  inf->stop();
  CHECK(query(t.request(1).path)["resourceVersion"] == "10");
  CHECK(query(t.request(2).path)["resourceVersion"] == "17");
  CHECK_FALSE(inf->wait_for_change(std::chrono::steady_clock::now()));
  CHECK(names(*inf) == Names{"ns/a"});
}

TEST_CASE("Informer: a dropped connection re-watches from the last event's resourceVersion after a short backoff") {
  FakeTransport t;
  Backoffs b;
  t.reply(200, pod_list("10", {pod("a", "5")}));
  t.stream_reply({event("ADDED", pod("b", "11")), event("MODIFIED", pod("b", "12"))}, End::Break);
  t.stream_reply({event("ADDED", pod("c", "13"))}, End::Idle);
  auto inf = informer(t, fast(b));
  inf->start();
  CHECK(wait_until(*inf, [&] { return names(*inf) == Names{"ns/a", "ns/b", "ns/c"}; }));
  inf->stop();
  REQUIRE(t.requests.size() == 3);
  CHECK(query(t.requests[2].path)["resourceVersion"] == "12");
  CHECK(b.get() == std::vector<milliseconds>{milliseconds(1)});
}

TEST_CASE("Informer: 410 Expired re-LISTs, replacing the cache whole, and watches from the new list") {
  FakeTransport t;
  Backoffs b;
  t.reply(200, pod_list("10", {pod("a", "5"), pod("b", "6")}));
  SUBCASE("as an ERROR event") {
    t.stream_reply({event("ADDED", pod("c", "11")), event("ERROR", status(410, "Expired", "too old resource version"))},
                   End::Idle);  // the informer itself leaves the stream after the ERROR
  }
  SUBCASE("as the WATCH's answer") { t.reply(410, status(410, "Gone")); }
  t.reply(200, pod_list("30", {pod("b", "29", "Failed"), pod("d", "28")}));
  t.stream_reply({}, End::Idle);
  auto inf = informer(t, fast(b));
  inf->start();
  // a and c were deleted while we could not watch: only the new list knows.
  CHECK(wait_until(*inf, [&] { return names(*inf) == Names{"ns/b", "ns/d"} && phase(*inf, "b") == "Failed"; }));
  REQUIRE(t.wait_for_requests(4));
  inf->stop();
  CHECK_FALSE(is_watch(t.request(2)));
  CHECK(t.request(2).path == "/api/v1/namespaces/ns/pods?limit=500");
  CHECK(is_watch(t.request(3)));
  CHECK(query(t.request(3).path)["resourceVersion"] == "30");
  CHECK(inf->resource_version(0) == "30");
  CHECK(inf->requests_sent() == 4);
}

TEST_CASE("Informer: a continue token that expires between pages falls back to one unpaged LIST") {
  FakeTransport t;
  Backoffs b;
  t.reply(200, pod_list("10", {pod("a", "5")}, "tok1"));
  t.reply(410, status(410, "Expired", "The provided continue parameter is too old"));
  t.reply(200, pod_list("12", {pod("a", "5"), pod("b", "11")}));
  t.stream_reply({}, End::Idle);
  auto inf = informer(t, fast(b));
  inf->start();
  CHECK(names(*inf) == Names{"ns/a", "ns/b"});
  REQUIRE(t.wait_for_requests(4));
  inf->stop();
  CHECK(t.request(1).path == "/api/v1/namespaces/ns/pods?limit=500&continue=tok1");
  CHECK(t.request(2).path == "/api/v1/namespaces/ns/pods");
  CHECK(query(t.request(3).path)["resourceVersion"] == "12");
  CHECK(inf->requests_sent() == 4);
}

TEST_CASE("Informer: an error answer or ERROR event other than 410 and 429/5xx is fatal") {
  FakeTransport t;
  Backoffs b;
  t.reply(200, pod_list("10", {pod("a", "5")}));
  std::string expected;
  SUBCASE("403 to the WATCH") {
    t.reply(403, status(403, "Forbidden", "pods is forbidden: cannot watch"));
    expected =
        "Error from server (Forbidden): pods is forbidden: cannot watch\n"
        "(HTTP 403, GET /api/v1/namespaces/ns/pods)";
  }
  SUBCASE("ERROR event with 403, after a good event") {
    t.stream_reply({event("ADDED", pod("b", "11")), event("ERROR", status(403, "Forbidden", "revoked"))}, End::Idle);
    expected = "Error from server (Forbidden): revoked\n(HTTP 403, GET /api/v1/namespaces/ns/pods)";
  }
  auto inf = informer(t, fast(b));
  inf->start();
  try {
    const auto deadline = std::chrono::steady_clock::now() + kFailsafe;
    while (inf->wait_for_change(deadline)) {
    }
    FAIL("expected ApiError");
  } catch (const ApiError& e) {
    CHECK(e.code() == 403);
    CHECK(e.reason() == "Forbidden");
    CHECK(e.render() == expected);
  }
  CHECK_THROWS_AS(inf->wait_for_change(std::chrono::steady_clock::now()), ApiError);  // and on every later call
  inf->stop();
  CHECK(b.get().empty());
  CHECK(t.pending() == 0);
}

TEST_CASE("Informer: 429/5xx answers and ERROR events are retried after a backoff, like connection failures") {
  FakeTransport t;
  Backoffs b;
  t.reply(200, pod_list("10", {}));
  t.stream_reply({event("ERROR", status(500, "InternalError", "etcd watch closed"))});
  t.reply(503, status(503, "ServiceUnavailable"));
  t.stream_reply({event("ADDED", pod("a", "11"))}, End::Idle);
  auto inf = informer(t, fast(b));
  inf->start();
  CHECK(wait_until(*inf, [&] { return names(*inf) == Names{"ns/a"}; }));
  inf->stop();
  CHECK(b.get() == std::vector<milliseconds>{milliseconds(1), milliseconds(2)});
  for (std::size_t i = 1; i < 4; ++i) CHECK(query(t.requests[i].path)["resourceVersion"] == "10");
}

TEST_CASE("Informer: repeated failures back off exponentially up to the cap, and give up after the bound") {
  FakeTransport t;
  Backoffs b;
  auto o = fast(b);
  t.reply(200, pod_list("10", {}));
  SUBCASE("within the bound: keeps trying") {
    for (int i = 0; i < 4; ++i) t.fail("Unable to connect to the server https://fake.example:6443: refused");
    t.stream_reply({event("ADDED", pod("a", "11"))}, End::Idle);
    auto inf = informer(t, o);
    inf->start();
    CHECK(wait_until(*inf, [&] { return names(*inf) == Names{"ns/a"}; }));
    inf->stop();
    CHECK(b.get() == std::vector<milliseconds>{milliseconds(1), milliseconds(2), milliseconds(4), milliseconds(4)});
  }
  SUBCASE("a bound of zero: the second failure in a row is fatal, with the server's own message") {
    o.give_up_after = milliseconds(0);
    t.fail("Unable to connect to the server https://fake.example:6443: refused 1");
    t.fail("Unable to connect to the server https://fake.example:6443: refused 2");
    auto inf = informer(t, o);
    inf->start();
    CHECK(fatal_error(*inf) == "Unable to connect to the server https://fake.example:6443: refused 2");
    CHECK_THROWS_AS(inf->wait_for_change(std::chrono::steady_clock::now()), TransportError);
    inf->stop();
    CHECK(b.get().size() == 1);
  }
}

TEST_CASE("Informer: watches the server closes at once without events back off instead of busy-looping") {
  FakeTransport t;
  Backoffs b;
  t.reply(200, pod_list("10", {}));
  for (int i = 0; i < 3; ++i) t.stream_reply({});
  t.stream_reply({bookmark("11")});  // an event: the streak ends
  t.stream_reply({});
  t.stream_reply({}, End::Idle);
  auto inf = informer(t, fast(b));
  inf->start();
  REQUIRE(t.wait_for_requests(7));
  inf->stop();
  CHECK(b.get() == std::vector<milliseconds>{milliseconds(1), milliseconds(2), milliseconds(4), milliseconds(1)});
  CHECK(query(t.request(6).path)["resourceVersion"] == "11");
}

TEST_CASE("Informer: stop() ends an idle stream and a backoff wait promptly") {
  FakeTransport t;
  Backoffs b;
  t.reply(200, pod_list("10", {}));
  SUBCASE("idle stream") {
    t.stream_reply({}, End::Idle);
    auto inf = informer(t, fast(b));
    inf->start();
    REQUIRE(t.wait_for_requests(2));
    inf->stop();  // returns only once the watch thread is joined
    CHECK(t.aborted_streams() == 1);
    CHECK_FALSE(inf->wait_for_change(std::chrono::steady_clock::time_point::max()));  // stopped: no blocking
  }
  SUBCASE("an hour-long backoff") {
    auto o = fast(b);
    o.initial_backoff = o.max_backoff = std::chrono::hours(1);
    std::promise<void> waiting;
    o.on_backoff = [&waiting](std::size_t, milliseconds) { waiting.set_value(); };
    t.fail("Unable to connect to the server https://fake.example:6443: refused");
    auto inf = informer(t, o);
    inf->start();
    REQUIRE(waiting.get_future().wait_for(kFailsafe) == std::future_status::ready);
    inf->stop();
    CHECK(t.requests.size() == 2);
  }
  SUBCASE("the destructor stops too") {
    t.stream_reply({}, End::Idle);
    auto inf = informer(t, fast(b));
    inf->start();
    REQUIRE(t.wait_for_requests(2));
    inf.reset();
    CHECK(t.aborted_streams() == 1);
  }
}

TEST_CASE("Informer: a malformed event line is a clear, fatal error") {
  FakeTransport t;
  Backoffs b;
  t.reply(200, pod_list("10", {}));
  std::string line, why;
  SUBCASE("not JSON") {
    line = "<html>502 Bad Gateway</html>";
    why = "not JSON: ";  // then the parser's reason
  }
  SUBCASE("not an object") {
    line = "[1,2]";
    why = "not a JSON object";
  }
  SUBCASE("no object") {
    line = R"({"type":"ADDED"})";
    why = "no \"type\" string or \"object\" object";
  }
  SUBCASE("unknown type") {
    line = R"({"type":"RENAMED","object":{}})";
    why = "unknown type \"RENAMED\"";
  }
  SUBCASE("an object without a name") {
    line = R"({"type":"ADDED","object":{"metadata":{}}})";
    why = "ADDED of an object without metadata.name";
  }
  t.stream_reply({event("ADDED", pod("a", "11")), line + "\n"}, End::Idle);
  auto inf = informer(t, fast(b));
  inf->start();
  const std::string message = fatal_error(*inf);
  CHECK(message.starts_with("GET /api/v1/namespaces/ns/pods: the server sent a malformed watch event (" + why));
  CHECK(message.ends_with("): \"" + line + "\""));
  inf->stop();
  CHECK(names(*inf) == Names{"ns/a"});  // what came before stays readable
}

TEST_CASE("Informer: several targets, each with its own transport and thread") {
  FakeTransport pods_t, cms_t;
  Backoffs b;
  pods_t.reply(200, pod_list("10", {pod("p", "9")}));
  pods_t.stream_reply({}, End::Idle);
  cms_t.reply(200, R"({"kind":"ConfigMapList","metadata":{"resourceVersion":"10"},"items":[)"
                   R"({"metadata":{"name":"motor-config","namespace":"ns","resourceVersion":"3"}}]})");
  cms_t.stream_reply({event("ADDED", R"({"metadata":{"name":"other","namespace":"ns","resourceVersion":"11"}})")},
                     End::Idle);
  std::vector<FakeTransport*> handed = {&pods_t, &cms_t};
  std::size_t next = 0;
  Informer inf([&] { return std::make_unique<TransportRef>(*handed.at(next++)); },
               {pods(), WatchTarget{mindie::kube::gvr::kConfigMaps, "ns", {}, "metadata.name=motor-config"}}, fast(b));
  inf.start();
  CHECK(names(inf, 0) == Names{"ns/p"});
  CHECK(wait_until(inf, [&] { return names(inf, 1) == Names{"ns/motor-config", "ns/other"}; }));
  REQUIRE(pods_t.wait_for_requests(2));
  inf.stop();
  CHECK(cms_t.requests[0].path ==
        "/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Dmotor-config&limit=500");
  CHECK(inf.requests_sent() == 4);
  CHECK_THROWS_AS(inf.objects(2), std::out_of_range);
}

TEST_CASE("Informer: start() throws the LIST's error and starts nothing; twice is a logic error") {
  FakeTransport t;
  Backoffs b;
  t.reply(403, status(403, "Forbidden", "pods is forbidden"));
  auto inf = informer(t, fast(b));
  CHECK_THROWS_AS(inf->start(), ApiError);
  CHECK_THROWS_AS(inf->start(), std::logic_error);
  inf->stop();
  CHECK(t.requests.size() == 1);
}

TEST_CASE("watch_path: resourceVersion omitted when empty, values percent-encoded, cluster-scoped paths") {
  using mindie::kube::watch_path;
  CHECK(watch_path(WatchTarget{mindie::kube::gvr::kNamespaces, "ignored", "a=b", ""}, "", 60) ==
        "/api/v1/namespaces?watch=true&allowWatchBookmarks=true&timeoutSeconds=60&labelSelector=a%3Db");
  CHECK(watch_path(WatchTarget{mindie::kube::gvr::kInferServiceSets, "ns", "", ""}, "12/3", 300) ==
        "/apis/mindcluster.huawei.com/v1/namespaces/ns/inferservicesets?watch=true&resourceVersion=12%2F3"
        "&allowWatchBookmarks=true&timeoutSeconds=300");
}
