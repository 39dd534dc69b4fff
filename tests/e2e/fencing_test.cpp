// Fencing of stale writers on the real control plane (issue 30). A command that stalls (here: SIGSTOP while the fault
// proxy holds the reply to one of its requests) longer than the namespace lock's lease finds the lock taken over
// when it goes on: it must write nothing more, exit 1 and name the command that took it, and the cluster must stay
// consistent. The rival that takes the lock runs under libfaketime with its clocks ahead and sped up, so the
// victim's lease looks expired to it at once. Also the signal, unreachable-server, nodePort-race and reporting cases
// of the issue.
#include <doctest/doctest.h>
#include <signal.h>

#include <map>
#include <nlohmann/json.hpp>

#include "harness.h"

using e2e::Cluster;
using nlohmann::json;

namespace {

const std::string kNs = e2e::kExampleNamespace;
const std::string kBaselineWrite = "PATCH:/api/v1/namespaces/" + kNs + "/configmaps/motor-config";
const std::string kWorkloadWrite = "PATCH:/apis/mindcluster.huawei.com/v1/namespaces/" + kNs + "/inferservicesets/.*";
const std::string kLeaseWrite = "PATCH:/apis/coordination.k8s.io/v1/namespaces/" + kNs + "/leases/kubectl-mindie";
const std::string kDeleteWorkload = "DELETE:/apis/mindcluster.huawei.com/v1/namespaces/" + kNs + "/inferservicesets/.*";
constexpr auto npos = std::string::npos;

void deploy(const Cluster& sb) {
  const auto run = sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
}

/// The example's user_config.json with `prefill` prefill instances, written to `dir`/`name`.
std::string example_with_prefill(const e2e::TempDir& dir, int prefill, const std::string& name) {
  json cfg = json::parse(e2e::read_file(e2e::kExample));
  cfg["motor_deploy_config"]["p_instances_num"] = prefill;
  return dir.write(name, cfg.dump(2));
}

/// The example's user_config.json with the coordinator's log level changed (an update-config change), in `dir`.
std::string example_with_debug_log(const e2e::TempDir& dir) {
  json cfg = json::parse(e2e::read_file(e2e::kExample));
  cfg["motor_coordinator_config"]["logging_config"]["log_level"] = "DEBUG";
  return dir.write("user_config_debug.json", cfg.dump(2));
}

std::vector<std::string> deploy_args(const std::string& file) {
  // --prune: these deploys set counts that may be below the live ones (a scale's, raced or interrupted).
  return {"deploy", "-f", file, "-e", e2e::kExampleDir + "/env.json", "--scripts-dir", e2e::kScripts, "--prune"};
}

/// The baseline's instance count of `role` (status -o json).
int baseline_count(const Cluster& sb, const std::string& role) {
  const auto status = sb.mindie({"status", "-n", kNs, "-o", "json"});
  REQUIRE_MESSAGE(status.exit_code == 0, status.err);
  const json report = json::parse(status.out);  // named: a range-for over a temporary's member would dangle
  for (const auto& r : report.at("roles"))
    if (r["name"] == role) return r["baselineInstances"].get<int>();
  return -1;
}

/// The lock Lease's annotations ({} when the Lease is gone).
json lease_annotations(const Cluster& sb) {
  const auto got = sb.admin({"get", "lease", "kubectl-mindie", "-n", kNs, "-o", "json"});
  if (got.exit_code != 0) return json::object();
  return json::parse(got.out)["metadata"].value("annotations", json::object());
}

void check_agrees(const Cluster& sb) {
  std::string why;
  CHECK_MESSAGE(e2e::baseline_agrees_with_live(sb, kNs, why), why);
}

bool exists(const Cluster& sb, const std::string& kind, const std::string& name) {
  return sb.admin({"get", kind, name, "-n", kNs}).exit_code == 0;
}

/// A rival kubectl-mindie that finds the stopped victim's lease expired: libfaketime runs its clocks (realtime and
/// monotonic) 2 minutes ahead and 20 times as fast, so it takes the lock over at once by a renewTime + 60 s rule and
/// within 3 s by a rule that waits 60 s of its own monotonic clock for the holder's record to change (the victim,
/// stopped, changes nothing). --lock-timeout 10m (30 s of real time) lets it wait that long.
std::vector<std::string> rival_argv(const Cluster& sb, std::vector<std::string> args) {
  args.insert(args.end(), {"--lock-timeout", "10m"});
  return e2e::faked("+2m x20", sb.mindie_argv(std::move(args)));
}

struct Rival {
  std::string command;  ///< its subcommand
  int pid = -1;         ///< what its lock holder record names (env execs the binary: the same process)
  e2e::Run run;
};

/// What happened to a victim stopped mid-command while rivals ran.
struct Stale {
  e2e::Run victim;
  std::vector<Rival> rivals;
  std::size_t mark = 0;  ///< the request log's length when the victim was resumed
};

/// Runs `victim` until the proxy holds its request chosen by `fault`, stops it there (SIGSTOP: it holds the lock and
/// renews nothing), runs each of `rivals` to completion, then releases the request and resumes the victim (SIGCONT),
/// and collects it. `fault` is a hold-reply rule: the server applies the held request before the rivals run, so
/// every write logged after `mark` is one the victim sent after it resumed (a request held before forwarding would
/// reach the server on release, sent before the stop, which no fencing can take back).
Stale run_stale(const Cluster& sb, const std::vector<std::string>& victim_args, const std::string& fault,
                const std::vector<std::vector<std::string>>& rivals) {
  sb.add_fault(fault);
  e2e::Background victim(sb.mindie_argv(victim_args));
  sb.wait_held(1);
  victim.signal(SIGSTOP);
  Stale out;
  for (const auto& args : rivals) {
    e2e::Background rival(rival_argv(sb, args));
    Rival r{args.front(), rival.pid(), {}};
    r.run = rival.finish();
    out.rivals.push_back(std::move(r));
  }
  out.mark = sb.requests().size();
  sb.release_held();
  victim.signal(SIGCONT);
  out.victim = victim.finish();
  return out;
}

/// The writes logged after `mark`, as "METHOD PATH STATUS": the held request's own line (logged when released, with
/// its fault) and server dry runs left out.
std::vector<std::string> writes_after(const Cluster& sb, std::size_t mark) {
  std::vector<std::string> out;
  for (const auto& r : e2e::writes_since(sb, mark))
    if (r.fault.empty() && r.query.find("dryRun") == npos)
      out.push_back(r.method + " " + r.path + " " + std::to_string(r.status));
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

/// Whether `err` names one of the rivals as the lock's taker: its pid ("pid N" of its holder record), or its
/// holder description's head ("scale by ...", describe_lock_holder) beside the word "lock".
bool names_taker(const std::string& err, const std::vector<Rival>& rivals) {
  for (const auto& r : rivals)
    if (err.find("pid " + std::to_string(r.pid)) != npos ||
        (err.find(r.command + " by ") != npos && err.find("lock") != npos))
      return true;
  return false;
}

/// The fencing contract for a victim that resumed after its lock was taken over: exit 1, nothing written after
/// resuming, the taker named. `lease_deleted`: the last rival deleted the Lease (a delete), so no record of it is
/// left to name: the victim need only say that it lost the lock.
void check_fenced(const Cluster& sb, const Stale& s, bool lease_deleted = false) {
  std::string rivals;
  for (const auto& r : s.rivals)
    rivals += "rival " + r.command + " (pid " + std::to_string(r.pid) + "): exit " + std::to_string(r.run.exit_code) +
              "\n" + r.run.err;
  INFO("victim stdout:\n" << s.victim.out << "victim stderr:\n" << s.victim.err << rivals);
  CHECK(s.victim.exit_code == 1);
  const auto writes = writes_after(sb, s.mark);
  CHECK_MESSAGE(writes.empty(), "written after resuming:\n" << joined(writes));
  if (lease_deleted) CHECK(s.victim.err.find("lock") != npos);
  else CHECK(names_taker(s.victim.err, s.rivals));
}

/// A rule for `re`'s literal text: RE2 metacharacters escaped.
std::string regex_quote(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::string_view(".+*?()[]{}|^$\\").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

/// The points between two writes of a command, from the requests of a clean run of it: the reply of its lock's take
/// and of each of its writes but the last (server dry runs are not writes), as hold-reply rules (AFTER skips the
/// earlier requests of the same method and path).
std::vector<std::string> stop_points(const std::vector<e2e::LoggedRequest>& reqs) {
  std::vector<std::string> points;
  std::map<std::string, int> seen;
  bool taken = false;
  for (const auto& r : reqs) {
    const std::string rule = r.method + ":" + regex_quote(r.path);
    const int earlier = seen[rule]++;
    const bool take = !taken && r.is_lock() && r.method != "GET";
    const bool write = taken && r.is_write() && r.query.find("dryRun") == npos;
    if (take || write) points.push_back(rule + ":hold-reply:1:" + std::to_string(earlier));
    taken = taken || take;
  }
  if (points.size() > 1) points.pop_back();  // after the last write there is nothing left to fence
  return points;
}

}  // namespace

TEST_CASE(
    "fencing: a deploy stopped between its baseline write and its workload apply past the lease writes nothing "
    "more once a scale took the lock over") {
  Cluster sb;
  deploy(sb);
  e2e::TempDir dir;
  const auto s = run_stale(sb, deploy_args(example_with_prefill(dir, 2, "p2.json")), kBaselineWrite + ":hold-reply:1",
                           {{"scale", "-n", kNs, "--prefill", "3"}});
  REQUIRE_MESSAGE(s.rivals[0].run.exit_code == 0, s.rivals[0].run.err);
  check_fenced(sb, s);
  CHECK(baseline_count(sb, "prefill") == 3);  // the scale's, last in the lock's order
  check_agrees(sb);
}

TEST_CASE(
    "fencing: a delete stopped before deleting motor-config past the lease leaves a new deploy's baseline and "
    "workload") {
  Cluster sb;
  deploy(sb);
  e2e::TempDir dir;
  // Stopped after its first delete (the workload), before the rest and motor-config.
  const auto s = run_stale(sb, {"delete", "-n", kNs}, kDeleteWorkload + ":hold-reply:1",
                           {deploy_args(example_with_prefill(dir, 2, "p2.json"))});
  REQUIRE_MESSAGE(s.rivals[0].run.exit_code == 0, s.rivals[0].run.err);
  check_fenced(sb, s);
  CHECK(exists(sb, "configmap", "motor-config"));
  CHECK(e2e::kubectl_items(sb, "inferservicesets.mindcluster.huawei.com", kNs).size() == 1);
  const auto status = sb.mindie({"status", "-n", kNs});
  CHECK_MESSAGE(status.exit_code == 0, status.err);  // not "no deployment found"
  check_agrees(sb);
}

TEST_CASE("fencing: a stale deploy does not re-create the workload after a delete removed everything") {
  Cluster sb;
  deploy(sb);
  e2e::TempDir dir;
  const auto s = run_stale(sb, deploy_args(example_with_prefill(dir, 2, "p2.json")), kBaselineWrite + ":hold-reply:1",
                           {{"delete", "-n", kNs}});
  REQUIRE_MESSAGE(s.rivals[0].run.exit_code == 0, s.rivals[0].run.err);
  check_fenced(sb, s, /*lease_deleted=*/true);
  CHECK(e2e::kubectl_items(sb, "inferservicesets.mindcluster.huawei.com", kNs).empty());  // no orphan
  CHECK_FALSE(exists(sb, "configmap", "motor-config"));
  check_agrees(sb);
}

TEST_CASE("fencing: a stale delete does not remove a freshly deployed InferServiceSet") {
  Cluster sb;
  deploy(sb);
  e2e::TempDir dir;
  // Stopped right after taking the lock, before its first delete; meanwhile the deployment is deleted and deployed
  // afresh (a new InferServiceSet, a new uid, a new Lease).
  const auto s = run_stale(sb, {"delete", "-n", kNs}, kLeaseWrite + ":hold-reply:1",
                           {{"delete", "-n", kNs}, deploy_args(example_with_prefill(dir, 2, "p2.json"))});
  REQUIRE_MESSAGE(s.rivals[0].run.exit_code == 0, s.rivals[0].run.err);
  REQUIRE_MESSAGE(s.rivals[1].run.exit_code == 0, s.rivals[1].run.err);
  check_fenced(sb, s);
  CHECK(e2e::kubectl_items(sb, "inferservicesets.mindcluster.huawei.com", kNs).size() == 1);
  CHECK(exists(sb, "configmap", "motor-config"));
  check_agrees(sb);
}

TEST_CASE(
    "fencing: a command whose lock is taken over between any two of its writes writes nothing more, exits 1 "
    "and names the taker") {
  e2e::TempDir dir;
  struct Victim {
    std::vector<std::string> args;
    // A rival of another command (so that naming it is told apart from the victim naming itself) that changes
    // what the victim writes.
    std::vector<std::string> rival;
  };
  const auto redeploy3 = deploy_args(example_with_prefill(dir, 3, "p3.json"));
  const std::vector<Victim> victims = {
      {deploy_args(example_with_prefill(dir, 2, "p2.json")), {"scale", "-n", kNs, "--decode", "2"}},
      {{"scale", "-n", kNs, "--prefill", "2"}, redeploy3},
      {{"update-config", "-f", example_with_debug_log(dir)}, {"scale", "-n", kNs, "--decode", "2"}},
      {{"delete", "-n", kNs}, redeploy3},
  };
  for (const auto& v : victims) {
    CAPTURE(v.args[0]);
    std::vector<std::string> points;
    {
      Cluster clean;
      deploy(clean);
      const std::size_t mark = clean.requests().size();
      const auto run = clean.mindie(v.args);
      REQUIRE_MESSAGE(run.exit_code == 0, run.err);
      points = stop_points(clean.requests_since(mark));
    }
    REQUIRE_FALSE(points.empty());
    for (const auto& point : points) {
      CAPTURE(point);
      Cluster sb;
      deploy(sb);
      const auto s = run_stale(sb, v.args, point, {v.rival});
      CHECK_MESSAGE(s.rivals[0].run.exit_code == 0, s.rivals[0].run.err);
      check_fenced(sb, s);
      check_agrees(sb);
    }
  }
}

TEST_CASE(
    "interrupt: SIGINT or SIGTERM while the lock's take is in flight stops before the first write, nothing "
    "changed") {
  e2e::TempDir dir;
  const std::vector<std::vector<std::string>> commands = {
      {"scale", "-n", kNs, "--prefill", "3"},
      {"update-config", "-f", example_with_debug_log(dir)},
      {"delete", "-n", kNs},
      deploy_args(example_with_prefill(dir, 2, "p2.json")),
  };
  for (const auto& args : commands) {
    for (const int sig : {SIGINT, SIGTERM}) {
      CAPTURE(args[0]);
      CAPTURE(sig);
      Cluster sb;
      deploy(sb);
      const std::string stored =
          sb.admin_ok({"get", "configmap", "motor-config", "-n", kNs, "-o", "jsonpath={.data.user_config\\.json}"});
      sb.add_fault(kLeaseWrite + ":hold:1");
      e2e::Background run(sb.mindie_argv(args));
      sb.wait_held(1);
      const std::size_t mark = sb.requests().size();
      run.signal(sig);
      run.wait_for_error("interrupt again to leave at once");
      sb.release_held();  // the take reaches the server: the command holds the lock, interrupted
      const auto out = run.finish();
      INFO(out.err);
      CHECK(out.exit_code == 128 + sig);
      const auto writes = writes_after(sb, mark);
      CHECK_MESSAGE(writes.empty(), "written after the lock's take:\n" << joined(writes));
      CHECK(out.err.find("nothing was changed") != npos);
      CHECK_FALSE(lease_annotations(sb).contains("kubectl-mindie/intent"));
      CHECK(sb.admin_ok({"get", "configmap", "motor-config", "-n", kNs, "-o", "jsonpath={.data.user_config\\.json}"}) ==
            stored);
      check_agrees(sb);
    }
  }
}

TEST_CASE(
    "scale cut off from the API server between its two writes ends and says what it left and how it is put "
    "right") {
  Cluster sb;
  deploy(sb);
  // The workload patch goes through; the baseline write is held, and from then on no request reaches the server.
  sb.add_fault(kBaselineWrite + ":hold:1");
  e2e::Background scale(sb.mindie_argv({"scale", "-n", kNs, "--prefill", "2"}));
  sb.wait_held(1);
  sb.add_fault("*:.*:drop");
  scale.wait_for_error("error:", 400);  // a bound against a hang only; no assertion on time
  const auto run = scale.finish();
  INFO(run.err);
  CHECK(run.exit_code == 1);
  // What it left: the workload scaled, the baseline not; and how it is recovered: by the next command.
  CHECK(run.err.find("workload") != npos);
  CHECK(run.err.find("baseline") != npos);
  CHECK(run.err.find("next") != npos);
  CHECK((run.err.find("finishes") != npos || run.err.find("reverts") != npos));
  sb.clear_faults();
  const auto next = sb.mindie({"scale", "-n", kNs, "--decode", "2"});
  CHECK_MESSAGE(next.exit_code == 0, next.err);
  check_agrees(sb);
}

TEST_CASE("a deploy that waited for the lock and then failed validation leaves no intent behind") {
  Cluster sb;
  deploy(sb);
  // A delete holds the lock (stopped at its first delete); a deploy without --scripts-dir (motor-config has them)
  // waits for it, and once the delete removed motor-config, it has no scripts: "pass --scripts-dir".
  sb.add_fault(kDeleteWorkload + ":hold:1");
  e2e::Background del(sb.mindie_argv({"delete", "-n", kNs}));
  sb.wait_held(1);
  e2e::Background dep(sb.mindie_argv({"deploy", "--config-dir", e2e::kExampleDir}));
  dep.wait_for_error("(--lock-timeout");
  sb.release_held();
  const auto deleted = del.finish();
  REQUIRE_MESSAGE(deleted.exit_code == 0, deleted.err);
  const auto failed = dep.finish();
  INFO(failed.err);
  CHECK(failed.exit_code == 1);
  CHECK(failed.err.find("--scripts-dir") != npos);
  CHECK_FALSE(lease_annotations(sb).contains("kubectl-mindie/intent"));
  const auto next = sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts});
  CHECK_MESSAGE(next.exit_code == 0, next.err);
  CHECK_MESSAGE(next.err.find("found an interrupted") == npos, next.err);
}

