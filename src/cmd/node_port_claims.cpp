#include "cmd/node_port_claims.h"

#include <algorithm>
#include <memory>

namespace mindie::cmd {

namespace json = boost::json;

namespace {

/// The namespace holding the claim `obj` ("" when it names none).
std::string claimed_by(const json::object& obj) {
  const json::value* labels = obj.at("metadata").as_object().if_contains("labels");
  const json::value* ns = labels != nullptr && labels->is_object() ? labels->as_object().if_contains(kClaimedByLabel)
                                                                   : nullptr;
  return ns != nullptr && ns->is_string() ? std::string(ns->as_string()) : "";
}

/// The refusal for `claim`, whose port the deployment in namespace `holder` holds.
CommandError taken(const render::NodePortClaim& claim, const std::string& holder) {
  const std::string name = node_port_claim_name(claim.port);
  return CommandError("nodePort " + std::to_string(claim.port) + " of service/" + claim.service + " in namespace " +
                      claim.ns + " is already claimed by the deployment in namespace " + holder + " (clusterrole/" +
                      name + "; " + claim.key + ")\nset " + claim.key +
                      " to a free port (30000..32767); nothing "
                      "was written\nif namespace " +
                      holder + " no longer uses it: kubectl mindie delete -n " + holder +
                      " (or kubectl delete clusterrole " + name + ")");
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

std::string node_port_claim_name(int port) { return "mindie-motor-nodeport-" + std::to_string(port); }

std::vector<render::NodePortClaim> claims_to_make(kube::Client& client,
                                                  const std::vector<render::NodePortClaim>& claims) {
  std::vector<render::NodePortClaim> to_make;
  for (const auto& c : claims) {
    const auto live = client.get_if_exists(kube::gvr::kClusterRoles, "", node_port_claim_name(c.port));
    if (!live) {
      to_make.push_back(c);
      continue;
    }
    if (const std::string holder = claimed_by(*live); holder != c.ns) throw taken(c, holder.empty() ? "?" : holder);
  }
  return to_make;
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
    step.write = [&client, c, opts] {
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
        throw taken(c, claimed_by(*live));
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
