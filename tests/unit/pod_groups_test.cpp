// remove_stale_pod_groups against the in-memory transport: stale PodGroups are deleted only once infer-operator has
// acted on the lower count (found on the real control plane: deleted earlier, the operator's next reconcile of the
// InstanceSet, still wanting the old count, makes them again for good).
#include "cmd/pod_groups.h"

#include <doctest/doctest.h>

#include <boost/json.hpp>

#include "fake_transport.h"

using mindie::kube::Client;
using mindie::test::FakeTransport;

namespace {

std::string pod_groups(std::initializer_list<const char*> names) {
  std::string items;
  for (const char* n : names) items += std::string(items.empty() ? "" : ",") + R"({"metadata":{"name":")" + n + "\"}}";
  return R"({"kind":"PodGroupList","metadata":{"resourceVersion":"7"},"items":[)" + items + "]}";
}

std::string instance_set(int replicas, int generation, int observed) {
  return R"({"metadata":{"name":"mindie-motor-vllm-0-decode","generation":)" + std::to_string(generation) +
         R"(},"spec":{"replicas":)" + std::to_string(replicas) + R"(},"status":{"observedGeneration":)" +
         std::to_string(observed) + "}}";
}

}  // namespace

TEST_CASE("stale PodGroups wait for the operator to act on the lower count, then go") {
  FakeTransport t;
  Client c(t);
  t.reply(200, pod_groups({"pg-mindie-motor-vllm-0-decode-0", "pg-mindie-motor-vllm-0-decode-1",
                           "pg-mindie-motor-vllm-0-decode-2"}));
  // First look: the InstanceSet still wants 3 (the InferService has not passed the change on); then it wants 1 but
  // its status is of the generation before; then the operator has acted.
  t.reply(200, instance_set(3, 4, 4));
  t.reply(200, instance_set(1, 5, 4));
  t.reply(200, instance_set(1, 5, 5));
  t.reply(200, R"({"kind":"Status","status":"Success"})");
  t.reply(200, R"({"kind":"Status","status":"Success"})");
  const auto deleted = mindie::cmd::remove_stale_pod_groups(c, "mindie-demo", "mindie-motor-vllm", {{"decode", 1}}, {},
                                                            "the scale is done");
  CHECK(deleted == std::vector<std::string>{"pg-mindie-motor-vllm-0-decode-1", "pg-mindie-motor-vllm-0-decode-2"});
  REQUIRE(t.requests.size() == 6);
  for (int i = 1; i <= 3; ++i) {
    CHECK(t.requests[i].method == "GET");
    CHECK(t.requests[i].path ==
          "/apis/mindcluster.huawei.com/v1/namespaces/mindie-demo/instancesets/mindie-motor-vllm-0-decode");
  }
  CHECK(t.requests[4].method == "DELETE");
  CHECK(t.requests[5].method == "DELETE");
}

TEST_CASE("nothing stale: no wait, no InstanceSet read; a missing InstanceSet counts as acted on") {
  FakeTransport t;
  Client c(t);
  t.reply(200, pod_groups({"pg-mindie-motor-vllm-0-decode-0"}));
  CHECK(
      mindie::cmd::remove_stale_pod_groups(c, "mindie-demo", "mindie-motor-vllm", {{"decode", 1}}, {}, "done").empty());
  CHECK(t.requests.size() == 1);

  t.reply(200, pod_groups({"pg-mindie-motor-vllm-0-decode-1"}));
  t.reply(404, R"({"kind":"Status","status":"Failure","reason":"NotFound","code":404,"message":"not found"})");
  t.reply(200, R"({"kind":"Status","status":"Success"})");
  CHECK(mindie::cmd::remove_stale_pod_groups(c, "mindie-demo", "mindie-motor-vllm", {{"decode", 1}}, {}, "done") ==
        std::vector<std::string>{"pg-mindie-motor-vllm-0-decode-1"});
}