TEST_CASE("update-config whose write was applied but whose reply was lost says configured") {
  Cluster sb;
  deploy(sb);
  e2e::TempDir dir;
  const std::string file = example_with_debug_log(dir);
  sb.add_fault(kBaselineWrite + ":lose-reply:1");
  const auto run = sb.mindie({"update-config", "-f", file});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_MESSAGE(run.out.find("configured") != npos, run.out);
  CHECK_MESSAGE(run.out.find("unchanged") == npos, run.out);
  const std::string stored =
      sb.admin_ok({"get", "configmap", "motor-config", "-n", kNs, "-o", "jsonpath={.data.user_config\\.json}"});
  CHECK(stored == e2e::read_file(file));
}

TEST_CASE("delete whose delete was applied but whose reply was lost does not report an empty list") {
  Cluster sb;
  deploy(sb);
  sb.add_fault(kDeleteWorkload + ":lose-reply:1");
  const auto run = sb.mindie({"delete", "-n", kNs});
  INFO(run.err);
  const auto at = run.err.find("deleted before the failure:");
  if (at != npos) {
    // The list that follows names what was deleted: the InferServiceSet, whose delete the server applied.
    CHECK(run.err.find("inferserviceset", at) != npos);
  } else {
    CHECK_MESSAGE(run.exit_code == 0, run.err);
  }
  CHECK(e2e::kubectl_items(sb, "inferservicesets.mindcluster.huawei.com", kNs).empty());
}

