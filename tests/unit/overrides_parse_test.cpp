// deploy --overrides: parsing and validation of the file (mindie/overrides.h), its application to the rendered
// roles and the collisions with what the tool owns (render_infer_service_set), and its place in motor-config.
#include <doctest/doctest.h>

#include "config_test_support.h"
#include "kube/names.h"
#include "mindie/overrides.h"
#include "render_test_support.h"

using namespace mindie;
using namespace mindie::test;
namespace json = boost::json;

namespace {

std::vector<validation::Problem> parse_problems(const std::string& yaml) {
  try {
    overrides::parse_overrides(yaml, "overrides.yaml");
  } catch (const validation::ValidationError& e) {
    CHECK(e.source() == "overrides.yaml");
    return e.problems();
  }
  return {};
}

// Problems of rendering the test config (2 prefill pods per instance) with `yaml` as overrides.
std::vector<validation::Problem> render_problems(const std::string& yaml, const char* hardware = "800I_A2") {
  auto cfg = valid_config();
  deploy_of(cfg)["hardware_type"] = hardware;
  deploy_of(cfg)["single_p_instance_pod_num"] = 2;
  render::RenderOptions opts;
  opts.overrides = overrides::parse_overrides(yaml, "ov.yaml");
  try {
    render::render_infer_service_set(parse(cfg), nullptr, opts);
  } catch (const validation::ValidationError& e) {
    CHECK(e.source() == "ov.yaml");
    return e.problems();
  }
  return {};
}

const validation::Problem* problem_at(const std::vector<validation::Problem>& problems, const std::string& path) {
  for (const auto& p : problems)
    if (p.path == path) return &p;
  return nullptr;
}

json::object render_with(const std::string& yaml, int prefill_pods = 2) {
  auto cfg = valid_config();
  deploy_of(cfg)["single_p_instance_pod_num"] = prefill_pods;
  render::RenderOptions opts;
  opts.overrides = overrides::parse_overrides(yaml, "ov.yaml");
  return render_iss(parse(cfg), opts);
}

}  // namespace

TEST_CASE("quantities follow Kubernetes' grammar") {
  using kube::parse_quantity;
  CHECK(*parse_quantity("500m") == doctest::Approx(0.5));
  CHECK(*parse_quantity("4") == 4);
  CHECK(*parse_quantity("64Gi") == 64.0L * 1024 * 1024 * 1024);
  CHECK(*parse_quantity("1.5G") == doctest::Approx(1.5e9));
  CHECK(*parse_quantity("1e3") == 1000);
  CHECK(*parse_quantity(".5") == doctest::Approx(0.5));
  CHECK(*parse_quantity("+2k") == 2000);
  for (const char* bad : {"", "-1", "1.5.5", "Gi", "1gi", "1 Gi", "1e", "1e1234", "abc", "1Kb"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_quantity(bad).has_value());
  }
}

TEST_CASE("an empty file, only comments, or no roles mean no overrides") {
  for (const char* text :
       {"", "# nothing yet, later maybe defaultMode: 0440\n", "roles: {}\n", "roles:\n", "roles:\n  prefill:\n"}) {
    CAPTURE(text);
    const auto o = overrides::parse_overrides(text, "ov.yaml");
    CHECK(o.raw == text);
    CHECK(o.source == "ov.yaml");
    for (const auto& [role, ro] : o.roles) {
      CHECK(ro.labels.empty());
      CHECK_FALSE(ro.fault_scheduling.has_value());
    }
  }
}

