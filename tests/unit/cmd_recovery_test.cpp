// The intent scale records in the namespace lock, its recovery by the next command, a lost baseline reply and
// signals (issue 17): against FakeTransport, request by request.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cmd/interrupt.h"
#include "cmd/lock.h"
#include "cmd/scale.h"
#include "fake_transport.h"
#include "mindie/baseline.h"
#include "mindie/baseline_policy.h"
#include "mindie/config.h"
#include "mindie/render.h"
#include "mindie/revision.h"
#include "util/json_text.h"

using namespace mindie;
namespace json = boost::json;
using test::FakeTransport;

namespace {

const std::string kExampleDir = std::string(MINDIE_SOURCE_DIR) + "/examples";
const std::string kNs = "mindie-demo";
const std::string kLeasePath = "/apis/coordination.k8s.io/v1/namespaces/mindie-demo/leases/kubectl-mindie";
const std::string kCmPath = "/api/v1/namespaces/mindie-demo/configmaps/motor-config";
const std::string kLease =
    R"({"kind":"Lease","metadata":{"name":"kubectl-mindie","namespace":"mindie-demo","resourceVersion":"7"},)"
    R"("spec":{"holderIdentity":"me","leaseDurationSeconds":60}})";
const std::string kNotFound =
    R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"not found"})";

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

config::UserConfig example_config() {
  return config::parse_user_config(read(kExampleDir + "/user_config.json"), "user_config.json");
}

/// The example's motor-config with `prefill` prefill instances at resourceVersion `rv`.
json::object config_map(int prefill, const std::string& rv) {
  const config::EnvConfig env = config::parse_env_config(read(kExampleDir + "/env.json"), "env.json");
  json::object cm = render::render_config_map(example_config(), &env, {});
  auto& data = cm["data"].as_object();
  data[baseline::kBaselineKey] = util::replace_json_number(std::string(data[baseline::kBaselineKey].as_string()),
                                                           policy::kPrefillInstancesPath, prefill);
  cm["metadata"].as_object()["resourceVersion"] = rv;
  cm["metadata"].as_object()["uid"] = "cm-uid";
  return cm;
}

/// The answer to a LIST of the baseline's revisions: none.
const std::string kNoRevisions = R"({"kind":"ControllerRevisionList","metadata":{},"items":[]})";

/// The answer to a LIST of the baseline's revisions: one, recording what `cm` holds (nothing missing).
std::string revisions_of(const json::object& cm) {
  const auto content = revision::content_of(baseline::read_baseline(cm, kNs));
  REQUIRE(content);
  const json::object r = revision::render(cm, 1, *content, {"deploy", "ops@elsewhere", 1764748000});
  return json::serialize(json::object{{"kind", "ControllerRevisionList"}, {"items", json::array{r}}});
}

/// The example's InferServiceSet with `prefill` prefill replicas.
json::object service_set(int prefill) {
  json::object iss = render::render_infer_service_set(example_config(), nullptr, {}).back();
  iss["metadata"].as_object()["resourceVersion"] = "7";
  for (auto& role : iss["spec"].as_object()["template"].as_object()["roles"].as_array())
    if (role.at("name") == "prefill") role.as_object()["replicas"] = prefill;
  return iss;
}

std::string iss_path() {
  return "/apis/mindcluster.huawei.com/v1/namespaces/mindie-demo/inferservicesets/" +
         std::string(service_set(1).at("metadata").at("name").as_string());
}

cmd::ScaleOptions scale_prefill(int n) {
  cmd::ScaleFlags flags;
  flags.prefill = n;
  flags.skip_node_check = true;  // the NPU preflight's two LISTs are its own tests' subject (e2e)
  cmd::ScaleOptions o(flags, kNs);
  o.complete("default");
  o.validate();
  return o;
}

/// A Lease freed by a holder that left `intent` (from prefill `from` to `to`, the baseline read at `rv`).
std::string lease_left_with_intent(int from, int to, const std::string& rv) {
  const json::object counts_from{{"prefill", from}, {"decode", 1}, {"hybrid", 0}, {"encode", 0}};
  const json::object counts_to{{"prefill", to}, {"decode", 1}, {"hybrid", 0}, {"encode", 0}};
  const json::object intent{{"format", 1},
                            {"command", "scale"},
                            {"at", 1764748920},  // 2025-12-03 08:02 UTC
                            {"mode", "infer_service_set"},
                            {"workload", "x"},
                            {"roles", json::array{"prefill"}},
                            {"from", counts_from},
                            {"to", counts_to},
                            {"baseline_resource_version", rv}};
  const json::object holder{{"format", 1}, {"command", "scale"}, {"user", "ops"}, {"host", "elsewhere"}, {"pid", 4711}};
  return json::serialize(json::object{{"kind", "Lease"},
                                      {"metadata",
                                       {{"name", "kubectl-mindie"},
                                        {"namespace", kNs},
                                        {"resourceVersion", "5"},
                                        {"annotations",
                                         {{cmd::kLockIntentAnnotation, json::serialize(intent)},
                                          {cmd::kLockHolderAnnotation, json::serialize(holder)}}}}},
                                      {"spec", {{"leaseDurationSeconds", 60}}}});
}