TEST_CASE("scale's workload patch refused with 422 is reported with the server's reason") {
  Cluster sb;
  deploy(sb);
  sb.add_fault(kWorkloadWrite + ":422:1");
  const auto run = sb.mindie({"scale", "-n", kNs, "--prefill", "2"});
  INFO(run.err);
  CHECK(run.exit_code == 1);
  CHECK(run.err.find("changed since it was read") == npos);
  CHECK(run.err.find("injected fault for PATCH") != npos);  // the Status message the server (the proxy) sent
  CHECK(baseline_count(sb, "prefill") == 1);
  check_agrees(sb);
}

TEST_CASE("a recovery that fails leaves the author of the interrupted change in its intent") {
  Cluster sb;
  deploy(sb);
  // An intent left by a scale killed after its workload patch, recorded as alice's.
  sb.add_fault(kWorkloadWrite + ":hold-reply:1");
  e2e::Background scale(sb.mindie_argv({"scale", "-n", kNs, "--prefill", "2"}));
  sb.wait_held(1);
  scale.signal(SIGKILL);
  scale.finish();
  json intent = json::parse(lease_annotations(sb).at("kubectl-mindie/intent").get<std::string>());
  intent["by"] = {{"user", "alice"}, {"host", "build-host-7"}, {"pid", 4711}, {"command", "scale"}};
  sb.admin_ok(
      {"annotate", "--overwrite", "lease", "kubectl-mindie", "-n", kNs, "kubectl-mindie/intent=" + intent.dump()});
  // Its recovery (the baseline write) is refused.
  sb.add_fault(kBaselineWrite + ":422");
  const auto next = sb.mindie({"scale", "-n", kNs, "--decode", "2"});
  INFO(next.err);
  CHECK(next.exit_code == 1);
  const json left = json::parse(lease_annotations(sb).at("kubectl-mindie/intent").get<std::string>());
  CHECK(left["command"] == "scale");
  CHECK_MESSAGE(left["by"] == intent["by"], left.dump());
}
