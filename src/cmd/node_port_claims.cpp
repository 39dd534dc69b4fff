#include "cmd/node_port_claims.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <set>

#include "mindie/operator_rules.h"
#include "util/json_path.h"

namespace mindie::cmd {

namespace json = boost::json;

namespace {

constexpr std::string_view kClaimPrefix = "mindie-motor-nodeport-";

/// The namespace holding the claim `obj` ("" when it names none).
std::string claimed_by(const json::object& obj) {
  const json::value* labels = obj.at("metadata").as_object().if_contains("labels");
  const json::value* ns = labels != nullptr && labels->is_object() ? labels->as_object().if_contains(kClaimedByLabel)
                                                                   : nullptr;
  return ns != nullptr && ns->is_string() ? std::string(ns->as_string()) : "";
}

/// The refusal for `claim`, whose port the deployment in namespace `holder` holds; `advice` says what to set instead.
CommandError taken(const render::NodePortClaim& claim, const std::string& holder, const std::string& advice) {
  const std::string name = node_port_claim_name(claim.port);
  return CommandError("nodePort " + std::to_string(claim.port) + " of service/" + claim.service + " in namespace " +
                      claim.ns + " is already claimed by the deployment in namespace " + holder + " (clusterrole/" +
                      name + "; " + claim.key + ")\n" + advice + "; nothing was written\nif namespace " + holder +
                      " no longer uses it: kubectl mindie delete -n " + holder + " (or kubectl delete clusterrole " +
                      name + ")");
}

/// items of `r`'s cluster-wide list with `selector`; none when listing them is forbidden.
json::array list_or_none(kube::Client& client, const kube::GVR& r, const std::string& selector) {
  try {
    return std::move(client.list(r, "", selector)["items"].as_array());
  } catch (const kube::ApiError& e) {
    if (e.code() != 403) throw;
    return {};
  }
}

json::object claim_object(const render::NodePortClaim& claim) {
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "ClusterRole"},
          {"metadata",
           {{"name", node_port_claim_name(claim.port)},
            {"labels", {{render::kManagedByLabel, render::kFieldManager}, {kClaimedByLabel, claim.ns}}},
            {"annotations", {{"kubectl-mindie/node-port-service", claim.ns + "/" + claim.service}}}}},
          {"rules", json::array()}};
}

}  // namespace

std::string node_port_claim_name(int port) { return std::string(kClaimPrefix) + std::to_string(port); }

std::vector<render::NodePortClaim> claims_to_make(kube::Client& client,
                                                  const std::vector<render::NodePortClaim>& claims) {
  std::vector<render::NodePortClaim> to_make;
  for (const auto& c : claims) {
    const auto live = client.get_if_exists(kube::gvr::kClusterRoles, "", node_port_claim_name(c.port));
    if (!live) {
      to_make.push_back(c);
      continue;
    }
    if (const std::string holder = claimed_by(*live); holder != c.ns)
      throw taken(c, holder.empty() ? "?" : holder, free_port_advice(client, {c}, claims));
  }
  return to_make;
}

std::string free_port_advice(kube::Client& client, const std::vector<render::NodePortClaim>& refused,
                             const std::vector<render::NodePortClaim>& own, const json::array* services) {
  std::set<int> taken = operator_rules::held_node_ports(services ? *services
                                                                 : list_or_none(client, kube::gvr::kServices, ""));
  for (const auto& claim : list_or_none(client, kube::gvr::kClusterRoles, kClaimedByLabel)) {
    const std::string name = util::str(util::find(&claim, {"metadata", "name"}));
    if (name.starts_with(kClaimPrefix)) taken.insert(std::atoi(name.c_str() + kClaimPrefix.size()));
  }
  for (const auto& c : own) taken.insert(c.port);
  const std::vector<int> free = operator_rules::free_node_ports(refused, taken);
  std::string out;
  for (std::size_t i = 0; i < refused.size(); ++i)
    out += (out.empty() ? "" : "\n") + std::string("set ") + refused[i].key + " to a free port of " +
           std::to_string(operator_rules::kNodePortMin) + ".." + std::to_string(operator_rules::kNodePortMax) +
           (free[i] ? ": " + std::to_string(free[i]) + " is free" : " (none is free now)");
  return out;
}

