// Parsing and validation of user_config.json. Every rule is checked and every problem collected before anything is
// thrown, so an operator fixes a file in one round instead of one error per run.
#include "mindie/config.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "kube/names.h"
#include "util/json_path.h"
#include "util/json_text.h"
#include "util/strings.h"
#include "validation/json_document.h"

namespace mindie::config {
namespace json = boost::json;
using util::child_path;
using validation::Reader;

std::string_view to_string(DeployMode m) {
  switch (m) {
    case DeployMode::InferServiceSet: return "infer_service_set";
    case DeployMode::MultiDeployment: return "multi_deployment";
    case DeployMode::SingleContainer: return "single_container";
  }
  return "infer_service_set";
}

std::optional<DeployMode> deploy_mode_from_string(std::string_view s) {
  for (auto m : {DeployMode::InferServiceSet, DeployMode::MultiDeployment, DeployMode::SingleContainer})
    if (to_string(m) == s) return m;
  return std::nullopt;
}

namespace {

// Engine types deploy.py knows and the engine base name each maps to (ConfigMap/runtime naming).
std::optional<std::string> engine_base_of(std::string_view engine_type) {
  if (engine_type == "vllm") return "vllm";
  if (engine_type == "mindie-llm") return "mindie-server";
  if (engine_type == "sglang") return "sglang";
  return std::nullopt;
}

// deploy.py's default engine type when the prefill section names none.
constexpr std::string_view kDefaultEngineType = "mindie-llm";
// deploy.py's log hostPath when no logging_config.host_log_dir is given.
constexpr std::string_view kDefaultHostLogDir = "/root/ascend/log";

// logging_config.host_log_dir of a component section, default kDefaultHostLogDir.
std::string read_host_log_dir(Reader& r, const json::object* section, const std::string& path) {
  const json::object* logging = r.object(section, path, "logging_config", false);
  return r.host_path(logging, child_path(path, "logging_config"), "host_log_dir", false)
      .value_or(std::string(kDefaultHostLogDir));
}

// PD heterogeneous scheduling (PyMotor 7d15c04 U2): prefill and decode pods select nodes by one more label. Upstream
// reads enable_pd_heterogeneous as "is JSON true" and checks nothing; here a non-boolean, a key or value that is
// not label syntax, or a key that would overwrite the hardware profile's own selector is an error.
void read_pd_heterogeneous(Reader& r, const json::object* deploy, UserConfig& cfg) {
  const std::string path = "motor_deploy_config";
  cfg.pd_heterogeneous = r.boolean(deploy, path, "enable_pd_heterogeneous").value_or(false);
  if (auto key = r.string(deploy, path, "pd_heterogeneous_label_key", false)) {
    if (!kube::is_qualified_name(*key))
      r.add(child_path(path, "pd_heterogeneous_label_key"),
            "must be a label key: " + std::string(kube::kQualifiedNameRule) + "; got \"" + *key + "\"");
    else if (cfg.hardware && std::any_of(cfg.hardware->node_selector.begin(), cfg.hardware->node_selector.end(),
                                         [&](const auto& kv) { return kv.first == *key; }))
      r.add(child_path(path, "pd_heterogeneous_label_key"), "must not be \"" + *key + "\": hardware_type " +
                                                                cfg.hardware->name +
                                                                " selects its nodes by that label already");
    else cfg.pd_hetero_label_key = *key;
  }
  for (auto [key, out] : {std::pair{"pd_heterogeneous_prefill_label_value", &cfg.pd_hetero_prefill_value},
                          std::pair{"pd_heterogeneous_decode_label_value", &cfg.pd_hetero_decode_value}}) {
    auto value = r.string(deploy, path, key, false);
    if (!value) continue;
    if (value->empty() || !kube::is_label_value(*value))
      r.add(child_path(path, key),
            "must be a non-empty label value: at most 63 characters of letters, digits, "
            "'-', '_' and '.', starting and ending with a letter or digit; got \"" +
                *value + "\"");
    else *out = *value;
  }
  if (!cfg.pd_heterogeneous) return;
  // Where there are no prefill and decode pods, the switch does nothing (upstream: silently, or a log line in MD).
  if (cfg.deploy_mode == DeployMode::SingleContainer)
    cfg.notices.push_back(path +
                          ".enable_pd_heterogeneous has no effect in deploy_mode single_container (one pod "
                          "runs prefill and decode)");
  else if (cfg.hybrid())
    cfg.notices.push_back(path +
                          ".enable_pd_heterogeneous has no effect with hybrid_instances_num (the union role "
                          "runs prefill and decode together)");
}

// Encode instances (PyMotor 7d15c04 U5): multi_deployment renders one Deployment per encode instance; the other
// modes have no encode workload, so a count there is an error (upstream stores and ignores it). Needs
// cfg.deploy_mode and cfg.hardware read.
void read_encode(Reader& r, const json::object* deploy, UserConfig& cfg) {
  const std::string path = "motor_deploy_config";
  if (!deploy || !deploy->contains("e_instances_num")) {
    for (const char* key : {"single_e_instance_pod_num", "e_pod_npu_num"})
      if (deploy && deploy->contains(key))
        r.add(child_path(path, key), "is an encode setting: it needs e_instances_num");
    return;
  }
  if (auto n = r.integer(deploy, path, "e_instances_num", 0, 16, true)) cfg.e_instances = static_cast<int>(*n);
  if (cfg.deploy_mode != DeployMode::MultiDeployment) {
    if (cfg.e_instances > 0)
      r.add(child_path(path, "e_instances_num"),
            "encode instances run in deploy_mode multi_deployment only (PyMotor's EPD guide); deploy_mode is " +
                std::string(to_string(cfg.deploy_mode)) + ": set deploy_mode multi_deployment, or remove the key");
    return;
  }
  cfg.encode = true;
  if (auto n = r.integer(deploy, path, "single_e_instance_pod_num", 1, 64, false))
    cfg.e_pods_per_instance = static_cast<int>(*n);
  const int max_npus = cfg.hardware ? cfg.hardware->max_npus_per_pod : 16;
  if (auto n = r.integer(deploy, path, "e_pod_npu_num", 1, max_npus, true)) cfg.e_npus_per_pod = static_cast<int>(*n);
}

// The observability nodePorts (PyMotor 7d15c04 §U6: the coordinator's and the controller's port 1027 Services) and
// the rule that the three nodePorts differ. Needs cfg.deploy_mode and cfg.infer_node_port read. infer_service_set
// compares the ports it renders (defaults included), multi_deployment the ones the file fixes (Kubernetes
// allocates distinct ones for the rest); single_container has no observability Service, so the keys are refused.
void read_obs_node_ports(Reader& r, const json::object* deploy, UserConfig& cfg) {
  const std::string path = "motor_deploy_config";
  if (auto n = r.integer(deploy, path, "obs_node_port", 30000, 32767, false)) cfg.obs_node_port = static_cast<int>(*n);
  if (auto n = r.integer(deploy, path, "controller_obs_node_port", 30000, 32767, false))
    cfg.controller_obs_node_port = static_cast<int>(*n);
  if (cfg.deploy_mode == DeployMode::SingleContainer) {
    for (const char* key : {"obs_node_port", "controller_obs_node_port"})
      if (deploy && deploy->contains(key))
        r.add(child_path(path, key),
              "deploy_mode single_container has no observability Service (its one Service "
              "is the coordinator's inference port 1025): remove the key");
    return;
  }
  const bool iss = cfg.deploy_mode == DeployMode::InferServiceSet;
  struct Port {
    const char* key;
    int set;
    int fallback;
  };
  const Port ports[] = {{"infer_node_port", cfg.infer_node_port, kDefaultInferNodePort},
                        {"obs_node_port", cfg.obs_node_port, kDefaultObsNodePort},
                        {"controller_obs_node_port", cfg.controller_obs_node_port, kDefaultControllerObsNodePort}};
  const auto shown = [&](const Port& p) {
    return child_path(path, p.key) + (p.set ? "" : " (absent: the default " + std::to_string(p.fallback) + ")");
  };
  for (std::size_t i = 0; i < std::size(ports); ++i)
    for (std::size_t j = i + 1; j < std::size(ports); ++j) {
      const Port& a = ports[i];
      const Port& b = ports[j];
      const int pa = a.set ? a.set : iss ? a.fallback : 0;
      const int pb = b.set ? b.set : iss ? b.fallback : 0;
      if (pa == 0 || pa != pb) continue;
      // Reported at the key the file sets (the later one when both are set).
      r.add(child_path(path, (b.set ? b : a).key), "nodePort " + std::to_string(pa) + " is used twice: " + shown(a) +
                                                       " and " + shown(b) + " must differ (one nodePort per Service)");
    }
}

// motor_deploy_config's job_id (the namespace), deploy_mode, image and hardware_type.
void read_identity(Reader& r, const json::object* deploy, const std::string& path, UserConfig& cfg) {
  if (auto job = r.string(deploy, path, "job_id", true)) {
    if (kube::is_dns1123_label(*job)) cfg.job_id = *job;
    else
      r.add(path + ".job_id",
            "must be a DNS-1123 label (it is the namespace): lower-case letters, digits and '-', starting and "
            "ending with a letter or digit, at most 63 characters; got \"" +
                *job + "\"");
  }

  if (auto mode = r.string(deploy, path, "deploy_mode", false)) {
    if (auto m = deploy_mode_from_string(*mode)) cfg.deploy_mode = *m;
    else
      r.add(path + ".deploy_mode",
            "must be one of infer_service_set, multi_deployment, single_container; got \"" + *mode + "\"");
  }
  // single_container names its Service "<job_id>-coordinator-service" (PyMotor's name, §U6): a DNS label of at
  // most 63 characters.
  if (cfg.deploy_mode == DeployMode::SingleContainer && cfg.job_id.size() > kMaxSingleContainerJobId)
    r.add(path + ".job_id", "is too long for deploy_mode single_container: its Service \"" + cfg.job_id +
                                "-coordinator-service\" would have " + std::to_string(cfg.job_id.size() + 20) +
                                " characters (at most 63), so job_id may have at most " +
                                std::to_string(kMaxSingleContainerJobId) + "; it has " +
                                std::to_string(cfg.job_id.size()));

  if (auto image = r.image(deploy, path, "image_name", true)) cfg.image_name = *image;

  if (auto hw = r.string(deploy, path, "hardware_type", true)) {
    cfg.hardware = hardware::find_hardware_profile(*hw);
    if (!cfg.hardware) {
      // The known models come from manifests/hardware_profiles.yaml, so the message follows the data.
      const std::string known = util::join(hardware::hardware_profiles(), ", ", &hardware::HardwareProfile::name);
      r.add(path + ".hardware_type", "must be one of " + known + "; got \"" + *hw + "\"");
    }
  }
}

// PD-hybrid (`deploy`, present, has hybrid_instances_num): one union role of hybrid_instances_num instances, prefill
// and decode at 0 (PyMotor's design).
void read_hybrid_counts(Reader& r, const json::object* deploy, const std::string& path, int max_npus, UserConfig& cfg) {
  if (auto n = r.integer(deploy, path, "hybrid_instances_num", 1, 16, true))
    cfg.hybrid_instances = static_cast<int>(*n);
  if (auto n = r.integer(deploy, path, "single_hybrid_instance_pod_num", 1, 64, false))
    cfg.hybrid_pods_per_instance = static_cast<int>(*n);
  if (auto n = r.integer(deploy, path, "hybrid_pod_npu_num", 1, max_npus, true))
    cfg.hybrid_npus_per_pod = static_cast<int>(*n);
  // infer_service_set renders a union role, multi_deployment one Deployment per union instance (PyMotor 7d15c04
  // U4); single_container's one pod has no union instances (upstream crashes on it, its X4).
  if (cfg.deploy_mode == DeployMode::SingleContainer)
    r.add(path + ".hybrid_instances_num",
          "PD-hybrid (union instances) needs deploy_mode infer_service_set or "
          "multi_deployment: single_container runs one pod with every component; "
          "remove hybrid_instances_num or change deploy_mode");
  // Mixing is ambiguous (which count does scale change?), so the p/d counts may only say 0.
  for (const char* key : {"p_instances_num", "d_instances_num"}) {
    const json::value* v = deploy->if_contains(key);
    if (v && !(v->is_int64() && v->get_int64() == 0))
      r.add(child_path(path, key), std::string("must be absent or 0 with hybrid_instances_num (PD-hybrid runs prefill "
                                               "and decode in one union role); got ") +
                                       r.describe(*v));
  }
  // Settings of the empty prefill/decode roles would be ignored at best; say so instead.
  for (const char* key : {"single_p_instance_pod_num", "single_d_instance_pod_num", "p_pod_npu_num", "d_pod_npu_num"})
    if (deploy->contains(key))
      r.add(child_path(path, key),
            "is a prefill/decode setting, unused with hybrid_instances_num (PD-hybrid): remove it "
            "(the union role uses single_hybrid_instance_pod_num and hybrid_pod_npu_num)");
  cfg.p_instances = cfg.d_instances = 0;
  // The empty prefill/decode roles' templates take the union's NPUs (their own settings are refused above).
  cfg.p_npus_per_pod = cfg.d_npus_per_pod = cfg.hybrid_npus_per_pod;
}

// Prefill and decode: instances, pods per instance and NPUs per pod.
void read_pd_counts(Reader& r, const json::object* deploy, const std::string& path, int max_npus, UserConfig& cfg) {
  // deploy.py and the coordinator accept 1..16 instances per engine role.
  if (auto n = r.integer(deploy, path, "p_instances_num", 1, 16, true)) cfg.p_instances = static_cast<int>(*n);
  if (auto n = r.integer(deploy, path, "d_instances_num", 1, 16, true)) cfg.d_instances = static_cast<int>(*n);
  for (const char* key : {"single_hybrid_instance_pod_num", "hybrid_pod_npu_num"})
    if (deploy && deploy->contains(key))
      r.add(child_path(path, key), "is a PD-hybrid setting: it needs hybrid_instances_num");
  // Pods per instance: one server per pod, so 64 bounds a super-pod sized instance and keeps typos
  // (e.g. 160) from requesting a cluster's worth of pods.
  if (auto n = r.integer(deploy, path, "single_p_instance_pod_num", 1, 64, false))
    cfg.p_pods_per_instance = static_cast<int>(*n);
  if (auto n = r.integer(deploy, path, "single_d_instance_pod_num", 1, 64, false))
    cfg.d_pods_per_instance = static_cast<int>(*n);
  // NPUs per pod cannot exceed what one server of the chosen hardware carries; without a known profile the
  // largest profile bounds the check so the type is still validated.
  if (auto n = r.integer(deploy, path, "p_pod_npu_num", 1, max_npus, true)) cfg.p_npus_per_pod = static_cast<int>(*n);
  if (auto n = r.integer(deploy, path, "d_pod_npu_num", 1, max_npus, true)) cfg.d_npus_per_pod = static_cast<int>(*n);
}

void read_deploy_section(Reader& r, const json::object* deploy, UserConfig& cfg) {
  const std::string path = "motor_deploy_config";
  read_identity(r, deploy, path, cfg);
  const bool hybrid = deploy && deploy->contains("hybrid_instances_num");
  const int max_npus = cfg.hardware ? cfg.hardware->max_npus_per_pod : 16;
  if (hybrid) read_hybrid_counts(r, deploy, path, max_npus, cfg);
  else read_pd_counts(r, deploy, path, max_npus, cfg);

  if (auto p = r.host_path(deploy, path, "weight_mount_path", false)) cfg.weight_mount_path = *p;
  // The coordinator's external NodePort (1025). Absent: infer_service_set takes PyMotor's 31015 (infer-operator
  // refuses a NodePort role Service without one), the other modes let Kubernetes allocate one. 30000..32767 is the
  // API server's default --service-node-port-range; the operator adds the InferService index, always 0 here.
  if (auto n = r.integer(deploy, path, "infer_node_port", 30000, 32767, false))
    cfg.infer_node_port = static_cast<int>(*n);
  read_obs_node_ports(r, deploy, cfg);

  const json::object* tls = r.object(deploy, path, "tls_config", false);
  r.object(tls, path + ".tls_config", "north_tls_config", false);
}

// The engine's model name (PyMotor 7d15c04, lib/utils.py resolve_model_name): engine_config's
// "served-model-name" for sglang, "served_model_name" otherwise (a string, or a list whose first entry is the name
// the engine answers to); else model_config.model_name; else "Unknown".
// `engine` is the section's engine_config (null when absent).
std::string read_model_name(Reader& r, const json::object* section, const json::object* engine, const std::string& path,
                            const std::string& engine_type) {
  const std::string key = engine_type == "sglang" ? "served-model-name" : "served_model_name";
  if (const json::value* v = engine ? engine->if_contains(key) : nullptr) {
    const std::string vpath = child_path(child_path(path, "engine_config"), key);
    // An empty name ("", [], [""]) means none: the fallbacks below (upstream's falsy test catches "" and []; its
    // [""] would name the model "", which no engine answers to).
    const json::value* name = v->is_array() ? (v->get_array().empty() ? nullptr : &v->get_array()[0]) : v;
    if (name && name->is_string() && !name->get_string().empty()) return std::string(name->get_string());
    if (v->is_array() && name && !name->is_string())
      r.add(vpath + "[0]", "must be a string (the model name), got " + r.describe(*name));
    else if (!v->is_array() && !v->is_string())
      r.add(vpath, "must be a model name (a string, or a list whose first entry is the name); got " + r.describe(*v));
  }
  const json::object* model = r.object(section, path, "model_config", false);
  if (auto name = r.string(model, child_path(path, "model_config"), "model_name", false); name && !name->empty())
    return *name;
  return "Unknown";
}

// The engine type of the engine section (`engine_section` at `engine_path`), which decode's and union's must match:
// sets cfg.engine_type, engine_base and the mf-store switch when it is one the product knows.
void read_engine_type(Reader& r, const json::object* engine_section, const std::string& engine_path,
                      const json::object* decode, const json::object* uni, UserConfig& cfg) {
  std::string engine_type(kDefaultEngineType);
  bool engine_type_ok = true;
  if (auto t = r.string(engine_section, engine_path, "engine_type", false)) {
    if (engine_base_of(*t)) {
      engine_type = *t;
    } else {
      engine_type_ok = false;
      r.add(child_path(engine_path, "engine_type"), "must be one of vllm, mindie-llm, sglang; got \"" + *t + "\"");
    }
  }
  for (auto [section, name] :
       {std::pair{decode, "motor_engine_decode_config"}, std::pair{uni, "motor_engine_union_config"}}) {
    if (section == engine_section) continue;
    const std::string path = name;
    if (auto t = r.string(section, path, "engine_type", false)) {
      if (!engine_base_of(*t))
        r.add(child_path(path, "engine_type"), "must be one of vllm, mindie-llm, sglang; got \"" + *t + "\"");
      else if (engine_type_ok && engine_section && *t != engine_type)
        r.add(child_path(path, "engine_type"),
              "must match " + engine_path + ".engine_type (\"" + engine_type + "\"); got \"" + *t + "\"");
    }
  }
  if (engine_type_ok) {
    cfg.engine_type = engine_type;
    cfg.engine_base = *engine_base_of(engine_type);
    cfg.mf_store = engine_type == "sglang";  // deploy.py: sglang engines get an mf-store
  }
}

// The prefill engine's bootstrap port (`prefill_engine`, its engine_config; null when absent).
void read_bootstrap_port(Reader& r, const json::object* prefill_engine, UserConfig& cfg) {
  // deploy.py passes it to the coordinator verbatim; accept its two spellings.
  if (const json::value* v = prefill_engine ? prefill_engine->if_contains("disaggregation_bootstrap_port") : nullptr) {
    const std::string path = "motor_engine_prefill_config.engine_config.disaggregation_bootstrap_port";
    auto port_text = [](std::string_view s) {
      return !s.empty() && s.size() <= 5 &&
             std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }) &&
             std::stoi(std::string(s)) >= 1 && std::stoi(std::string(s)) <= 65535;
    };
    if (v->is_int64() && v->get_int64() >= 1 && v->get_int64() <= 65535)
      cfg.disaggregation_bootstrap_port = std::to_string(v->get_int64());
    else if (v->is_string() && port_text(v->get_string()))
      cfg.disaggregation_bootstrap_port = std::string(v->get_string());
    else r.add(path, "must be a port 1..65535, got " + r.describe(*v));
  }
}