/// The annotations a lease write sent (a create's or a merge patch's), {} when none.
json::object annotations_of(const kube::HttpRequest& r) {
  const json::value body = json::parse(r.body);
  const auto* md = body.as_object().if_contains("metadata");
  if (md == nullptr) return {};
  const auto* a = md->as_object().if_contains("annotations");
  return a != nullptr ? a->as_object() : json::object();
}

std::string listing(const FakeTransport& t) {
  std::string out;
  for (const auto& r : t.requests) out += "\n  " + r.method + " " + r.path;
  return out;
}

/// The counts of a baseline merge patch.
int written_prefill(const kube::HttpRequest& r) {
  const json::value body = json::parse(r.body);
  return config::parse_user_config(std::string(body.at("data").at(baseline::kBaselineKey).as_string()), "written")
      .p_instances;
}

/// Forwards to a FakeTransport and raises `sig` once the request numbered `after` (0-based) was answered: a
/// signal arriving while the command waits on that request.
class SignalAfter : public kube::HttpTransport {
 public:
  SignalAfter(FakeTransport& inner, std::size_t after, int sig) : inner_(inner), after_(after), sig_(sig) {}
  kube::HttpResponse send(const kube::HttpRequest& req) override {
    const std::size_t before = inner_.request_count();
    auto r = inner_.send(req);
    // Only the scripted requests count (the fake answers the rights check's reviews itself).
    if (inner_.request_count() > before && count_++ == after_) raise(sig_);
    return r;
  }
  kube::HttpResponse stream(const kube::HttpRequest& req, const kube::StreamSink& sink,
                            const kube::StreamHeadObserver& on_head) override {
    return inner_.stream(req, sink, on_head);
  }
  std::string server() const override { return inner_.server(); }

 private:
  FakeTransport& inner_;
  std::size_t after_;
  int sig_;
  std::size_t count_ = 0;
};

}  // namespace

TEST_CASE("scale records its intent with the lock's take and clears it as it frees the lock") {
  cmd::ScaleOptions o = scale_prefill(2);
  FakeTransport t;
  t.reply(404, kNotFound);
  t.reply(200, json::serialize(config_map(1, "41")));
  t.reply(200, json::serialize(service_set(1)));
  t.reply(201, kLease);
  t.reply(200, json::serialize(service_set(2)));
  t.reply(200, json::serialize(config_map(2, "42")));
  t.reply(200, kNoRevisions);  // the revision step: none yet, the first created
  t.reply(201, "{}");
  t.reply(200, kLease);
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  o.run(client, printer);
  INFO(listing(t));
  REQUIRE(t.requests.size() == 9);
  CHECK(t.requests[3].method == "POST");
  const json::object taken = annotations_of(t.requests[3]);
  REQUIRE(taken.contains(cmd::kLockIntentAnnotation));
  const json::value intent = json::parse(taken.at(cmd::kLockIntentAnnotation).as_string());
  CHECK(intent.at("command") == "scale");
  CHECK(intent.at("roles") == json::array{"prefill"});
  CHECK(intent.at("from").at("prefill") == 1);
  CHECK(intent.at("to").at("prefill") == 2);
  CHECK(intent.at("baseline_resource_version") == "41");
  CHECK(t.requests[7].method == "PATCH");  // the revision (applied), from the baseline as written
  CHECK(json::parse(t.requests[7].body).at("data").at(baseline::kBaselineKey) ==
        config_map(2, "42").at("data").at(baseline::kBaselineKey));
  CHECK(t.requests[8].method == "PATCH");
  CHECK(annotations_of(t.requests[8]).at(cmd::kLockIntentAnnotation).is_null());
}

TEST_CASE("scale: a baseline write whose reply was lost is read back, not undone") {
  cmd::ScaleOptions o = scale_prefill(2);
  FakeTransport t;
  t.reply(404, kNotFound);
  t.reply(200, json::serialize(config_map(1, "41")));
  t.reply(200, json::serialize(service_set(1)));
  t.reply(201, kLease);
  t.reply(200, json::serialize(service_set(2)));
  t.fail("Unable to connect to the server: connection reset by peer");  // applied, its reply lost
  t.reply(200, json::serialize(config_map(2, "42")));                   // the read-back shows it
  t.reply(200, kNoRevisions);
  t.reply(201, "{}");
  t.reply(200, kLease);
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  o.run(client, printer);
  INFO(listing(t));
  REQUIRE(t.requests.size() == 10);
  CHECK(t.requests[6].method == "GET");
  CHECK(t.requests[6].path == kCmPath);
  // The revision records the baseline read back, not the one read before the write.
  CHECK(json::parse(t.requests[8].body).at("data").at(baseline::kBaselineKey) ==
        config_map(2, "42").at("data").at(baseline::kBaselineKey));
  for (const auto& r : t.requests)
    CHECK_FALSE((r.method == "PATCH" && r.path.rfind(iss_path(), 0) == 0 && &r != &t.requests[4]));  // no undo
  CHECK(out.str().find("scaled") != std::string::npos);
}

