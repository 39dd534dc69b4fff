#include "kube/access_review.h"

#include <map>
#include <optional>

namespace mindie::kube {

namespace json = boost::json;

namespace {

const GVR kRulesReviews{"authorization.k8s.io", "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview", false};
const GVR kAccessReviews{"authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", false};

// Whether the string array `field` of `rule` holds `want` or "*".
bool lists(const json::object& rule, const char* field, const std::string& want) {
  const json::value* v = rule.if_contains(field);
  if (!v || !v->is_array()) return false;
  for (const auto& item : v->get_array())
    if (item.is_string() && (item.get_string() == "*" || item.get_string() == want)) return true;
  return false;
}

bool names_resources(const json::object& rule) {
  const json::value* v = rule.if_contains("resourceNames");
  return v && v->is_array() && !v->get_array().empty();
}

// A namespace's rules review: its resource rules, and whether they are all the authorizers grant.
struct Rules {
  json::array rules;
  bool complete = false;
};

// The review of `ns`; nullopt when the server refuses it (an old or locked-down authorization API).
std::optional<Rules> review_rules(Client& client, const std::string& ns) {
  const json::object review{{"apiVersion", "authorization.k8s.io/v1"},
                            {"kind", "SelfSubjectRulesReview"},
                            {"spec", {{"namespace", ns}}}};
  json::object answer;
  try {
    answer = client.create(kRulesReviews, review);
  } catch (const ApiError& e) {
    if (e.code() == 403 || e.code() == 404) return std::nullopt;
    throw;
  }
  Rules out;
  const json::value* status = answer.if_contains("status");
  if (!status || !status->is_object()) return out;
  const json::object& s = status->get_object();
  if (const json::value* r = s.if_contains("resourceRules"); r && r->is_array()) out.rules = r->get_array();
  // Rules are additive: a listed one holds even when the list is incomplete (k8s.io/api authorization/v1 types.go,
  // SubjectRulesReviewStatus); what it does not list is settled only by a complete one. An evaluation error leaves
  // rules out too.
  const json::value* incomplete = s.if_contains("incomplete");
  const json::value* error = s.if_contains("evaluationError");
  out.complete = !(incomplete && incomplete->is_bool() && incomplete->get_bool()) &&
                 !(error && error->is_string() && !error->get_string().empty());
  return out;
}

// The access review of `a`: true or false; nullopt when the server refuses the review itself.
std::optional<bool> review_access(Client& client, const ResourceAccess& a) {
  json::object attributes{{"verb", a.verb}, {"group", a.group}, {"resource", a.resource}};
  if (!a.ns.empty()) attributes["namespace"] = a.ns;
  const json::object review{{"apiVersion", "authorization.k8s.io/v1"},
                            {"kind", "SelfSubjectAccessReview"},
                            {"spec", {{"resourceAttributes", attributes}}}};
  json::object answer;
  try {
    answer = client.create(kAccessReviews, review);
  } catch (const ApiError& e) {
    if (e.code() == 403 || e.code() == 404) return std::nullopt;
    throw;
  }
  const json::value* status = answer.if_contains("status");
  const json::value* ok = status && status->is_object() ? status->get_object().if_contains("allowed") : nullptr;
  return ok && ok->is_bool() && ok->get_bool();
}

}  // namespace

bool rules_grant(const json::array& resource_rules, const ResourceAccess& a) {
  for (const auto& r : resource_rules) {
    if (!r.is_object()) continue;
    const json::object& rule = r.get_object();
    if (names_resources(rule)) continue;
    if (lists(rule, "verbs", a.verb) && lists(rule, "apiGroups", a.group) && lists(rule, "resources", a.resource))
      return true;
  }
  return false;
}

std::vector<ResourceAccess> denied(Client& client, const std::vector<ResourceAccess>& asked) {
  std::map<std::string, std::optional<Rules>> by_ns;
  for (const auto& a : asked)
    if (!a.ns.empty() && !by_ns.count(a.ns)) by_ns[a.ns] = review_rules(client, a.ns);
  // A cluster-wide right is denied when a complete review of any namespace lacks it: a namespace's rules hold every
  // cluster-wide grant.
  const Rules* any = nullptr;
  for (const auto& [ns, rules] : by_ns)
    if (rules && rules->complete) any = &*rules;
  std::vector<bool> refused(asked.size(), false);
  std::vector<std::size_t> unsettled;
  for (std::size_t i = 0; i < asked.size(); ++i) {
    const ResourceAccess& a = asked[i];
    if (!a.ns.empty()) {
      const std::optional<Rules>& rules = by_ns[a.ns];
      if (rules && rules_grant(rules->rules, a)) continue;
      if (rules && rules->complete) refused[i] = true;
      else unsettled.push_back(i);
    } else if (any && !rules_grant(any->rules, a)) {
      refused[i] = true;
    } else {
      unsettled.push_back(i);
    }
  }
  // Everything cluster-wide allowed settles every question at once (`kubectl auth can-i '*' '*'`).
  if (unsettled.size() > 1 && review_access(client, {"*", "*", "*", ""}).value_or(false)) unsettled.clear();
  for (std::size_t i : unsettled) refused[i] = !review_access(client, asked[i]).value_or(true);
  std::vector<ResourceAccess> out;
  for (std::size_t i = 0; i < asked.size(); ++i)
    if (refused[i]) out.push_back(asked[i]);
  return out;
}

}  // namespace mindie::kube
