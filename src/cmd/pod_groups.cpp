#include "cmd/pod_groups.h"

#include <algorithm>

#include "mindie/operator_rules.h"

namespace mindie::cmd {
namespace json = boost::json;

std::vector<std::string> remove_stale_pod_groups(kube::Client& client, const std::string& ns, const std::string& iss,
                                                 const std::map<std::string, int>& instances,
                                                 const kube::WriteOptions& opts, const std::string& done) {
  std::vector<std::string> stale;
  try {
    const json::object list = client.list(kube::gvr::kPodGroups, ns);
    for (const auto& pg : list.at("items").as_array()) {
      const auto* name = pg.as_object().at("metadata").as_object().if_contains("name");
      if (!name || !name->is_string()) continue;
      const std::string n(name->as_string());
      for (const auto& [role, wanted] : instances) {
        const std::string stem = operator_rules::pod_group_prefix(iss, 0, role);
        if (n.size() <= stem.size() || n.compare(0, stem.size(), stem) != 0) continue;
        const std::string digits = n.substr(stem.size());
        if (digits.empty() || digits.size() > 6 ||
            !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return c >= '0' && c <= '9'; }))
          continue;
        if (std::stoi(digits) >= wanted) stale.push_back(n);
      }
    }
  } catch (const kube::ApiError& e) {
    if (e.is_not_found()) return {};  // Volcano's API is not served: there are none
    throw;
  }
  std::sort(stale.begin(), stale.end());
  std::vector<std::string> deleted, left;
  std::exception_ptr first_failure;
  for (const auto& pg : stale) {
    try {
      client.remove(kube::gvr::kPodGroups, ns, pg, opts);
      deleted.push_back(pg);
    } catch (const kube::ApiError& e) {
      if (e.is_not_found()) continue;  // gone meanwhile
      if (!first_failure) first_failure = std::current_exception();
      left.push_back(pg);
    } catch (const kube::TransportError&) {
      if (!first_failure) first_failure = std::current_exception();
      left.push_back(pg);
    }
  }
  if (!left.empty()) {
    std::string names, args;
    for (const auto& pg : left) {
      names += "\n  podgroup." + kube::gvr::kPodGroups.group + "/" + pg;
      args += " " + pg;
    }
    throw PartialFailure(first_failure, done + ", but these PodGroups of removed instances are left, and "
                                               "infer-operator would reuse them unchanged on a later scale-out:" +
                                            names + "\ndelete them with: kubectl delete podgroups." +
                                            kube::gvr::kPodGroups.group + " -n " + ns + args);
  }
  return deleted;
}

}  // namespace mindie::cmd
