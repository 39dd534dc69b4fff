#include "cmd/multi_deployment.h"

#include <algorithm>
#include <tuple>

#include "mindie/render.h"

namespace mindie::cmd {

namespace json = boost::json;

std::string multi_selector(const std::string& workload) {
  return std::string(render::kManagedByLabel) + "=" + render::kFieldManager + "," + render::kInstanceLabel + "=" +
         workload;
}

std::vector<std::string> list_workload_object_names(kube::Client& client, const kube::GVR& r, const std::string& ns,
                                                    const std::string& workload) {
  json::object list = client.list(r, ns, multi_selector(workload));
  std::vector<std::string> out;
  if (const auto* items = list.if_contains("items"); items && items->is_array())
    for (const auto& item : items->as_array()) {
      const auto* md = item.is_object() ? item.as_object().if_contains("metadata") : nullptr;
      const auto* n = md && md->is_object() ? md->as_object().if_contains("name") : nullptr;
      if (n && n->is_string()) out.emplace_back(n->as_string());
    }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<WorkloadDeployment> list_workload_deployments(kube::Client& client, const std::string& ns,
                                                          const std::string& workload, bool engines_only) {
  std::string selector = multi_selector(workload);
  if (engines_only) selector += "," + std::string(render::kComponentLabel) + " in (prefill,decode)";
  json::object list = client.list(kube::gvr::kDeployments, ns, selector);
  std::vector<WorkloadDeployment> out;
  if (const auto* items = list.if_contains("items"); items && items->is_array()) {
    for (const auto& item : items->as_array()) {
      const auto* md = item.is_object() ? item.as_object().if_contains("metadata") : nullptr;
      if (!md || !md->is_object()) continue;
      WorkloadDeployment d;
      if (const auto* n = md->as_object().if_contains("name"); n && n->is_string()) d.name = n->as_string();
      if (const auto* l = md->as_object().if_contains("labels"); l && l->is_object()) {
        const auto& labels = l->as_object();
        if (const auto* v = labels.if_contains(render::kComponentLabel); v && v->is_string()) d.role = v->as_string();
        if (const auto* v = labels.if_contains(render::kInstanceIndexLabel); v && v->is_string()) {
          const std::string s(v->as_string());
          if (!s.empty() && s.size() < 4 && std::all_of(s.begin(), s.end(), ::isdigit)) d.index = std::stoi(s);
        }
      }
      out.push_back(std::move(d));
    }
  }
  std::sort(out.begin(), out.end(), [](const WorkloadDeployment& a, const WorkloadDeployment& b) {
    return std::tie(a.role, a.index, a.name) < std::tie(b.role, b.index, b.name);
  });
  return out;
}

}  // namespace mindie::cmd
