// The Options of deploy, scale and update-config against the in-memory transport: which requests they send, in
// which order, with which query and body, and that a refused input sends nothing. The objects come from the example
// config (examples/), rendered as deploy renders them, so the cluster's answers are what deploy would have stored.
#include <doctest/doctest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cmd/deploy.h"
#include "cmd/scale.h"
#include "cmd/update_config.h"
#include "fake_transport.h"
#include "mindie/baseline.h"
#include "mindie/config.h"
#include "mindie/render.h"
#include "scratch_files.h"

using namespace mindie;
namespace json = boost::json;
using test::FakeTransport;

namespace {

const std::string kExampleDir = std::string(MINDIE_SOURCE_DIR) + "/examples";
const std::string kScriptsDir = kExampleDir + "/scripts";
const std::string kNs = "mindie-demo";
const std::string kCmPath = "/api/v1/namespaces/mindie-demo/configmaps/motor-config";
const std::string kIssPath = "/apis/mindcluster.huawei.com/v1/namespaces/mindie-demo/inferservicesets/";
const std::string kLeasesPath = "/apis/coordination.k8s.io/v1/namespaces/mindie-demo/leases";
const std::string kLeasePath = kLeasesPath + "/kubectl-mindie";
/// The namespace lock's Lease as the server answers its creation (NamespaceLock, cmd/lock.h).
const std::string kLease =
    R"({"kind":"Lease","metadata":{"name":"kubectl-mindie","namespace":"mindie-demo","resourceVersion":"7"},)"
    R"("spec":{"holderIdentity":"me","leaseDurationSeconds":60}})";
const std::string kNotFound =
    R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"not found"})";
// A NodeList of one 800I_A2 node with room for the example's engine pods (the node preflight's answer).
const std::string kNodeList =
    R"({"kind":"NodeList","metadata":{},"items":[{"metadata":{"name":"n","labels":{"accelerator":"huawei-Ascend910",)"
    R"("accelerator-type":"module-910b-8"}},"status":{"allocatable":{"huawei.com/Ascend910":"16"}}}]})";

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

config::UserConfig example_config() {
  return config::parse_user_config(read(kExampleDir + "/user_config.json"), "user_config.json");
}

/// The ConfigMap a first deploy of the example stores, as the server returns it (with a resourceVersion).
json::object stored_config_map() {
  const config::UserConfig cfg = example_config();
  const config::EnvConfig env = config::parse_env_config(read(kExampleDir + "/env.json"), "env.json");
  json::object cm = render::render_config_map(cfg, &env, {});
  cm["metadata"].as_object()["resourceVersion"] = "41";
  return cm;
}

/// The answers to the revision step after a baseline write whose answer holds no ConfigMap to record: motor-config
/// read, no revision yet, revision 1 created.
void queue_revision(FakeTransport& t) {
  t.reply(200, json::serialize(stored_config_map()));
  t.reply(200, R"({"kind":"ControllerRevisionList","metadata":{},"items":[]})");
  t.reply(201, "{}");
}

/// Checks that `requests` from `first` are the revision step's: motor-config read, the revisions listed, one applied
/// (server-side apply of its fixed name: a lost answer is sent again, as every apply is).
void check_revision_step(const std::vector<kube::HttpRequest>& requests, std::size_t first) {
  REQUIRE(requests.size() == first + 3);
  CHECK(requests[first].method == "GET");
  CHECK(requests[first].path == "/api/v1/namespaces/mindie-demo/configmaps/motor-config");
  CHECK(requests[first + 1].method == "GET");
  CHECK(requests[first + 1].path.rfind("/apis/apps/v1/namespaces/mindie-demo/controllerrevisions?", 0) == 0);
  CHECK(requests[first + 2].method == "PATCH");
  CHECK(requests[first + 2].path.rfind("/apis/apps/v1/namespaces/mindie-demo/controllerrevisions/motor-config-1?", 0) ==
        0);
  CHECK(requests[first + 2].content_type == "application/apply-patch+yaml");
  const json::object made = json::parse(requests[first + 2].body).as_object();
  CHECK(made.at("kind") == "ControllerRevision");
  CHECK(made.at("metadata").at("name") == "motor-config-1");
  CHECK(made.at("revision") == 1);
}

/// The example's InferServiceSet as deploy renders it.
json::object live_service_set() {
  const config::UserConfig cfg = example_config();
  json::object iss = render::render_infer_service_set(cfg, nullptr, {}).back();
  iss["metadata"].as_object()["resourceVersion"] = "7";
  return iss;
}

