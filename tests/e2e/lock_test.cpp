// The namespace lock (lease.coordination.k8s.io/kubectl-mindie) on the real API server: a live holder stops a
// mutating command before its first write, naming the holder; an expired lease (its record seen unchanged for its
// duration), or one whose process on this host is gone, is taken over with a warning; clocks that disagree between
// hosts (run under libfaketime) change nothing of that; RBAC without Leases is refused naming the permission; the
// lock is free after every command and deleted with the deployment.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>

#include "harness.h"

using e2e::Cluster;
using e2e::faked;
using nlohmann::json;

namespace {

const std::string kNs = e2e::kExampleNamespace;
const std::string kWorkloadWrite = "PATCH:/apis/mindcluster.huawei.com/v1/namespaces/" + kNs + "/inferservicesets/.*";

std::string micro_time(std::chrono::seconds ago) {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now() - ago);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S.000000Z", &tm);
  return buf;
}

std::string this_host() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

/// Writes the lock's Lease as another kubectl-mindie would hold it: `host`/`pid`, renewed `ago` before now.
void hold_lock(const Cluster& sb, const e2e::TempDir& dir, const std::string& host, long pid,
               std::chrono::seconds ago) {
  const json holder = {{"format", 1}, {"command", "deploy"}, {"user", "alice"}, {"host", host}, {"pid", pid}};
  const json lease = {
      {"apiVersion", "coordination.k8s.io/v1"},
      {"kind", "Lease"},
      {"metadata",
       {{"name", "kubectl-mindie"}, {"namespace", kNs}, {"annotations", {{"kubectl-mindie/holder", holder.dump()}}}}},
      {"spec",
       {{"holderIdentity", host + "/" + std::to_string(pid) + "/0000abcd"},
        {"leaseDurationSeconds", 60},
        {"acquireTime", micro_time(ago + std::chrono::seconds(5))},
        {"renewTime", micro_time(ago)}}}};
  sb.admin_ok({"apply", "--server-side", "--force-conflicts", "-f", dir.write("lease.json", lease.dump())});
}

json lease_of(const Cluster& sb) {
  return json::parse(sb.admin_ok({"get", "lease", "kubectl-mindie", "-n", kNs, "-o", "json"}));
}