TEST_CASE("a full file parses into normalised values") {
  const std::string text = R"(roles:
  prefill:
    resources: {requests: {cpu: 32, memory: 128Gi}, limits: {memory: 512Gi}}
    labels: {team: llm}
    annotations: {example.com/owner: alice}
    nodeSelector: {example.com/pool: llm}
    tolerations: [{key: dedicated, value: llm, effect: NoSchedule}]
    volumes: [{name: cache, hostPath: {path: /data/cache}}, {name: cfg, configMap: {name: extra, defaultMode: 0o440}}]
    volumeMounts: [{name: cache, mountPath: /root/.cache, readOnly: true}]
    faultScheduling: force
    faultRetryTimes: 3
    gangSchedule: true
)";
  const auto o = overrides::parse_overrides(text, "ov.yaml");
  CHECK(o.raw == text);
  const auto& p = o.roles.at("prefill");
  CHECK(p.requests.at("cpu") == "32");  // an integer quantity becomes its text
  CHECK(p.requests.at("memory") == "128Gi");
  CHECK(p.limits.at("memory") == "512Gi");
  CHECK(p.labels.at("team") == "llm");
  CHECK(p.annotations.at("example.com/owner") == "alice");
  CHECK(p.node_selector.at("example.com/pool") == "llm");
  // operator defaults to Equal, as in Kubernetes.
  CHECK(p.tolerations.at(0) ==
        json::object{{"key", "dedicated"}, {"operator", "Equal"}, {"value", "llm"}, {"effect", "NoSchedule"}});
  CHECK(p.volumes.at(1).at("configMap").at("defaultMode") == 0440);
  CHECK(p.volume_mounts.at(0).at("readOnly") == true);
  CHECK(*p.fault_scheduling == overrides::FaultScheduling::Force);
  CHECK(*p.fault_retry_times == 3);
  CHECK(*p.gang_schedule);
}

