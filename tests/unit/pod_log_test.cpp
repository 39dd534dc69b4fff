// The pod log request (kube/pod_log.h) and what kubectl mindie logs selects and prefixes (cmd/logs_streams.h).
#include "kube/pod_log.h"

#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "cmd/logs_streams.h"
#include "fake_transport.h"

using namespace mindie;
namespace json = boost::json;

TEST_CASE("pod_log_path: only the options set, values percent-encoded") {
  CHECK(kube::pod_log_path("ns", "p-0", {}) == "/api/v1/namespaces/ns/pods/p-0/log");
  kube::PodLogOptions o;
  o.container = "engine";
  o.follow = true;
  o.since_seconds = 600;
  o.tail_lines = 0;
  o.previous = true;
  o.timestamps = true;
  CHECK(kube::pod_log_path("ns", "p-0", o) ==
        "/api/v1/namespaces/ns/pods/p-0/log?container=engine&follow=true&sinceSeconds=600&tailLines=0&previous=true"
        "&timestamps=true");
}

TEST_CASE("stream_pod_log: lines split across chunks, a last line without newline, an error answer") {
  test::FakeTransport t;
  t.stream_reply({"first li", "ne\nsecond\nthi", "rd"});
  std::vector<std::string> lines;
  kube::stream_pod_log(
      t, "ns", "p", {}, [&](std::string_view l) { lines.emplace_back(l); }, [] { return true; });
  CHECK(lines == std::vector<std::string>{"first line", "second", "third"});
  CHECK(t.requests.at(0).accept == "*/*");

  t.reply(400, R"({"kind":"Status","status":"Failure","reason":"BadRequest",)"
               R"("message":"container \"engine\" in pod \"p\" is waiting to start: ContainerCreating","code":400})");
  CHECK_THROWS_WITH_AS(kube::stream_pod_log(
                           t, "ns", "p", {}, [](std::string_view) {}, [] { return true; }),
                       doctest::Contains("is waiting to start"), kube::ApiError);
}

TEST_CASE("logs: the selector per mode, role and instance; the [role/instance/pod] prefix") {
  cmd::LogTarget iss{"ns", "mindie-motor-vllm", false, 1, "", -1};
  CHECK(cmd::log_selector(iss) == "infer.huawei.com/inferservice-name in (mindie-motor-vllm-0)");
  iss.role = "prefill";
  iss.instance = 1;
  CHECK(cmd::log_selector(iss) ==
        "infer.huawei.com/inferservice-name in (mindie-motor-vllm-0),infer.huawei.com/instanceset-name=prefill,"
        "infer.huawei.com/instanceset-index=1");
  const cmd::LogTarget multi{"ns", "mindie-motor-vllm", true, 1, "decode", 0};
  CHECK(cmd::log_selector(multi) ==
        "app.kubernetes.io/managed-by=kubectl-mindie,app.kubernetes.io/instance=mindie-motor-vllm,"
        "app.kubernetes.io/component=decode,kubectl-mindie/instance-index=0");

  const json::object pod = json::parse(R"({"metadata":{"name":"p-0","labels":{
      "infer.huawei.com/instanceset-name":"prefill","infer.huawei.com/instanceset-index":"1"}},
      "spec":{"containers":[{"name":"engine"},{"name":"sidecar"}]}})")
                               .as_object();
  CHECK(cmd::log_prefix(pod, false) == "[prefill/1/p-0]");
  CHECK(cmd::log_container(pod) == "engine");
  const json::object controller =
      json::parse(R"({"metadata":{"name":"c","labels":{"app.kubernetes.io/component":"controller"},
      "annotations":{"kubectl.kubernetes.io/default-container":"main"}}})")
          .as_object();
  CHECK(cmd::log_prefix(controller, true) == "[controller/0/c]");  // instance 0, as status counts it
  CHECK(cmd::log_container(controller) == "main");
}
