#include "change/intent.h"

#include <algorithm>
#include <cctype>

namespace mindie::change {

namespace json = boost::json;

namespace {

constexpr const char* kRoles[] = {"prefill", "decode", "union", "encode"};

// The field `key` of `o` as a string; `optional`: "" when absent. Throws UnreadableIntent otherwise.
std::string string_field(const json::object& o, std::string_view key, bool optional = false) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr && optional) return "";
  if (v == nullptr || !v->is_string()) throw UnreadableIntent("\"" + std::string(key) + "\" is not a string");
  return std::string(v->get_string());
}

bool bool_field(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_bool() && v->get_bool();
}

// An integer in [0, max], else UnreadableIntent naming `what`.
int bounded(const json::value* v, std::int64_t max, const std::string& what) {
  if (v == nullptr || !v->is_int64() || v->get_int64() < 0 || v->get_int64() > max)
    throw UnreadableIntent(what + " is not a number 0.." + std::to_string(max));
  return static_cast<int>(v->get_int64());
}

RoleCounts counts_field(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || !v->is_object()) throw UnreadableIntent("\"" + std::string(key) + "\" is not an object");
  const json::object& c = v->get_object();
  const std::string at = "\"" + std::string(key) + "\".";
  return {bounded(c.if_contains("prefill"), 16, at + "prefill"), bounded(c.if_contains("decode"), 16, at + "decode"),
          bounded(c.if_contains("hybrid"), 16, at + "hybrid"), bounded(c.if_contains("encode"), 16, at + "encode")};
}

json::object counts_record(const RoleCounts& c) {
  return {{"prefill", c.prefill}, {"decode", c.decode}, {"hybrid", c.hybrid}, {"encode", c.encode}};
}

// "roles", "from", "to"; only the known role names are kept (they reach the terminal).
CountChange count_change_field(const json::object& o) {
  CountChange c;
  const json::value* roles = o.if_contains("roles");
  if (roles == nullptr || !roles->is_array()) throw UnreadableIntent("\"roles\" is not an array");
  for (const auto& v : roles->get_array())
    for (const char* role : kRoles)
      if (v == role) c.roles.emplace_back(role);
  if (c.roles.empty()) throw UnreadableIntent("\"roles\" names no role");
  c.from = counts_field(o, "from");
  c.to = counts_field(o, "to");
  return c;
}

void put_count_change(json::object& o, const CountChange& c) {
  json::array roles;
  for (const auto& r : c.roles) roles.emplace_back(r);
  o["roles"] = std::move(roles);
  o["from"] = counts_record(c.from);
  o["to"] = counts_record(c.to);
}

DeployIntent deploy_from(const json::object& o) {
  DeployIntent d;
  d.mode = string_field(o, "mode", true);
  d.workload = string_field(o, "workload", true);
  d.baseline_resource_version = string_field(o, "baseline_resource_version");
  d.baseline_digest = string_field(o, "baseline_digest");
  if (const auto* k = o.if_contains("baseline_keys"); k != nullptr && k->is_array()) {
    d.baseline_keys.emplace();
    for (const auto& v : k->get_array())
      if (v.is_string()) d.baseline_keys->emplace_back(v.get_string());
  }
  d.adopt = bool_field(o, "adopt");
  d.force_conflicts = bool_field(o, "force_conflicts");
  // Only what status and the recovery line show: a deploy recovers without it.
  try {
    if (o.contains("roles")) d.counts = count_change_field(o);
  } catch (const UnreadableIntent&) {
  }
  return d;
}

void put_deploy(json::object& o, const DeployIntent& d) {
  o["mode"] = d.mode;
  o["workload"] = d.workload;
  o["baseline_resource_version"] = d.baseline_resource_version;
  o["baseline_digest"] = d.baseline_digest;
  if (d.baseline_keys) {
    json::array keys;
    for (const auto& k : *d.baseline_keys) keys.emplace_back(k);
    o["baseline_keys"] = std::move(keys);
  }
  o["adopt"] = d.adopt;
  o["force_conflicts"] = d.force_conflicts;
  if (d.counts) put_count_change(o, *d.counts);
}

