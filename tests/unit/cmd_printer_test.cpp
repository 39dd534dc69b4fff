// cmd::Printer: the format decides what each call prints, so that commands never test it.
#include <doctest/doctest.h>

#include <boost/json.hpp>
#include <sstream>
#include <string>

#include "cmd/common.h"

using namespace mindie;
namespace json = boost::json;

namespace {

json::object config_map(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"managedFields", json::array{json::object{{"manager", "x"}}}}}}};
}

/// What `calls` print to stdout with -o `format`, after flush().
template <typename Calls>
std::string printed(const std::string& format, Calls calls) {
  std::ostringstream out, err;
  cmd::Printer printer(out, err, format);
  calls(printer);
  printer.flush();
  return out.str();
}

}  // namespace

TEST_CASE("Printer: a delete's result, summary and subject in each format") {
  const auto calls = [](cmd::Printer& p) {
    p.result(kube::gvr::kConfigMaps, "a", "deleted", cmd::DryRun::Server, config_map("a"));
    p.subject(kube::gvr::kConfigMaps, config_map("b"));
    p.summary("done");
  };
  CHECK(printed("", calls) == "configmap/a deleted (server dry run)\ndone\n");
  CHECK(printed("name", calls) == "configmap/a\nconfigmap/b\n");
  const json::value list = json::parse(printed("json", calls));
  CHECK(list.at("kind") == "List");
  REQUIRE(list.at("items").as_array().size() == 2);
  CHECK(list.at("items").at(1).at("metadata").at("name") == "b");
  CHECK_FALSE(list.at("items").at(0).at("metadata").as_object().contains("managedFields"));
}

TEST_CASE("Printer: always_list prints a List of one, and an empty List for nothing; other formats nothing") {
  const auto one = [](cmd::Printer& p) {
    p.always_list();
    p.result(kube::gvr::kConfigMaps, "a", "deleted", cmd::DryRun::None, config_map("a"));
  };
  CHECK(json::parse(printed("json", one)).at("items").as_array().size() == 1);
  const auto none = [](cmd::Printer& p) {
    p.always_list();
    p.summary("No resources found in ns namespace.");
  };
  CHECK(json::parse(printed("json", none)).at("items").as_array().empty());
  CHECK(printed("yaml", none).find("kind: List") != std::string::npos);
  CHECK(printed("name", none).empty());
  CHECK(printed("", none) == "No resources found in ns namespace.\n");
}

TEST_CASE("Printer::view and Printer::summary: one object shown in each -o format") {
  const kube::GVR thing{"example.com", "v1", "things", "Thing", true};
  const auto view = [&](cmd::Printer& p) {
    p.view(thing, "a", json::object{{"kind", "Thing"}, {"metadata", {{"name", "a"}, {"managedFields", 1}}}},
           [](bool wide) { return std::string(wide ? "wide table\n" : "table\n"); });
    p.summary("a ready");
  };
  CHECK(printed("", view) == "table\na ready\n");
  CHECK(printed("wide", view) == "wide table\n");
  CHECK(printed("name", view) == "thing.example.com/a\n");
  CHECK(printed("json", view) ==
        "{\n    \"kind\": \"Thing\",\n    \"metadata\": {\n        \"name\": \"a\"\n    }\n}\n");
  CHECK(printed("yaml", view) == "kind: Thing\nmetadata:\n  name: a\n");
}

TEST_CASE("Printer: control characters in what it prints are made visible, on stdout and stderr") {
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  const std::string evil = "a\x1b]0;owned\x07\x1b[2J\rb";
  printer.warning("left out " + evil + "\nsecond line");
  printer.notice("notice " + evil);
  printer.mutation(kube::gvr::kConfigMaps, evil, "created", cmd::DryRun::None);
  printer.summary("summary " + evil);
  printer.hold_warnings();
  printer.warning("held " + evil);
  printer.release_warnings();
  const std::string shown = "a^[]0;owned^G^[[2J\\rb";
  CHECK(err.str() ==
        "Warning: left out " + shown + "\nsecond line\nnotice " + shown + "\nWarning: held " + shown + "\n");
  CHECK(out.str() == "configmap/" + shown + " created\nsummary " + shown + "\n");
}