/// deploy's flags for the example folder and its stand-in scripts.
cmd::DeployFlags example_deploy_flags() {
  cmd::DeployFlags flags;
  flags.config_dir = kExampleDir;
  flags.scripts_dir = kScriptsDir;
  return flags;
}

/// Queues the answers to a first deploy's reads, up to the creation of the namespace lock: no Lease, the
/// InferServiceSet group served, no motor-config, no nodePort taken or claimed, a node with room.
void queue_first_deploy_reads(FakeTransport& t) {
  t.reply(404, kNotFound);  // the namespace lock: free
  t.reply(200, R"({"kind":"APIResourceList","groupVersion":"mindcluster.huawei.com/v1",)"
               R"("resources":[{"name":"inferservicesets"},{"name":"inferservicesets/status"}]})");
  t.reply(404, kNotFound);                                             // no motor-config yet
  t.reply(200, R"({"kind":"ServiceList","metadata":{},"items":[]})");  // nodePorts: none taken
  for (int i = 0; i < 3; ++i) t.reply(404, kNotFound);                 // nor claimed (node_port_claims.h)
  t.reply(200, kNodeList);                                             // node preflight: room
  t.reply(200, R"({"kind":"PodList","metadata":{},"items":[]})");      // and no pod holds any of it
}

std::string path_of(const kube::HttpRequest& r) { return r.path.substr(0, r.path.find('?')); }
std::string query_of(const kube::HttpRequest& r) {
  const auto q = r.path.find('?');
  return q == std::string::npos ? "" : r.path.substr(q + 1);
}

/// Every request, one line each, for failure messages.
std::string listing(const FakeTransport& t) {
  std::string out;
  for (const auto& r : t.requests) out += "\n  " + r.method + " " + r.path;
  return out;
}

/// The op `op` of a JSON Patch whose path ends with `suffix`; null when there is none.
/// The requests but the namespace lock's (its Lease), in order.
std::vector<kube::HttpRequest> without_lease(const FakeTransport& t) {
  std::vector<kube::HttpRequest> out;
  for (const auto& r : t.requests)
    if (r.path.find("/leases") == std::string::npos) out.push_back(r);
  return out;
}

/// The namespace lock's requests as "METHOD index, ...": where the lock was read, taken and freed.
std::string lease_steps(const FakeTransport& t) {
  std::string out;
  for (std::size_t i = 0; i < t.requests.size(); ++i)
    if (t.requests[i].path.find("/leases") != std::string::npos)
      out += (out.empty() ? "" : ", ") + t.requests[i].method + " " + std::to_string(i);
  return out;
}