ScaleIntent scale_from(const json::object& o) {
  ScaleIntent s;
  s.mode = string_field(o, "mode", true);
  s.workload = string_field(o, "workload", true);
  s.counts = count_change_field(o);
  s.baseline_resource_version = string_field(o, "baseline_resource_version");
  // Missing or out of range, a role's live count is taken to be its baseline's `from` count.
  if (const auto* v = o.if_contains("live_from"); v != nullptr && v->is_object())
    for (const auto& [role, n] : v->get_object())
      for (const char* known : kRoles)
        if (role == known && n.is_int64() && n.get_int64() >= 0 && n.get_int64() <= 1 << 20)
          s.live_from[known] = static_cast<int>(n.get_int64());
  return s;
}

void put_scale(json::object& o, const ScaleIntent& s) {
  o["mode"] = s.mode;
  o["workload"] = s.workload;
  put_count_change(o, s.counts);
  json::object live;
  for (const auto& [role, n] : s.live_from) live[role] = n;
  o["live_from"] = std::move(live);
  o["baseline_resource_version"] = s.baseline_resource_version;
}

DeleteIntent delete_from(const json::object& o) {
  DeleteIntent d;
  d.mode = string_field(o, "mode", true);
  d.workload = string_field(o, "workload", true);
  if (const auto* t = o.if_contains("targets"); t != nullptr && t->is_array()) {
    for (const auto& v : t->get_array()) {
      // Kept as read, even when unreadable: the recovery takes such a target as a sign that the delete had begun.
      static const json::object none;
      const json::object& target = v.is_object() ? v.get_object() : none;
      const auto field = [&](std::string_view key) {
        const json::value* f = target.if_contains(key);
        return f != nullptr && f->is_string() ? std::string(f->get_string()) : std::string();
      };
      d.targets.push_back({field("apiVersion"), field("kind"), field("namespace"), field("name")});
    }
  }
  return d;
}

void put_delete(json::object& o, const DeleteIntent& d) {
  o["workload"] = d.workload;
  o["mode"] = d.mode;
  json::array targets;
  for (const auto& t : d.targets)
    targets.push_back({{"apiVersion", t.api_version}, {"kind", t.kind}, {"namespace", t.ns}, {"name", t.name}});
  o["targets"] = std::move(targets);
}

/// A name from a record that reaches the terminal: a Kubernetes object name, optionally after "kind/".
bool printable_name(const std::string& s) {
  return !s.empty() && s.size() <= 300 && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '/';
  });
}

/// The strings of array `key` of `o` that printable_name accepts.
std::vector<std::string> names_field(const json::object& o, std::string_view key) {
  std::vector<std::string> out;
  if (const auto* v = o.if_contains(key); v != nullptr && v->is_array())
    for (const auto& n : v->get_array())
      if (n.is_string() && printable_name(std::string(n.get_string()))) out.emplace_back(n.get_string());
  return out;
}

RolloutIntent rollout_from(const json::object& o) {
  RolloutIntent r;
  r.mode = string_field(o, "mode", true);
  r.workload = string_field(o, "workload", true);
  r.roles = names_field(o, "roles");
  r.done = names_field(o, "done");
  r.all = bool_field(o, "all");
  r.surge = !o.contains("surge") || bool_field(o, "surge");
  r.allow_downtime = bool_field(o, "allow_downtime");
  r.stop_operator = bool_field(o, "stop_operator");
  r.replacing = string_field(o, "replacing", true);
  r.pod_groups = names_field(o, "pod_groups");
  r.operator_replicas = o.contains("operator_replicas")
                            ? bounded(o.if_contains("operator_replicas"), 1 << 10, "\"operator_replicas\"")
                            : 0;
  r.max_unavailable = o.contains("max_unavailable")
                          ? bounded(o.if_contains("max_unavailable"), 16, "\"max_unavailable\"")
                          : 1;
  if (const auto* v = o.if_contains("surged"); v != nullptr && v->is_object())
    for (const auto& [role, n] : v->get_object())
      if (printable_name(std::string(role))) r.surged[std::string(role)] = bounded(&n, 1 << 10, "\"surged\"");
  if (const auto* v = o.if_contains("strategies"); v != nullptr && v->is_object())
    for (const auto& [name, text] : v->get_object())
      if (printable_name(std::string(name)) && text.is_string()) r.strategies[std::string(name)] = text.get_string();
  return r;
}

