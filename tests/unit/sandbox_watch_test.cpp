// The sandbox's watch: replay, resume after a resourceVersion, 410 after compaction, selector transitions,
// bookmarks, timeouts and the control endpoints that end watches. Driven in process: Watch::take() with chosen
// instants, so nothing sleeps.
#include <doctest/doctest.h>

#include <sstream>

#include "sandbox/api_server.h"
#include "sandbox/watch.h"

using namespace mindie::sandbox;
using nlohmann::json;

namespace {

using Clock = Watch::Clock;

struct Sandbox {
  ApiServer api;
  explicit Sandbox(ServerOptions o = {}) : api(Registry(true), (o.token = "t", std::move(o))) {}

  HttpResponse call(const std::string& method, const std::string& path, const std::string& body = "",
                    std::multimap<std::string, std::string> params = {},
                    const std::string& content_type = "application/json", const std::string& accept = "") {
    HttpRequest r;
    r.method = method;
    r.path = path;
    r.body = body;
    r.content_type = content_type;
    r.accept = accept;
    r.authorization = "Bearer t";
    r.params = std::move(params);
    return api.handle(r);
  }
  json put_cm(const std::string& name, const json& labels = json::object(), const std::string& data = "") {
    const std::string path = "/api/v1/namespaces/default/configmaps";
    json cm = {{"metadata", {{"name", name}, {"labels", labels}}}, {"data", {{"k", data}}}};
    HttpResponse r = call("GET", path + "/" + name);
    if (r.status == 404) return json::parse(call("POST", path, cm.dump()).body);
    json current = json::parse(r.body);
    cm["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"];
    return json::parse(call("PUT", path + "/" + name, cm.dump()).body);
  }
  std::shared_ptr<Watch> watch(std::multimap<std::string, std::string> params,
                               const std::string& path = "/api/v1/namespaces/default/configmaps",
                               const std::string& accept = "") {
    params.emplace("watch", "1");
    HttpResponse r = call("GET", path, "", std::move(params), "", accept);
    REQUIRE(r.status == 200);
    REQUIRE(r.watch);
    return r.watch;
  }
};

// The events a watch has to send at `at`, parsed.
std::vector<json> drain(Watch& w, Clock::time_point at = Clock::now(), Watch::Step* step = nullptr) {
  std::string out;
  const Watch::Step s = w.take(out, at);
  if (step) *step = s;
  std::vector<json> events;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) events.push_back(json::parse(line));
  return events;
}

std::string rv_of(const json& o) { return o["metadata"]["resourceVersion"]; }

}  // namespace

TEST_CASE("watch: from \"\" or 0 the current objects come as ADDED, then every change") {
  Sandbox s;
  s.put_cm("a");
  s.put_cm("b");
  for (const char* rv : {"", "0"}) {
    auto w = s.watch({{"resourceVersion", rv}});
    auto events = drain(*w);
    REQUIRE(events.size() == 2);
    CHECK(events[0]["type"] == "ADDED");
    CHECK(events[0]["object"]["metadata"]["name"] == "a");
    CHECK(events[1]["object"]["metadata"]["name"] == "b");
    CHECK(drain(*w).empty());
  }
  auto w = s.watch({});
  drain(*w);
  const json c = s.put_cm("c");
  const json a2 = s.put_cm("a", json::object(), "changed");
  REQUIRE(s.call("DELETE", "/api/v1/namespaces/default/configmaps/b").status == 200);
  const auto events = drain(*w);
  REQUIRE(events.size() == 3);
  CHECK(events[0]["type"] == "ADDED");
  CHECK(events[0]["object"] == c);
  CHECK(events[1]["type"] == "MODIFIED");
  CHECK(events[1]["object"]["data"]["k"] == "changed");
  CHECK(events[2]["type"] == "DELETED");
  CHECK(events[2]["object"]["metadata"]["name"] == "b");
  // The deletion has its own resourceVersion, newer than every earlier event.
  CHECK(std::stoull(rv_of(events[2]["object"])) > std::stoull(rv_of(a2)));
}

TEST_CASE("watch: the line format is kube-apiserver's, type first") {
  CHECK(watch_line("ADDED", {{"b", 1}, {"a", 2}}) == "{\"type\":\"ADDED\",\"object\":{\"a\":2,\"b\":1}}\n");
}