TEST_CASE("every problem of a file is reported at once, each at its path") {
  struct Case {
    const char* yaml;
    const char* path;
    const char* message_part;
  };
  const Case cases[] = {
      {"roles: {prefil: {}}", "roles.prefil",
       "known roles: controller, coordinator, prefill, decode, encode, union, kv-pool"},
      {"role: {}", "role", "is not a known key"},
      {"roles: []", "roles", "must be a mapping"},
      {"roles: {prefill: {cpu: 4}}", "roles.prefill.cpu", "expected one of: resources"},
      {"roles: {prefill: {labels: {team: 2}}}", "roles.prefill.labels.team", "must be a string"},
      {"roles: {prefill: {labels: {team: \"a b\"}}}", "roles.prefill.labels.team", "valid label value"},
      {"roles: {prefill: {labels: {\"bad key\": x}}}", "roles.prefill.labels[\"bad key\"]", "qualified name"},
      {"roles: {prefill: {annotations: {\"-x\": y}}}", "roles.prefill.annotations.-x", "qualified name"},
      {"roles: {prefill: {nodeSelector: [a]}}", "roles.prefill.nodeSelector", "must be a mapping"},
      {"roles: {prefill: {resources: {limit: {}}}}", "roles.prefill.resources.limit", "is not a known key"},
      {"roles: {prefill: {resources: {limits: {cpu: 1.5}}}}", "roles.prefill.resources.limits.cpu", "quote"},
      {"roles: {prefill: {resources: {limits: {cpu: -2}}}}", "roles.prefill.resources.limits.cpu", "negative"},
      {"roles: {prefill: {resources: {limits: {memory: 8GB}}}}", "roles.prefill.resources.limits.memory",
       "not a non-negative quantity"},
      {"roles: {prefill: {resources: {limits: {\"a b\": 1}}}}", "roles.prefill.resources.limits[\"a b\"]",
       "resource name"},
      {"roles: {prefill: {resources: {requests: {cpu: \"8\"}, limits: {cpu: \"4\"}}}}",
       "roles.prefill.resources.requests.cpu", "exceeds the limit 4"},
      {"roles: {prefill: {tolerations: {key: a}}}", "roles.prefill.tolerations", "must be a list"},
      {"roles: {prefill: {tolerations: [{key: a, operator: In}]}}", "roles.prefill.tolerations[0].operator",
       "Exists or Equal"},
      {"roles: {prefill: {tolerations: [{operator: Equal, value: x}]}}", "roles.prefill.tolerations[0].operator",
       "must be Exists when key is empty"},
      {"roles: {prefill: {tolerations: [{key: a, operator: Exists, value: x}]}}", "roles.prefill.tolerations[0].value",
       "empty when operator is Exists"},
      {"roles: {prefill: {tolerations: [{key: a, effect: NoRun}]}}", "roles.prefill.tolerations[0].effect",
       "NoSchedule, PreferNoSchedule or NoExecute"},
      {"roles: {prefill: {tolerations: [{key: a, effect: NoSchedule, tolerationSeconds: 5}]}}",
       "roles.prefill.tolerations[0].tolerationSeconds", "NoExecute"},
      {"roles: {prefill: {tolerations: [{key: a, colour: red}]}}", "roles.prefill.tolerations[0].colour",
       "is not a known key"},
      {"roles: {prefill: {volumes: [{name: Bad_Name, emptyDir: {}}]}}", "roles.prefill.volumes[0].name", "DNS-1123"},
      {"roles: {prefill: {volumes: [{emptyDir: {}}]}}", "roles.prefill.volumes[0].name", "is required"},
      {"roles: {prefill: {volumes: [{name: a}]}}", "roles.prefill.volumes[0]", "needs one volume source"},
      {"roles: {prefill: {volumes: [{name: a, emptyDir: {}, hostPath: {path: /x}}]}}", "roles.prefill.volumes[0]",
       "several volume sources"},
      {"roles: {prefill: {volumes: [{name: a, awsElasticBlockStore: {}}]}}",
       "roles.prefill.volumes[0].awsElasticBlockStore", "is not a known key"},
      {"roles: {prefill: {volumes: [{name: a, hostPath: {path: relative}}]}}", "roles.prefill.volumes[0].hostPath.path",
       "absolute path"},
      {"roles: {prefill: {volumes: [{name: a, hostPath: {path: /a/../etc}}]}}",
       "roles.prefill.volumes[0].hostPath.path", "absolute path"},
      {"roles: {prefill: {volumes: [{name: a, hostPath: {path: /a, type: Folder}}]}}",
       "roles.prefill.volumes[0].hostPath.type", "DirectoryOrCreate"},
      {"roles: {prefill: {volumes: [{name: a, hostPath: {path: /a, readOnly: true}}]}}",
       "roles.prefill.volumes[0].hostPath.readOnly", "is not a known key"},
      {"roles: {prefill: {volumes: [{name: a, configMap: {name: c, defaultMode: 0440}}]}}", "",
       "line 1: defaultMode 0440 has a leading zero"},
      {"roles: {prefill: {volumes: [{name: a, configMap: {name: c, defaultMode: 1000}}]}}",
       "roles.prefill.volumes[0].configMap.defaultMode", "0..511"},
      {"roles: {prefill: {volumes: [{name: a, configMap: {defaultMode: 256}}]}}",
       "roles.prefill.volumes[0].configMap.name", "is required"},
      {"roles: {prefill: {volumes: [{name: a, secret: {secretName: s, items: [{key: k, path: ../x}]}}]}}",
       "roles.prefill.volumes[0].secret.items[0].path", "relative path"},
      {"roles: {prefill: {volumes: [{name: a, emptyDir: {medium: Disk}}]}}", "roles.prefill.volumes[0].emptyDir.medium",
       "Memory"},
      {"roles: {prefill: {volumes: [{name: a, emptyDir: {}}, {name: a, emptyDir: {}}]}}",
       "roles.prefill.volumes[1].name", "duplicate"},
      {"roles: {prefill: {volumeMounts: [{name: a}]}}", "roles.prefill.volumeMounts[0].mountPath", "is required"},
      {"roles: {prefill: {volumeMounts: [{name: a, mountPath: \"/a:b\"}]}}", "roles.prefill.volumeMounts[0].mountPath",
       "without ':'"},
      {"roles: {prefill: {volumeMounts: [{name: a, mountPath: /a}, {name: b, mountPath: /a}]}}",
       "roles.prefill.volumeMounts[1].mountPath", "mounted twice"},
      {"roles: {prefill: {volumeMounts: [{name: a, mountPath: /a, subPath: /abs}]}}",
       "roles.prefill.volumeMounts[0].subPath", "relative path"},
      {"roles: {prefill: {faultScheduling: sometimes}}", "roles.prefill.faultScheduling", "grace, force or off"},
      {"roles: {prefill: {faultRetryTimes: 101}}", "roles.prefill.faultRetryTimes", "0..100"},
      {"roles: {prefill: {faultRetryTimes: \"3\"}}", "roles.prefill.faultRetryTimes", "integer"},
      {"roles: {prefill: {gangSchedule: \"yes\"}}", "roles.prefill.gangSchedule", "true or false"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.yaml));
    const auto problems = parse_problems(c.yaml);
    const validation::Problem* p = problem_at(problems, c.path);
    REQUIRE_MESSAGE(
        p != nullptr, "problems: " << [&] {
          std::string s;
          for (const auto& q : problems) s += q.path + ": " + q.message + "; ";
          return s;
        }());
    CHECK(p->message.find(c.message_part) != std::string::npos);
  }

  // All at once, not one per run.
  const auto many = parse_problems(
      "roles: {prefil: {}, prefill: {cpu: 4, faultRetryTimes: 500, labels: {a: \"b c\"}}, decode: {gangSchedule: 1}}");
  CHECK(many.size() == 5);
}

