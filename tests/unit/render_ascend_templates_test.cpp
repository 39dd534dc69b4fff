// The built-in Ascend templates, per hardware profile and engine type: scheduling (Volcano, node selection, gang),
// MindCluster fault rescheduling, NPU and CPU/memory resources, host mounts, probes, tolerations, identity and
// security context. What a pod needs to start a MindIE engine on an Atlas node (issue 8) and the profiles as data
// (issue 3).
#include <doctest/doctest.h>

#include <set>

#include "config_test_support.h"
#include "kube/names.h"
#include "mindie/manifests.h"
#include "mindie/overrides.h"
#include "render_test_support.h"

using namespace mindie;
using namespace mindie::test;
namespace json = boost::json;

namespace {

using hardware::SpBlockRule;
struct ProfileCase {
  const char* name;
  const char* accelerator_type;
  int npus_per_node;
  const char* schedule_policy;
  SpBlockRule sp_block;     // infer_service_set pod templates
  SpBlockRule md_sp_block;  // multi_deployment engine Deployments
  bool a5;                  // huawei.com/npu, accelerator huawei-npu, no ring-controller.atlas
};
// A2/A3 from MindCluster's node labels; A5 from PyMotor's deployer 7d15c04 (lib/constant.py), policies per type.
constexpr ProfileCase kProfiles[] = {
    {"800I_A2", "module-910b-8", 8, "chip8-node8", SpBlockRule::None, SpBlockRule::None, false},
    {"800I_A3", "module-a3-16", 16, "chip2-node16", SpBlockRule::PerPod, SpBlockRule::PerInstance, false},
    {"900_A3_SuperPoD", "module-a3-16-super-pod", 16, "chip2-node16-sp", SpBlockRule::PerInstance,
     SpBlockRule::PerInstance, false},
    {"350-Atlas-8", "350-Atlas-8", 8, "chip1-node8", SpBlockRule::PerPod, SpBlockRule::PerInstance, true},
    {"350-Atlas-16", "350-Atlas-16", 16, "chip1-node16", SpBlockRule::PerPod, SpBlockRule::PerInstance, true},
    {"350-Atlas-4p-8", "350-Atlas-4p-8", 8, "chip4-node8", SpBlockRule::PerPod, SpBlockRule::PerInstance, true},
    {"350-Atlas-4p-16", "350-Atlas-4p-16", 16, "chip4-node16", SpBlockRule::PerPod, SpBlockRule::PerInstance, true},
    {"850-Atlas-8p-8", "850-Atlas-8p-8", 8, "chip8-node8", SpBlockRule::PerPod, SpBlockRule::PerInstance, true},
    {"850-SuperPod-Atlas-8", "850-SuperPod-Atlas-8", 8, "chip8-node8-sp", SpBlockRule::PerPod, SpBlockRule::PerInstance,
     true},
    {"950-SuperPod-Atlas-8", "950-SuperPod-Atlas-8", 8, "chip8-node8-ra64-sp", SpBlockRule::PerPod,
     SpBlockRule::PerInstance, true},
};
const char* npu_resource(const ProfileCase& p) { return p.a5 ? "huawei.com/npu" : "huawei.com/Ascend910"; }
const char* accelerator(const ProfileCase& p) { return p.a5 ? "huawei-npu" : "huawei-Ascend910"; }

// A config on `profile` with 2 prefill pods of NPUs/2 each and 1 decode pod of all NPUs.
json::object config_for(const ProfileCase& p, const char* engine_type = "vllm") {
  auto cfg = valid_config();
  deploy_of(cfg)["hardware_type"] = p.name;
  deploy_of(cfg)["single_p_instance_pod_num"] = 2;
  deploy_of(cfg)["p_pod_npu_num"] = p.npus_per_node / 2;
  deploy_of(cfg)["d_pod_npu_num"] = p.npus_per_node;
  cfg["motor_engine_prefill_config"].as_object()["engine_type"] = engine_type;
  cfg["motor_engine_decode_config"].as_object()["engine_type"] = engine_type;
  return cfg;
}

long double quantity(const json::value& v) {
  auto q = kube::parse_quantity(v.is_string() ? std::string(v.as_string()) : json::serialize(v));
  REQUIRE(q.has_value());
  return *q;
}

bool field_ref(const json::object& env, std::string_view path) {
  const auto* vf = env.if_contains("valueFrom");
  return vf && is_str(vf->at("fieldRef").at("fieldPath"), path);
}

// What every container of every role carries (issue 8, "All containers").
void check_common_container(const json::object& role) {
  const std::string name(role.at("name").as_string());
  CAPTURE(name);
  CHECK(field_ref(env_entry(role, "POD_IP"), "status.podIP"));
  CHECK(field_ref(env_entry(role, "HOST_IP"), "status.hostIP"));
  CHECK(env_entry(role, "CONFIGMAP_PATH").at("value") == "/mnt/configmap");
  CHECK(env_entry(role, "CONFIG_PATH").at("value") == "/usr/local/Ascend/pyMotor/conf");
  const auto& cmd = container_of(role).at("command").as_array();
  CHECK(cmd.back().as_string().find("source /mnt/configmap/boot.sh") != json::string::npos);
  const auto vols = volumes_of(role);
  CHECK(vols.at("motor-config").at("configMap").at("name") == "motor-config");
  CHECK(vols.at("motor-config").at("configMap").at("defaultMode") == 0550);
  CHECK(mounts_of(role).at("motor-config").at("mountPath") == "/mnt/configmap");
  CHECK(vols.at("coredump").at("hostPath").at("path") == "/var/coredump");
  CHECK(mounts_of(role).count("log-path") == 1);
  CHECK(pod_spec_of(role).at("terminationGracePeriodSeconds").as_int64() <= 30);
  // Identity: the ServiceAccount only on the controller; no token anywhere else.
  const auto& pod = pod_spec_of(role);
  if (name == "controller") {
    CHECK(pod.at("serviceAccountName") == "mindie-motor-controller");
    CHECK_FALSE(pod.contains("automountServiceAccountToken"));
  } else {
    CHECK_FALSE(pod.contains("serviceAccountName"));
    CHECK(pod.at("automountServiceAccountToken") == false);
  }
  // Resources: CPU and memory requested and limited, requests within limits.
  const auto& res = container_of(role).at("resources").as_object();
  for (const char* r : {"cpu", "memory"}) {
    CAPTURE(r);
    CHECK(quantity(res.at("requests").at(r)) <= quantity(res.at("limits").at(r)));
  }
}

void check_restricted(const json::object& role) {
  const auto& sc = container_of(role).at("securityContext").as_object();
  CHECK(sc.at("allowPrivilegeEscalation") == false);
  CHECK(sc.at("capabilities").at("drop") == json::array{"ALL"});
  CHECK_FALSE(sc.contains("privileged"));
}

}  // namespace