const json::object* op_at(const json::array& patch, const std::string& op, const std::string& suffix) {
  for (const auto& v : patch) {
    const auto& o = v.as_object();
    const std::string path(o.at("path").as_string());
    if (o.at("op") == op.c_str() && path.size() >= suffix.size() &&
        path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0)
      return &o;
  }
  return nullptr;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// deploy

TEST_CASE("deploy: motor-config is applied first, the InferServiceSet last, each by server-side apply") {
  cmd::DeployOptions o(example_deploy_flags(), "");
  o.complete();
  o.validate();

  FakeTransport t;
  queue_first_deploy_reads(t);
  t.reply(201, kLease);                                                       // the lock taken
  for (int i = 0; i < 12; ++i) t.reply(200, R"({"metadata":{"name":"x"}})");  // applies, then the lock freed
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  o.run(client, printer);
  printer.flush();
  INFO(listing(t));

  REQUIRE(t.requests.size() >= 15);
  CHECK(path_of(t.requests[0]) == kLeasePath);
  CHECK(t.requests[1].method == "GET");
  CHECK(t.requests[1].path == "/apis/mindcluster.huawei.com/v1");
  CHECK(t.requests[2].method == "GET");
  CHECK(t.requests[2].path == kCmPath);
  CHECK(t.requests[3].method == "GET");
  CHECK(path_of(t.requests[3]) == "/api/v1/services");  // cluster-wide: a nodePort is taken in any namespace
  for (std::size_t i = 4; i < 7; ++i)                   // the nodePort claims, read
    CHECK(path_of(t.requests[i]).rfind("/apis/rbac.authorization.k8s.io/v1/clusterroles/mindie-motor-nodeport-", 0) ==
          0);
  CHECK(path_of(t.requests[7]) == "/api/v1/nodes");  // the node preflight: the nodes, and the pods bound to them
  CHECK(path_of(t.requests[8]) == "/api/v1/pods");
  CHECK(query_of(t.requests[8]).find("fieldSelector=spec.nodeName%21%3D%2Cstatus.phase%21%3DSucceeded") !=
        std::string::npos);
  // The lock is created before the first write and freed (holder cleared) after the last.
  CHECK(t.requests[9].method == "POST");
  CHECK(path_of(t.requests[9]) == kLeasesPath);
  // The claims first, each under the namespace's own field manager, never forced.
  for (std::size_t i = 10; i < 13; ++i) {
    CHECK(t.requests[i].method == "PATCH");
    CHECK(path_of(t.requests[i]) == path_of(t.requests[i - 6]));
    CHECK(query_of(t.requests[i]) == "fieldManager=kubectl-mindie-claim-" + kNs);
  }
  CHECK(t.requests.back().method == "PATCH");
  CHECK(t.requests.back().content_type == "application/merge-patch+json");
  CHECK(path_of(t.requests.back()) == kLeasePath);
  // Then the revision step, which reads motor-config back (these answers hold none: nothing to record).
  const auto& revision_read = t.requests[t.requests.size() - 2];
  CHECK(revision_read.method == "GET");
  CHECK(path_of(revision_read) == kCmPath);
  // Between them only applies: PATCH application/apply-patch+yaml with fieldManager, no force, no dryRun.
  std::vector<const kube::HttpRequest*> applies;
  for (std::size_t i = 13; i + 2 < t.requests.size(); ++i) applies.push_back(&t.requests[i]);
  for (const auto* r : applies) {
    CHECK(r->method == "PATCH");
    CHECK(r->content_type == "application/apply-patch+yaml");
    CHECK(query_of(*r) == "fieldManager=kubectl-mindie");
  }
  const std::string iss_name = render::default_service_set_name(example_config());
  CHECK(path_of(*applies.front()) == kCmPath);
  CHECK(path_of(*applies.back()) == kIssPath + iss_name);
  // The baseline is what was read from disk, byte for byte, and the scripts folder went with it.
  const json::object cm = json::parse(applies.front()->body).as_object();
  CHECK(cm.at("data").at("user_config.json").as_string() == read(kExampleDir + "/user_config.json"));
  CHECK(cm.at("data").at("env.json").as_string() == read(kExampleDir + "/env.json"));
  CHECK(cm.at("data").as_object().contains("boot.sh"));
  // One printed line per object, in the order sent.
  const std::string printed = out.str();
  CHECK(printed.rfind("configmap/motor-config serverside-applied\n", 0) == 0);
  CHECK(printed.ends_with("inferserviceset.mindcluster.huawei.com/" + iss_name + " serverside-applied\n"));
  CHECK(static_cast<std::size_t>(std::count(printed.begin(), printed.end(), '\n')) == applies.size());
  CHECK(t.pending() == 12 - applies.size() - 3 - 1 - 1);
  CHECK(o.target_namespace() == kNs);
}

// The first write of a deploy is the namespace lock's Lease: in a namespace that does not exist the server answers its
// creation 404 'namespaces "X" not found' (found by a new-user trial: the raw 404 of a POST to leases, no advice).
TEST_CASE("deploy into a namespace that does not exist says so and how to create it; nothing written") {
  cmd::DeployOptions o(example_deploy_flags(), "");
  o.complete();
  o.validate();

  FakeTransport t;
  queue_first_deploy_reads(t);
  t.reply(404,
          R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,)"
          R"("message":"namespaces \"mindie-demo\" not found","details":{"name":"mindie-demo","kind":"namespaces"}})");
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  CHECK_THROWS_WITH_AS(o.run(client, printer),
                       "namespace mindie-demo does not exist: create it with `kubectl create namespace mindie-demo` "
                       "and run the command again; nothing was changed",
                       cmd::CommandError);
  INFO(listing(t));
  CHECK(t.requests.back().method == "POST");
  CHECK(path_of(t.requests.back()) == kLeasesPath);
  CHECK(t.pending() == 0);
}