std::vector<change::Step> claim_steps(kube::Client& client, const std::vector<render::NodePortClaim>& claims,
                                      const kube::WriteOptions& opts) {
  std::vector<change::Step> steps;
  for (const auto& c : claims) {
    const std::string name = node_port_claim_name(c.port);
    // This namespace's claim as it is now; nullopt when absent or another namespace's.
    const auto ours = [&client, name, ns = c.ns]() -> std::optional<json::object> {
      auto live = client.get_if_exists(kube::gvr::kClusterRoles, "", name);
      if (live && claimed_by(*live) == ns) return live;
      return std::nullopt;
    };
    change::Step step;
    step.name = kube::gvr::kClusterRoles.kind_dot_group() + "/" + name;
    step.verb = "serverside-applied";
    step.write = [&client, c, opts, claims] {
      // A field manager of its own per namespace: an apply naming another namespace in the label meets a conflict
      // (409) with that namespace's manager, never a silent share; never forced, whatever --force-conflicts says.
      kube::WriteOptions claim_opts = opts;
      claim_opts.force = false;
      claim_opts.field_manager = std::string(render::kFieldManager) + "-claim-" + c.ns;
      try {
        client.apply(kube::gvr::kClusterRoles, claim_object(c), claim_opts);
      } catch (const kube::ApiError& e) {
        if (!e.is_conflict()) throw;
        const auto live = client.get_if_exists(kube::gvr::kClusterRoles, "", node_port_claim_name(c.port));
        if (!live || claimed_by(*live) == c.ns) throw;
        throw taken(c, claimed_by(*live), free_port_advice(client, {c}, claims));
      }
    };
    step.applied = [ours] { return ours().has_value(); };
    step.undo = [&client, ours, name] {
      const auto live = ours();
      if (!live) return;
      const json::object& meta = live->at("metadata").as_object();
      client.remove_exact(kube::gvr::kClusterRoles, "", name, meta.at("uid").as_string(),
                          meta.at("resourceVersion").as_string());
    };
    steps.push_back(std::move(step));
  }
  return steps;
}

std::vector<std::string> release_claims(kube::Client& client, const std::string& ns, const std::vector<int>& released,
                                        const kube::WriteOptions& opts) {
  std::vector<std::string> deleted;
  for (const int port : released) {
    const std::string name = node_port_claim_name(port);
    const auto live = client.get_if_exists(kube::gvr::kClusterRoles, "", name);
    if (!live || claimed_by(*live) != ns) continue;
    const json::object& meta = live->at("metadata").as_object();
    try {
      client.remove_exact(kube::gvr::kClusterRoles, "", name, meta.at("uid").as_string(),
                          meta.at("resourceVersion").as_string(), opts);
    } catch (const kube::ApiError& e) {
      if (!e.is_not_found()) throw;
      continue;
    }
    deleted.push_back(name);
  }
  return deleted;
}

std::vector<std::string> release_claims_but(kube::Client& client, const std::string& ns,
                                            const std::vector<render::NodePortClaim>& kept) {
  std::vector<std::string> deleted;
  const json::object list = client.list(kube::gvr::kClusterRoles, "", std::string(kClaimedByLabel) + "=" + ns);
  for (const auto& item : list.at("items").as_array()) {
    const json::object& meta = item.at("metadata").as_object();
    const std::string name(meta.at("name").as_string());
    if (std::any_of(kept.begin(), kept.end(),
                    [&](const render::NodePortClaim& c) { return node_port_claim_name(c.port) == name; }))
      continue;
    try {
      client.remove_exact(kube::gvr::kClusterRoles, "", name, meta.at("uid").as_string(),
                          meta.at("resourceVersion").as_string());
    } catch (const kube::ApiError& e) {
      if (!e.is_not_found()) throw;
      continue;
    }
    deleted.push_back(name);
  }
  return deleted;
}

}  // namespace mindie::cmd
