// kube::read_pod_state and util's time helpers: kubectl's STATUS column, the plain-words reasons, and RFC 3339 times
// with their offsets.
#include "kube/pod_state.h"

#include <doctest/doctest.h>

#include <boost/json.hpp>

#include "util/time.h"

using namespace mindie;
namespace json = boost::json;

namespace {

json::value pod(const char* status_json) {
  return json::parse(std::string(R"({"metadata":{"name":"p","uid":"u","creationTimestamp":"2027-01-15T07:59:00Z"},)"
                                 R"("spec":{"nodeName":"n1","containers":[{"name":"a"},{"name":"b"}]},"status":)") +
                     status_json + "}");
}

constexpr std::int64_t kNow = 1'800'000'000;  // 2027-01-15T08:00:00Z

}  // namespace

TEST_CASE("parse_rfc3339: UTC, fractions and offsets; anything else is unreadable") {
  CHECK(util::parse_rfc3339("2027-01-15T08:00:00Z") == kNow);
  CHECK(util::parse_rfc3339("2027-01-15T08:00:00.123456Z") == kNow);
  CHECK(util::parse_rfc3339("2027-01-15T16:00:00+08:00") == kNow);
  CHECK(util::parse_rfc3339("2027-01-15T03:30:00-04:30") == kNow);
  CHECK_FALSE(util::parse_rfc3339("2027-01-15T08:00:00"));
  CHECK_FALSE(util::parse_rfc3339("2027-01-15T08:00:00Zjunk"));
  CHECK_FALSE(util::parse_rfc3339("2027-01-15T08:00:00+8"));
  CHECK_FALSE(util::parse_rfc3339("2027-01-15T08:00:00+08:00junk"));
  CHECK_FALSE(util::parse_rfc3339("yesterday"));
  CHECK_FALSE(util::parse_rfc3339(""));
}

TEST_CASE("read_pod_state: a ready pod has no reason, even after an earlier OOM kill") {
  const auto p = kube::read_pod_state(
      pod(R"({"phase":"Running","conditions":[{"type":"Ready","status":"True"}],"containerStatuses":[)"
          R"({"ready":true,"restartCount":1,"state":{"running":{}},"lastState":{"terminated":{"reason":"OOMKilled","exitCode":137}}},)"
          R"({"ready":true,"restartCount":2,"state":{"running":{}}}]})"),
      kNow);
  CHECK(p.ready);
  CHECK(p.status == "Running");
  CHECK(p.reason.empty());
  CHECK(p.restarts == 3);
  CHECK(p.ready_containers == 2);
  CHECK(p.containers == 2);
  CHECK(p.age_seconds == 60);
  CHECK(p.node == "n1");
  CHECK(p.last_exit() == "OOMKilled (exit code 137)");
}

TEST_CASE("read_pod_state: STATUS and reason of the failure paths") {
  auto check = [](const char* status, const char* shown, const char* reason) {
    const auto p = kube::read_pod_state(pod(status), kNow);
    CHECK(p.status == shown);
    CHECK(p.reason.rfind(reason, 0) == 0);
  };
  check(
      R"({"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","message":"0/4 nodes are available"}]})",
      "Pending", "unschedulable: 0/4 nodes are available");
  check(
      R"({"phase":"Pending","containerStatuses":[{"state":{"waiting":{"reason":"ImagePullBackOff","message":"no such image"}}}]})",
      "ImagePullBackOff", "cannot pull the image (ImagePullBackOff): no such image");
  check(
      R"({"phase":"Running","containerStatuses":[{"restartCount":4,"state":{"waiting":{"reason":"CrashLoopBackOff"}},)"
      R"("lastState":{"terminated":{"reason":"Error","exitCode":1}}}]})",
      "CrashLoopBackOff", "crash loop: 4 restarts, last exit Error (exit code 1)");
  check(R"({"phase":"Running","containerStatuses":[{"restartCount":1,"state":{"running":{}},)"
        R"("lastState":{"terminated":{"reason":"OOMKilled","exitCode":137}}}]})",
        "Running", "out of memory: the container was OOM-killed (exit code 137), 1 restarts");
  check(R"({"phase":"Running","conditions":[{"type":"Ready","status":"False"}]})", "Running",
        "running, but not ready (readiness probe failing)");
  check(R"({"phase":"Failed"})", "Failed", "the pod has ended (Failed)");
  check(R"({"phase":"Pending","containerStatuses":[{"state":{"waiting":{"reason":"ContainerCreating"}}}]})",
        "ContainerCreating", "waiting: ContainerCreating");
  check(R"({})", "", "not ready");
}

// Between two crashes a crash-looping container runs (and fails readiness) until it exits again: the restarts and the
// last exit say so whenever one looks (found by a new-user trial: 27 restarts shown as a plain readiness failure).
TEST_CASE("read_pod_state: a running, unready pod that has restarted says how often and how it last ended") {
  const auto p = kube::read_pod_state(
      pod(R"({"phase":"Running","conditions":[{"type":"Ready","status":"False"}],"containerStatuses":[)"
          R"({"ready":false,"restartCount":27,"state":{"running":{}},"lastState":{"terminated":{"reason":"Error","exitCode":1}}}]})"),
      kNow);
  CHECK(p.status == "Running");
  CHECK(p.reason == "running, but not ready (readiness probe failing); 27 restarts, last exit Error (exit code 1)");
}

TEST_CASE("read_pod_state: a pod being deleted is Terminating with the time, and a mistyped status is survived") {
  auto v = pod(R"({"phase":"Running","conditions":[{"type":"Ready","status":"True"}]})");
  v.as_object()["metadata"].as_object()["deletionTimestamp"] = "2027-01-15T07:30:00Z";
  const auto p = kube::read_pod_state(v, kNow);
  CHECK(p.terminating);
  CHECK(p.status == "Terminating");
  CHECK(p.reason.rfind("terminating since 2027-01-15T07:30:00Z", 0) == 0);

  const auto odd =
      kube::read_pod_state(pod(R"({"phase":7,"conditions":"x","containerStatuses":[1,{"restartCount":"2"}]})"), kNow);
  CHECK(odd.restarts == 0);
  CHECK(odd.reason == "not ready");
}

TEST_CASE("human_duration follows kubectl") {
  CHECK(util::human_duration(45) == "45s");
  CHECK(util::human_duration(119) == "119s");
  CHECK(util::human_duration(200) == "3m20s");
  CHECK(util::human_duration(600) == "10m");
  CHECK(util::human_duration(3 * 3600 + 60) == "3h1m");
  CHECK(util::human_duration(10 * 3600) == "10h");
  CHECK(util::human_duration(3 * 86400 + 4 * 3600) == "3d4h");
  CHECK(util::human_duration(30 * 86400) == "30d");
  CHECK(util::human_duration(-5) == "<invalid>");
}