TEST_CASE("YAML syntax errors and several documents are one problem at the document") {
  auto p = parse_problems("roles: {prefill: [}\n");
  REQUIRE(p.size() == 1);
  CHECK(p[0].path.empty());
  CAPTURE(p[0].message);
  CHECK(p[0].message.starts_with("line 1, column 19: "));  // the file is named once, in the header
  p = parse_problems("roles: {}\n---\nroles: {}\n");
  REQUIRE(p.size() == 1);
  CHECK(p[0].message.find("2 YAML documents") != std::string::npos);
  p = parse_problems("roles: {a: 1}\nroles: {b: 2}\n");  // duplicate keys are an error, not last-wins
  REQUIRE(p.size() == 1);
  p = parse_problems("- a\n- b\n");
  REQUIRE(p.size() == 1);
  CHECK(p[0].message.find("must be a mapping") != std::string::npos);
}

TEST_CASE("overrides reach the rendered roles") {
  const auto iss = render_with(R"(roles:
  prefill:
    resources: {requests: {cpu: "32"}, limits: {memory: 512Gi, example.com/fpga: "1"}}
    labels: {team: llm}
    annotations: {example.com/owner: alice}
    nodeSelector: {example.com/pool: llm}
    tolerations: [{key: dedicated, operator: Exists, effect: NoSchedule}]
    volumes: [{name: cache, hostPath: {path: /data/cache, type: DirectoryOrCreate}}]
    volumeMounts:
    - {name: cache, mountPath: /root/.cache}
    - {name: weight-mount, mountPath: /weights-too, readOnly: true}
    faultScheduling: force
    faultRetryTimes: 3
  decode:
    gangSchedule: false
    faultScheduling: "off"
  coordinator:
    labels: {team: gateway}
    tolerations: [{key: dedicated, operator: Exists, effect: NoSchedule}]
)");
  const auto& prefill = role_of(iss, "prefill");
  CHECK(pod_labels_of(prefill).at("team") == "llm");
  CHECK(pod_labels_of(prefill).at("fault-scheduling") == "force");
  CHECK(pod_labels_of(prefill).at("fault-retry-times") == "3");
  CHECK(pod_labels_of(prefill).at("ring-controller.atlas") == "ascend-910b");  // the profile's stay
  CHECK(pod_annotations_of(prefill).at("example.com/owner") == "alice");
  CHECK(pod_annotations_of(prefill).at("huawei.com/schedule_policy") == "chip8-node8");
  CHECK(pod_spec_of(prefill).at("nodeSelector").at("example.com/pool") == "llm");
  CHECK(pod_spec_of(prefill).at("nodeSelector").at("accelerator-type") == "module-910b-8");
  CHECK(pod_spec_of(prefill).at("tolerations").at(0).at("key") == "dedicated");
  const auto& res = container_of(prefill).at("resources").as_object();
  CHECK(res.at("requests").at("cpu") == "32");
  CHECK(res.at("requests").at("memory") == "64Gi");  // untouched template value
  CHECK(res.at("limits").at("memory") == "512Gi");
  CHECK(res.at("limits").at("example.com/fpga") == "1");
  CHECK(res.at("limits").at("huawei.com/Ascend910") == "8");
  CHECK(volumes_of(prefill).at("cache").at("hostPath").at("path") == "/data/cache");
  CHECK(mounts_of(prefill).at("cache").at("mountPath") == "/root/.cache");
  CHECK(role_of(iss, "prefill").at("metadata").at("labels").at("infer.huawei.com/gang-schedule") == "true");

  const auto& decode = role_of(iss, "decode");
  CHECK(pod_labels_of(decode).at("fault-scheduling") == "off");
  CHECK(decode.at("metadata").at("labels").at("infer.huawei.com/gang-schedule") == "false");
  CHECK_FALSE(pod_labels_of(decode).contains("team"));

  const auto& coordinator = role_of(iss, "coordinator");
  CHECK(pod_labels_of(coordinator).at("team") == "gateway");
  CHECK(pod_spec_of(coordinator).at("tolerations").as_array().size() == 3);  // appended to the two built-in ones
}

