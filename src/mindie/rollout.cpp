#include "mindie/rollout.h"

#include <algorithm>

#include "mindie/render.h"
#include "util/json_path.h"

namespace mindie::rollout {

namespace json = boost::json;

namespace {

using util::find;
using util::num;
using util::str;

std::string pods(std::int64_t n) { return std::to_string(n) + (n == 1 ? " pod" : " pods"); }

/// DeploymentStatusViewer's rules, availability left out.
std::string deployment_pending(const json::value& w) {
  const std::int64_t generation = num(find(&w, {"metadata", "generation"}));
  if (generation > num(find(&w, {"status", "observedGeneration"})))
    return "the deployment controller has not observed generation " + std::to_string(generation) + " yet";
  const std::int64_t wanted = num(find(&w, {"spec", "replicas"}), 1);
  const std::int64_t updated = num(find(&w, {"status", "updatedReplicas"}));
  const std::int64_t old = num(find(&w, {"status", "replicas"})) - updated;
  std::string out;
  if (updated < wanted) out = std::to_string(updated) + " of " + std::to_string(wanted) + " on the current template";
  if (old > 0) out += (out.empty() ? "" : ", ") + pods(old) + " of an earlier template still running";
  if (out.empty()) return out;
  // The deployment controller gives up after spec.progressDeadlineSeconds (600 by default) without progress.
  if (const auto* conds = find(&w, {"status", "conditions"}); conds && conds->is_array())
    for (const auto& c : conds->as_array())
      if (str(find(&c, {"type"})) == "Progressing" && str(find(&c, {"reason"})) == "ProgressDeadlineExceeded")
        out += " (the rollout exceeded its progress deadline)";
  return out;
}

/// StatefulSetStatusViewer's rules, readiness left out.
std::string stateful_set_pending(const json::value& w) {
  const std::int64_t generation = num(find(&w, {"metadata", "generation"}));
  const std::int64_t observed = num(find(&w, {"status", "observedGeneration"}));
  if (observed == 0 || generation > observed)
    return "the statefulset controller has not observed generation " + std::to_string(generation) + " yet";
  const std::string update = str(find(&w, {"status", "updateRevision"}));
  if (update == str(find(&w, {"status", "currentRevision"}))) return "";
  return std::to_string(num(find(&w, {"status", "updatedReplicas"}))) + " of " +
         std::to_string(num(find(&w, {"spec", "replicas"}), 1)) + " on the current template (revision " + update + ")";
}

}  // namespace

std::string pending(const json::value& w, std::string_view kind) {
  if (kind == "Deployment") return deployment_pending(w);
  if (kind == "StatefulSet") return stateful_set_pending(w);
  return "";
}

std::map<std::string, std::vector<std::string>> rolled_by(const std::vector<json::object>& rendered,
                                                          const json::array& live) {
  const auto hash_of = [](const json::value* spec) {
    return str(find(spec, {"template", "metadata", "annotations", render::kTemplateHashAnnotation}));
  };
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& d : live) {
    const std::string name = str(find(&d, {"metadata", "name"}));
    const auto it = std::find_if(rendered.begin(), rendered.end(), [&](const json::object& o) {
      return str(o.if_contains("kind")) == "Deployment" && str(find(o.if_contains("metadata"), {"name"})) == name;
    });
    if (it == rendered.end()) continue;  // pruned, not rolled
    if (hash_of(it->if_contains("spec")) != hash_of(find(&d, {"spec"})))
      out[str(find(&d, {"metadata", "labels", render::kComponentLabel}))].push_back("deployment/" + name);
  }
  return out;
}

}  // namespace mindie::rollout
