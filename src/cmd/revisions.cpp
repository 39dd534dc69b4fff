// The baseline's history on the cluster; see revisions.h.
#include "cmd/revisions.h"

#include <algorithm>
#include <ostream>

#include "cmd/lock.h"
#include "cmd/lock_records.h"
#include "mindie/render.h"
#include "util/json_path.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;

namespace {

// Kubernetes' admin and edit roles only read ControllerRevisions (kubernetes/kubernetes
// plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go): a namespace admin meets this.
const std::string kNeeds =
    "your user needs list, create, patch and delete on controllerrevisions.apps in the namespace to keep it (kubectl "
    "create role mindie-history --verb=list,create,patch,delete --resource=controllerrevisions.apps, and a "
    "rolebinding)";

/// The revision step's write; returns the revision recorded (0: none needed, or not allowed).
std::int64_t record(kube::Client& client, const std::string& ns, const json::object& written,
                    const revision::Author& author, int limit, Printer& printer) {
  const json::value* uid = util::find(written.if_contains("metadata"), {"uid"});
  // The baseline step's answer lost (read back as applied) leaves nothing to read from: read motor-config.
  const json::object cm = uid != nullptr && written.contains("data")
                              ? written
                              : client.get(kube::gvr::kConfigMaps, ns, baseline::kConfigMapName);
  const auto content = revision::content_of(baseline::read_baseline(cm, ns));
  if (!content) return 0;
  std::vector<revision::Revision> revisions;
  try {
    revisions = list_revisions(client, ns);
    if (!revisions.empty() && revisions.back().content == *content) return 0;
    const std::int64_t n = revisions.empty() ? 1 : revisions.back().number + 1;
    kube::WriteOptions opts;
    opts.field_manager = render::kFieldManager;
    // Server-side apply, not a create: revision N's name is fixed, so a request whose answer was lost (a 5xx, a
    // dropped connection) is sent again as any apply is (kube/retrying_transport.h), where a second POST would
    // meet its own first one as AlreadyExists.
    json::object made = client.apply(kControllerRevisions, revision::render(cm, n, *content, author), opts);
    if (auto r = revision::parse(made)) revisions.push_back(std::move(*r));
    for (const auto& name : revision::to_prune(revisions, limit)) {
      const auto it = std::find_if(revisions.begin(), revisions.end(), [&](const auto& r) { return r.name == name; });
      try {
        client.remove_exact(kControllerRevisions, ns, name, it->uid, "", opts);
      } catch (const kube::ApiError& e) {
        if (!e.is_not_found()) throw;  // gone already: what the prune wanted
      }
    }
    return n;
  } catch (const kube::ApiError& e) {
    if (e.code() != 403) throw;
    printer.warning("the baseline's history (controllerrevisions.apps " + std::string(revision::kNamePrefix) +
                    "N) was not recorded: " + kNeeds + " (" + e.status_message() + ")");
    return 0;
  }
}

}  // namespace

void add_history_flags(po::options_description& desc, HistoryFlags& flags) {
  desc.add_options()("history-limit", po::value(&flags.history_limit)->default_value(revision::kDefaultHistoryLimit),
                     "Revisions of the baseline to keep (kubectl mindie history), 1..1000");
}

void check_history_flags(const HistoryFlags& flags) {
  if (flags.history_limit < 1 || flags.history_limit > 1000)
    throw UsageError("--history-limit " + std::to_string(flags.history_limit) + " is out of range: 1..1000");
}

std::vector<revision::Revision> list_revisions(kube::Client& client, const std::string& ns) {
  const json::object list = client.list(kControllerRevisions, ns,
                                        std::string(revision::kHistoryLabel) + "=" + baseline::kConfigMapName);
  const json::value* items = list.if_contains("items");
  return items != nullptr && items->is_array() ? revision::from_items(items->get_array())
                                               : std::vector<revision::Revision>{};
}

const revision::Revision& find_revision(const std::vector<revision::Revision>& revisions, std::int64_t number,
                                        const std::string& ns) {
  for (const auto& r : revisions)
    if (r.number == number) return r;
  std::string known;
  for (const auto& r : revisions) known += (known.empty() ? "" : ", ") + std::to_string(r.number);
  throw CommandError("revision " + std::to_string(number) + " not found in namespace " + ns +
                     " (the revisions kept are " + known + "; kubectl mindie history -n " + ns + " lists them)");
}

