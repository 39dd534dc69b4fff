// change::Intent: what a change is about to do, recorded in the namespace lock's Lease before its first write, so
// that the next command can finish or revert it (docs/architecture.md, "The change protocol"). One alternative per
// change kind; the JSON is the format kubectl-mindie has written since intents exist ({"format":1,"command","at",
// "by", ...the kind's fields}), so that intents left by a released version still recover.
#pragma once

#include <boost/json.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace mindie::change {

/// Instance counts of the engine roles, as intents record them ({"prefill","decode","hybrid","encode"}, each 0..16).
struct RoleCounts {
  int prefill = 0;
  int decode = 0;
  int hybrid = 0;  ///< the PD-hybrid union role
  int encode = 0;
  bool operator==(const RoleCounts&) const = default;
  /// The count of `role`: prefill, decode, encode, or union (the hybrid count).
  int of(std::string_view role) const;
};

/// A role's counts changing: the roles named, from → to.
struct CountChange {
  std::vector<std::string> roles;  ///< each prefill, decode, union or encode
  RoleCounts from;
  RoleCounts to;
};

/// deploy: the baseline (motor-config) then the workload rendered from it.
struct DeployIntent {
  std::string mode;      ///< deploy_mode
  std::string workload;  ///< the workload's name
  /// motor-config's resourceVersion when read under the lock; "" when there was none.
  std::string baseline_resource_version;
  std::string baseline_digest;  ///< digest of the baseline keys it writes (mindie::baseline::data_digest)
  /// The keys of motor-config it writes; absent in intents of versions that wrote them all.
  std::optional<std::vector<std::string>> baseline_keys;
  bool adopt = false;
  bool force_conflicts = false;
  std::optional<CountChange> counts;  ///< the instance counts it changes, when the baseline existed
};

/// scale: the live roles' replicas, then the baseline's counts.
struct ScaleIntent {
  std::string mode;
  std::string workload;
  CountChange counts;
  /// Replicas each role ran when read under the lock (absent: the baseline's `from` counts).
  std::map<std::string, int> live_from;
  std::string baseline_resource_version;  ///< motor-config's as read under the lock
};

/// One object a delete removes.
struct DeleteTarget {
  std::string api_version;
  std::string kind;
  std::string ns;  ///< "" cluster-scoped
  std::string name;
  bool operator==(const DeleteTarget&) const = default;
};

/// delete: every object of the deployment, motor-config last.
struct DeleteIntent {
  std::string mode;
  std::string workload;
  std::vector<DeleteTarget> targets;
};

/// update-config: one compare-and-swap patch of motor-config (whole or not at all), then the baseline's revision; the
/// intent stands for the revision, which its recovery records when the command stopped in between.
struct UpdateConfigIntent {};

/// rollout restart: a role's instances brought to its current pod template one at a time, and how far it got, so that
/// `rollout resume` continues it and any other command first takes back what it changed for the while (a surge
/// instance, a Deployment's strategy).
struct RolloutIntent {
  std::string mode;
  std::string workload;
  std::vector<std::string> roles;  ///< the roles asked for (--role); empty: every role
  bool all = false;                ///< --all: instances already current too
  bool surge = true;               ///< --surge (else --no-surge)
  bool allow_downtime = false;
  int max_unavailable = 1;
  std::vector<std::string> done;  ///< instances rolled so far, as "statefulset/NAME" or "deployment/NAME"
  /// Roles given a surge instance: role -> the replicas the role ran before it (infer_service_set).
  std::map<std::string, int> surged;
  /// Deployments rolled with --no-surge: name -> their spec.strategy before (JSON text; "{}" when none was set).
  std::map<std::string, std::string> strategies;
  bool stop_operator = false;  ///< --stop-operator: gang roles rolled with infer-operator stopped meanwhile
  /// The replicas of infer-operator's Deployment while the rollout has it scaled to 0 (0: it is not stopped).
  int operator_replicas = 0;
  /// While infer-operator is stopped: the label selector of the pods of the gang instance being replaced, which must
  /// all be gone before it starts again ("" none).
  std::string replacing;
  /// While infer-operator is stopped: the Volcano PodGroups of the gang instance being replaced or removed, deleted
  /// before it starts again, so that it makes them from the current template (empty: none).
  std::vector<std::string> pod_groups;
};

/// The kind-specific part of an intent.
using Change = std::variant<DeployIntent, ScaleIntent, DeleteIntent, UpdateConfigIntent, RolloutIntent>;

/// The command name a change kind records ("deploy", "scale", "delete", "update-config", "rollout").
std::string command_of(const Change& change);

/// A recorded intent.
struct Intent {
  Intent() = default;
  /// A change about to be recorded: the lock stamps `at` and `by` when it writes it.
  explicit Intent(Change c) : change(std::move(c)) {}
  Change change;
  std::int64_t at = 0;     ///< seconds since the epoch when recorded
  boost::json::object by;  ///< who recorded it (the lock's holder record: user, host, pid, command)
  /// The raw record of an earlier intent this one superseded (a deploy or delete takes its place), as found: it may
  /// be another version's, so it is kept as it was and parsed only when recovered.
  std::optional<boost::json::object> supersedes;
};

/// An intent record that cannot be read: its command is known but a field is missing or out of range.
class UnreadableIntent : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The record's "command" when it names a change kind this version knows, else nullopt (a newer version's, or
/// garbage: the lease is anyone's to write, and the name reaches the terminal).
std::optional<std::string> known_command(const boost::json::object& record);

/// Reads a record of a known command. Throws UnreadableIntent naming what is wrong; never anything else.
Intent parse_intent(const boost::json::object& record);

/// The record for `intent`, as parse_intent reads it back ("format": 1).
boost::json::object to_record(const Intent& intent);

/// The counts a change moves as "prefill 1 → 3, decode 1 → 2" ("" when it moves none).
std::string count_change_text(const Change& change);

}  // namespace mindie::change