void deploy(const Cluster& sb) {
  const auto run = sb.mindie({"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
}

/// Writes that change something: every method but GET, server dry runs (deploy's conflict probe) left out.
std::size_t changes(const std::vector<e2e::LoggedRequest>& reqs) {
  std::size_t n = 0;
  for (const auto& r : reqs) n += r.is_write() && r.query.find("dryRun=All") == std::string::npos ? 1 : 0;
  return n;
}

int baseline_prefill(const Cluster& sb) {
  const auto status = sb.mindie({"status", "-n", kNs, "-o", "json"});
  REQUIRE_MESSAGE(status.exit_code == 0, status.err);
  const json report = json::parse(status.out);  // named: a range-for over a temporary's member would dangle
  for (const auto& role : report.at("roles"))
    if (role["name"] == "prefill") return role["baselineInstances"].get<int>();
  return -1;
}

}  // namespace

TEST_CASE("lock: a command takes and frees the namespace lock around its writes; a dry run does not take it") {
  Cluster sb;
  deploy(sb);
  // deploy created the Lease and freed it: no holder left.
  CHECK_FALSE(lease_of(sb)["spec"].contains("holderIdentity"));
  const std::size_t mark = sb.requests().size();
  const auto run = sb.mindie({"scale", "-n", kNs, "--prefill", "2"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  std::vector<std::string> lease_steps;
  for (const auto& r : sb.requests_since(mark))
    if (r.path.find("/leases/") != std::string::npos || r.path.ends_with("/leases"))
      lease_steps.push_back(r.method + " " + std::to_string(r.status));
  // Read before the reads of the deployment, taken (guarded by that read) before the first write, freed after.
  CHECK(lease_steps == std::vector<std::string>{"GET 200", "PATCH 200", "PATCH 200"});
  CHECK_FALSE(lease_of(sb)["spec"].contains("holderIdentity"));

  const std::size_t dry = sb.requests().size();
  REQUIRE(sb.mindie({"scale", "-n", kNs, "--prefill", "3", "--dry-run=server"}).exit_code == 0);
  for (const auto& r : sb.requests_since(dry)) CHECK(r.path.find("/leases") == std::string::npos);
}

TEST_CASE("lock: a live holder stops scale, update-config, deploy and delete before their first write, named") {
  Cluster sb;
  e2e::TempDir dir;
  deploy(sb);
  hold_lock(sb, dir, "build-host-7", 4711, std::chrono::seconds(2));
  const std::vector<std::vector<std::string>> commands = {
      {"scale", "-n", kNs, "--prefill", "2", "--lock-timeout", "0"},
      {"update-config", "--config-dir", e2e::kExampleDir, "--lock-timeout", "0"},
      {"deploy", "--config-dir", e2e::kExampleDir, "--scripts-dir", e2e::kScripts, "--lock-timeout", "0"},
      {"delete", "-n", kNs, "--lock-timeout", "0"}};
  for (const auto& args : commands) {
    CAPTURE(args[0]);
    const std::size_t mark = sb.requests().size();
    const auto run = sb.mindie(args);
    if (args[0] == "update-config") {
      // The same config: nothing to write, so the lock is never needed.
      CHECK_MESSAGE(run.exit_code == 0, run.err);
      CHECK(run.out == "configmap/motor-config unchanged\n");
      continue;
    }
    CHECK(run.exit_code == 1);
    CHECK_MESSAGE(run.err.find("error: another kubectl-mindie command is changing namespace " + kNs +
                               ": deploy by alice@build-host-7, pid 4711, since ") != std::string::npos,
                  run.err);
    CHECK(run.err.find("--lock-timeout 0 does not wait") != std::string::npos);
    CHECK(run.err.find("takes it over once its lease has stayed unrenewed for 60s; or, once you have confirmed "
                       "that, free it now: kubectl patch lease kubectl-mindie -n " +
                       kNs + " --type=merge -p '{\"spec\":{\"holderIdentity\":null}}'. Nothing was changed") !=
          std::string::npos);
    CHECK(changes(sb.requests_since(mark)) == 0);
  }
  CHECK(lease_of(sb)["spec"]["holderIdentity"] == "build-host-7/4711/0000abcd");  // still the holder's
  CHECK(baseline_prefill(sb) == 1);
}

TEST_CASE("lock: an expired lease, or one whose process on this host is gone, is taken over with a warning") {
  Cluster sb;
  e2e::TempDir dir;
  deploy(sb);
  SUBCASE("not renewed for its duration") {
    hold_lock(sb, dir, "build-host-7", 4711, std::chrono::seconds(600));
    // Taken once seen unchanged for 60 s (the default --lock-timeout, 30s, waits that long for an unrenewed
    // lease): on a clock 20 times as fast.
    const auto run = e2e::run_process(faked("+0 x20", sb.mindie_argv({"scale", "-n", kNs, "--prefill", "2"})));
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    CHECK_MESSAGE(run.err.find("Warning: took over the lock of namespace " + kNs +
                               " from deploy by alice@build-host-7, pid 4711, since ") != std::string::npos,
                  run.err);
    CHECK(run.err.find("which had stopped renewing it") != std::string::npos);
  }
  SUBCASE("renewed just now by a process of this host that has ended (killed, say)") {
    const pid_t child = fork();
    if (child == 0) _exit(0);
    REQUIRE(child > 0);
    REQUIRE(waitpid(child, nullptr, 0) == child);  // reaped: the pid names no process now
    hold_lock(sb, dir, this_host(), child, std::chrono::seconds(0));
    const auto run = sb.mindie({"scale", "-n", kNs, "--prefill", "2", "--lock-timeout", "0"});
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    CHECK_MESSAGE(run.err.find("whose process on this host is gone") != std::string::npos, run.err);
  }
  CHECK(baseline_prefill(sb) == 2);
  CHECK_FALSE(lease_of(sb)["spec"].contains("holderIdentity"));
  std::string why;
  CHECK_MESSAGE(e2e::baseline_agrees_with_live(sb, kNs, why), why);
}

TEST_CASE("lock: a user whose RBAC does not cover Leases is refused, the permission named, nothing written") {
  Cluster sb;
  e2e::TempDir dir;
  deploy(sb);
  // A ServiceAccount allowed everything scale reads and writes, but no Leases.
  const std::string rbac = R"({"apiVersion":"v1","kind":"List","items":[
    {"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"no-leases","namespace":")" +
                           kNs + R"("}},
    {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"no-leases","namespace":")" +
                           kNs +
                           R"("},"rules":[{"apiGroups":["","mindcluster.huawei.com","scheduling.volcano.sh"],
      "resources":["configmaps","inferservicesets","podgroups"],"verbs":["get","list","patch","delete"]}]},
    {"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"no-leases","namespace":")" +
                           kNs +
                           R"("},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"no-leases"},
      "subjects":[{"kind":"ServiceAccount","name":"no-leases","namespace":")" +
                           kNs + R"("}]}]})";
  sb.admin_ok({"apply", "-f", dir.write("rbac.json", rbac)});
  std::string token = sb.admin_ok({"create", "token", "no-leases", "-n", kNs});
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  // The test's kubeconfig (through its proxy) with that token as its user.
  const std::string kubeconfig = dir.write("kubeconfig", e2e::read_file(sb.kubeconfig()));
  const auto kubectl = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--kubeconfig", kubeconfig});
    args.insert(args.begin(), e2e::kubectl_binary());
    const auto run = e2e::run_process(args);
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  };
  kubectl({"config", "set-credentials", "no-leases", "--token", token});
  kubectl({"config", "set-context", "--current", "--user", "no-leases"});

  const std::size_t mark = sb.requests().size();
  const auto run =
      e2e::run_process({e2e::mindie_binary(), "scale", "-n", kNs, "--prefill", "2", "--kubeconfig", kubeconfig});
  CHECK(run.exit_code == 1);
  CHECK_MESSAGE(run.err.find("error: kubectl-mindie takes lease.coordination.k8s.io/kubectl-mindie in namespace " +
                             kNs) != std::string::npos,
                run.err);
  CHECK(run.err.find("it needs get, create and patch on leases.coordination.k8s.io in namespace " + kNs) !=
        std::string::npos);
  CHECK(run.err.find("nothing was changed") != std::string::npos);
  CHECK(run.err.find(token) == std::string::npos);  // never a token
  CHECK(changes(sb.requests_since(mark)) == 0);
  CHECK(baseline_prefill(sb) == 1);
}