TEST_CASE("hardware profiles are data: the embedded file defines 800I_A2, 800I_A3, the A3 SuperPoD and seven A5") {
  const auto& profiles = hardware::hardware_profiles();
  REQUIRE(profiles.size() == std::size(kProfiles));
  for (const auto& want : kProfiles) {
    CAPTURE(want.name);
    const auto* p = hardware::find_hardware_profile(want.name);
    REQUIRE(p != nullptr);
    CHECK(p->accelerator_type == want.accelerator_type);
    CHECK(p->max_npus_per_pod == want.npus_per_node);
    CHECK(p->npu_resource == npu_resource(want));
    CHECK(p->schedule_policy == want.schedule_policy);
    CHECK(p->sp_block.pod_template == want.sp_block);
    CHECK(p->sp_block.multi_deployment == want.md_sp_block);
    // single_container: the pod's NPUs wherever there are logical SuperPoDs.
    CHECK(p->sp_block.single_container ==
          (want.md_sp_block == SpBlockRule::None ? SpBlockRule::None : SpBlockRule::PerPod));
    CHECK(p->sp_block.any() == (want.sp_block != SpBlockRule::None));
    CHECK(p->mf_transfer_protocol == (std::string(want.name) == "800I_A2" ? "device_rdma" : "sdma"));
    CHECK(p->node_selector == std::vector<std::pair<std::string, std::string>>{
                                  {"accelerator", accelerator(want)}, {"accelerator-type", want.accelerator_type}});
    if (want.a5)  // A5 has no ranktable: no label that makes ascend-operator generate one
      CHECK(p->pod_labels.empty());
    else
      CHECK(p->pod_labels ==
            std::vector<std::pair<std::string, std::string>>{{"ring-controller.atlas", "ascend-910b"}});
  }
  CHECK(hardware::find_hardware_profile("800i_a2") == nullptr);
  CHECK(manifests::embedded().count("hardware_profiles.yaml") == 1);
}

