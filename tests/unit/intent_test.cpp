// change::Intent: the records released versions wrote are read back, and what is written reads back the same.
#include "change/intent.h"

#include <doctest/doctest.h>

namespace change = mindie::change;
namespace json = boost::json;

namespace {

json::object parsed(const char* text) { return json::parse(text).as_object(); }

}  // namespace

TEST_CASE("intent: a scale record as released versions wrote it") {
  const auto record = parsed(R"({"format":1,"command":"scale","at":1764900000,
    "by":{"user":"root","host":"h1","pid":4711,"command":"scale"},
    "mode":"infer_service_set","workload":"mindie-motor-vllm-0","roles":["prefill","decode"],
    "live_from":{"prefill":1,"decode":2},
    "from":{"prefill":1,"decode":1,"hybrid":0,"encode":0},"to":{"prefill":3,"decode":2,"hybrid":0,"encode":0},
    "baseline_resource_version":"812"})");
  const change::Intent intent = change::parse_intent(record);
  const auto& s = std::get<change::ScaleIntent>(intent.change);
  CHECK(s.workload == "mindie-motor-vllm-0");
  CHECK(s.counts.roles == std::vector<std::string>{"prefill", "decode"});
  CHECK(s.counts.to == change::RoleCounts{3, 2, 0, 0});
  CHECK(s.live_from.at("decode") == 2);
  CHECK(s.baseline_resource_version == "812");
  CHECK(intent.at == 1764900000);
  CHECK(intent.by.at("pid") == 4711);
  CHECK(change::count_change_text(intent.change) == "prefill 1 \u2192 3, decode 1 \u2192 2");
  CHECK(change::to_record(intent) == record);  // written back as read
}

TEST_CASE("intent: a deploy record, with the intent it superseded kept as found") {
  const auto record = parsed(R"({"format":1,"command":"deploy","at":5,"by":{"user":"u"},
    "mode":"infer_service_set","workload":"w","baseline_resource_version":"","baseline_digest":"abc",
    "baseline_keys":["user_config.json"],"adopt":false,"force_conflicts":true,
    "supersedes":{"command":"rollout-from-the-future","x":1}})");
  const change::Intent intent = change::parse_intent(record);
  const auto& d = std::get<change::DeployIntent>(intent.change);
  CHECK(d.baseline_resource_version.empty());
  CHECK(d.baseline_keys == std::vector<std::string>{"user_config.json"});
  CHECK(d.force_conflicts);
  CHECK_FALSE(d.counts);
  REQUIRE(intent.supersedes);
  CHECK(intent.supersedes->at("x") == 1);
  CHECK(change::to_record(intent) == record);
}

TEST_CASE("intent: a delete record; unreadable targets are kept as a sign the delete began") {
  const auto record = parsed(R"({"format":1,"command":"delete","at":1,"by":{},"workload":"w","mode":"m",
    "targets":[{"apiVersion":"v1","kind":"ConfigMap","namespace":"ns","name":"motor-config"},7]})");
  const change::Intent intent = change::parse_intent(record);
  const auto& d = std::get<change::DeleteIntent>(intent.change);
  REQUIRE(d.targets.size() == 2);
  CHECK(d.targets[0] == change::DeleteTarget{"v1", "ConfigMap", "ns", "motor-config"});
  CHECK(d.targets[1] == change::DeleteTarget{});
}