TEST_CASE("lock: deploy into a namespace that does not exist says so and how to create it, nothing written") {
  Cluster sb;
  e2e::TempDir dir;
  json cfg = json::parse(e2e::read_file(e2e::kExample));
  cfg["motor_deploy_config"]["job_id"] = "mindie-absent";
  // nodePorts are cluster-wide and checked before the lock: ports no other test's deployment holds, even while a
  // namespace of an earlier test is still being deleted.
  cfg["motor_deploy_config"]["infer_node_port"] = 31019;
  cfg["motor_deploy_config"]["obs_node_port"] = 31020;
  cfg["motor_deploy_config"]["controller_obs_node_port"] = 31029;
  const std::string path = dir.write("user_config.json", cfg.dump(2));
  const std::size_t mark = sb.requests().size();
  const auto run = sb.mindie({"deploy", "-f", path, "--scripts-dir", e2e::kScripts});
  INFO(run.err);
  CHECK(run.exit_code == 1);
  CHECK(run.err ==
        "error: namespace mindie-absent does not exist: create it with `kubectl create namespace "
        "mindie-absent` and run the command again; nothing was changed\n");
  CHECK(changes(sb.requests_since(mark)) == 0);
}

TEST_CASE("lock: delete removes the lock's Lease with the deployment") {
  Cluster sb;
  deploy(sb);
  REQUIRE(sb.mindie({"scale", "-n", kNs, "--prefill", "2"}).exit_code == 0);
  const auto run = sb.mindie({"delete", "-n", kNs});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  CHECK(sb.admin({"get", "lease", "kubectl-mindie", "-n", kNs}).exit_code != 0);
  CHECK(e2e::kubectl_items(sb, "leases", kNs).empty());
}