TEST_CASE("watch: from a resourceVersion, every later change from the history, nothing earlier") {
  Sandbox s;
  const json a = s.put_cm("a");
  s.put_cm("a", json::object(), "v2");
  s.put_cm("b");
  auto w = s.watch({{"resourceVersion", rv_of(a)}});
  const auto events = drain(*w);
  REQUIRE(events.size() == 2);
  CHECK(events[0]["type"] == "MODIFIED");
  CHECK(events[0]["object"]["data"]["k"] == "v2");
  CHECK(events[1]["type"] == "ADDED");
  CHECK(events[1]["object"]["metadata"]["name"] == "b");
  // From the newest resourceVersion: nothing to replay, and only what changes afterwards.
  const json list = json::parse(s.call("GET", "/api/v1/namespaces/default/configmaps").body);
  auto live = s.watch({{"resourceVersion", list["metadata"]["resourceVersion"]}});
  CHECK(drain(*live).empty());
  s.put_cm("c");
  const auto later = drain(*live);
  REQUIRE(later.size() == 1);
  CHECK(later[0]["object"]["metadata"]["name"] == "c");
  // Writes to other types move the revision but are not this watch's business.
  s.call("POST", "/api/v1/namespaces/default/serviceaccounts", R"({"metadata":{"name":"sa"}})");
  CHECK(drain(*live).empty());
}

TEST_CASE("watch: history compacted away — a 200 stream whose only event is ERROR 410 Expired, then the end") {
  Sandbox s;
  const json a = s.put_cm("a");
  s.put_cm("b");
  const HttpResponse compact = s.call("POST", "/sandbox/compact");
  REQUIRE(compact.status == 200);
  const std::string compacted = json::parse(compact.body)["compactedRevision"];
  auto w = s.watch({{"resourceVersion", rv_of(a)}});
  Watch::Step step{};
  const auto events = drain(*w, Clock::now(), &step);
  REQUIRE(events.size() == 1);
  CHECK(events[0]["type"] == "ERROR");
  const json& st = events[0]["object"];
  CHECK(st["kind"] == "Status");
  CHECK(st["status"] == "Failure");
  CHECK(st["code"] == 410);
  CHECK(st["reason"] == "Expired");
  CHECK(st["message"] == "too old resource version: " + rv_of(a) + " (" + compacted + ")");
  CHECK(step == Watch::Step::End);
  // Later changes do not reach it; a watch from the compacted revision itself still works and gets them.
  s.put_cm("c");
  CHECK(drain(*w).empty());
  auto fresh = s.watch({{"resourceVersion", compacted}});
  const auto replayed = drain(*fresh);
  REQUIRE(replayed.size() == 1);
  CHECK(replayed[0]["object"]["metadata"]["name"] == "c");
  s.put_cm("d");
  CHECK(drain(*fresh).size() == 1);
  // A list continue token from before the compacted revision is expired too (one at it is still served).
  const json page = json::parse(s.call("GET", "/api/v1/namespaces/default/configmaps", "", {{"limit", "1"}}).body);
  REQUIRE(page["metadata"].contains("continue"));
  s.call("POST", "/sandbox/compact");
  CHECK(s.call("GET", "/api/v1/namespaces/default/configmaps", "",
               {{"limit", "1"}, {"continue", page["metadata"]["continue"]}}).status == 200);
  s.put_cm("e");
  s.call("POST", "/sandbox/compact");
  const HttpResponse expired = s.call("GET", "/api/v1/namespaces/default/configmaps", "",
                                      {{"limit", "1"}, {"continue", page["metadata"]["continue"]}});
  CHECK(expired.status == 410);
  CHECK(json::parse(expired.body)["reason"] == "Expired");
}