TEST_CASE("scale: when the undo fails too, what is printed is read back and the intent stays in the lease") {
  cmd::ScaleOptions o = scale_prefill(2);
  FakeTransport t;
  t.reply(404, kNotFound);
  t.reply(200, json::serialize(config_map(1, "41")));
  t.reply(200, json::serialize(service_set(1)));
  t.reply(201, kLease);
  t.reply(200, json::serialize(service_set(2)));
  t.reply(403, R"({"kind":"Status","status":"Failure","reason":"Forbidden","code":403,"message":"no"})");
  t.reply(200, kLease);                                                 // the lock confirmed ours
  t.fail("Unable to connect to the server: connection reset by peer");  // the undo: outcome unknown
  t.reply(200, json::serialize(service_set(5)));  // read back: not undone, and someone else set 5 meanwhile
  t.reply(200, json::serialize(service_set(5)));  // what the report says it runs now, read for it
  t.reply(200, kLease);
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  std::string message;
  try {
    o.run(client, printer);
    FAIL("run() did not throw");
  } catch (const cmd::PartialFailure& e) {
    message = e.what();
  }
  INFO(listing(t));
  INFO(message);
  // What was read back, not the scale's target (a new-user trial: "now runs prefill 3" while prefill was 5).
  CHECK(message.find("now runs prefill 5, decode 1") != std::string::npos);
  CHECK(message.find("now runs prefill 2") == std::string::npos);
  CHECK(message.find("the next kubectl-mindie command in namespace mindie-demo finishes or reverts the scale") !=
        std::string::npos);
  REQUIRE(t.requests.size() == 11);
  CHECK(t.requests[9].method == "GET");
  CHECK(t.requests[10].method == "PATCH");  // the lock freed, its intent kept
  CHECK_FALSE(annotations_of(t.requests[10]).contains(cmd::kLockIntentAnnotation));
}

TEST_CASE("scale: an undo whose reply was lost but that was applied counts as undone") {
  cmd::ScaleOptions o = scale_prefill(2);
  FakeTransport t;
  t.reply(404, kNotFound);
  t.reply(200, json::serialize(config_map(1, "41")));
  t.reply(200, json::serialize(service_set(1)));
  t.reply(201, kLease);
  t.reply(200, json::serialize(service_set(2)));
  t.reply(403, R"({"kind":"Status","status":"Failure","reason":"Forbidden","code":403,"message":"no"})");
  t.reply(200, kLease);  // the lock confirmed ours
  t.fail("Unable to connect to the server: connection reset by peer");
  t.reply(200, json::serialize(service_set(1)));  // read back: undone after all
  t.reply(200, kLease);
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  CHECK_THROWS_WITH_AS(o.run(client, printer), doctest::Contains("so the scale was undone"), cmd::PartialFailure);
  REQUIRE(t.requests.size() == 10);
  CHECK(annotations_of(t.requests[9]).at(cmd::kLockIntentAnnotation).is_null());  // nothing to recover: intent cleared
}

TEST_CASE("the next command finishes an interrupted scale whose workload write was applied") {
  cmd::ScaleOptions o = scale_prefill(2);
  FakeTransport t;
  t.reply(200, lease_left_with_intent(1, 2, "41"));  // observe: freed, its intent left
  t.reply(200, kLease);                              // the take, at once (recover_first)
  // recovery: baseline unmoved, workload at the target (2 already): finish
  t.reply(200, json::serialize(config_map(1, "41")));
  t.reply(200, json::serialize(service_set(2)));
  t.reply(200, json::serialize(config_map(1, "41")));
  t.reply(200, json::serialize(service_set(2)));
  t.reply(200, kLease);                                // the recovery's intent recorded
  t.reply(200, json::serialize(config_map(2, "42")));  // the baseline written
  t.reply(200, kNoRevisions);                          // its revision, recorded
  t.reply(201, "{}");
  t.reply(200, json::serialize(config_map(2, "42")));  // nothing missing: the recovery's last look
  t.reply(200, revisions_of(config_map(2, "42")));
  t.reply(200, kLease);  // the intent cleared
  // the command's own pass, planned again
  t.reply(200, json::serialize(config_map(2, "42")));
  t.reply(200, json::serialize(service_set(2)));
  t.reply(200, kLease);  // freed
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  o.run(client, printer);
  INFO(listing(t));
  INFO(err.str());
  REQUIRE(t.requests.size() == 16);
  CHECK(t.requests[7].path.rfind(kCmPath, 0) == 0);
  CHECK(written_prefill(t.requests[7]) == 2);
  CHECK(t.requests[9].method == "PATCH");                                           // its revision, applied
  CHECK_FALSE(annotations_of(t.requests[1]).contains(cmd::kLockIntentAnnotation));  // the left intent is kept
  CHECK(annotations_of(t.requests[12]).at(cmd::kLockIntentAnnotation).is_null());
  CHECK(err.str() ==
        "recovered an interrupted scale from 08:02 UTC (scale by ops@elsewhere, pid 4711): "
        "prefill 1 \u2192 2, completed\n");
}