// The engine sections (prefill, decode; union for PD-hybrid in PyMotor's shape): engine_type, model name, KV
// transfer switch, bootstrap port, node manager logs. The engine section (PyMotor 7d15c04, U10) is
// motor_engine_prefill_config when present and non-empty, else motor_engine_union_config: engine type, model name
// and the KV pool switch come from it. Returns the engine section's path.
std::string read_engine_sections(Reader& r, const json::object& doc, UserConfig& cfg) {
  const json::object* uni = r.object(&doc, "", "motor_engine_union_config", false);
  const json::value* deploy = doc.if_contains("motor_deploy_config");
  const bool hybrid = deploy && deploy->is_object() && deploy->get_object().contains("hybrid_instances_num");
  // PyMotor's PD-hybrid configs carry a union section instead of prefill and decode.
  const bool pd_required = !(hybrid && uni);
  const json::object* prefill = r.object(&doc, "", "motor_engine_prefill_config", pd_required);
  const json::object* decode = r.object(&doc, "", "motor_engine_decode_config", pd_required);
  const bool prefill_is_engine = prefill && !prefill->empty();
  const json::object* engine_section = prefill_is_engine ? prefill : uni;
  const std::string engine_path = prefill_is_engine || !uni ? "motor_engine_prefill_config"
                                                            : "motor_engine_union_config";

  read_engine_type(r, engine_section, engine_path, decode, uni, cfg);

  const json::object* prefill_engine = nullptr;
  for (auto [section, name] :
       {std::pair{prefill, "motor_engine_prefill_config"}, std::pair{decode, "motor_engine_decode_config"},
        std::pair{uni, "motor_engine_union_config"}}) {
    const std::string path = name;
    const json::object* engine = r.object(section, path, "engine_config", false);
    const std::string model_name = read_model_name(r, section, engine, path, cfg.engine_type);
    if (section && section == engine_section) cfg.model_name = model_name;
    if (section == prefill) prefill_engine = engine;
    const json::object* kv = r.object(engine, child_path(path, "engine_config"), "kv_transfer_config", false);
    auto connector = r.string(kv, child_path(child_path(path, "engine_config"), "kv_transfer_config"), "kv_connector",
                              false);
    // deploy.py turns the KV pool on from the engine section's connector only.
    if (section && section == engine_section && connector && *connector == "MultiConnector") cfg.kv_pool = true;
    r.object(section, path, "motor_nodemanger_config", false);
    // A pool section nested here is never read (unknown keys are kept): say where it belongs.
    if (section && section->contains("kv_cache_pool_config"))
      cfg.notices.push_back(path +
                            ".kv_cache_pool_config is not read: the KV pool's settings are the top-level "
                            "section kv_cache_pool_config");
  }

  read_bootstrap_port(r, prefill_engine, cfg);

  // Engine logs: deploy.py reads the node manager's logging_config (top-level section; the published examples
  // also nest it in the prefill section).
  const json::object* nodemanager = r.object(&doc, "", "motor_nodemanger_config", false);
  std::string nm_path = "motor_nodemanger_config";
  if (!nodemanager && prefill && prefill->contains("motor_nodemanger_config") &&
      prefill->at("motor_nodemanger_config").is_object()) {
    nodemanager = &prefill->at("motor_nodemanger_config").get_object();
    nm_path = "motor_engine_prefill_config.motor_nodemanger_config";
  }
  cfg.engine_log_dir = read_host_log_dir(r, nodemanager, nm_path);
  return engine_path;
}

