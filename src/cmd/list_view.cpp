#include "cmd/list_view.h"

#include "cmd/aibrix.h"
#include "util/table.h"
#include "util/time.h"

namespace mindie::cmd {

namespace json = boost::json;

namespace {

/// One role of a row: instances ready of those wanted.
struct RoleCount {
  std::string name;
  std::int64_t ready = 0;
  std::int64_t desired = 0;
};

/// What a row shows of one deployment, taken from its status report.
struct Row {
  std::string ns, name, framework, mode, created;
  bool ready = false;
  std::vector<RoleCount> roles;
  std::int64_t ready_instances = 0, desired_instances = 0;
  std::optional<std::int64_t> out_of_date;  ///< instances not on their role's template; nullopt: not judged
};

/// A MindIE deployment: its used roles, with the instances status counts (ready of those the spec wants, as the
/// status role table shows them) and those on another template.
Row mindie_row(const ListedDeployment& d) {
  const status::Report& r = *d.mindie;
  Row row{d.ns, r.name, "mindie", r.deploy_mode.empty() ? "unknown" : r.deploy_mode, d.created, r.ready, {}, 0, 0, 0};
  for (const auto& role : r.roles) {
    if (role.unused()) continue;
    const std::int64_t desired = role.spec_instances ? role.wanted_instances.value_or(0) : 0;
    row.roles.push_back({role.name, role.ready_instances, desired});
    row.ready_instances += role.ready_instances;
    row.desired_instances += desired;
    *row.out_of_date += role.instances_on_other_templates;
  }
  return row;
}

/// A StormService: its roles' ready replicas (pod groups) of the spec's.
Row storm_row(const ListedDeployment& d) {
  const aibrix::StormStatus& s = *d.storm;
  Row row{d.ns, s.name, "aibrix", "stormservice", d.created, s.ready, {}, 0, 0, std::nullopt};
  for (const auto& role : s.roles) {
    row.roles.push_back({role.name, role.ready_replicas, role.replicas});
    row.ready_instances += role.ready_replicas;
    row.desired_instances += role.replicas;
  }
  return row;
}

std::vector<Row> rows_of(const Listing& listing) {
  std::vector<Row> rows;
  for (const auto& d : listing.deployments) rows.push_back(d.mindie ? mindie_row(d) : storm_row(d));
  return rows;
}

}  // namespace

std::string render_list(const Listing& listing, bool all_namespaces, bool wide,
                        std::chrono::system_clock::time_point now) {
  if (listing.deployments.empty()) return "";
  std::vector<util::Column> columns{{"NAME"},        {"MODE"}, {"ROLES"},       {"INSTANCES"},
                                    {"OUT-OF-DATE"}, {"AGE"},  {"READY", true}, {"INSTANCES PER ROLE", true}};
  if (all_namespaces) columns.insert(columns.begin(), {"NAMESPACE"});  // kubectl get shows it with -A only
  util::Table table(std::move(columns), wide);
  const std::int64_t seconds = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  for (const Row& row : rows_of(listing)) {
    std::string roles, per_role;
    for (const auto& r : row.roles) {
      roles += (roles.empty() ? "" : ",") + r.name;
      per_role += (per_role.empty() ? "" : " ") + r.name + "=" + std::to_string(r.ready) + "/" +
                  std::to_string(r.desired);
    }
    const auto created = util::parse_rfc3339(row.created);
    std::vector<std::string> cells{row.name,
                                   row.mode,
                                   roles,
                                   std::to_string(row.ready_instances) + "/" + std::to_string(row.desired_instances),
                                   row.out_of_date ? std::to_string(*row.out_of_date) : "-",
                                   created ? util::human_duration(seconds - *created) : "<unknown>",
                                   row.ready ? "yes" : "no",
                                   per_role};
    if (all_namespaces) cells.insert(cells.begin(), row.ns);
    table.add(std::move(cells));
  }
  return table.str();
}

json::object list_json(const Listing& listing) {
  json::array items;
  for (const Row& row : rows_of(listing)) {
    json::array roles;
    for (const auto& r : row.roles)
      roles.push_back({{"name", r.name}, {"readyInstances", r.ready}, {"desiredInstances", r.desired}});
    json::value out_of_date = nullptr;
    if (row.out_of_date) out_of_date = *row.out_of_date;
    items.push_back({{"namespace", row.ns},
                     {"name", row.name},
                     {"framework", row.framework},
                     {"mode", row.mode},
                     {"ready", row.ready},
                     {"roles", std::move(roles)},
                     {"readyInstances", row.ready_instances},
                     {"desiredInstances", row.desired_instances},
                     {"outOfDateInstances", std::move(out_of_date)},
                     {"createdAt", row.created}});
  }
  json::array warnings;
  for (const auto& w : listing.warnings) warnings.emplace_back(w);
  return {{"apiVersion", "kubectl-mindie/v1"},
          {"kind", "DeploymentList"},
          {"items", std::move(items)},
          {"warnings", std::move(warnings)}};
}

std::vector<std::pair<kube::GVR, std::string>> listed_objects(const Listing& listing) {
  std::vector<std::pair<kube::GVR, std::string>> names;
  for (const auto& d : listing.deployments) {
    if (d.storm) {
      names.emplace_back(kStormServices, d.storm->name);
    } else if (d.mindie->multi()) {
      for (const auto& dep : d.mindie->deployments) names.emplace_back(kube::gvr::kDeployments, dep.name);
    } else if (d.mindie->found) {
      names.emplace_back(kube::gvr::kInferServiceSets, d.mindie->name);
    }
  }
  return names;
}

}  // namespace mindie::cmd