TEST_CASE("a scale stopped between its baseline write and its revision: the next command records the revision") {
  // Killed after its baseline write (now at 42, prefill 2); its intent names who began it, as the lock stamps it.
  json::object lease = json::parse(lease_left_with_intent(1, 2, "41")).as_object();
  auto& annotations = lease["metadata"].as_object()["annotations"].as_object();
  json::object intent = json::parse(annotations[cmd::kLockIntentAnnotation].as_string()).as_object();
  intent["by"] = json::object{{"command", "scale"}, {"user", "ops"}, {"host", "elsewhere"}, {"pid", 4711}};
  annotations[cmd::kLockIntentAnnotation] = json::serialize(intent);
  cmd::ScaleOptions o = scale_prefill(2);
  FakeTransport t;
  t.reply(200, json::serialize(lease));
  t.reply(200, kLease);                                // the take, at once (recover_first)
  t.reply(200, json::serialize(config_map(2, "42")));  // recovery: the baseline says the target
  t.reply(200, json::serialize(config_map(2, "42")));  // its pass: nothing left to write
  t.reply(200, json::serialize(service_set(2)));
  t.reply(200, json::serialize(config_map(2, "42")));  // the revision missing
  t.reply(200, kNoRevisions);
  t.reply(200, kLease);  // the recovery's intent recorded
  t.reply(200, kNoRevisions);
  t.reply(201, "{}");                                  // revision 1 created
  t.reply(200, kLease);                                // the intent cleared
  t.reply(200, json::serialize(config_map(2, "42")));  // the command's own pass: nothing to do
  t.reply(200, json::serialize(service_set(2)));
  t.reply(200, kLease);  // freed
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  o.run(client, printer);
  INFO(listing(t));
  REQUIRE(t.requests.size() == 14);
  CHECK(t.requests[9].method == "PATCH");
  const json::value made = json::parse(t.requests[9].body);
  CHECK(made.at("metadata").at("name") == "motor-config-1");
  CHECK(made.at("metadata").at("annotations").at(revision::kCommandAnnotation) == "scale");
  CHECK(made.at("metadata").at("annotations").at(revision::kUserAnnotation) == "ops@elsewhere");
  CHECK(made.at("metadata").at("ownerReferences").at(0).at("uid") == "cm-uid");
  CHECK(err.str() ==
        "recovered an interrupted scale from 08:02 UTC (scale by ops@elsewhere, pid 4711): "
        "prefill 1 \u2192 2, completed, revision 1 recorded\n");
}

TEST_CASE("the next command reverts an interrupted scale when the baseline moved since") {
  cmd::ScaleOptions o = scale_prefill(1);
  FakeTransport t;
  t.reply(200, lease_left_with_intent(1, 3, "40"));    // read at 40; the baseline is at 41 now (live: 3)
  t.reply(200, kLease);                                // the take, at once (recover_first)
  t.reply(200, json::serialize(config_map(1, "41")));  // recovery: moved → live back to the baseline's 1
  t.reply(200, json::serialize(config_map(1, "41")));
  t.reply(200, json::serialize(service_set(3)));
  t.reply(200, kLease);                                // the recovery's intent
  t.reply(200, json::serialize(service_set(1)));       // the patch back to 1
  t.reply(200, json::serialize(config_map(1, "41")));  // its revision recorded already
  t.reply(200, revisions_of(config_map(1, "41")));
  t.reply(200, kLease);                                // the intent cleared
  t.reply(200, json::serialize(config_map(1, "41")));  // own pass: nothing left to do
  t.reply(200, json::serialize(service_set(1)));
  t.reply(200, kLease);
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  o.run(client, printer);
  INFO(listing(t));
  REQUIRE(t.requests.size() == 13);
  CHECK(t.requests[6].path.rfind(iss_path(), 0) == 0);
  CHECK(t.requests[6].method == "PATCH");
  CHECK(err.str().find("prefill 1 \u2192 3, reverted: the baseline changed since (it says prefill 1, decode 1)") !=
        std::string::npos);
}