TEST_CASE("deploy --dry-run=server: the same writes with dryRun=All") {
  cmd::DeployFlags flags;
  flags.config_dir = kExampleDir;
  flags.scripts_dir = kScriptsDir;
  flags.dry_run = "server";
  cmd::DeployOptions o(flags, "");
  o.complete();
  o.validate();
  FakeTransport t;
  t.reply(200, R"({"kind":"APIResourceList","resources":[{"name":"inferservicesets"}]})");
  t.reply(404, kNotFound);
  t.reply(200, R"({"kind":"ServiceList","metadata":{},"items":[]})");
  for (int i = 0; i < 3; ++i) t.reply(404, kNotFound);  // no nodePort claimed
  t.reply(200, kNodeList);
  t.reply(200, R"({"kind":"PodList","metadata":{},"items":[]})");
  for (int i = 0; i < 12; ++i) t.reply(200, R"({"metadata":{"name":"x"}})");
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "name");
  o.run(client, printer);
  INFO(listing(t));
  REQUIRE(t.requests.size() > 8);
  for (std::size_t i = 8; i < t.requests.size(); ++i) {
    CHECK(t.requests[i].method == "PATCH");
    CHECK(query_of(t.requests[i]) == (i < 11 ? "fieldManager=kubectl-mindie-claim-" + kNs + "&dryRun=All"
                                             : "fieldManager=kubectl-mindie&dryRun=All"));
  }
  CHECK(out.str().rfind("configmap/motor-config\n", 0) == 0);  // -o name: kind/name only
}

TEST_CASE("deploy --dry-run=client prints every object and sends nothing") {
  cmd::DeployFlags flags;
  flags.config_dir = kExampleDir;
  flags.scripts_dir = kScriptsDir;
  flags.dry_run = "client";
  cmd::DeployOptions o(flags, "");
  o.complete();
  o.validate();
  CHECK_FALSE(o.needs_server());
  FakeTransport t;  // nothing queued: any request would throw
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  o.run(client, printer);
  CHECK(t.requests.empty());
  CHECK(out.str().rfind("configmap/motor-config serverside-applied (dry run)\n", 0) == 0);
  CHECK(out.str().find("inferserviceset.mindcluster.huawei.com/") != std::string::npos);
}

TEST_CASE("deploy: a refused input sends nothing") {
  test::TempDir dir;
  FakeTransport t;  // nothing queued: any request would throw
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");

  SUBCASE("-n differing from job_id") {
    cmd::DeployFlags flags;
    flags.config_dir = kExampleDir;
    cmd::DeployOptions o(flags, "other");
    o.complete();
    o.validate();
    CHECK_THROWS_AS(o.run(client, printer), cmd::UsageError);
  }
  SUBCASE("an invalid config") {
    nlohmann::json cfg = nlohmann::json::parse(read(kExampleDir + "/user_config.json"));
    cfg["motor_deploy_config"]["p_instances_num"] = 17;
    cmd::DeployFlags flags;
    flags.filename = dir.write("user_config.json", cfg.dump(2));
    cmd::DeployOptions o(flags, "");
    o.complete();
    o.validate();
    CHECK_THROWS_WITH_AS(o.run(client, printer), doctest::Contains("motor_deploy_config.p_instances_num"),
                         validation::ValidationError);
  }
  SUBCASE("a scripts folder lacking what the pods run") {
    dir.write("scripts/boot.sh", "#!/bin/sh\n");
    cmd::DeployFlags flags;
    flags.config_dir = kExampleDir;
    flags.scripts_dir = (dir.path / "scripts").string();
    cmd::DeployOptions o(flags, "");
    o.complete();
    o.validate();
    CHECK_THROWS_AS(o.run(client, printer), cmd::CommandError);
  }
  SUBCASE("flags: -f with --config-dir, refused by validate()") {
    cmd::DeployFlags flags;
    flags.config_dir = kExampleDir;
    flags.filename = kExampleDir + "/user_config.json";
    cmd::DeployOptions o(flags, "");
    o.complete();
    CHECK_THROWS_AS(o.validate(), cmd::UsageError);
  }
  SUBCASE("flags: --stop-operator without --rollout, refused by validate()") {
    cmd::DeployFlags flags;
    flags.config_dir = kExampleDir;
    flags.stop_operator = true;
    cmd::DeployOptions o(flags, "");
    o.complete();
    CHECK_THROWS_WITH_AS(o.validate(), "--stop-operator applies only to --rollout", cmd::UsageError);
  }
  CHECK(t.requests.empty());
  CHECK(out.str().empty());
}