TEST_CASE("an unknown hardware_type lists the known profiles") {
  auto cfg = valid_config();
  deploy_of(cfg)["hardware_type"] = "800I_A5";
  const auto problems = problems_of(cfg);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == "motor_deploy_config.hardware_type");
  CHECK(problems[0].message ==
        "must be one of 800I_A2, 800I_A3, 900_A3_SuperPoD, 350-Atlas-8, 350-Atlas-16, 350-Atlas-4p-8, "
        "350-Atlas-4p-16, 850-Atlas-8p-8, 850-SuperPod-Atlas-8, 950-SuperPod-Atlas-8; got \"800I_A5\"");
}

TEST_CASE("adding a profile is a data change: the parser takes any well-formed profile and rejects the rest") {
  const std::string extra = R"(profiles:
- name: 800T_A2
  npus_per_node: 8
  npu_resource: huawei.com/Ascend910
  node_selector: {accelerator: huawei-Ascend910, accelerator-type: module-910b-8}
  sp_block: none
  mf_transfer_protocol: device_rdma
)";
  auto parsed = hardware::parse_hardware_profiles(extra, "extra.yaml");
  REQUIRE(parsed.size() == 1);
  CHECK(parsed[0].name == "800T_A2");
  CHECK(parsed[0].schedule_policy.empty());
  CHECK(parsed[0].pod_labels.empty());
  CHECK(parsed[0].mf_transfer_protocol == "device_rdma");

  const std::string bad = R"(profiles:
- name: A
  npus_per_node: 0
  npu_resource: "not a resource"
  node_selector: {"bad key!": x}
  sp_block: sometimes
  mf_transfer_protocol: tcp
  colour: blue
- name: A
  npus_per_node: 8
  npu_resource: huawei.com/Ascend910
  node_selector: {accelerator: huawei-Ascend910}
  sp_block: none
)";
  try {
    hardware::parse_hardware_profiles(bad, "bad.yaml");
    FAIL("expected validation::ValidationError");
  } catch (const validation::ValidationError& e) {
    const std::string what = e.what();
    for (const char* p :
         {"profiles.A.colour: is not a known key", "profiles.A.npus_per_node", "profiles.A.npu_resource",
          "profiles.A.node_selector[\"bad key!\"]", "profiles.A.sp_block", "profiles.A.mf_transfer_protocol: must be",
          "profiles.A.mf_transfer_protocol: is required", "profiles.A.name: duplicate"}) {
      CAPTURE(std::string(p));
      CAPTURE(what);
      CHECK(what.find(p) != std::string::npos);
    }
  }
  CHECK_THROWS_AS(hardware::parse_hardware_profiles("profiles: []", "empty.yaml"), validation::ValidationError);
}