void put_rollout(json::object& o, const RolloutIntent& r) {
  o["mode"] = r.mode;
  o["workload"] = r.workload;
  json::array roles, done;
  for (const auto& role : r.roles) roles.emplace_back(role);
  for (const auto& d : r.done) done.emplace_back(d);
  o["roles"] = std::move(roles);
  o["all"] = r.all;
  o["surge"] = r.surge;
  o["allow_downtime"] = r.allow_downtime;
  o["max_unavailable"] = r.max_unavailable;
  o["stop_operator"] = r.stop_operator;
  o["operator_replicas"] = r.operator_replicas;
  o["replacing"] = r.replacing;
  json::array pod_groups;
  for (const auto& pg : r.pod_groups) pod_groups.emplace_back(pg);
  o["pod_groups"] = std::move(pod_groups);
  o["done"] = std::move(done);
  json::object surged, strategies;
  for (const auto& [role, n] : r.surged) surged[role] = n;
  for (const auto& [name, text] : r.strategies) strategies[name] = text;
  o["surged"] = std::move(surged);
  o["strategies"] = std::move(strategies);
}

}  // namespace

int RoleCounts::of(std::string_view role) const {
  return role == "prefill" ? prefill : role == "decode" ? decode : role == "encode" ? encode : hybrid;
}

std::string command_of(const Change& change) {
  struct Name {
    std::string operator()(const DeployIntent&) const { return "deploy"; }
    std::string operator()(const ScaleIntent&) const { return "scale"; }
    std::string operator()(const DeleteIntent&) const { return "delete"; }
    std::string operator()(const UpdateConfigIntent&) const { return "update-config"; }
    std::string operator()(const RolloutIntent&) const { return "rollout"; }
  };
  return std::visit(Name{}, change);
}

std::optional<std::string> known_command(const json::object& record) {
  if (const auto* c = record.if_contains("command"); c != nullptr && c->is_string())
    for (const char* known : {"deploy", "scale", "delete", "update-config", "rollout"})
      if (c->get_string() == known) return known;
  return std::nullopt;
}

Intent parse_intent(const json::object& record) {
  const auto command = known_command(record);
  if (!command) throw UnreadableIntent("it names no command this version knows");
  Intent intent;
  if (*command == "deploy") intent.change = deploy_from(record);
  else if (*command == "scale") intent.change = scale_from(record);
  else if (*command == "delete") intent.change = delete_from(record);
  else if (*command == "rollout") intent.change = rollout_from(record);
  else intent.change = UpdateConfigIntent{};
  if (const auto* at = record.if_contains("at"); at != nullptr && at->is_int64()) intent.at = at->get_int64();
  if (const auto* by = record.if_contains("by"); by != nullptr && by->is_object()) intent.by = by->get_object();
  if (const auto* s = record.if_contains("supersedes"); s != nullptr && s->is_object())
    intent.supersedes = s->get_object();
  return intent;
}

json::object to_record(const Intent& intent) {
  json::object o{{"format", 1}, {"command", command_of(intent.change)}, {"at", intent.at}, {"by", intent.by}};
  if (const auto* d = std::get_if<DeployIntent>(&intent.change)) put_deploy(o, *d);
  else if (const auto* s = std::get_if<ScaleIntent>(&intent.change)) put_scale(o, *s);
  else if (const auto* del = std::get_if<DeleteIntent>(&intent.change)) put_delete(o, *del);
  else if (const auto* r = std::get_if<RolloutIntent>(&intent.change)) put_rollout(o, *r);
  if (intent.supersedes) o["supersedes"] = *intent.supersedes;
  return o;
}

std::string count_change_text(const Change& change) {
  const CountChange* c = nullptr;
  if (const auto* s = std::get_if<ScaleIntent>(&change)) c = &s->counts;
  else if (const auto* d = std::get_if<DeployIntent>(&change); d != nullptr && d->counts) c = &*d->counts;
  if (c == nullptr) return "";
  std::string out;
  for (const auto& role : c->roles)
    out += (out.empty() ? "" : ", ") + role + " " + std::to_string(c->from.of(role)) + " \u2192 " +
           std::to_string(c->to.of(role));
  return out;
}

}  // namespace mindie::change