// The KV pool's switch and settings (PyMotor 7d15c04 U9, without its X1): `engine_path` names the engine section,
// whose kv_connector read_engine_sections has looked at.
void read_kv_pool(Reader& r, const json::object& doc, UserConfig& cfg, const std::string& engine_path) {
  const std::string path = "kv_cache_pool_config";
  const std::string connector_path = engine_path + ".engine_config.kv_transfer_config.kv_connector";
  const json::object* pool = r.object(&doc, "", path, false);
  const bool own_keys = pool && std::any_of(kKvPoolOwnKeys.begin(), kKvPoolOwnKeys.end(),
                                            [&](auto k) { return pool->contains(k); });
  if (!cfg.kv_pool && own_keys) cfg.kv_pool = true;
  if (!cfg.kv_pool) {
    // Mooncake client settings (GLM-5's metadata_server, protocol, ...) are the engine's, not a pool's.
    if (pool && !pool->empty())
      cfg.notices.push_back(path +
                            " holds none of the KV pool's keys (port, eviction_high_watermark_ratio, "
                            "eviction_ratio, default_kv_lease_ttl), so no KV pool is deployed; " +
                            connector_path + " \"MultiConnector\" or one of those keys turns it on");
    return;
  }
  if (!doc.contains(path)) {
    r.add(path,
          "is required (an object with eviction_high_watermark_ratio and eviction_ratio; port, "
          "default_kv_lease_ttl optional) because " +
              connector_path + " is \"MultiConnector\" (KV pool on)");
    return;
  }
  if (!pool) return;  // not an object: r.object reported it
  if (auto port = r.integer(pool, path, "port", 1, 65535, false)) {
    if (*port == kKvPoolMetricsPort)
      r.add(child_path(path, "port"),
            "must not be " + std::to_string(kKvPoolMetricsPort) + ", the metrics port of service kvp-master");
    else cfg.kv_pool_port = static_cast<int>(*port);
  }
  // Required once the pool is on (PyMotor's update_kv_pool_enabled_flag names both); the env takes their text.
  for (auto [key, out] : {std::pair{"eviction_high_watermark_ratio", &cfg.kv_pool_high_watermark_ratio},
                          std::pair{"eviction_ratio", &cfg.kv_pool_eviction_ratio}}) {
    if (!r.number(pool, path, key, 0.0, 1.0, true)) continue;
    const json::value& v = pool->at(key);
    *out = v.is_double() ? util::float_text(v.get_double()) : json::serialize(v);
  }
  if (auto ttl = r.integer(pool, path, "default_kv_lease_ttl", 1, kMaxKvLeaseTtlMs, false)) cfg.kv_lease_ttl_ms = *ttl;
}

