#include "mindie/revision.h"

#include <algorithm>

#include "mindie/baseline_policy.h"
#include "util/digest.h"
#include "util/json_diff.h"
#include "util/json_path.h"
#include "util/time.h"

namespace mindie::revision {

namespace json = boost::json;

namespace {

constexpr const char* kManagedBy = "app.kubernetes.io/managed-by";

std::optional<std::string> optional_string(const json::object& data, const char* key) {
  const json::value* v = data.if_contains(key);
  return v != nullptr && v->is_string() ? std::optional<std::string>(std::string(v->as_string())) : std::nullopt;
}

}  // namespace

std::string scripts_digest(const std::map<std::string, std::string>& scripts) {
  if (scripts.empty()) return "";
  std::string all;
  for (const auto& [key, text] : scripts) {
    all.append(key).push_back('\0');
    all.append(text).push_back('\0');
  }
  return util::sha256_hex(all);
}

std::optional<Content> content_of(const baseline::Baseline& stored) {
  if (!stored.raw) return std::nullopt;
  return Content{*stored.raw, stored.env_raw, stored.overrides_raw, scripts_digest(stored.scripts)};
}

std::string name_of(std::int64_t number) { return kNamePrefix + std::to_string(number); }

json::object render(const json::object& config_map, std::int64_t number, const Content& content, const Author& author) {
  const json::value* md = config_map.if_contains("metadata");
  json::object data{{baseline::kBaselineKey, content.user_config}, {kScriptsDigestKey, content.scripts_digest}};
  if (content.env) data[baseline::kEnvKey] = *content.env;
  if (content.overrides) data[baseline::kOverridesKey] = *content.overrides;
  // The owner is motor-config (the uid as read): the garbage collector removes the history with it, as it removes a
  // StatefulSet's ControllerRevisions with the StatefulSet.
  const json::object owner{{"apiVersion", "v1"},
                           {"kind", "ConfigMap"},
                           {"name", baseline::kConfigMapName},
                           {"uid", util::str(util::find(md, {"uid"}))}};
  return {{"apiVersion", "apps/v1"},
          {"kind", "ControllerRevision"},
          {"metadata",
           {{"name", name_of(number)},
            {"namespace", util::str(util::find(md, {"namespace"}))},
            {"labels", {{kManagedBy, "kubectl-mindie"}, {kHistoryLabel, baseline::kConfigMapName}}},
            {"annotations",
             {{kCommandAnnotation, author.command},
              {kUserAnnotation, author.user},
              {kTimeAnnotation, util::utc_text(author.at, "%Y-%m-%dT%H:%M:%SZ")}}},
            {"ownerReferences", json::array{owner}}}},
          {"data", std::move(data)},
          {"revision", number}};
}

std::optional<Revision> parse(const json::object& obj) {
  const json::value* rev = obj.if_contains("revision");
  const json::value* data = obj.if_contains("data");
  if (rev == nullptr || !(rev->is_int64() || rev->is_uint64()) || data == nullptr || !data->is_object())
    return std::nullopt;
  const auto user_config = optional_string(data->as_object(), baseline::kBaselineKey);
  if (!user_config) return std::nullopt;
  Revision r;
  r.number = util::num(rev);
  const json::value md(obj.contains("metadata") ? obj.at("metadata") : json::value());
  r.name = util::str(util::find(&md, {"name"}));
  r.uid = util::str(util::find(&md, {"uid"}));
  r.content = {*user_config, optional_string(data->as_object(), baseline::kEnvKey),
               optional_string(data->as_object(), baseline::kOverridesKey),
               optional_string(data->as_object(), kScriptsDigestKey).value_or("")};
  r.command = util::str(util::find(&md, {"annotations", kCommandAnnotation}));
  r.user = util::str(util::find(&md, {"annotations", kUserAnnotation}));
  r.at = util::str(util::find(&md, {"annotations", kTimeAnnotation}));
  return r;
}

std::vector<Revision> from_items(const json::array& items) {
  std::vector<Revision> out;
  for (const auto& item : items)
    if (item.is_object())
      if (auto r = parse(item.get_object())) out.push_back(std::move(*r));
  std::sort(out.begin(), out.end(), [](const Revision& a, const Revision& b) { return a.number < b.number; });
  return out;
}

std::vector<std::string> to_prune(const std::vector<Revision>& sorted, int limit) {
  std::vector<std::string> out;
  const std::size_t keep = static_cast<std::size_t>(std::max(limit, 0));
  for (std::size_t i = 0; i + keep < sorted.size(); ++i) out.push_back(sorted[i].name);
  return out;
}

std::vector<std::string> changes(const Revision* previous, const Revision& current) {
  if (previous == nullptr) return {"(first recorded)"};
  std::vector<std::string> out;
  json::error_code ea, eb;
  const json::value a = json::parse(previous->content.user_config, ea);
  const json::value b = json::parse(current.content.user_config, eb);
  if (ea || eb) {
    if (previous->content.user_config != current.content.user_config) out.emplace_back(baseline::kBaselineKey);
  } else {
    out = util::diff_paths(policy::comparable(a), policy::comparable(b));
  }
  if (previous->content.env != current.content.env) out.emplace_back(baseline::kEnvKey);
  if (previous->content.overrides != current.content.overrides) out.emplace_back(baseline::kOverridesKey);
  if (previous->content.scripts_digest != current.content.scripts_digest) out.emplace_back("scripts");
  return out;
}

RollbackPlan plan_rollback(const Content& current, const Content& target) {
  RollbackPlan plan;
  json::error_code ec;
  const json::value cur = policy::comparable(json::parse(current.user_config, ec));
  const json::value goal = ec ? json::value() : policy::comparable(json::parse(target.user_config, ec));
  if (ec || !cur.is_object() || !goal.is_object()) {
    plan.refusal = "a user_config.json that is not a JSON object";
    return plan;
  }
  const std::string mode = "motor_deploy_config.deploy_mode";
  const json::value* from = util::find(&cur, {"motor_deploy_config", "deploy_mode"});
  const json::value* to = util::find(&goal, {"motor_deploy_config", "deploy_mode"});
  if (util::str(from) != util::str(to)) {
    plan.refusal = mode + " " + util::str(from) + " → " + util::str(to);
    return plan;
  }
  const std::vector<std::string> counts = {policy::kPrefillInstancesPath, policy::kDecodeInstancesPath,
                                           policy::kHybridInstancesPath, policy::kEncodeInstancesPath};
  for (const auto& p : util::diff_paths(cur, goal))
    plan.counts = plan.counts || std::find(counts.begin(), counts.end(), p) != counts.end();
  std::vector<std::string> allowed = counts;
  allowed.insert(allowed.end(), policy::update_config_whitelist().begin(), policy::update_config_whitelist().end());
  plan.redeploy_paths = policy::disallowed_changes(cur, goal, allowed);
  if (current.overrides != target.overrides) {
    if (target.overrides) plan.redeploy_paths.emplace_back(baseline::kOverridesKey);
    else plan.kept.push_back(std::string(baseline::kOverridesKey) + " (the revision has none)");
  }
  if (current.env != target.env && !target.env)
    plan.kept.push_back(std::string(baseline::kEnvKey) + " (the revision has none)");
  if (current.scripts_digest != target.scripts_digest)
    plan.kept.emplace_back("the stored scripts (a revision keeps only their digest)");
  plan.redeploy = !plan.redeploy_paths.empty();
  plan.settings = !plan.redeploy &&
                  (!policy::disallowed_changes(cur, goal, counts).empty() || (target.env && current.env != target.env));
  return plan;
}

}  // namespace mindie::revision
