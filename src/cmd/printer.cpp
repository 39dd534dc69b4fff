// cmd::Printer (common.h): kubectl's output formats.
#include <ostream>

#include "cmd/common.h"
#include "util/json_pretty.h"
#include "util/terminal.h"
#include "util/yaml_json.h"

namespace mindie::cmd {

namespace json = boost::json;

Printer::Printer(std::ostream& out, std::ostream& err, std::string format)
    : out_(out), err_(err), format_(std::move(format)) {}

// Every line of text goes through util::escape_terminal: names and messages come from files and the cluster, and
// one holding terminal escapes must not drive the user's terminal. -o json|yaml escape them as their syntax does.
void Printer::warning(const std::string& msg) {
  if (holding_) held_.push_back(msg);
  else err_ << "Warning: " << util::escape_terminal(msg) << '\n';
}

void Printer::release_warnings() {
  holding_ = false;
  for (const auto& msg : held_) err_ << "Warning: " << util::escape_terminal(msg) << '\n';
  held_.clear();
}

void Printer::notice(const std::string& line) { err_ << util::escape_terminal(line) << '\n' << std::flush; }

void Printer::mutation(const kube::GVR& r, const std::string& name, const std::string& verb, DryRun dry_run) {
  out_ << r.kind_dot_group() << '/' << util::escape_terminal(name);
  if (format_ != "name") {
    out_ << ' ' << verb;
    if (dry_run == DryRun::Client) out_ << " (dry run)";
    if (dry_run == DryRun::Server) out_ << " (server dry run)";
  }
  out_ << '\n';
}

void Printer::result(const kube::GVR& r, const std::string& name, const std::string& verb, DryRun dry_run,
                     json::object after) {
  if (format_ != "json" && format_ != "yaml") return mutation(r, name, verb, dry_run);
  if (!after.empty()) object(std::move(after));
}

void Printer::shown_object(json::object obj) {
  if (format_ == "json" || format_ == "yaml") object(std::move(obj));
}

void Printer::view(const kube::GVR& r, const std::string& name, json::object obj,
                   const std::function<std::string(bool wide)>& table) {
  if (format_ == "json" || format_ == "yaml") object(std::move(obj));
  else if (format_ == "name") out_ << r.kind_dot_group() << '/' << util::escape_terminal(name) << '\n';
  else out_ << util::escape_terminal(table(format_ == "wide"));
}

void Printer::view(const std::vector<std::pair<kube::GVR, std::string>>& names, json::object obj,
                   const std::function<std::string(bool wide)>& table) {
  if (format_ != "name") return view(names.empty() ? kube::GVR{} : names.front().first, "", std::move(obj), table);
  for (const auto& [r, name] : names) out_ << r.kind_dot_group() << '/' << name << '\n';
}

void Printer::subject(const kube::GVR& r, json::object obj) {
  if (format_ == "name") {
    const json::value* md = obj.if_contains("metadata");
    const json::value* name = md && md->is_object() ? md->get_object().if_contains("name") : nullptr;
    out_ << r.kind_dot_group() << '/'
         << util::escape_terminal(name && name->is_string() ? std::string_view(name->get_string()) : "") << '\n';
  }
  if (format_ == "json" || format_ == "yaml") object(std::move(obj));
}

void Printer::summary(const std::string& line) {
  if (format_.empty()) out_ << util::escape_terminal(line) << '\n';
}

void Printer::object(json::object obj) {
  if (auto* md = obj.if_contains("metadata"); md && md->is_object()) md->as_object().erase("managedFields");
  queued_.push_back(std::move(obj));
}

void Printer::flush() {
  if (format_ != "json" && format_ != "yaml") return;
  if (queued_.empty() && !always_list_) return;
  json::value doc;
  if (queued_.size() == 1 && !always_list_) {
    doc = std::move(queued_.front());
  } else {
    json::array items;
    for (auto& o : queued_) items.push_back(std::move(o));
    doc = json::object{
        {"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}, {"metadata", {{"resourceVersion", ""}}}};
  }
  queued_.clear();
  if (format_ == "json") out_ << util::json_pretty(doc) << '\n';
  else out_ << util::json_to_yaml(doc);
}

}  // namespace mindie::cmd