TEST_CASE("watch: objects entering the selector come as ADDED, leaving it as DELETED with the old content") {
  Sandbox s;
  s.put_cm("x", {{"app", "other"}});
  auto w = s.watch({{"labelSelector", "app=web"}});
  CHECK(drain(*w).empty());
  s.put_cm("x", {{"app", "web"}});
  auto events = drain(*w);
  REQUIRE(events.size() == 1);
  CHECK(events[0]["type"] == "ADDED");
  s.put_cm("x", {{"app", "web"}}, "v2");
  events = drain(*w);
  REQUIRE(events.size() == 1);
  CHECK(events[0]["type"] == "MODIFIED");
  const json moved = s.put_cm("x", {{"app", "other"}}, "v3");
  events = drain(*w);
  REQUIRE(events.size() == 1);
  CHECK(events[0]["type"] == "DELETED");
  // The last state the watcher could see, stamped with the change's resourceVersion (the cacher's rule).
  CHECK(events[0]["object"]["metadata"]["labels"]["app"] == "web");
  CHECK(events[0]["object"]["data"]["k"] == "v2");
  CHECK(rv_of(events[0]["object"]) == rv_of(moved));
  REQUIRE(s.call("DELETE", "/api/v1/namespaces/default/configmaps/x").status == 200);
  CHECK(drain(*w).empty());

  // Field selectors and namespaces select the same way; an all-namespaces watch sees every namespace.
  auto named = s.watch({{"fieldSelector", "metadata.name=y"}});
  auto everywhere = s.watch({}, "/api/v1/configmaps");
  s.put_cm("y");
  s.put_cm("z");
  CHECK(drain(*named).size() == 1);
  CHECK(drain(*everywhere).size() == 2);
  CHECK(s.call("GET", "/api/v1/namespaces/default/configmaps", "", {{"watch", "1"}, {"labelSelector", "a in"}})
            .status == 400);
}

TEST_CASE("watch_event_for: the transition table") {
  WatchSpec spec;
  spec.type_key = "/configmaps";
  spec.labels = LabelSelector::parse("app=web");
  const auto obj = [](const char* app, const char* rv) {
    return std::make_shared<const json>(json{
        {"metadata", {{"name", "x"}, {"namespace", "default"}, {"labels", {{"app", app}}}, {"resourceVersion", rv}}}});
  };
  using T = StoreEvent::Type;
  CHECK(watch_event_for({T::Added, 5, "/configmaps", obj("web", "5"), nullptr}, spec)->type == WatchEvent::Type::Added);
  CHECK_FALSE(watch_event_for({T::Added, 5, "/configmaps", obj("db", "5"), nullptr}, spec));
  CHECK_FALSE(watch_event_for({T::Added, 5, "/secrets", obj("web", "5"), nullptr}, spec));
  CHECK(watch_event_for({T::Modified, 6, "/configmaps", obj("web", "6"), obj("web", "5")}, spec)->type ==
        WatchEvent::Type::Modified);
  CHECK(watch_event_for({T::Modified, 6, "/configmaps", obj("web", "6"), obj("db", "5")}, spec)->type ==
        WatchEvent::Type::Added);
  const auto left = watch_event_for({T::Modified, 6, "/configmaps", obj("db", "6"), obj("web", "5")}, spec);
  REQUIRE(left);
  CHECK(left->type == WatchEvent::Type::Deleted);
  CHECK((*left->object)["metadata"]["labels"]["app"] == "web");
  CHECK(left->resource_version == "6");
  CHECK_FALSE(watch_event_for({T::Modified, 6, "/configmaps", obj("db", "6"), obj("db", "5")}, spec));
  CHECK(watch_event_for({T::Deleted, 7, "/configmaps", obj("web", "7"), obj("web", "6")}, spec)->type ==
        WatchEvent::Type::Deleted);
  CHECK_FALSE(watch_event_for({T::Deleted, 7, "/configmaps", obj("db", "7"), obj("db", "6")}, spec));
}

TEST_CASE("watch: BOOKMARK events when asked for, at the bookmark interval, with the latest resourceVersion") {
  ServerOptions o;
  o.bookmark_interval = std::chrono::hours(1);
  Sandbox s(o);
  const auto start = Clock::now();
  auto w = s.watch({{"allowWatchBookmarks", "true"}, {"timeoutSeconds", "36000"}});
  auto plain = s.watch({{"timeoutSeconds", "36000"}});
  drain(*w, start);
  drain(*plain, start);
  const json b = s.put_cm("b");
  auto events = drain(*w, start);  // before the interval: the change, no bookmark
  REQUIRE(events.size() == 1);
  CHECK(events[0]["type"] == "ADDED");
  s.call("POST", "/api/v1/namespaces/default/serviceaccounts", R"({"metadata":{"name":"sa"}})");
  events = drain(*w, start + std::chrono::hours(2));
  REQUIRE(events.size() == 1);
  CHECK(events[0]["type"] == "BOOKMARK");
  const json& bm = events[0]["object"];
  CHECK(bm["kind"] == "ConfigMap");
  CHECK(bm["apiVersion"] == "v1");
  CHECK(bm["metadata"].size() == 1);
  // The store's revision (moved by the ServiceAccount), beyond the last event this watch saw.
  CHECK(std::stoull(bm["metadata"]["resourceVersion"].get<std::string>()) > std::stoull(rv_of(b)));
  // The next one only after another interval; without allowWatchBookmarks never.
  CHECK(drain(*w, start + std::chrono::hours(2)).empty());
  CHECK(drain(*w, start + std::chrono::hours(4)).size() == 1);
  drain(*plain, start);
  CHECK(drain(*plain, start + std::chrono::hours(5)).empty());
}

