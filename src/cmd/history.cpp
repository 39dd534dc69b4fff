#include "cmd/history.h"

#include <iostream>

#include "cmd/lock_records.h"
#include "cmd/revisions.h"
#include "kube/names.h"
#include "util/json_path.h"
#include "util/strings.h"
#include "util/table.h"
#include "util/time.h"

namespace mindie::cmd {

namespace po = boost::program_options;
namespace json = boost::json;

namespace {

/// What `r` changed relative to the revision before it in `all` (oldest first).
std::vector<std::string> changes_of(const std::vector<revision::Revision>& all, std::size_t i) {
  return revision::changes(i == 0 ? nullptr : &all[i - 1], all[i]);
}

json::object entry(const std::vector<revision::Revision>& all, std::size_t i) {
  const revision::Revision& r = all[i];
  return {{"revision", r.number}, {"name", r.name},     {"command", r.command},
          {"user", r.user},       {"recordedAt", r.at}, {"changes", util::string_array(changes_of(all, i))}};
}

std::string age(const std::string& at, std::int64_t now) {
  const auto t = util::parse_rfc3339(at);
  return t ? util::human_duration(now - *t) : "<unknown>";
}

std::string table(const std::vector<revision::Revision>& all) {
  util::Table t({{"REVISION"}, {"COMMAND"}, {"USER"}, {"AGE"}, {"CHANGE"}}, false);
  const std::int64_t now = now_seconds();
  for (std::size_t i = 0; i < all.size(); ++i)
    t.add({std::to_string(all[i].number), all[i].command, all[i].user, age(all[i].at, now),
           util::join(changes_of(all, i), ", ")});
  return t.str();
}

/// --revision N as people read it: who and what, then the files it holds.
std::string detail(const std::vector<revision::Revision>& all, std::size_t i) {
  const revision::Revision& r = all[i];
  std::string out = "revision " + std::to_string(r.number) + " (" + r.name + "): " + r.command + " by " + r.user +
                    " at " + r.at + "\nchanged: " + util::join(changes_of(all, i), ", ") + "\n\n" +
                    baseline::kBaselineKey + ":\n" + r.content.user_config;
  if (!out.ends_with('\n')) out += '\n';
  if (r.content.env) out += std::string("\n") + baseline::kEnvKey + ":\n" + *r.content.env;
  if (!out.ends_with('\n')) out += '\n';
  if (r.content.overrides) out += std::string("\n") + baseline::kOverridesKey + ":\n" + *r.content.overrides;
  if (!out.ends_with('\n')) out += '\n';
  return out + "\nscripts (sha256): " + (r.content.scripts_digest.empty() ? "none" : r.content.scripts_digest) + "\n";
}

}  // namespace

HistoryOptions::HistoryOptions(HistoryListFlags flags, std::string namespace_flag)
    : flags_(std::move(flags)), namespace_flag_(std::move(namespace_flag)) {}

void HistoryOptions::complete(const std::string& context_namespace) {
  namespace_ = namespace_flag_.empty() ? context_namespace : namespace_flag_;
}

void HistoryOptions::validate() const {
  check_namespace_syntax(namespace_flag_);
  if (flags_.revision && *flags_.revision < 1)
    throw UsageError("--revision " + std::to_string(*flags_.revision) + " is out of range: revisions start at 1");
  flags_.output.validate();
}

void HistoryOptions::run(kube::Client& client, Printer& printer) const {
  const auto all = existing_revisions(client, namespace_);
  if (flags_.revision) {
    const revision::Revision& r = find_revision(all, *flags_.revision, namespace_);
    const std::size_t i = static_cast<std::size_t>(&r - all.data());
    json::object shown{{"apiVersion", "kubectl-mindie/v1"}, {"kind", "Revision"}};
    for (const auto& kv : entry(all, i)) shown[kv.key()] = kv.value();
    json::object data{{baseline::kBaselineKey, r.content.user_config},
                      {revision::kScriptsDigestKey, r.content.scripts_digest}};
    if (r.content.env) data[baseline::kEnvKey] = *r.content.env;
    if (r.content.overrides) data[baseline::kOverridesKey] = *r.content.overrides;
    shown["data"] = std::move(data);
    printer.view(kControllerRevisions, r.name, std::move(shown), [&](bool) { return detail(all, i); });
  } else {
    json::array entries;
    for (std::size_t i = 0; i < all.size(); ++i) entries.push_back(entry(all, i));
    printer.view(kControllerRevisions, "",
                 {{"apiVersion", "kubectl-mindie/v1"},
                  {"kind", "History"},
                  {"namespace", namespace_},
                  {"revisions", std::move(entries)}},
                 [&](bool) { return table(all); });
  }
  printer.flush();
}

namespace {

class HistoryInvocation : public Invocation {
 public:
  explicit HistoryInvocation(po::options_description& desc) {
    desc.add_options()("revision", po::value<std::int64_t>()->notifier([this](std::int64_t v) { flags_.revision = v; }),
                       "Show what this revision holds (user_config.json, env.json, overrides.yaml)");
    flags_.output.bind(desc);
  }
  std::string output() const override { return flags_.output.format(); }
  void run(const GlobalFlags& global, Printer& printer) override {
    Session session(global, std::cerr);
    HistoryOptions o(flags_, global.kube.namespace_);
    o.complete(session.rest_config().namespace_);
    o.validate();
    o.run(session.client(), printer);
  }

 private:
  HistoryListFlags flags_;
};

}  // namespace

Command history_command() {
  return {"history",
          "List the baseline's revisions and what each changed",
          "kubectl mindie history [-n NS] [--revision N] [-o json|yaml]",
          "List the revisions of the motor-config baseline that deploy, scale, update-config and rollback record\n"
          "(ControllerRevisions motor-config-N, owned by motor-config; the last 10 are kept, --history-limit on\n"
          "those commands): the command, who ran it, when, and what it changed relative to the revision before, as\n"
          "user_config.json paths (env.json, overrides.yaml and scripts when those changed). --revision N shows what\n"
          "revision N holds.",
          "  # List the revisions\n"
          "  kubectl mindie history -n mindie-demo\n\n"
          "  # What revision 2 holds\n"
          "  kubectl mindie history -n mindie-demo --revision 2\n",
          HistoryListFlags().output.formats(),
          true,
          [](po::options_description& desc) -> std::unique_ptr<Invocation> {
            return std::make_unique<HistoryInvocation>(desc);
          },
          {{"0", "the revisions were listed"},
           {"1",
            "no deployment or no revisions in the namespace, an unknown revision, flags, API and connection "
            "errors"}}};
}

}  // namespace mindie::cmd