TEST_CASE("engines per profile: Volcano, fault rescheduling, node selection, NPUs, SuperPoD annotations, mounts") {
  for (const auto& p : kProfiles) {
    CAPTURE(p.name);
    const auto iss = render_iss(parse(config_for(p)));
    for (const char* role_name : {"prefill", "decode"}) {
      CAPTURE(role_name);
      const auto& role = role_of(iss, role_name);
      const int pods = std::string(role_name) == "prefill" ? 2 : 1;
      const int npus = std::string(role_name) == "prefill" ? p.npus_per_node / 2 : p.npus_per_node;
      const auto& pod = pod_spec_of(role);
      const auto labels = pod_labels_of(role);
      const auto annotations = pod_annotations_of(role);

      // Workload: a StatefulSet per instance, pods started together, gang-scheduled when there are several.
      CHECK(role.at("workload").at("kind") == "StatefulSet");
      CHECK(role.at("spec").at("podManagementPolicy") == "Parallel");
      CHECK(role.at("metadata").at("labels").at("infer.huawei.com/gang-schedule") == (pods > 1 ? "true" : "false"));

      // Scheduling and fault rescheduling.
      CHECK(pod.at("schedulerName") == "volcano");
      CHECK(labels.at("fault-scheduling") == "grace");
      CHECK(labels.at("fault-retry-times") == "100");
      CHECK(labels.contains("ring-controller.atlas") == !p.a5);
      if (!p.a5) CHECK(labels.at("ring-controller.atlas") == "ascend-910b");
      CHECK(pod.at("nodeSelector") ==
            json::object{{"accelerator", accelerator(p)}, {"accelerator-type", p.accelerator_type}});
      CHECK(is_str(annotations.at("huawei.com/schedule_policy"), p.schedule_policy));
      switch (p.sp_block) {
        case hardware::SpBlockRule::None: CHECK_FALSE(annotations.contains("sp-block")); break;
        case hardware::SpBlockRule::PerPod:
          CHECK(annotations.at("sp-block").as_string() == std::to_string(npus));
          break;
        case hardware::SpBlockRule::PerInstance:
          CHECK(annotations.at("sp-block").as_string() == std::to_string(npus * pods));
          break;
      }

      // NPUs: requests = limits = NPUs per pod; CPU and memory sized for an LLM engine.
      const auto& res = container_of(role).at("resources").as_object();
      CHECK(res.at("requests").at(npu_resource(p)).as_string() == std::to_string(npus));
      CHECK(res.at("limits").at(npu_resource(p)).as_string() == std::to_string(npus));
      if (p.a5) CHECK_FALSE(res.at("limits").as_object().contains("huawei.com/Ascend910"));
      CHECK(quantity(res.at("requests").at("cpu")) >= 16);
      CHECK(quantity(res.at("requests").at("memory")) >= 64.0L * 1024 * 1024 * 1024);

      // Mounts: shared memory in RAM, the host's HCCN tool and config, the driver, dumps, logs, weights.
      const auto vols = volumes_of(role);
      const auto mounts = mounts_of(role);
      CHECK(vols.at("dshm").at("emptyDir").at("medium") == "Memory");
      CHECK(mounts.at("dshm").at("mountPath") == "/dev/shm");
      CHECK(vols.at("hccn-tool").at("hostPath").at("path") == "/usr/local/Ascend/driver/tools/hccn_tool");
      CHECK(mounts.at("hccn-tool").at("readOnly") == true);
      CHECK(vols.at("hccn-conf").at("hostPath").at("path") == "/etc/hccn.conf");
      CHECK(mounts.at("hccn-conf").at("mountPath") == "/etc/hccn.conf");
      CHECK(vols.at("ascend-driver").at("hostPath").at("path") == "/usr/local/Ascend/driver");
      CHECK(mounts.at("ascend-driver").at("readOnly") == true);
      CHECK(mounts.at("coredump").at("mountPath") == "/var/coredump");
      CHECK(vols.at("log-path").at("hostPath").at("path") == "/root/ascend/log");
      CHECK(vols.at("weight-mount").at("hostPath").at("path") == "/mnt/weight");
      CHECK(mounts.at("weight-mount").at("mountPath") == "/mnt/weight");

      check_common_container(role);
      check_restricted(role);
      CHECK_FALSE(env_entry(role, "POD_NAMESPACE").contains("name"));
    }
  }
}