TEST_CASE("the next command drops an interrupted scale of which nothing was applied") {
  cmd::ScaleOptions o = scale_prefill(1);
  FakeTransport t;
  t.reply(200, lease_left_with_intent(1, 3, "41"));
  // scale --prefill 1 on prefill 1 writes nothing of its own, but the intent it saw is recovered first (it
  // must never say "unchanged" over a half-done change, nor plan from it).
  t.reply(200, kLease);                                // the take, at once (recover_first)
  t.reply(200, json::serialize(config_map(1, "41")));  // recovery: unmoved, live untouched
  t.reply(200, json::serialize(service_set(1)));
  t.reply(200, json::serialize(config_map(1, "41")));  // its revision recorded already
  t.reply(200, revisions_of(config_map(1, "41")));
  t.reply(200, kLease);                                // the intent cleared
  t.reply(200, json::serialize(config_map(1, "41")));  // own pass: nothing to write
  t.reply(200, json::serialize(service_set(1)));
  t.reply(200, kLease);  // the release
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  o.run(client, printer);
  INFO(listing(t));
  CHECK(t.requests.size() == 10);
  CHECK(err.str().find("prefill 1 \u2192 3, dropped: nothing of it had been applied") != std::string::npos);

  cmd::ScaleOptions again = scale_prefill(2);
  FakeTransport u;
  u.reply(200, lease_left_with_intent(1, 3, "41"));
  u.reply(200, kLease);                                // the take
  u.reply(200, json::serialize(config_map(1, "41")));  // recovery: unmoved, live untouched
  u.reply(200, json::serialize(service_set(1)));
  u.reply(200, json::serialize(config_map(1, "41")));
  u.reply(200, revisions_of(config_map(1, "41")));
  u.reply(200, kLease);                                // the intent cleared
  u.reply(200, json::serialize(config_map(1, "41")));  // own pass
  u.reply(200, json::serialize(service_set(1)));
  u.reply(200, kLease);  // own intent recorded
  u.reply(200, json::serialize(service_set(2)));
  u.reply(200, json::serialize(config_map(2, "42")));
  u.reply(200, kNoRevisions);
  u.reply(201, "{}");
  u.reply(200, kLease);
  kube::Client client2(u);
  std::ostringstream out2, err2;
  cmd::Printer printer2(out2, err2, "");
  again.run(client2, printer2);
  INFO(listing(u));
  CHECK(u.requests.size() == 15);
  CHECK(err2.str().find("prefill 1 \u2192 3, dropped: nothing of it had been applied") != std::string::npos);
}

TEST_CASE("SIGINT between the workload patch and the baseline write: the patch is undone, exit 130") {
  cmd::ScaleOptions o = scale_prefill(2);
  FakeTransport t;
  t.reply(404, kNotFound);
  t.reply(200, json::serialize(config_map(1, "41")));
  t.reply(200, json::serialize(service_set(1)));
  t.reply(201, kLease);
  t.reply(200, json::serialize(service_set(2)));  // the signal arrives while this answer comes
  t.reply(200, kLease);                           // the lock confirmed ours
  t.reply(200, json::serialize(service_set(1)));  // the undo
  t.reply(200, kLease);
  SignalAfter signalling(t, 4, SIGINT);
  kube::Client client(signalling);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  std::exception_ptr failure;
  try {
    o.run(client, printer);
  } catch (...) {
    failure = std::current_exception();
  }
  INFO(listing(t));
  REQUIRE(failure);
  CHECK(cmd::exit_code_of(failure) == 130);
  try {
    std::rethrow_exception(failure);
  } catch (const cmd::PartialFailure& e) {
    CHECK(std::string(e.what()).find("so the scale was undone") != std::string::npos);
  }
  REQUIRE(t.requests.size() == 8);
  CHECK(t.requests[6].method == "PATCH");  // the undo, no baseline write
  CHECK(t.requests[6].path.rfind(iss_path(), 0) == 0);
  CHECK(annotations_of(t.requests[7]).at(cmd::kLockIntentAnnotation).is_null());
  CHECK(cmd::pending_interrupt() == 0);  // the guard is gone with the lock: a later command starts clean
}

TEST_CASE("SIGTERM before the first write: nothing is sent, exit 143") {
  cmd::ScaleOptions o = scale_prefill(2);
  FakeTransport t;
  t.reply(404, kNotFound);
  t.reply(200, json::serialize(config_map(1, "41")));
  t.reply(200, json::serialize(service_set(1)));
  SignalAfter signalling(t, 2, SIGTERM);
  kube::Client client(signalling);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  std::exception_ptr failure;
  try {
    o.run(client, printer);
  } catch (...) {
    failure = std::current_exception();
  }
  REQUIRE(failure);
  CHECK(cmd::exit_code_of(failure) == 143);
  CHECK(t.requests.size() == 3);
}