std::vector<revision::Revision> existing_revisions(kube::Client& client, const std::string& ns) {
  auto revisions = list_revisions(client, ns);
  if (!revisions.empty()) return revisions;
  if (!client.get_if_exists(kube::gvr::kConfigMaps, ns, baseline::kConfigMapName))
    throw CommandError("no deployment found in namespace " + ns + " (configmap/" + baseline::kConfigMapName +
                       " not found): run kubectl mindie deploy first");
  throw CommandError("no revisions of configmap/" + std::string(baseline::kConfigMapName) + " in namespace " + ns +
                     ": the next deploy, scale or update-config records one");
}

revision::Author author_now(const std::string& command) {
  return {command, user_name() + "@" + host_name(), now_seconds()};
}

revision::Author author_of(const change::Intent& intent) {
  const std::string user = util::str(intent.by.if_contains("user"));
  const std::string host = util::str(intent.by.if_contains("host"));
  // The command that recorded it, which is not the change's kind when it ran another's (rollback runs scale's,
  // update-config's and deploy's); records without one name the kind.
  std::string command = util::str(intent.by.if_contains("command"));
  if (command.empty()) command = change::command_of(intent.change);
  return {command, host.empty() ? user : user + "@" + host, intent.at};
}

change::Step revision_step(kube::Client& client, const std::string& ns, const json::object& written,
                           revision::Author author, int limit, Printer& printer, std::int64_t* recorded) {
  change::Step step;
  step.name = "controllerrevision.apps/" + std::string(revision::kNamePrefix) + "N";
  step.verb = "created";
  step.write = [&client, ns, &written, author = std::move(author), limit, &printer, recorded] {
    const std::int64_t n = record(client, ns, written, author, limit, printer);
    if (recorded != nullptr) *recorded = n;
  };
  step.applied = [&client, ns] {
    const auto cm = client.get(kube::gvr::kConfigMaps, ns, baseline::kConfigMapName);
    const auto content = revision::content_of(baseline::read_baseline(cm, ns));
    const auto revisions = list_revisions(client, ns);
    return !content || (!revisions.empty() && revisions.back().content == *content);
  };
  return step;  // no undo: a revision records what the baseline held; the next one records what it holds then
}

std::string record_missing_revision(kube::Client& client, NamespaceLock& lock, const std::string& ns,
                                    const change::Intent& intent) {
  const auto cm = client.get_if_exists(kube::gvr::kConfigMaps, ns, baseline::kConfigMapName);
  const auto content = cm ? revision::content_of(baseline::read_baseline(*cm, ns)) : std::nullopt;
  if (!content) return "";
  const auto revisions = list_revisions(client, ns);
  if (!revisions.empty() && revisions.back().content == *content) return "";  // recorded: nothing to write
  LockFence fence(lock, intent);
  change::Wording wording;
  wording.change = "recording of the baseline's revision";
  wording.recovery = "the next kubectl-mindie command in namespace " + ns + " records it";
  std::ostream quiet(nullptr);
  Printer printer(quiet, quiet, "");
  std::int64_t recorded = 0;
  change::Runner(fence, wording)
      .run({revision_step(client, ns, *cm, author_of(intent), revision::kDefaultHistoryLimit, printer, &recorded)});
  return recorded == 0 ? "" : ", revision " + std::to_string(recorded) + " recorded";
}

/// update-config's intent stands only for the revision after its one compare-and-swap write: recording it is its
/// whole recovery. Registered here, in an object every mutating command links (cmd/lock.h, register_recovery).
const bool kUpdateConfigRecovery =
    register_recovery("update-config", [](kube::Client& client, NamespaceLock& lock, const std::string& ns,
                                          const change::Intent& intent, const std::string& what) {
      const std::string recorded = record_missing_revision(client, lock, ns, intent);
      return "recovered " + what + ": " +
             (recorded.empty() ? "nothing to do (its write is whole, its revision recorded or never due)"
                               : recorded.substr(2));
    });

Recovery recording_revision(Recovery recovery) {
  return [recovery = std::move(recovery)](kube::Client& client, NamespaceLock& lock, const std::string& ns,
                                          const change::Intent& intent, const std::string& what) {
    const std::string line = recovery(client, lock, ns, intent, what);
    return line + record_missing_revision(client, lock, ns, intent);
  };
}

}  // namespace mindie::cmd
