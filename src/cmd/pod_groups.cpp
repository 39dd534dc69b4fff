#include "cmd/pod_groups.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "mindie/operator_rules.h"
#include "util/json_path.h"

namespace mindie::cmd {
namespace json = boost::json;

namespace {

/// How long to wait for infer-operator to act on a scale-in before giving up on the PodGroups: one reconcile per
/// level (InferServiceSet, InferService, InstanceSet) takes well under a second on a healthy cluster.
constexpr auto kOperatorWait = std::chrono::seconds(60);

/// Whether infer-operator has acted on the lowered counts: each role's InstanceSet `<iss>-0-<role>` wants at most the
/// instances still wanted and its status.observedGeneration has reached its generation. Until then a reconcile may
/// create a deleted PodGroup again, since the operator creates (GetOrCreate) the PodGroup of every instance the
/// InstanceSet still wants (infer-operator's workload/podgroup_manager.go GetOrCreatePodGroupForInstance; found against
/// the real control plane, where the three levels take a moment). A missing InstanceSet counts as acted on.
bool operator_acted(kube::Client& client, const std::string& ns, const std::string& iss,
                    const std::map<std::string, int>& instances) {
  for (const auto& [role, wanted] : instances) {
    json::value is;
    try {
      is = client.get(kube::gvr::kInstanceSets, ns, iss + "-0-" + role);
    } catch (const kube::ApiError& e) {
      if (e.is_not_found()) continue;
      throw;
    }
    const std::int64_t replicas = util::num(util::find(&is, {"spec", "replicas"}), -1);
    const std::int64_t observed = util::num(util::find(&is, {"status", "observedGeneration"}), -1);
    const std::int64_t generation = util::num(util::find(&is, {"metadata", "generation"}), -1);
    if (replicas > wanted || observed < generation) return false;
  }
  return true;
}

}  // namespace

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
  if (stale.empty()) return {};
  const auto delete_hint = [&](const std::vector<std::string>& names_left) {
    std::string names, args;
    for (const auto& pg : names_left) {
      names += "\n  podgroup." + kube::gvr::kPodGroups.group + "/" + pg;
      args += " " + pg;
    }
    return std::make_pair(names, "kubectl delete podgroups." + kube::gvr::kPodGroups.group + " -n " + ns + args);
  };
  // Deleted before the operator has seen the lower count, a PodGroup comes back and stays for good.
  if (!opts.dry_run) {
    const auto give_up = std::chrono::steady_clock::now() + kOperatorWait;
    while (!operator_acted(client, ns, iss, instances)) {
      if (std::chrono::steady_clock::now() >= give_up) {
        const auto [names, command] = delete_hint(stale);
        throw PartialFailure(std::make_exception_ptr(std::runtime_error(
                                 "timed out waiting for infer-operator to act on the lower instance count")),
                             done + ", but infer-operator has not acted on it within " +
                                 std::to_string(kOperatorWait.count()) +
                                 " s, so these PodGroups of removed instances are left (deleted now, it "
                                 "would make them again):" +
                                 names + "\nonce its InstanceSets show the new count, delete them with: " + command);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
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
    const auto [names, command] = delete_hint(left);
    throw PartialFailure(first_failure, done +
                                            ", but these PodGroups of removed instances are left, and "
                                            "infer-operator would reuse them unchanged on a later scale-out:" +
                                            names + "\ndelete them with: " + command);
  }
  return deleted;
}

}  // namespace mindie::cmd