TEST_CASE("gang scheduling from overrides: StatefulSets start in parallel; a one-pod gang is refused") {
  const auto iss = render_with("roles: {prefill: {gangSchedule: true}}", 4);
  CHECK(role_of(iss, "prefill").at("spec").at("podManagementPolicy") == "Parallel");
  CHECK(role_of(iss, "prefill").at("metadata").at("labels").at("infer.huawei.com/gang-schedule") == "true");
  const auto problems = render_problems("roles: {decode: {gangSchedule: true}}");  // decode: 1 pod per instance
  const auto* p = problem_at(problems, "roles.decode.gangSchedule");
  REQUIRE(p != nullptr);
  CHECK(p->message.find("motor_deploy_config.single_d_instance_pod_num is 1") != std::string::npos);
}

TEST_CASE("what the tool owns cannot be overridden: every collision is an error naming both sides") {
  struct Case {
    const char* yaml;
    const char* path;
    const char* message_part;
    const char* hardware = "800I_A2";
  };
  const Case cases[] = {
      {"roles: {prefill: {labels: {app: x}}}", "roles.prefill.labels.app", "app=mindie-motor-vllm-prefill"},
      {"roles: {prefill: {labels: {fault-scheduling: force}}}", "roles.prefill.labels.fault-scheduling",
       "fault-scheduling=grace that kubectl-mindie sets (set faultScheduling instead)"},
      {"roles: {decode: {labels: {fault-retry-times: \"1\"}}}", "roles.decode.labels.fault-retry-times",
       "set faultRetryTimes instead"},
      {"roles: {decode: {labels: {ring-controller.atlas: ascend-910}}}",
       "roles.decode.labels[\"ring-controller.atlas\"]", "ring-controller.atlas=ascend-910b"},
      {"roles: {controller: {labels: {infer.huawei.com/instanceset-name: x}}}",
       "roles.controller.labels[\"infer.huawei.com/instanceset-name\"]", "infer-operator"},
      {"roles: {controller: {labels: {pod-template-hash: x}}}", "roles.controller.labels.pod-template-hash",
       "controller sets it"},
      {"roles: {prefill: {annotations: {huawei.com/schedule_policy: chip4-node8}}}",
       "roles.prefill.annotations[\"huawei.com/schedule_policy\"]", "huawei.com/schedule_policy=chip8-node8"},
      {"roles: {prefill: {annotations: {sp-block: \"32\"}}}", "roles.prefill.annotations.sp-block", "sp-block=8",
       "800I_A3"},
      {"roles: {decode: {nodeSelector: {accelerator-type: module-a3-16}}}",
       "roles.decode.nodeSelector.accelerator-type", "accelerator-type=module-910b-8"},
      {"roles: {coordinator: {tolerations: [{key: node.kubernetes.io/unreachable, operator: Exists, effect: "
       "NoExecute, tolerationSeconds: 600}]}}",
       "roles.coordinator.tolerations[0].key", "\"tolerationSeconds\":30"},
      {"roles: {prefill: {volumes: [{name: dshm, emptyDir: {}}]}}", "roles.prefill.volumes[0].name",
       "built-in volume \"dshm\""},
      {"roles: {prefill: {volumeMounts: [{name: nope, mountPath: /x}]}}", "roles.prefill.volumeMounts[0].name",
       "no volume \"nope\""},
      {"roles: {decode: {volumes: [{name: c, emptyDir: {}}], volumeMounts: [{name: c, mountPath: /dev/shm}]}}",
       "roles.decode.volumeMounts[0].mountPath", "built-in mount of volume \"dshm\""},
      {"roles: {prefill: {resources: {limits: {huawei.com/Ascend910: \"4\"}}}}",
       "roles.prefill.resources.limits[\"huawei.com/Ascend910\"]", "motor_deploy_config.p_pod_npu_num"},
      {"roles: {controller: {resources: {requests: {huawei.com/Ascend910: \"1\"}}}}",
       "roles.controller.resources.requests[\"huawei.com/Ascend910\"]", "NPU resource"},
      {"roles: {prefill: {resources: {limits: {memory: 1Gi}}}}", "roles.prefill.resources.limits.memory",
       "request 64Gi would exceed its limit 1Gi"},
      {"roles: {controller: {faultScheduling: force}}", "roles.controller.faultScheduling", "Volcano"},
      {"roles: {kv-pool: {faultRetryTimes: 3}}", "roles.kv-pool.faultRetryTimes", "Volcano"},
      {"roles: {coordinator: {gangSchedule: false}}", "roles.coordinator.gangSchedule", "Volcano"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.yaml));
    const auto problems = render_problems(c.yaml, c.hardware);
    const validation::Problem* p = problem_at(problems, c.path);
    REQUIRE_MESSAGE(
        p != nullptr, "problems: " << [&] {
          std::string s;
          for (const auto& q : problems) s += q.path + ": " + q.message + "; ";
          return s;
        }());
    CHECK(p->message.find(c.message_part) != std::string::npos);
  }
  // Every role's collisions in one error.
  const auto all = render_problems(
      "roles: {prefill: {labels: {app: x}}, decode: {annotations: {huawei.com/schedule_policy: y}}, "
      "controller: {faultScheduling: off}}");
  CHECK(all.size() == 3);
}

TEST_CASE("motor-config stores the overrides file byte for byte; a script cannot take its key") {
  auto c = parse(valid_config());
  render::RenderOptions opts;
  const std::string text = "# ours\nroles:\n  prefill: {labels: {team: llm}}   \n";
  opts.overrides = overrides::parse_overrides(text, "ov.yaml");
  const auto cm = render::render_config_map(c, nullptr, opts);
  CHECK(cm.at("data").at(baseline::kOverridesKey).as_string() == text);
  CHECK_FALSE(render::render_config_map(c, nullptr, {}).at("data").as_object().contains(baseline::kOverridesKey));

  render::RenderOptions clash;
  clash.scripts = {{baseline::kOverridesKey, "x"}};
  CHECK_THROWS_AS(render::render_config_map(c, nullptr, clash), validation::ValidationError);
}

TEST_CASE("overrides of roles that are off (kv-pool, kv-conductor) are accepted and kept for when they are on") {
  const auto iss = render_with("roles: {kv-pool: {labels: {team: kv}}}");
  CHECK(role_of(iss, "kv-pool").at("replicas") == 0);
  CHECK(pod_labels_of(role_of(iss, "kv-pool")).at("team") == "kv");
}