// The optional components: the KV pool (read_kv_pool) and the KV conductor.
void read_optional_components(Reader& r, const json::object& doc, UserConfig& cfg, const std::string& engine_path) {
  read_kv_pool(r, doc, cfg, engine_path);
  const json::object* conductor = r.object(&doc, "", "kv_conductor_config", false);
  if (auto port = r.integer(conductor, "kv_conductor_config", "http_server_port", 0, 65535, false)) {
    cfg.kv_conductor_port = static_cast<int>(*port);
    cfg.kv_conductor = *port != 0;
  }
}

// The settings update-config may change while pods run (they re-read user_config.json every 10 s), so a wrong
// type or value would reach live components: check each one's type and range (the paths are the published
// deployer's update whitelist).
void read_runtime_settings(Reader& r, const json::object& doc) {
  // Sections whose shape other readers already report are looked up silently here, so no problem is doubled.
  const auto peek = [](const json::object* obj, std::string_view key) -> const json::object* {
    const json::value* v = obj ? obj->if_contains(key) : nullptr;
    return v && v->is_object() ? &v->get_object() : nullptr;
  };
  // Python logging's level names, which PyMotor's components pass to logging (case-insensitive there too).
  const auto log_level = [&](const json::object* section, const std::string& path) {
    const json::object* logging = peek(section, "logging_config");
    const std::string lpath = child_path(path, "logging_config");
    if (auto level = r.string(logging, lpath, "log_level", false)) {
      std::string upper = *level;
      std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
      static const std::array<std::string_view, 6> kLevels = {"DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL"};
      if (std::find(kLevels.begin(), kLevels.end(), upper) == kLevels.end())
        r.add(child_path(lpath, "log_level"),
              "must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL; got " + r.describe(json::string(*level)));
    }
  };
  constexpr double kMaxSeconds = 7 * 24 * 3600.0;  // a week: longer timeouts are typos
  const json::object* controller = peek(&doc, "motor_controller_config");
  log_level(controller, "motor_controller_config");
  const json::object* observability = r.object(controller, "motor_controller_config", "observability_config", false);
  r.boolean(observability, "motor_controller_config.observability_config", "observability_enable");
  r.number(observability, "motor_controller_config.observability_config", "metrics_ttl", 1, kMaxSeconds, false);

  const json::object* coordinator = peek(&doc, "motor_coordinator_config");
  log_level(coordinator, "motor_coordinator_config");
  const std::string epath = "motor_coordinator_config.exception_config";
  const json::object* exception = r.object(coordinator, "motor_coordinator_config", "exception_config", false);
  r.integer(exception, epath, "max_retry", 0, 100, false);
  for (const char* key : {"retry_delay", "first_token_timeout", "infer_timeout"})
    r.number(exception, epath, key, 0, kMaxSeconds, false);
  const std::string tpath = "motor_coordinator_config.timeout_config";
  const json::object* timeouts = r.object(coordinator, "motor_coordinator_config", "timeout_config", false);
  for (const char* key :
       {"request_timeout", "connection_timeout", "read_timeout", "write_timeout", "keep_alive_timeout"})
    r.number(timeouts, tpath, key, 0, kMaxSeconds, false);

  log_level(peek(&doc, "motor_nodemanger_config"), "motor_nodemanger_config");

  const json::object* north = r.object(&doc, "", "north_config", false);
  r.string(north, "north_config", "name", false);
  if (auto ip = r.string(north, "north_config", "ip", false); ip && ip->empty())
    r.add("north_config.ip", "must not be empty");
  r.integer(north, "north_config", "port", 1, 65535, false);

  const json::object* north_tls = peek(peek(peek(&doc, "motor_deploy_config"), "tls_config"), "north_tls_config");
  const std::string npath = "motor_deploy_config.tls_config.north_tls_config";
  r.boolean(north_tls, npath, "enable_tls");
  for (const char* key : {"ca_file", "cert_file", "key_file", "passwd_file", "crl_file"})
    r.string(north_tls, npath, key, false);
}

}  // namespace