TEST_CASE("lock: a rival whose clock runs 2 minutes ahead does not take a live holder's lock") {
  // Issue 30: it took the lock at once, the holder's renewTime looking 2 minutes old to it.
  Cluster sb;
  deploy(sb);
  sb.add_fault(kWorkloadWrite + ":hold:1");  // the holder stops at its first write, holding the lock
  e2e::Background holder(sb.mindie_argv({"scale", "-n", kNs, "--prefill", "2"}));
  sb.wait_held(1);
  const std::size_t mark = sb.requests().size();
  const auto rival =
      e2e::run_process(faked("+2m", sb.mindie_argv({"scale", "-n", kNs, "--decode", "2", "--lock-timeout", "0"})));
  CHECK(rival.exit_code == 1);
  CHECK_MESSAGE(rival.err.find("error: another kubectl-mindie command is changing namespace " + kNs + ": scale by ") !=
                    std::string::npos,
                rival.err);
  CHECK(rival.err.find("<invalid>") == std::string::npos);
  CHECK(changes(sb.requests_since(mark)) == 0);
  sb.release_held();
  const auto held = holder.finish();
  CHECK_MESSAGE(held.exit_code == 0, held.err);
  CHECK(baseline_prefill(sb) == 2);
  CHECK_FALSE(lease_of(sb)["spec"].contains("holderIdentity"));
}

TEST_CASE("lock: a holder killed with its clock an hour ahead locks the namespace for 60 s, not an hour") {
  // Issue 30: the waiting command printed "last renewed <invalid> ago" and gave up for an hour.
  Cluster sb;
  e2e::TempDir dir;
  deploy(sb);
  sb.add_fault(kWorkloadWrite + ":hold:1");
  e2e::Background holder(faked("+1h", sb.mindie_argv({"scale", "-n", kNs, "--prefill", "2"})));
  sb.wait_held(1);
  holder.signal(SIGKILL);
  CHECK(holder.finish().exit_code == 128 + SIGKILL);
  // As if it had run on another host: here its pid is seen gone, and the lock taken at once.
  json lease = lease_of(sb);
  json record = json::parse(lease["metadata"]["annotations"]["kubectl-mindie/holder"].get<std::string>());
  record["host"] = "build-host-7";
  sb.admin_ok(
      {"annotate", "--overwrite", "lease", "kubectl-mindie", "-n", kNs, "kubectl-mindie/holder=" + record.dump()});

  const auto at_once = sb.mindie({"scale", "-n", kNs, "--decode", "2", "--lock-timeout", "0"});
  CHECK(at_once.exit_code == 1);
  CHECK_MESSAGE(at_once.err.find("ahead of this host's clock (lease.coordination.k8s.io/kubectl-mindie)") !=
                    std::string::npos,
                at_once.err);
  CHECK(at_once.err.find("<invalid>") == std::string::npos);
  CHECK(at_once.err.find("free it now: kubectl patch lease kubectl-mindie -n " + kNs) != std::string::npos);

  // The default --lock-timeout (30s) waits on while the lease stays unrenewed, and takes it over after 60 s: on a
  // clock 20 times as fast, 3 s.
  const auto next = e2e::run_process(faked("+0 x20", sb.mindie_argv({"scale", "-n", kNs, "--decode", "2"})));
  REQUIRE_MESSAGE(next.exit_code == 0, next.err);
  CHECK_MESSAGE(next.err.find("waiting up to 30s (--lock-timeout; up to 60s while its lease stays unrenewed, then it "
                              "is taken over) for scale by ") != std::string::npos,
                next.err);
  CHECK(next.err.find("Warning: took over the lock of namespace " + kNs + " from scale by ") != std::string::npos);
  CHECK(next.err.find("which had stopped renewing it") != std::string::npos);
  CHECK(next.err.find("recovered an interrupted scale from ") != std::string::npos);
  CHECK(baseline_prefill(sb) == 1);  // the held write never reached the server: the scale was dropped
  CHECK_FALSE(lease_of(sb)["spec"].contains("holderIdentity"));
  std::string why;
  CHECK_MESSAGE(e2e::baseline_agrees_with_live(sb, kNs, why), why);
}