TEST_CASE("status: an intent left in the lock is drift with its age; one a live holder records is converging") {
  json::object lease = json::parse(lease_left_with_intent(1, 2, "41")).as_object();
  const std::int64_t at = 1764748920;
  auto notes = cmd::lock_notes(lease, at + 180);
  REQUIRE(notes.drift.size() == 1);
  CHECK(notes.converging.empty());
  CHECK(notes.drift[0] ==
        "unfinished scale from 08:02 UTC (3m ago): prefill 1 \u2192 2 (left by scale by "
        "ops@elsewhere, pid 4711): the baseline and the workload may disagree until the next "
        "mutating kubectl-mindie command in this namespace finishes or reverts it");

  // Held and renewed just now by a process elsewhere: a change in progress, not drift.
  auto& spec = lease["spec"].as_object();
  spec["holderIdentity"] = "elsewhere/4711/0000abcd";
  spec["renewTime"] = kube::micro_time(at + 170);
  spec["acquireTime"] = kube::micro_time(at);
  notes = cmd::lock_notes(lease, at + 180);
  CHECK(notes.drift.empty());
  REQUIRE(notes.converging.size() == 1);
  CHECK(notes.converging[0].find("scale from 08:02 UTC (3m ago): prefill 1 \u2192 2, under way (scale by "
                                 "ops@elsewhere, pid 4711, since 08:02:00 UTC)") == 0);

  // Nothing recorded: nothing to say; a record that is not JSON is drift, its text never printed.
  lease["metadata"].as_object()["annotations"].as_object().erase(cmd::kLockIntentAnnotation);
  notes = cmd::lock_notes(lease, at);
  CHECK(notes.drift.empty());
  CHECK(notes.converging.empty());
  lease["metadata"].as_object()["annotations"].as_object()[cmd::kLockIntentAnnotation] = "\x1b[2J{not json";
  notes = cmd::lock_notes(lease, at);
  REQUIRE(notes.drift.size() == 1);
  CHECK(notes.drift[0].find('\x1b') == std::string::npos);
}

TEST_CASE("status: a holder's renewTime ahead of this host's clock, or long past, is said so (never <invalid>)") {
  // Issue 30: one look cannot tell a live holder from one that is gone when the clocks disagree.
  json::object lease = json::parse(lease_left_with_intent(1, 2, "41")).as_object();
  const std::int64_t at = 1764748920;  // 08:02 UTC
  auto& spec = lease["spec"].as_object();
  spec["holderIdentity"] = "elsewhere/4711/0000abcd";
  spec["acquireTime"] = kube::micro_time(at);
  spec["renewTime"] = kube::micro_time(at + 3600);  // its clock an hour ahead of ours
  auto notes = cmd::lock_notes(lease, at + 60);
  CHECK(notes.drift.empty());
  REQUIRE(notes.converging.size() == 1);
  CHECK(notes.converging[0] ==
        "scale from 08:02 UTC (60s ago): prefill 1 \u2192 2, under way or abandoned (scale by ops@elsewhere, pid 4711, "
        "since 08:02:00 UTC; its lease's renewTime (09:02:00 UTC) is 59m ahead of this host's clock, so one look "
        "cannot tell; the next command takes the lock over once the lease has stayed unrenewed for 60s)");

  spec["renewTime"] = kube::micro_time(at - 600);  // its clock ten minutes behind ours, or gone
  notes = cmd::lock_notes(lease, at + 180);
  CHECK(notes.converging.empty());
  REQUIRE(notes.drift.size() == 1);
  CHECK(notes.drift[0].find("(left by scale by ops@elsewhere, pid 4711, since 08:02:00 UTC, last renewed 13m ago)") !=
        std::string::npos);

  // The intent's own time, written by the same clock, ahead of ours.
  notes = cmd::lock_notes(lease, at - 7200);
  REQUIRE(notes.converging.size() == 1);
  CHECK(notes.converging[0].find("scale from 08:02 UTC (ahead of this host's clock)") == 0);
  for (const auto& line : notes.converging) CHECK(line.find("<invalid>") == std::string::npos);
}