UserConfig parse_user_config(std::string raw, std::string_view source) {
  Reader r;
  auto doc = validation::read_json_object(raw, r);
  if (!doc) r.throw_if_any(source);

  UserConfig cfg;
  cfg.raw = std::move(raw);
  cfg.doc = std::move(*doc);

  const json::object* deploy = r.object(&cfg.doc, "", "motor_deploy_config", true);
  read_deploy_section(r, deploy, cfg);
  read_pd_heterogeneous(r, deploy, cfg);
  read_encode(r, deploy, cfg);
  // Upstream logs the same: encode pods select the hardware profile's labels only (Ascend/MindIE-PyMotor 7d15c04
  // examples/deployer/lib/generator).
  if (cfg.encode && cfg.pd_heterogeneous && cfg.deploy_mode == DeployMode::MultiDeployment)
    cfg.notices.push_back(
        "motor_deploy_config.enable_pd_heterogeneous does not reach the encode instances: they "
        "select only the hardware profile's node labels");

  const json::object* controller = r.object(&cfg.doc, "", "motor_controller_config", true);
  const json::object* coordinator = r.object(&cfg.doc, "", "motor_coordinator_config", true);
  // Master/standby runs two pods of the component (deploy.py).
  const json::object* c_standby = r.object(controller, "motor_controller_config", "standby_config", false);
  cfg.controller_standby =
      r.boolean(c_standby, "motor_controller_config.standby_config", "enable_master_standby").value_or(false);
  const json::object* o_standby = r.object(coordinator, "motor_coordinator_config", "standby_config", false);
  cfg.coordinator_standby =
      r.boolean(o_standby, "motor_coordinator_config.standby_config", "enable_master_standby").value_or(false);
  // PD-hybrid: the coordinator dispatches to union instances only in its single_node mode, and engine_topology
  // describes a prefill/decode layout (Ascend/MindIE-PyMotor 7d15c04 examples/deployer/lib/config_validator.py,
  // validate_pd_hybrid_config).
  if (deploy && deploy->contains("hybrid_instances_num")) {
    const std::string spath = "motor_coordinator_config.scheduler_config";
    const json::object* scheduler = r.object(coordinator, "motor_coordinator_config", "scheduler_config", false);
    const json::value* mode = scheduler ? scheduler->if_contains("deploy_mode") : nullptr;
    if (coordinator && !(mode && mode->is_string() && mode->get_string() == "single_node"))
      r.add(spath + ".deploy_mode",
            "must be \"single_node\" with motor_deploy_config.hybrid_instances_num (the "
            "coordinator dispatches to union instances only in that mode); " +
                (mode ? "got " + r.describe(*mode) : std::string("it is absent")));
    if (deploy->contains("engine_topology"))
      r.add("motor_deploy_config.engine_topology",
            "describes a prefill/decode layout: remove it with hybrid_instances_num (PD-hybrid runs union instances)");
  }
  cfg.controller_log_dir = read_host_log_dir(r, controller, "motor_controller_config");
  cfg.coordinator_log_dir = read_host_log_dir(r, coordinator, "motor_coordinator_config");

  const std::string engine_path = read_engine_sections(r, cfg.doc, cfg);
  read_optional_components(r, cfg.doc, cfg, engine_path);
  read_runtime_settings(r, cfg.doc);

  r.throw_if_any(source);
  return cfg;
}

}  // namespace mindie::config
