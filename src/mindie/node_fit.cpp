#include "mindie/node_fit.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <tuple>

#include "kube/names.h"
#include "util/strings.h"

namespace mindie::node_fit {

namespace json = boost::json;

namespace {

const json::object* object_at(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_object() ? &v->get_object() : nullptr;
}

long long integer_at(const json::object& o, std::string_view key, long long fallback) {
  const json::value* v = o.if_contains(key);
  return v && v->is_int64() ? v->get_int64() : fallback;
}

// A count from a quantity (a string like "16", or a number). A server may claim anything: negative or unreadable
// is 0, and past kMaxCount it is capped, so sums over many nodes cannot overflow.
constexpr long long kMaxCount = 1000000;
long long quantity_count(const json::value& v) {
  if (v.is_int64()) return std::clamp<long long>(v.get_int64(), 0, kMaxCount);
  if (!v.is_string()) return 0;
  const auto q = kube::parse_quantity(v.get_string());
  return q && *q >= 0 ? static_cast<long long>(std::min<long double>(*q, kMaxCount)) : 0;
}

// The NPU request of a pod template: (resource, count), or nothing for a pod without NPUs.
std::optional<std::pair<std::string, long long>> npu_request(const json::object& pod_template,
                                                             const std::vector<std::string>& npu_resources) {
  const json::object* spec = object_at(pod_template, "spec");
  const json::value* containers = spec ? spec->if_contains("containers") : nullptr;
  if (!containers || !containers->is_array() || containers->get_array().empty() ||
      !containers->get_array()[0].is_object())
    return std::nullopt;
  const json::object* res = object_at(containers->get_array()[0].get_object(), "resources");
  const json::object* requests = res ? object_at(*res, "requests") : nullptr;
  if (!requests) return std::nullopt;
  for (const auto& r : npu_resources)
    if (const json::value* v = requests->if_contains(r); v && quantity_count(*v) > 0)
      return std::pair{r, quantity_count(*v)};
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> node_selector(const json::object& pod_template) {
  std::vector<std::pair<std::string, std::string>> out;
  const json::object* spec = object_at(pod_template, "spec");
  if (const json::object* sel = spec ? object_at(*spec, "nodeSelector") : nullptr)
    for (const auto& kv : *sel)
      if (kv.value().is_string()) out.emplace_back(std::string(kv.key()), std::string(kv.value().get_string()));
  return out;
}

// The sum (`sum`) or the largest (init containers run one at a time) of `resource` over the containers listed at
// `key` of a pod spec; a container's limit stands for its missing request.
long long container_requests(const json::object& spec, std::string_view key, const std::string& resource, bool sum) {
  const json::value* list = spec.if_contains(key);
  if (!list || !list->is_array()) return 0;
  long long out = 0;
  for (const auto& c : list->get_array()) {
    const json::object* res = c.is_object() ? object_at(c.get_object(), "resources") : nullptr;
    if (!res) continue;
    const json::value* v = nullptr;
    for (const char* field : {"requests", "limits"})
      if (const json::object* m = object_at(*res, field); m && !v) v = m->if_contains(resource);
    const long long n = v ? quantity_count(*v) : 0;
    out = sum ? std::min(out + n, kMaxCount) : std::max(out, n);
  }
  return out;
}

bool matches(const NodeSupply& node, const PodDemand& d) {
  return !node.unschedulable && std::all_of(d.selector.begin(), d.selector.end(), [&](const auto& kv) {
    auto it = node.labels.find(kv.first);
    return it != node.labels.end() && it->second == kv.second;
  });
}

std::string selector_text(const PodDemand& d) {
  const std::string out = util::join(d.selector, ",", [](const auto& kv) { return kv.first + "=" + kv.second; });
  return out.empty() ? "(any node)" : out;
}

std::string plural(long long n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

std::string Shortfall::message() const {
  const PodDemand& d = demand;
  std::string msg = "role " + d.role + ": " + plural(d.pods, "pod") + " x " + std::to_string(d.npus) + " " +
                    d.resource + " on nodes labelled " + selector_text(d) + ": ";
  if (matching_nodes == 0)
    return msg +
           "no schedulable node has these labels (label the nodes, or check motor_deploy_config.hardware_type "
           "and the nodeSelector overrides)";
  const int left = d.pods - placed;
  return msg +
         (matching_nodes == 1 ? "the 1 matching node ("
                              : "the " + std::to_string(matching_nodes) + " matching nodes (") +
         std::to_string(matching_npus) + " allocatable" +
         (matching_used > 0 ? ", " + std::to_string(matching_used) + " held by the pods on them" : std::string()) +
         ") take" + (matching_nodes == 1 ? "s " : " ") + std::to_string(placed) +
         " of them alongside the other roles; " + plural(left, "pod") + " (" + std::to_string(left * d.npus) +
         " NPUs) do" + (left == 1 ? "es" : "") + " not fit";
}

std::vector<PodDemand> npu_demands(const std::vector<json::object>& objects,
                                   const std::vector<std::string>& npu_resources) {
  std::vector<PodDemand> out;
  auto add = [&](const std::string& role, long long pods, const json::object& pod_template) {
    const auto req = npu_request(pod_template, npu_resources);
    if (!req || pods <= 0) return;
    PodDemand d{role, 0, req->second, req->first, node_selector(pod_template)};
    auto same = [&](const PodDemand& o) {
      return std::tie(o.role, o.npus, o.resource, o.selector) == std::tie(d.role, d.npus, d.resource, d.selector);
    };
    auto it = std::find_if(out.begin(), out.end(), same);
    if (it == out.end()) it = out.insert(out.end(), std::move(d));
    it->pods += static_cast<int>(pods);
  };
  for (const auto& obj : objects) {
    const json::value* kind = obj.if_contains("kind");
    if (!kind || !kind->is_string()) continue;
    const json::object* spec = object_at(obj, "spec");
    if (!spec) continue;
    if (kind->get_string() == "InferServiceSet") {
      const json::object* tpl = object_at(*spec, "template");
      const json::value* roles = tpl ? tpl->if_contains("roles") : nullptr;
      if (!roles || !roles->is_array()) continue;
      const long long sets = integer_at(*spec, "replicas", 1);
      for (const auto& r : roles->get_array()) {
        if (!r.is_object()) continue;
        const json::object& role = r.get_object();
        const json::object* rspec = object_at(role, "spec");
        const json::object* pod = rspec ? object_at(*rspec, "template") : nullptr;
        const json::value* name = role.if_contains("name");
        if (!pod || !name || !name->is_string()) continue;
        add(std::string(name->get_string()), sets * integer_at(role, "replicas", 1) * integer_at(*rspec, "replicas", 1),
            *pod);
      }
    } else if (kind->get_string() == "Deployment") {
      const json::object* pod = object_at(*spec, "template");
      if (!pod) continue;
      const json::object* md = object_at(obj, "metadata");
      const json::object* labels = md ? object_at(*md, "labels") : nullptr;
      std::string role;
      if (const json::value* c = labels ? labels->if_contains("app.kubernetes.io/component") : nullptr;
          c && c->is_string())
        role = c->get_string();
      else if (const json::value* n = md ? md->if_contains("name") : nullptr; n && n->is_string())
        role = n->get_string();
      add(role, integer_at(*spec, "replicas", 1), *pod);
    }
  }
  return out;
}

NodeSupply node_supply(const json::object& node, const std::vector<std::string>& npu_resources) {
  NodeSupply out;
  if (const json::object* md = object_at(node, "metadata")) {
    if (const json::value* n = md->if_contains("name"); n && n->is_string()) out.name = n->get_string();
    if (const json::object* labels = object_at(*md, "labels"))
      for (const auto& kv : *labels)
        if (kv.value().is_string()) out.labels[std::string(kv.key())] = std::string(kv.value().get_string());
  }
  if (const json::object* spec = object_at(node, "spec"))
    if (const json::value* u = spec->if_contains("unschedulable"); u && u->is_bool()) out.unschedulable = u->get_bool();
  const json::object* status = object_at(node, "status");
  if (const json::object* alloc = status ? object_at(*status, "allocatable") : nullptr)
    for (const auto& r : npu_resources)
      if (const json::value* v = alloc->if_contains(r)) out.allocatable[r] = quantity_count(*v);
  return out;
}

std::optional<PodUse> pod_use(const json::object& pod, const std::vector<std::string>& npu_resources) {
  const json::object* spec = object_at(pod, "spec");
  const json::value* node = spec ? spec->if_contains("nodeName") : nullptr;
  if (!node || !node->is_string() || node->get_string().empty()) return std::nullopt;
  if (const json::object* status = object_at(pod, "status"))
    if (const json::value* phase = status->if_contains("phase");
        phase && phase->is_string() && (phase->get_string() == "Succeeded" || phase->get_string() == "Failed"))
      return std::nullopt;
  PodUse use{std::string(node->get_string()), "", {}};
  if (const json::object* md = object_at(pod, "metadata"))
    if (const json::value* ns = md->if_contains("namespace"); ns && ns->is_string()) use.namespace_ = ns->get_string();
  for (const auto& r : npu_resources) {
    const long long held = std::max(container_requests(*spec, "containers", r, true),
                                    container_requests(*spec, "initContainers", r, false));
    if (held > 0) use.npus[r] = held;
  }
  if (use.npus.empty()) return std::nullopt;
  return use;
}

void add_pod_uses(std::vector<NodeSupply>& nodes, const std::vector<PodUse>& uses, const std::string& freed_namespace) {
  std::map<std::string, NodeSupply*> by_name;
  for (auto& n : nodes) by_name[n.name] = &n;
  for (const auto& u : uses) {
    const auto it = by_name.find(u.node);
    if (it == by_name.end() || (!freed_namespace.empty() && u.namespace_ == freed_namespace)) continue;
    for (const auto& [resource, count] : u.npus)
      it->second->used[resource] = std::min(it->second->used[resource] + count, kMaxCount);
  }
}

std::vector<PodDemand> added_demands(const std::vector<PodDemand>& before, const std::vector<PodDemand>& after) {
  std::vector<PodDemand> out;
  for (const auto& d : after) {
    int had = 0;
    for (const auto& b : before)
      if (std::tie(b.role, b.npus, b.resource, b.selector) == std::tie(d.role, d.npus, d.resource, d.selector))
        had += b.pods;
    if (d.pods > had) {
      out.push_back(d);
      out.back().pods = d.pods - had;
    }
  }
  return out;
}

std::vector<Shortfall> pack(const std::vector<PodDemand>& demands, const std::vector<NodeSupply>& nodes) {
  // Free NPUs per node and resource: allocatable less what the node's pods hold.
  std::vector<std::map<std::string, long long>> free(nodes.size());
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    free[n] = nodes[n].allocatable;
    for (const auto& [resource, held] : nodes[n].used) free[n][resource] = std::max(0LL, free[n][resource] - held);
  }
  std::vector<std::vector<std::size_t>> candidates(demands.size());
  for (std::size_t d = 0; d < demands.size(); ++d)
    for (std::size_t n = 0; n < nodes.size(); ++n)
      if (matches(nodes[n], demands[d])) candidates[d].push_back(n);

  // Largest pods first (stable: roles keep their order among equals).
  std::vector<std::size_t> order(demands.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return demands[a].npus > demands[b].npus; });
  std::vector<int> placed(demands.size(), 0);
  for (std::size_t d : order) {
    const PodDemand& dem = demands[d];
    for (int pod = 0; pod < dem.pods; ++pod) {
      std::size_t best = nodes.size();
      for (std::size_t n : candidates[d]) {
        const long long room = free[n][dem.resource];
        if (room >= dem.npus && (best == nodes.size() || room < free[best][dem.resource])) best = n;
      }
      if (best == nodes.size()) break;  // no node has room for one more: neither for the rest
      free[best][dem.resource] -= dem.npus;
      ++placed[d];
    }
  }

  std::vector<Shortfall> out;
  for (std::size_t d = 0; d < demands.size(); ++d) {
    if (placed[d] == demands[d].pods) continue;
    Shortfall s{demands[d], placed[d], static_cast<int>(candidates[d].size()), 0};
    for (std::size_t n : candidates[d]) {
      const auto it = nodes[n].allocatable.find(demands[d].resource);
      if (it != nodes[n].allocatable.end()) s.matching_npus += it->second;
      const auto held = nodes[n].used.find(demands[d].resource);
      if (held != nodes[n].used.end())
        s.matching_used += std::min(held->second, it == nodes[n].allocatable.end() ? 0 : it->second);
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace mindie::node_fit