TEST_CASE("a recovery that fails keeps the intent it could not recover in the lease") {
  cmd::ScaleOptions o = scale_prefill(2);
  FakeTransport t;
  t.reply(200, lease_left_with_intent(1, 2, "41"));
  t.reply(200, kLease);  // the take, at once (recover_first)
  t.reply(403, R"({"kind":"Status","status":"Failure","reason":"Forbidden","code":403,"message":"no"})");
  t.reply(200, kLease);  // freed on the way out
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  CHECK_THROWS_WITH_AS(o.run(client, printer), doctest::Contains("its record stays in lease/kubectl-mindie"),
                       cmd::PartialFailure);
  INFO(listing(t));
  REQUIRE(t.requests.size() == 4);
  CHECK(t.requests[3].method == "PATCH");
  CHECK_FALSE(annotations_of(t.requests[3]).contains(cmd::kLockIntentAnnotation));  // kept
}

TEST_CASE("a scale refused outright (409 on the workload patch) clears its intent: nothing was applied") {
  cmd::ScaleOptions o = scale_prefill(2);
  FakeTransport t;
  t.reply(404, kNotFound);
  t.reply(200, json::serialize(config_map(1, "41")));
  t.reply(200, json::serialize(service_set(1)));
  t.reply(201, kLease);
  t.reply(409, R"({"kind":"Status","status":"Failure","reason":"Conflict","code":409,"message":"no"})");
  t.reply(200, kLease);                           // the lock confirmed ours: not a rival's change
  t.reply(200, json::serialize(service_set(1)));  // read back: not applied
  t.reply(200, kLease);
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  CHECK_THROWS_AS(o.run(client, printer), kube::ApiError);
  INFO(listing(t));
  REQUIRE(t.requests.size() == 8);
  CHECK(annotations_of(t.requests[7]).at(cmd::kLockIntentAnnotation).is_null());
}

TEST_CASE("a workload patch without an answer is read back: applied, the scale goes on to the baseline") {
  cmd::ScaleOptions o = scale_prefill(2);
  FakeTransport t;
  t.reply(404, kNotFound);
  t.reply(200, json::serialize(config_map(1, "41")));
  t.reply(200, json::serialize(service_set(1)));
  t.reply(201, kLease);
  t.fail("Unable to connect to the server: Operation timed out");
  t.reply(200, json::serialize(service_set(2)));  // read back: it was applied
  t.reply(200, json::serialize(config_map(2, "42")));
  t.reply(200, kNoRevisions);
  t.reply(201, "{}");
  t.reply(200, kLease);
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  o.run(client, printer);
  INFO(listing(t));
  REQUIRE(t.requests.size() == 10);
  CHECK(written_prefill(t.requests[6]) == 2);
  CHECK(annotations_of(t.requests[9]).at(cmd::kLockIntentAnnotation).is_null());

  // Not applied: the error stands and the intent goes (nothing changed).
  cmd::ScaleOptions again = scale_prefill(2);
  FakeTransport u;
  u.reply(404, kNotFound);
  u.reply(200, json::serialize(config_map(1, "41")));
  u.reply(200, json::serialize(service_set(1)));
  u.reply(201, kLease);
  u.fail("Unable to connect to the server: Operation timed out");
  u.reply(200, json::serialize(service_set(1)));
  u.reply(200, kLease);
  kube::Client client2(u);
  cmd::Printer printer2(out, err, "");
  CHECK_THROWS_AS(again.run(client2, printer2), kube::TransportError);
  REQUIRE(u.requests.size() == 7);
  CHECK(annotations_of(u.requests[6]).at(cmd::kLockIntentAnnotation).is_null());
}

TEST_CASE("recovery compares with what was live when the intent was recorded, not with the baseline") {
  // Prefill had drifted to 2 (baseline 1) when scale --prefill 3 was killed before its patch: nothing applied.
  json::object lease = json::parse(lease_left_with_intent(1, 3, "41")).as_object();
  auto& annotations = lease["metadata"].as_object()["annotations"].as_object();
  json::object intent = json::parse(annotations[cmd::kLockIntentAnnotation].as_string()).as_object();
  intent["live_from"] = json::object{{"prefill", 2}};
  annotations[cmd::kLockIntentAnnotation] = json::serialize(intent);
  cmd::ScaleOptions o = scale_prefill(2);
  FakeTransport t;
  t.reply(200, json::serialize(lease));
  t.reply(200, kLease);                                // the take, at once (recover_first)
  t.reply(200, json::serialize(config_map(1, "41")));  // recovery (prefill 2 live)
  t.reply(200, json::serialize(service_set(2)));
  t.reply(200, json::serialize(config_map(1, "41")));
  t.reply(200, revisions_of(config_map(1, "41")));
  t.reply(200, kLease);                                // intent cleared
  t.reply(200, json::serialize(config_map(1, "41")));  // own pass
  t.reply(200, json::serialize(service_set(2)));
  t.reply(200, kLease);  // own intent (the baseline write: prefill 2 live already)
  t.reply(200, json::serialize(config_map(2, "42")));
  t.reply(200, kNoRevisions);
  t.reply(201, "{}");
  t.reply(200, kLease);
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  o.run(client, printer);
  INFO(listing(t));
  CHECK(err.str().find("prefill 1 \u2192 3, dropped: nothing of it had been applied") != std::string::npos);
  CHECK(t.requests.size() == 14);
}