TEST_CASE("watch: ends at timeoutSeconds (final chunk), and at a randomised server timeout without it") {
  ServerOptions o;
  o.min_request_timeout = std::chrono::seconds(100);
  Sandbox s(o);
  const auto start = Clock::now();
  auto w = s.watch({{"timeoutSeconds", "30"}});
  Watch::Step step{};
  drain(*w, start, &step);
  CHECK(step == Watch::Step::Continue);
  drain(*w, start + std::chrono::seconds(60), &step);
  CHECK(step == Watch::Step::End);
  CHECK(w->done());
  auto def = s.watch({});
  drain(*def, start + std::chrono::seconds(99), &step);
  CHECK(step == Watch::Step::Continue);
  drain(*def, start + std::chrono::seconds(300), &step);
  CHECK(step == Watch::Step::End);
  CHECK(s.call("GET", "/api/v1/namespaces/default/configmaps", "", {{"watch", "true"}, {"timeoutSeconds", "x"}})
            .status == 400);
}

TEST_CASE("watch: close-watches drops every open watch; later ones are unaffected") {
  Sandbox s;
  auto a = s.watch({});
  auto b = s.watch({}, "/api/v1/pods");
  const HttpResponse r = s.call("POST", "/sandbox/close-watches");
  REQUIRE(r.status == 200);
  CHECK(json::parse(r.body)["closed"] == 2);
  std::string out;
  CHECK(a->take(out, Clock::now()) == Watch::Step::Abort);
  CHECK(b->take(out, Clock::now()) == Watch::Step::Abort);
  CHECK(out.empty());
  auto c = s.watch({});
  s.put_cm("x");
  CHECK(drain(*c).size() == 1);
  CHECK(s.call("GET", "/sandbox/close-watches").status == 405);
  CHECK(s.call("POST", "/sandbox/nothing").status == 404);
  HttpRequest unauthenticated;
  unauthenticated.method = "POST";
  unauthenticated.path = "/sandbox/compact";
  CHECK(s.api.handle(unauthenticated).status == 401);
  s.api.shutdown();
  CHECK(c->take(out, Clock::now()) == Watch::Step::Abort);
  CHECK(s.watch({})->take(out, Clock::now()) == Watch::Step::Abort);
}

TEST_CASE("watch: faults apply to watches, never to control endpoints") {
  ServerOptions o;
  o.faults.push_back(parse_fault("*:.*:503"));
  Sandbox s(o);
  CHECK(s.call("GET", "/api/v1/namespaces/default/configmaps", "", {{"watch", "1"}}).status == 503);
  CHECK(s.call("POST", "/sandbox/compact").status == 200);
}

TEST_CASE("watch: Table watches (kubectl get -w) get one-row Tables, columns with the first event only") {
  Sandbox s;
  s.put_cm("a");
  auto w = s.watch({}, "/api/v1/namespaces/default/configmaps", "application/json;as=Table;v=v1;g=meta.k8s.io");
  s.put_cm("b");
  const auto events = drain(*w);
  REQUIRE(events.size() == 2);
  CHECK(events[0]["object"]["kind"] == "Table");
  CHECK(events[0]["object"]["columnDefinitions"].is_array());
  CHECK(events[0]["object"]["rows"][0]["cells"][0] == "a");
  CHECK(events[1]["object"]["columnDefinitions"].is_null());
  CHECK(events[1]["object"]["rows"][0]["cells"][0] == "b");
}