// ---------------------------------------------------------------------------------------------------------------
// scale

namespace {

/// scale --prefill 2 of the example in mindie-demo: completed and validated.
cmd::ScaleOptions scale_prefill_2() {
  cmd::ScaleFlags flags;
  flags.prefill = 2;
  flags.skip_node_check = true;  // the NPU preflight's two LISTs are its own tests' subject (e2e)
  cmd::ScaleOptions o(flags, kNs);
  o.complete("default");
  o.validate();
  return o;
}

}  // namespace

TEST_CASE("scale: a JSON Patch guarded by test ops, then the baseline under its resourceVersion") {
  cmd::ScaleOptions o = scale_prefill_2();
  const json::object iss = live_service_set();
  const std::string iss_name(iss.at("metadata").at("name").as_string());
  FakeTransport t;
  t.reply(404, kNotFound);  // the namespace lock: free
  t.reply(200, json::serialize(stored_config_map()));
  t.reply(200, json::serialize(iss));
  t.reply(201, kLease);                // the lock taken before the first write
  t.reply(200, json::serialize(iss));  // the patch's answer
  t.reply(200, R"({"metadata":{"name":"motor-config"}})");
  queue_revision(t);
  t.reply(200, kLease);  // the lock freed
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  o.run(client, printer);
  INFO(listing(t));

  CHECK(lease_steps(t) == "GET 0, POST 3, PATCH 9");
  const auto requests = without_lease(t);
  check_revision_step(requests, 4);
  CHECK(requests[0].method == "GET");
  CHECK(requests[0].path == kCmPath);
  CHECK(requests[1].method == "GET");
  CHECK(requests[1].path == kIssPath + iss_name);

  const auto& patch = requests[2];
  CHECK(patch.method == "PATCH");
  CHECK(patch.path == kIssPath + iss_name + "?fieldManager=kubectl-mindie");
  CHECK(patch.content_type == "application/json-patch+json");
  const json::array ops = json::parse(patch.body).as_array();
  const json::object* test_replicas = op_at(ops, "test", "/replicas");
  const json::object* set_replicas = op_at(ops, "replace", "/replicas");
  REQUIRE(test_replicas);
  REQUIRE(set_replicas);
  CHECK(test_replicas->at("value") == 1);  // the live count read before
  CHECK(set_replicas->at("value") == 2);
  CHECK(test_replicas->at("path") == set_replicas->at("path"));
  CHECK(op_at(ops, "test", "/name"));  // the role at that index is still prefill

  const auto& baseline = requests[3];
  CHECK(baseline.method == "PATCH");
  CHECK(baseline.path == kCmPath + "?fieldManager=kubectl-mindie");
  CHECK(baseline.content_type == "application/merge-patch+json");
  const json::object merge = json::parse(baseline.body).as_object();
  CHECK(merge.at("metadata").at("resourceVersion") == "41");  // a compare-and-swap on what was read
  const json::object& data = merge.at("data").as_object();
  CHECK(data.size() == 1);  // only the baseline key
  const auto written = config::parse_user_config(std::string(data.at("user_config.json").as_string()), "written");
  CHECK(written.p_instances == 2);
  CHECK(written.d_instances == 1);
  CHECK(out.str() == "inferserviceset.mindcluster.huawei.com/" + iss_name + " scaled\n");
}

TEST_CASE("scale: the patch is undone when the baseline cannot be updated") {
  cmd::ScaleOptions o = scale_prefill_2();
  const json::object iss = live_service_set();
  const std::string iss_name(iss.at("metadata").at("name").as_string());
  FakeTransport t;
  t.reply(404, kNotFound);  // the namespace lock: free
  t.reply(200, json::serialize(stored_config_map()));
  t.reply(200, json::serialize(iss));
  t.reply(201, kLease);
  t.reply(200, json::serialize(iss));
  t.reply(403, R"({"kind":"Status","status":"Failure","reason":"Forbidden","code":403,"message":"no"})");
  t.reply(200, kLease);                // the lock confirmed ours before the undo
  t.reply(200, json::serialize(iss));  // the undo's answer
  t.reply(200, kLease);                // the lock freed on the way out
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  CHECK_THROWS_WITH_AS(o.run(client, printer), doctest::Contains("so the scale was undone"), cmd::PartialFailure);
  INFO(listing(t));
  CHECK(lease_steps(t) == "GET 0, POST 3, PATCH 6, PATCH 8");
  const auto requests = without_lease(t);
  REQUIRE(requests.size() == 5);
  const auto& undo = requests[4];
  CHECK(undo.method == "PATCH");
  CHECK(undo.path == kIssPath + iss_name + "?fieldManager=kubectl-mindie");
  CHECK(undo.content_type == "application/json-patch+json");
  const json::array ops = json::parse(undo.body).as_array();
  REQUIRE(op_at(ops, "test", "/replicas"));
  REQUIRE(op_at(ops, "replace", "/replicas"));
  CHECK(op_at(ops, "test", "/replicas")->at("value") == 2);  // guards the count this scale set
  CHECK(op_at(ops, "replace", "/replicas")->at("value") == 1);
  CHECK(out.str().empty());
}

