#include "cmd/gang_instances.h"

#include <chrono>

#include "mindie/operator_rules.h"
#include "util/json_path.h"
#include "util/time.h"

namespace mindie::cmd {
namespace json = boost::json;

namespace {

std::string iss_name(const json::object& iss) { return util::str(util::find(&iss.at("metadata"), {"name"})); }

/// The role's InstanceSet of InferService 0 (kubectl-mindie renders one), "<iss>-0-<role>".
std::string instance_set_name(const json::object& iss, const std::string& role) { return iss_name(iss) + "-0-" + role; }

}  // namespace

void refuse_gang_rebuild_loop(kube::Client& client, const std::string& ns, const json::object& iss,
                              const std::vector<scale::RoleChange>& changes, bool operator_restarted) {
  for (const auto& c : changes) {
    if (c.to <= c.from || !operator_rules::is_gang_role(iss, c.role)) continue;
    operator_rules::GangScaleOut s;
    s.ns = ns;
    s.role = c.role;
    s.workload_prefix = instance_set_name(iss, c.role) + "-";
    s.from = static_cast<int>(c.from);
    s.to = static_cast<int>(c.to);
    s.operator_restarted = operator_restarted;
    if (const auto ist = client.get_if_exists(kube::gvr::kInstanceSets, ns, instance_set_name(iss, c.role)))
      s.removed = operator_rules::removed_gang_instances(json::value(*ist));
    const std::string selector = "infer.huawei.com/inferservice-name=" + iss_name(iss) +
                                 "-0,infer.huawei.com/instanceset-name=" + c.role;
    client.list_each(kube::gvr::kPods, ns, selector, 500, "", [&](json::object& pod) {
      const json::value v(pod);
      try {
        const int k =
            std::stoi(util::str(util::find(&v, {"metadata", "labels", "infer.huawei.com/instanceset-index"})));
        s.leftover_pods[util::str(util::find(&v, {"metadata", "name"}))] = k;
      } catch (const std::exception&) {  // a pod without a readable index belongs to no instance scaled out
      }
    });
    if (const std::string why = operator_rules::gang_scale_out_refusal(s); !why.empty()) throw CommandError(why);
  }
}

namespace {

/// InstanceSet `name`'s kRemovedGangInstancesAnnotation set to `value` (null deletes it), by a merge patch.
void set_removed_gang_instances(kube::Client& client, const std::string& ns, const std::string& name,
                                const json::value& value, const kube::WriteOptions& opts) {
  client.patch(
      kube::gvr::kInstanceSets, ns, name, kube::PatchType::Merge,
      json::object{{"metadata", {{"annotations", {{operator_rules::kRemovedGangInstancesAnnotation, value}}}}}}, opts);
}

}  // namespace

void record_gang_instances(kube::Client& client, const std::string& ns, const json::object& iss,
                           const std::vector<scale::RoleChange>& changes, bool operator_restarted,
                           const kube::WriteOptions& opts, Printer& printer) {
  const auto now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  for (const auto& c : changes) {
    const bool scale_in = c.to < c.from;
    if (!operator_rules::is_gang_role(iss, c.role) || !(scale_in || (c.to > c.from && operator_restarted))) continue;
    const std::string name = instance_set_name(iss, c.role);
    try {
      const auto ist = client.get_if_exists(kube::gvr::kInstanceSets, ns, name);
      if (!ist) continue;
      json::value value = nullptr;  // null deletes the annotation (merge patch)
      if (scale_in)
        value = json::string(operator_rules::removed_gang_instances_value(
            operator_rules::removed_gang_instances(json::value(*ist)), static_cast<int>(c.to), static_cast<int>(c.from),
            util::utc_text(now, "%Y-%m-%dT%H:%M:%SZ")));
      set_removed_gang_instances(client, ns, name, value, opts);
    } catch (const std::exception& e) {
      printer.warning("the scale is done, but recording on instanceset/" + name +
                      " which instances it removed "
                      "failed (" +
                      e.what() + "): a later scale-out of role " + c.role +
                      " cannot tell that "
                      "infer-operator still holds their fault records");
    }
  }
}

void clear_removed_gang_instances(kube::Client& client, const std::string& ns, const json::object& iss,
                                  const std::string& role, Printer& printer) {
  const std::string name = instance_set_name(iss, role);
  try {
    const auto ist = client.get_if_exists(kube::gvr::kInstanceSets, ns, name);
    if (!ist || operator_rules::removed_gang_instances(json::value(*ist)).empty()) return;
    kube::WriteOptions opts;
    opts.field_manager = render::kFieldManager;
    set_removed_gang_instances(client, ns, name, nullptr, opts);
  } catch (const std::exception& e) {
    printer.warning("infer-operator restarted, but clearing on instanceset/" + name +
                    " the instances removed before failed (" + e.what() + "): a later scale-out of role " + role +
                    " may ask for --operator-restarted");
  }
}

}  // namespace mindie::cmd