TEST_CASE("watch: sendInitialEvents streams the state, then a BOOKMARK marking its end") {
  Sandbox s;
  s.put_cm("a");
  auto w = s.watch({{"sendInitialEvents", "true"}, {"allowWatchBookmarks", "true"},
                    {"resourceVersionMatch", "NotOlderThan"}, {"resourceVersion", ""}});
  const auto events = drain(*w);
  REQUIRE(events.size() == 2);
  CHECK(events[0]["type"] == "ADDED");
  CHECK(events[1]["type"] == "BOOKMARK");
  CHECK(events[1]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true");
  const std::string path = "/api/v1/namespaces/default/configmaps";
  CHECK(s.call("GET", path, "", {{"watch", "1"}, {"sendInitialEvents", "true"}, {"resourceVersionMatch", "NotOlderThan"}})
            .status == 422);
  CHECK(s.call("GET", path, "", {{"watch", "1"}, {"sendInitialEvents", "true"}, {"allowWatchBookmarks", "true"}})
            .status == 422);
  CHECK(s.call("GET", path, "", {{"watch", "1"}, {"resourceVersionMatch", "NotOlderThan"}}).status == 422);
  CHECK(s.call("GET", path, "", {{"watch", "1"}, {"resourceVersion", "abc"}}).status == 400);
}

TEST_CASE("watch: dry-run writes send nothing; a watch on one object's path is narrowed to it") {
  Sandbox s;
  auto w = s.watch({});
  CHECK(s.call("POST", "/api/v1/namespaces/default/configmaps", R"({"metadata":{"name":"dry"}})", {{"dryRun", "All"}})
            .status == 201);
  CHECK(drain(*w).empty());
  auto one = s.watch({}, "/api/v1/namespaces/default/configmaps/a");
  s.put_cm("a");
  s.put_cm("b");
  const auto events = drain(*one);
  REQUIRE(events.size() == 1);
  CHECK(events[0]["object"]["metadata"]["name"] == "a");
}

TEST_CASE("store: scan pages in key order; dependents follow ownerReferences") {
  Store st;
  for (const char* ns : {"b", "a"})
    for (const char* n : {"y", "x"}) st.put("/configmaps", {{"metadata", {{"name", n}, {"namespace", ns}}}});
  std::vector<std::string> seen;
  st.scan("/configmaps", "", {"a", "x"}, [&](const ObjectPtr& o) {
    seen.push_back((*o)["metadata"]["namespace"].get<std::string>() + "/" + (*o)["metadata"]["name"].get<std::string>());
    return true;
  });
  CHECK(seen == std::vector<std::string>{"a/y", "b/x", "b/y"});
  seen.clear();
  st.scan("/configmaps", "b", {}, [&](const ObjectPtr& o) {
    seen.push_back((*o)["metadata"]["name"]);
    return false;  // stops after the first
  });
  CHECK(seen == std::vector<std::string>{"x"});
  st.put("/pods", {{"metadata", {{"name", "p"}, {"namespace", "a"}, {"ownerReferences", {{{"uid", "u1"}}}}}}});
  CHECK(st.dependents("u1") == std::vector<ObjectRef>{{"/pods", "a", "p"}});
  st.put("/pods", {{"metadata", {{"name", "p"}, {"namespace", "a"}}}});
  CHECK(st.dependents("u1").empty());
  const std::uint64_t before = st.revision();
  st.compact();
  CHECK_FALSE(st.events_since(before - 1));
  CHECK(st.events_since(before)->empty());
  CHECK(st.oldest_watchable() == before);
}

TEST_CASE("watch: a pod deleted gracefully is seen terminating, then deleted; a forced delete only deleted") {
  Sandbox s;
  const std::string pods = "/api/v1/namespaces/default/pods";
  for (const char* n : {"a", "b"})
    REQUIRE(s.call("POST", pods, json{{"metadata", {{"name", n}}}, {"spec", {{"containers", {{{"name", "c"}}}}}}}.dump())
                .status == 201);
  auto w = s.watch({}, pods);
  drain(*w);
  REQUIRE(s.call("DELETE", pods + "/a").status == 200);
  auto events = drain(*w);
  REQUIRE(events.size() == 2);
  CHECK(events[0]["type"] == "MODIFIED");
  CHECK(events[0]["object"]["metadata"]["deletionGracePeriodSeconds"] == 30);
  CHECK(events[1]["type"] == "DELETED");
  CHECK(events[1]["object"]["metadata"].contains("deletionTimestamp"));
  REQUIRE(s.call("DELETE", pods + "/b", "", {{"gracePeriodSeconds", "0"}}).status == 200);
  events = drain(*w);
  REQUIRE(events.size() == 1);
  CHECK(events[0]["type"] == "DELETED");
}