// PyMotor's deployer 7d15c04 (U1): sp-block is NPUs per pod on infer_service_set templates, pods x NPUs on
// multi_deployment engine Deployments, the pod's NPUs on the single_container Deployment; A3 and A5 alike.
TEST_CASE("sp-block per deploy mode: on multi_deployment and single_container Deployments, not their pods") {
  for (const auto& p : kProfiles) {
    CAPTURE(p.name);
    auto cfg = config_for(p);
    deploy_of(cfg)["deploy_mode"] = "multi_deployment";
    const auto objs = render::render_multi_workloads(parse(cfg), {});
    int engines = 0;
    for (const auto& o : objs) {
      if (o.at("kind") != "Deployment") continue;
      const std::string name(o.at("metadata").at("name").as_string());
      CAPTURE(name);
      const auto& pod_md = o.at("spec").at("template").at("metadata").as_object();
      const auto* pod_ann = pod_md.if_contains("annotations");
      CHECK_FALSE((pod_ann && pod_ann->as_object().contains("sp-block")));
      const auto* ann = o.at("metadata").as_object().if_contains("annotations");
      const bool engine = name == "vllm-p0" || name == "vllm-d0";
      if (engine) ++engines;
      if (!engine || p.md_sp_block == SpBlockRule::None) {
        CHECK_FALSE((ann && ann->as_object().contains("sp-block")));
        continue;
      }
      // prefill: 2 pods x NPUs/2; decode: 1 pod x all NPUs.
      const int want = name == "vllm-p0" ? 2 * (p.npus_per_node / 2) : p.npus_per_node;
      REQUIRE(ann);
      CHECK(is_str(ann->at("sp-block"), std::to_string(want)));
      const auto& limits = o.at("spec").at("template").at("spec").at("containers").at(0).at("resources").at("limits");
      CHECK(limits.as_object().contains(npu_resource(p)));
    }
    CHECK(engines == 2);

    deploy_of(cfg)["deploy_mode"] = "single_container";
    const auto sc = render::render_single_container_workloads(parse(cfg), {});
    const auto d = find_kind(sc, "Deployment");
    const auto* ann = d.at("metadata").as_object().if_contains("annotations");
    if (p.md_sp_block == SpBlockRule::None) {
      CHECK_FALSE((ann && ann->as_object().contains("sp-block")));
    } else {
      REQUIRE(ann);
      CHECK(is_str(ann->at("sp-block"), std::to_string(p.npus_per_node)));  // the larger of p and d NPUs
    }
    const auto& sc_pod = d.at("spec").at("template").as_object();
    CHECK(sc_pod.at("spec").at("nodeSelector").at("accelerator") == accelerator(p));
    CHECK(sc_pod.at("metadata").at("labels").as_object().contains("ring-controller.atlas") == !p.a5);
  }
}

TEST_CASE("sglang on A5 moves KV blocks over sdma, as on A3; A2 over device_rdma") {
  for (const char* name : {"800I_A2", "350-Atlas-8", "950-SuperPod-Atlas-8"}) {
    CAPTURE(name);
    const ProfileCase* p = nullptr;
    for (const auto& c : kProfiles)
      if (std::string(c.name) == name) p = &c;
    REQUIRE(p);
    const auto iss = render_iss(parse(config_for(*p, "sglang")));
    CHECK(env_entry(role_of(iss, "prefill"), "ASCEND_MF_TRANSFER_PROTOCOL").at("value") ==
          (p->a5 ? "sdma" : "device_rdma"));
  }
}

TEST_CASE("the sp_block field of a profile: none, or all three deploy modes each none, pod or instance") {
  const auto profile = [](const std::string& sp_block) {
    return "profiles:\n- name: X\n  npus_per_node: 8\n  npu_resource: huawei.com/npu\n"
           "  node_selector: {accelerator: huawei-npu}\n  mf_transfer_protocol: sdma\n  sp_block: " +
           sp_block + "\n";
  };
  auto ok = hardware::parse_hardware_profiles(
      profile("{infer_service_set: instance, multi_deployment: none, single_container: pod}"), "x.yaml");
  CHECK(ok.at(0).sp_block.pod_template == SpBlockRule::PerInstance);
  CHECK(ok.at(0).sp_block.multi_deployment == SpBlockRule::None);
  CHECK(ok.at(0).sp_block.single_container == SpBlockRule::PerPod);
  CHECK_FALSE(hardware::parse_hardware_profiles(profile("none"), "x.yaml").at(0).sp_block.any());
  for (const auto& [text, want] : std::vector<std::pair<std::string, std::string>>{
           {"pod",
            "profiles.X.sp_block: must be none or a mapping of infer_service_set, multi_deployment and "
            "single_container to none, pod or instance; got string \"pod\""},
           {"{infer_service_set: pod, multi_deployment: pod}", "profiles.X.sp_block.single_container: is required"},
           {"{infer_service_set: pod, multi_deployment: pod, single_container: all}",
            "profiles.X.sp_block.single_container: must be none, pod or instance; got \"all\""},
           {"{infer_service_set: pod, multi_deployment: pod, single_container: pod, aibrix: pod}",
            "profiles.X.sp_block.aibrix"}}) {
    CAPTURE(text);
    try {
      hardware::parse_hardware_profiles(profile(text), "x.yaml");
      FAIL("expected validation::ValidationError");
    } catch (const validation::ValidationError& e) {
      CAPTURE(std::string(e.what()));
      CHECK(std::string(e.what()).find(want) != std::string::npos);
    }
  }
}