TEST_CASE("scale: a stale read (a failed test op) changes nothing and writes no baseline") {
  cmd::ScaleOptions o = scale_prefill_2();
  json::object iss = live_service_set();
  FakeTransport t;
  t.reply(404, kNotFound);  // the namespace lock: free
  t.reply(200, json::serialize(stored_config_map()));
  t.reply(200, json::serialize(iss));
  t.reply(201, kLease);
  t.reply(422, R"({"kind":"Status","status":"Failure","reason":"Invalid","code":422,"message":"test failed"})");
  // Re-read: someone else scaled prefill to 3 meanwhile.
  const auto roles = iss.at("spec").at("template").at("roles").as_array();
  for (std::size_t i = 0; i < roles.size(); ++i)
    if (roles[i].at("name") == "prefill")
      iss["spec"].as_object()["template"].as_object()["roles"].as_array()[i].as_object()["replicas"] = 3;
  t.reply(200, json::serialize(iss));
  t.reply(200, kLease);  // the lock confirmed ours: an edit from outside kubectl-mindie, not a rival's change
  t.reply(200, json::serialize(iss));  // read back: not applied
  t.reply(200, kLease);                // the lock freed
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  CHECK_THROWS_WITH_AS(o.run(client, printer), doctest::Contains("changed since it was read"), cmd::CommandError);
  INFO(listing(t));
  const auto requests = without_lease(t);
  REQUIRE(requests.size() == 5);
  CHECK(requests[3].method == "GET");
  CHECK(requests[2].method == "PATCH");  // the guarded patch, refused: the only write tried
  for (std::size_t i = 0; i < requests.size(); ++i)
    if (i != 2) CHECK(requests[i].method == "GET");
}

TEST_CASE("scale -f: a bad file is refused before any request") {
  test::TempDir dir;
  nlohmann::json cfg = nlohmann::json::parse(read(kExampleDir + "/user_config.json"));
  cfg["motor_deploy_config"]["job_id"] = "elsewhere";
  cmd::ScaleFlags flags;
  flags.filename = dir.write("user_config.json", cfg.dump(2));
  cmd::ScaleOptions o(flags, kNs);
  o.complete("default");
  o.validate();
  FakeTransport t;
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  CHECK_THROWS_AS(o.run(client, printer), cmd::UsageError);  // -n mindie-demo, job_id elsewhere
  CHECK(t.requests.empty());
}

// ---------------------------------------------------------------------------------------------------------------
// update-config

namespace {

/// The example config with `mutate` applied, written to `dir`.
template <class F>
std::string edited_example(const test::TempDir& dir, F mutate) {
  nlohmann::json cfg = nlohmann::json::parse(read(kExampleDir + "/user_config.json"));
  mutate(cfg);
  return dir.write("user_config.json", cfg.dump(2));
}

}  // namespace

