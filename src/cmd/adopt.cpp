#include "cmd/adopt.h"

#include <stdexcept>

#include "cmd/common.h"
#include "kube/csa_upgrade.h"
#include "kube/retry_on_conflict.h"
#include "mindie/baseline.h"

namespace mindie::cmd {

namespace json = boost::json;

namespace {

std::string label_of(const json::object& obj, const char* key) {
  const json::value* md = obj.if_contains("metadata");
  const json::value* labels = md && md->is_object() ? md->get_object().if_contains("labels") : nullptr;
  const json::value* v = labels && labels->is_object() ? labels->get_object().if_contains(key) : nullptr;
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// True when every subject of a binding is in namespace `ns` (a binding without subjects binds nothing elsewhere).
bool binds_only(const json::object& binding, const std::string& ns) {
  const json::value* subjects = binding.if_contains("subjects");
  if (!subjects || !subjects->is_array()) return true;
  for (const auto& s : subjects->get_array()) {
    const json::value* sns = s.is_object() ? s.get_object().if_contains("namespace") : nullptr;
    if (!sns || !sns->is_string() || sns->get_string() != ns) return false;
  }
  return true;
}

}  // namespace

bool managed_by_us(const json::object& obj) { return label_of(obj, render::kManagedByLabel) == render::kFieldManager; }

bool has_our_records(const json::object& cm) {
  if (managed_by_us(cm)) return true;
  const json::value* md = cm.if_contains("metadata");
  const json::value* ann = md && md->is_object() ? md->get_object().if_contains("annotations") : nullptr;
  return ann && ann->is_object() && ann->get_object().contains(baseline::kDeployModeAnnotation);
}

void require_ours(const json::object& cm, const std::string& ns, const std::string& command,
                  const std::string& nothing_done) {
  if (has_our_records(cm)) return;
  throw CommandError(
      "configmap/" + std::string(baseline::kConfigMapName) + " in namespace " + ns +
      " was not written by kubectl-mindie (no label " + render::kManagedByLabel + "=" + render::kFieldManager +
      "): it belongs to another tool's deployment (deploy.py?), which " + command +
      " does not act on; take it over first with kubectl mindie deploy -f user_config.json --adopt; " + nothing_done);
}

std::string ForeignObject::text() const { return gvr->kind_dot_group() + "/" + name; }

std::string AdoptionPlan::describe() const {
  std::string out;
  for (const auto& o : take_over) out += "\n  " + o.text() + " (taken over)";
  for (const auto& o : remove) out += "\n  " + o.text() + " (replaced by kubectl-mindie's own, then deleted)";
  return out;
}

std::string deploy_py_cluster_role(const std::string& ns) { return "mindie-controller-role-" + ns; }
std::string deploy_py_cluster_role_binding(const std::string& ns) { return "mindie-controller-binding-" + ns; }

AdoptionPlan plan_adoption(kube::Client& client, const std::string& ns, const std::vector<json::object>& objects,
                           const std::vector<render::RenamedService>& renamed) {
  AdoptionPlan plan;
  const auto consider = [&](const kube::GVR& r, const std::string& name, std::vector<ForeignObject>& into) {
    const std::string where = r.namespaced ? ns : std::string();
    auto live = client.get_if_exists(r, where, name);
    if (live && !managed_by_us(*live)) into.push_back({&r, where, name, std::move(*live)});
  };
  for (const auto& obj : objects) {
    const auto* r = kube::gvr::for_kind(obj.at("apiVersion").as_string(), obj.at("kind").as_string());
    if (!r) throw std::logic_error("rendered an object of unknown kind " + std::string(obj.at("kind").as_string()));
    consider(*r, std::string(obj.at("metadata").at("name").as_string()), plan.take_over);
  }
  consider(kube::gvr::kClusterRoles, deploy_py_cluster_role(ns), plan.remove);
  consider(kube::gvr::kClusterRoleBindings, deploy_py_cluster_role_binding(ns), plan.remove);
  if (!plan.remove.empty() && plan.remove.back().gvr == &kube::gvr::kClusterRoleBindings &&
      !binds_only(plan.remove.back().live, ns))
    plan.remove.pop_back();
  for (const auto& r : renamed) consider(kube::gvr::kServices, r.old_name, plan.remove);
  return plan;
}

void hand_over_fields(kube::Client& client, const AdoptionPlan& plan, const kube::WriteOptions& opts,
                      const std::function<void(const ForeignObject&)>& on_patched) {
  constexpr int kAttempts = 3;
  // 422 too: the upgrade patch's test op on managedFields failed (they changed since read).
  const auto refused = [](const kube::ApiError& e) { return e.code() == 409 || e.code() == 422; };
  for (const auto& o : plan.take_over) {
    kube::retry_on_conflict(
        kAttempts,
        [&](int attempt) {
          // The plan's read first; a fresh one only after a refusal.
          const std::optional<json::object> live = attempt > 1 ? client.get_if_exists(*o.gvr, o.ns, o.name) : o.live;
          const auto patch = live ? kube::csa_upgrade_patch(*live, opts.field_manager) : std::nullopt;
          if (!patch) return;  // gone, or nothing of client-side apply's left: the apply creates or owns it
          client.patch(*o.gvr, o.ns, o.name, kube::PatchType::Json, *patch, opts);
          on_patched(o);
        },
        refused);
  }
}

}  // namespace mindie::cmd