TEST_CASE("controller and coordinator: probe.sh probes, fast node-failure tolerations, identity, no Ascend bits") {
  for (const auto& p : kProfiles) {
    CAPTURE(p.name);
    const auto iss = render_iss(parse(config_for(p)));
    for (const char* role_name : {"controller", "coordinator"}) {
      CAPTURE(role_name);
      const auto& role = role_of(iss, role_name);
      CHECK(role.at("workload").at("kind") == "Deployment");
      for (const auto& [probe, arg] : {std::pair{"startupProbe", "startup"}, std::pair{"readinessProbe", "readiness"},
                                       std::pair{"livenessProbe", "liveness"}}) {
        CAPTURE(probe);
        const auto& cmd = container_of(role).at(probe).at("exec").at("command").as_array();
        CHECK(cmd == json::array{"/bin/bash", "/mnt/configmap/probe.sh", arg});
      }
      std::set<std::string> tolerated;
      for (const auto& t : pod_spec_of(role).at("tolerations").as_array()) {
        CHECK(t.at("effect") == "NoExecute");
        CHECK(t.at("tolerationSeconds").as_int64() <= 60);  // Kubernetes' default is 300 s
        tolerated.insert(std::string(t.at("key").as_string()));
      }
      CHECK(tolerated == std::set<std::string>{"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"});
      CHECK(field_ref(env_entry(role, "POD_NAMESPACE"), "metadata.namespace"));
      // Not scheduled by Volcano, no NPUs, no fault-rescheduling labels, no node pinning.
      const auto& pod = pod_spec_of(role);
      CHECK_FALSE(pod.contains("schedulerName"));
      CHECK_FALSE(pod.contains("nodeSelector"));
      CHECK_FALSE(pod_labels_of(role).contains("fault-scheduling"));
      CHECK_FALSE(container_of(role).at("resources").at("limits").as_object().contains("huawei.com/Ascend910"));
      CHECK_FALSE(role.at("metadata").at("labels").as_object().contains("infer.huawei.com/gang-schedule"));
      check_common_container(role);
      check_restricted(role);
    }
    for (const char* role_name : {"kv-pool", "kv-conductor"}) {
      CAPTURE(role_name);
      check_common_container(role_of(iss, role_name));
      check_restricted(role_of(iss, role_name));
    }
  }
}

TEST_CASE("sglang engines run privileged (and only they); vllm and mindie-llm stay restricted") {
  for (const char* engine : {"vllm", "mindie-llm", "sglang"}) {
    CAPTURE(engine);
    const auto iss = render_iss(parse(config_for(kProfiles[1], engine)));
    for (const char* role_name : {"prefill", "decode"}) {
      const auto& sc = container_of(role_of(iss, role_name)).at("securityContext").as_object();
      if (std::string(engine) == "sglang") {
        CHECK(sc == json::object{{"privileged", true}});
      } else {
        CHECK(sc.at("allowPrivilegeEscalation") == false);
        CHECK(sc.at("seccompProfile").at("type") == "Unconfined");
      }
    }
    check_restricted(role_of(iss, "controller"));
    check_restricted(role_of(iss, "coordinator"));
  }
}

TEST_CASE("gang scheduling follows pods per instance: one-pod instances are not gang-scheduled") {
  auto cfg = config_for(kProfiles[0]);
  deploy_of(cfg)["single_p_instance_pod_num"] = 1;
  deploy_of(cfg)["single_d_instance_pod_num"] = 4;
  const auto iss = render_iss(parse(cfg));
  CHECK(role_of(iss, "prefill").at("metadata").at("labels").at("infer.huawei.com/gang-schedule") == "false");
  CHECK(role_of(iss, "decode").at("metadata").at("labels").at("infer.huawei.com/gang-schedule") == "true");
  CHECK(role_of(iss, "decode").at("spec").at("replicas") == 4);
}