TEST_CASE("intent: what cannot be read is named, never guessed") {
  CHECK_FALSE(change::known_command(parsed(R"({"command":"rollout-from-the-future"})")));
  CHECK_FALSE(change::known_command(parsed(R"({"command":7})")));
  CHECK_THROWS_AS(change::parse_intent(parsed(R"({"command":"rollout-from-the-future"})")), change::UnreadableIntent);
  // A scale whose counts are out of range, or without roles, or without the baseline's resourceVersion.
  CHECK_THROWS_WITH_AS(change::parse_intent(parsed(R"({"command":"scale","roles":["prefill"],
    "from":{"prefill":1,"decode":1,"hybrid":0,"encode":0},"to":{"prefill":99,"decode":1,"hybrid":0,"encode":0},
    "baseline_resource_version":"1"})")),
                       "\"to\".prefill is not a number 0..16", change::UnreadableIntent);
  CHECK_THROWS_AS(change::parse_intent(parsed(R"({"command":"scale","roles":["evil\u001b[2J"],
    "from":{"prefill":1,"decode":1,"hybrid":0,"encode":0},"to":{"prefill":1,"decode":1,"hybrid":0,"encode":0},
    "baseline_resource_version":"1"})")),
                  change::UnreadableIntent);
  CHECK_THROWS_AS(change::parse_intent(parsed(R"({"command":"deploy","baseline_digest":"d"})")),
                  change::UnreadableIntent);
  // A deploy's counts are only shown: unreadable, they are left out and the deploy still recovers.
  const auto d = change::parse_intent(parsed(R"({"command":"deploy","baseline_digest":"d",
    "baseline_resource_version":"3","roles":["prefill"],"from":{},"to":{}})"));
  CHECK_FALSE(std::get<change::DeployIntent>(d.change).counts);
  CHECK(change::count_change_text(d.change).empty());
}

TEST_CASE("intent: a rollout record reads back as written; names that could not be object names are dropped") {
  change::RolloutIntent r;
  r.mode = "infer_service_set";
  r.workload = "mindie-motor-vllm";
  r.roles = {"prefill"};
  r.surge = false;
  r.allow_downtime = true;
  r.max_unavailable = 2;
  r.done = {"statefulset/mindie-motor-vllm-0-prefill-0"};
  r.surged = {{"prefill", 1}};
  r.strategies = {{"vllm-p0", R"({"type":"RollingUpdate"})"}};
  r.stop_operator = true;
  r.operator_replicas = 2;
  r.pod_groups = {"pg-mindie-motor-vllm-0-prefill-0"};
  change::Intent intent{r};
  intent.at = 1764900000;
  const json::object record = change::to_record(intent);
  CHECK(record.at("command") == "rollout");
  const auto back = std::get<change::RolloutIntent>(change::parse_intent(record).change);
  CHECK(back.roles == r.roles);
  CHECK_FALSE(back.surge);
  CHECK(back.allow_downtime);
  CHECK(back.max_unavailable == 2);
  CHECK(back.done == r.done);
  CHECK(back.surged == r.surged);
  CHECK(back.strategies == r.strategies);
  CHECK(back.stop_operator);
  CHECK(back.operator_replicas == 2);      // what recovery scales infer-operator back to
  CHECK(back.pod_groups == r.pod_groups);  // what recovery deletes before
  CHECK(change::to_record(change::Intent{back}).at("done") == record.at("done"));

  // A record from anyone with write access to the Lease: what reaches the terminal must look like a name.
  const auto hostile = parsed(R"({"format":1,"command":"rollout","roles":["prefill","\u001b[31mred"],
    "done":["deployment/a",7,"x y"],"surged":{"decode":1,"bad\nrole":2},"pod_groups":["pg-a","../x y"]})");
  const auto h = std::get<change::RolloutIntent>(change::parse_intent(hostile).change);
  CHECK(h.roles == std::vector<std::string>{"prefill"});
  CHECK(h.done == std::vector<std::string>{"deployment/a"});
  CHECK(h.surged == std::map<std::string, int>{{"decode", 1}});
  CHECK(h.pod_groups == std::vector<std::string>{"pg-a"});
  CHECK(h.surge);  // absent: the default
  CHECK(h.max_unavailable == 1);
  CHECK(h.operator_replicas == 0);  // absent: the operator was not stopped
  CHECK_THROWS_AS(change::parse_intent(parsed(R"({"command":"rollout","max_unavailable":-1})")),
                  change::UnreadableIntent);
}
