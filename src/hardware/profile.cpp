// Parsing of manifests/hardware_profiles.yaml and lookup of the profiles; see profile.h.
#include "hardware/profile.h"

#include <boost/json.hpp>
#include <stdexcept>

#include "kube/names.h"
#include "mindie/manifests.h"
#include "util/json_path.h"
#include "util/yaml_json.h"
#include "validation/json_document.h"
#include "validation/reader.h"

namespace mindie::hardware {
namespace json = boost::json;

namespace {

// sp_block: `none`, or a mapping of infer_service_set, multi_deployment and single_container (all three required)
// to none | pod | instance.
SpBlockRules read_sp_block(validation::Reader& r, const json::object* profile, const std::string& path) {
  SpBlockRules rules;
  const std::string sp_path = util::child_path(path, "sp_block");
  const json::value* v = r.field(profile, path, "sp_block", true, "none or a mapping of the three deploy modes");
  if (!v) return rules;
  if (v->is_string() && v->get_string() == "none") return rules;
  const json::object* modes = v->is_object() ? &v->get_object() : nullptr;
  if (!modes) {
    r.add(sp_path,
          "must be none or a mapping of infer_service_set, multi_deployment and single_container to "
          "none, pod or instance; got " +
              r.describe(*v));
    return rules;
  }
  r.only(modes, sp_path, {"infer_service_set", "multi_deployment", "single_container"});
  for (auto [key, rule] :
       {std::pair{"infer_service_set", &rules.pod_template}, std::pair{"multi_deployment", &rules.multi_deployment},
        std::pair{"single_container", &rules.single_container}}) {
    auto s = r.string(modes, sp_path, key, true);
    if (!s) continue;
    if (*s == "none") *rule = SpBlockRule::None;
    else if (*s == "pod") *rule = SpBlockRule::PerPod;
    else if (*s == "instance") *rule = SpBlockRule::PerInstance;
    else r.add(util::child_path(sp_path, key), "must be none, pod or instance; got \"" + *s + "\"");
  }
  return rules;
}

}  // namespace

std::vector<HardwareProfile> parse_hardware_profiles(const std::string& yaml_text, const std::string& source) {
  json::value doc;
  try {
    doc = util::yaml_to_json(yaml_text, source);
  } catch (const util::YamlError& e) {
    throw validation::ValidationError(source, {{"", validation::yaml_syntax_message(e.what(), source)}});
  }
  validation::Reader r(validation::Notation::Yaml);
  const json::object* top = r.object(doc, "");
  r.only(top, "", {"profiles"});
  const json::value* list = r.field(top, "", "profiles", true, "a list");
  const json::array* profiles = list ? r.array(*list, "profiles") : nullptr;
  if (profiles && profiles->empty()) r.add("profiles", "must list at least one profile");
  r.throw_if_any(source);

  std::vector<HardwareProfile> out;
  for (std::size_t i = 0; i < profiles->size(); ++i) {
    std::string path = util::item_path("profiles", i);
    const json::object* o = r.object((*profiles)[i], path);
    if (!o) continue;
    // Name the profile in paths once it has one.
    if (const json::value* n = o->if_contains("name"); n && n->is_string() && !n->get_string().empty())
      path = util::child_path("profiles", n->get_string());
    r.only(o, path,
           {"name", "description", "npus_per_node", "npu_resource", "node_selector", "pod_labels", "schedule_policy",
            "sp_block", "mf_transfer_protocol"});
    const auto str = [&](std::string_view key, bool required) -> std::string {
      auto v = r.string(o, path, key, required);
      if (v && v->empty()) r.add(util::child_path(path, key), "must not be empty");
      return v.value_or("");
    };
    HardwareProfile p;
    p.name = str("name", true);
    p.description = str("description", false);
    p.npu_resource = str("npu_resource", true);
    if (!p.npu_resource.empty() && !kube::is_qualified_name(p.npu_resource))
      r.add(util::child_path(path, "npu_resource"),
            "must be a resource name, " + std::string(kube::kQualifiedNameRule));
    if (auto n = r.integer(o, path, "npus_per_node", 1, 64, true)) p.max_npus_per_pod = static_cast<int>(*n);
    p.node_selector = r.string_map(o, path, "node_selector", validation::Reader::MapKind::NodeSelector);
    if (p.node_selector.empty()) r.add(util::child_path(path, "node_selector"), "must select the engine nodes");
    for (const auto& [k, v] : p.node_selector)
      if (k == "accelerator-type") p.accelerator_type = v;
    p.pod_labels = r.string_map(o, path, "pod_labels", validation::Reader::MapKind::Labels);
    p.schedule_policy = str("schedule_policy", false);
    if (!p.schedule_policy.empty() && !kube::is_label_value(p.schedule_policy))
      r.add(util::child_path(path, "schedule_policy"), "must look like chip8-node8");
    p.sp_block = read_sp_block(r, o, path);
    p.mf_transfer_protocol = str("mf_transfer_protocol", true);
    if (!p.mf_transfer_protocol.empty() && p.mf_transfer_protocol != "device_rdma" && p.mf_transfer_protocol != "sdma")
      r.add(util::child_path(path, "mf_transfer_protocol"), "must be device_rdma or sdma");
    for (const auto& prev : out)
      if (!p.name.empty() && prev.name == p.name) r.add(util::child_path(path, "name"), "duplicate profile name");
    out.push_back(std::move(p));
  }
  r.throw_if_any(source);
  return out;
}

const std::vector<HardwareProfile>& hardware_profiles() {
  // Parsed once (thread-safe static initialisation). The file is part of the binary, so a problem is a build
  // defect; the unit tests parse it too.
  static const std::vector<HardwareProfile> profiles = [] {
    constexpr std::string_view kPath = "hardware_profiles.yaml";
    const auto& files = manifests::embedded();
    const auto it = files.find(kPath);
    if (it == files.end()) throw std::logic_error("built-in manifest hardware_profiles.yaml is missing");
    try {
      return parse_hardware_profiles(std::string(it->second), "manifests/hardware_profiles.yaml");
    } catch (const validation::ValidationError& e) {
      throw std::logic_error(std::string("built-in manifest is broken: ") + e.what());
    }
  }();
  return profiles;
}

const HardwareProfile* find_hardware_profile(std::string_view name) {
  for (const auto& p : hardware_profiles())
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace mindie::hardware