TEST_CASE("update-config: a whitelisted change is one merge patch of the baseline under its resourceVersion") {
  test::TempDir dir;
  cmd::UpdateConfigFlags flags;
  flags.filename = edited_example(dir, [](nlohmann::json& c) {
    c["motor_controller_config"]["logging_config"]["log_level"] = "DEBUG";
  });
  cmd::UpdateConfigOptions o(flags, "");
  o.complete();
  o.validate();
  FakeTransport t;
  t.reply(404, kNotFound);  // the namespace lock: free
  t.reply(200, json::serialize(stored_config_map()));
  t.reply(201, kLease);  // the lock taken before the write
  t.reply(200, R"({"metadata":{"name":"motor-config"}})");
  queue_revision(t);
  t.reply(200, kLease);  // the lock freed
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  o.run(client, printer);
  INFO(listing(t));
  CHECK(lease_steps(t) == "GET 0, POST 2, PATCH 7");
  const auto requests = without_lease(t);
  check_revision_step(requests, 2);
  CHECK(requests[0].method == "GET");
  CHECK(requests[0].path == kCmPath);
  CHECK(requests[1].method == "PATCH");
  CHECK(requests[1].path == kCmPath + "?fieldManager=kubectl-mindie");
  CHECK(requests[1].content_type == "application/merge-patch+json");
  const json::object merge = json::parse(requests[1].body).as_object();
  CHECK(merge.at("metadata").at("resourceVersion") == "41");
  const json::object& data = merge.at("data").as_object();
  CHECK(data.at("user_config.json").as_string() == read(flags.filename));
  CHECK_FALSE(data.contains("env.json"));  // not passed: the stored one stays
  CHECK(out.str() == "configmap/motor-config configured\n");
}

TEST_CASE("update-config: a changed non-runtime field is refused after one read, nothing written") {
  test::TempDir dir;
  cmd::UpdateConfigFlags flags;
  flags.filename = edited_example(dir, [](nlohmann::json& c) { c["motor_deploy_config"]["image_name"] = "other:1"; });
  cmd::UpdateConfigOptions o(flags, "");
  o.complete();
  o.validate();
  FakeTransport t;
  t.reply(404, kNotFound);  // the namespace lock: free
  t.reply(200, json::serialize(stored_config_map()));
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  CHECK_THROWS_WITH_AS(o.run(client, printer),
                       "update-config may not change these paths (they need a redeploy):\n"
                       "* motor_deploy_config.image_name",
                       cmd::CommandError);
  CHECK(lease_steps(t) == "GET 0");  // refused before the first write: the lock was never taken
  REQUIRE(t.requests.size() == 2);
  CHECK(t.requests[1].method == "GET");
  CHECK(out.str().empty());
}

TEST_CASE("update-config: the same config changes nothing; a conflict is re-read, re-checked and retried") {
  cmd::UpdateConfigFlags flags;
  flags.config_dir = kExampleDir;
  FakeTransport t;
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  SUBCASE("unchanged") {
    cmd::UpdateConfigOptions o(flags, "");
    o.complete();
    o.validate();
    t.reply(404, kNotFound);  // the namespace lock: free
    t.reply(200, json::serialize(stored_config_map()));
    o.run(client, printer);
    CHECK(t.requests.size() == 2);  // nothing to write: the lock is not taken
    CHECK(out.str() == "configmap/motor-config unchanged\n");
  }
  SUBCASE("409 Conflict") {
    test::TempDir dir;
    flags.config_dir.clear();
    flags.filename = edited_example(dir, [](nlohmann::json& c) {
      c["motor_coordinator_config"]["logging_config"]["log_level"] = "DEBUG";
    });
    cmd::UpdateConfigOptions o(flags, "");
    o.complete();
    o.validate();
    json::object fresh = stored_config_map();
    fresh["metadata"].as_object()["resourceVersion"] = "42";
    t.reply(404, kNotFound);
    t.reply(200, json::serialize(stored_config_map()));
    t.reply(201, kLease);
    t.reply(409, R"({"kind":"Status","status":"Failure","reason":"Conflict","code":409,"message":"changed"})");
    t.reply(200, kLease);  // the lock confirmed ours before the re-read: not a rival's change
    t.reply(200, json::serialize(fresh));
    t.reply(200, R"({"metadata":{"name":"motor-config"}})");
    queue_revision(t);
    t.reply(200, kLease);
    o.run(client, printer);
    INFO(listing(t));
    const auto requests = without_lease(t);
    check_revision_step(requests, 4);
    CHECK(requests[2].method == "GET");
    CHECK(json::parse(requests[1].body).at("metadata").at("resourceVersion") == "41");
    CHECK(json::parse(requests[3].body).at("metadata").at("resourceVersion") == "42");
    CHECK(out.str() == "configmap/motor-config configured\n");
  }
}

TEST_CASE("update-config --dry-run=client is refused by validate()") {
  cmd::UpdateConfigFlags flags;
  flags.config_dir = kExampleDir;
  flags.dry_run = "client";
  cmd::UpdateConfigOptions o(flags, "");
  o.complete();
  CHECK_THROWS_WITH_AS(o.validate(), "--dry-run=client is not supported by update-config: use --dry-run=server",
                       cmd::UsageError);
}