TEST_CASE("an intent left in a freed lease names who left it from its own record") {
  json::object lease = json::parse(lease_left_with_intent(1, 2, "41")).as_object();
  auto& annotations = lease["metadata"].as_object()["annotations"].as_object();
  annotations.erase(cmd::kLockHolderAnnotation);  // freed: the holder record cleared
  json::object intent = json::parse(annotations[cmd::kLockIntentAnnotation].as_string()).as_object();
  intent["by"] = json::object{{"command", "scale"}, {"user", "bob"}, {"host", "h2"}, {"pid", 77}};
  annotations[cmd::kLockIntentAnnotation] = json::serialize(intent);
  const auto notes = cmd::lock_notes(lease, 1764748920 + 60);
  REQUIRE(notes.drift.size() == 1);
  CHECK(notes.drift[0].find("(left by scale by bob@h2, pid 77)") != std::string::npos);
}

TEST_CASE("no undo once the lock was taken over while a request hung: the new holder's recovery stands") {
  // The baseline write came back 409 after a rival took the lock (this command stalled past the lease) and
  // recovered the scale; undoing now would undo that recovery.
  cmd::ScaleOptions o = scale_prefill(2);
  FakeTransport t;
  t.reply(404, kNotFound);
  t.reply(200, json::serialize(config_map(1, "41")));
  t.reply(200, json::serialize(service_set(1)));
  t.reply(201, kLease);
  t.reply(200, json::serialize(service_set(2)));
  t.reply(409, R"({"kind":"Status","status":"Failure","reason":"Conflict","code":409,"message":"changed"})");
  // The confirmation, before anything else: 409, and the lease names another holder (read again to name it).
  t.reply(409, R"({"kind":"Status","status":"Failure","reason":"Conflict","code":409,"message":"changed"})");
  const std::string rival =
      R"({"kind":"Lease","metadata":{"name":"kubectl-mindie","resourceVersion":"60",)"
      R"("annotations":{"kubectl-mindie/holder":"{\"command\":\"deploy\",\"user\":\"eve\",)"
      R"(\"host\":\"h9\",\"pid\":99}"}},"spec":{"holderIdentity":"rival","leaseDurationSeconds":60}})";
  t.reply(200, rival);
  t.reply(200, rival);
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  std::string cause;
  try {
    o.run(client, printer);
    FAIL("run() did not throw");
  } catch (const cmd::PartialFailure& e) {
    CHECK(std::string(e.what()).find("it writes nothing more, not even an undo") != std::string::npos);
    try {
      std::rethrow_exception(e.cause());
    } catch (const cmd::LockLost& lost) {
      cause = lost.what();
    }
  }
  CHECK(cause.find("it is held by deploy by eve@h9, pid 99") != std::string::npos);  // the taker named
  INFO(listing(t));
  REQUIRE(t.requests.size() == 9);  // no undo, and the lost lock is not freed
  for (const auto& r : t.requests)
    CHECK_FALSE((r.method == "PATCH" && r.path.rfind(iss_path(), 0) == 0 && &r != &t.requests[4]));
}

TEST_CASE("a holder of this host that is a zombie (killed, not yet reaped) is gone; a living one is not") {
  char host[256] = {};
  REQUIRE(gethostname(host, sizeof host - 1) == 0);
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // lives until the pipe closes
    char c;
    close(pipe_fds[1]);
    (void)!read(pipe_fds[0], &c, 1);
    _exit(0);
  }
  close(pipe_fds[0]);
  kube::LeaseRecord r;
  r.holder = {{"host", host}, {"pid", static_cast<std::int64_t>(child)}};
  CHECK_FALSE(cmd::lock_holder_gone(r));
  close(pipe_fds[1]);  // the child exits
  siginfo_t info{};
  REQUIRE(waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT) == 0);  // exited, not reaped
  CHECK(cmd::lock_holder_gone(r));
  REQUIRE(waitpid(child, nullptr, 0) == child);
  CHECK(cmd::lock_holder_gone(r));
  r.holder["pidns"] = "pid:[1]";  // another PID namespace of this host (a container with the host's network)
  CHECK_FALSE(cmd::lock_holder_gone(r));
  char ns[64] = {};
  REQUIRE(readlink("/proc/self/ns/pid", ns, sizeof ns - 1) > 0);
  r.holder["pidns"] = ns;
  CHECK(cmd::lock_holder_gone(r));
  r.holder["host"] = "another-host";
  CHECK_FALSE(cmd::lock_holder_gone(r));  // only this host's processes can be looked at
}
