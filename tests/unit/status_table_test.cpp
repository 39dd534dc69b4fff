// The table writer both status views draw with (util::Table), and the AIBrix view's -o wide.
#include <doctest/doctest.h>

#include <boost/program_options.hpp>

#include "aibrix/storm_status.h"
#include "cmd/aibrix.h"
#include "cmd/delete.h"
#include "cmd/status.h"
#include "util/table.h"

using namespace mindie;

namespace {

/// A StormService with one ready prefill replica of one pod on node-1, and one not-ready decode pod on no node.
aibrix::StormStatus storm_report() {
  aibrix::StormStatus report;
  report.ns = "team-a";
  report.name = "demo";
  report.generation = 2;
  report.observed_generation = 2;
  for (const auto& [role, pod, ready, node] : {std::tuple{"prefill", "demo-roleset-prefill-0", true, "node-1"},
                                               std::tuple{"decode", "demo-roleset-decode-0", false, ""}}) {
    aibrix::StormPod p;
    p.state.name = pod;
    p.state.status = ready ? "Running" : "Pending";
    p.state.ready_containers = ready ? 1 : 0;
    p.state.containers = 1;
    p.state.age_seconds = 60;
    p.state.node = node;
    p.ready = ready;
    aibrix::StormRole r;
    r.name = role;
    r.replicas = 1;
    r.ready_replicas = ready ? 1 : 0;
    r.pods = 1;
    r.ready_pods = ready ? 1 : 0;
    r.groups.push_back({0, ready, {p}});
    report.roles.push_back(std::move(r));
  }
  return report;
}

}  // namespace

TEST_CASE("util::Table: columns as wide as their widest cell, two spaces apart, trailing spaces trimmed") {
  util::Table t({{"NAME"}, {"STATUS"}, {"NODE", true}}, false);
  t.add({"a-long-name", "Running", "node-1"});
  t.add({"b", "", "node-2"});
  CHECK(t.str() ==
        "NAME         STATUS\n"
        "a-long-name  Running\n"
        "b\n");
}

TEST_CASE("util::Table: wide columns in the wide view; short rows; box-drawing characters count one column") {
  util::Table t({{""}, {"READY"}, {"NODE", true}}, true);
  t.add({"tree"});
  t.add({"└── pod-0", "1/1", "node-1"});
  CHECK(t.str() ==
        "           READY  NODE\n"
        "tree\n"
        "└── pod-0  1/1    node-1\n");
}

TEST_CASE("storm status view: aligned columns; -o wide adds each pod's node") {
  const std::string plain = aibrix::render_storm_status(storm_report());
  CHECK(plain ==
        "StormService demo in namespace team-a: not ready (generation 2, observed 2)\n"
        "\n"
        "ROLE     REPLICAS  READY  GROUPSIZE  PODS  RESTARTS  RECREATED  MINAVAILABLE\n"
        "prefill  1         1      1          1/1   0         0          -\n"
        "decode   1         0      1          0/1   0         0          -\n"
        "\n"
        "                            READY  STATUS   RESTARTS  AGE  RECREATED\n"
        "role prefill\n"
        "  replica 0  ready\n"
        "    demo-roleset-prefill-0  1/1    Running  0         60s  0\n"
        "role decode\n"
        "  replica 0  not ready\n"
        "    demo-roleset-decode-0   0/1    Pending  0         60s  0\n"
        "\n"
        "Services: 0 expected\n");
  const std::string wide = aibrix::render_storm_status(storm_report(), true);
  CHECK(wide.find("                            READY  STATUS   RESTARTS  AGE  RECREATED  NODE\n") != std::string::npos);
  CHECK(wide.find("    demo-roleset-prefill-0  1/1    Running  0         60s  0          node-1\n") !=
        std::string::npos);
  CHECK(wide.find("    demo-roleset-decode-0   0/1    Pending  0         60s  0          <none>\n") !=
        std::string::npos);
}

TEST_CASE("status --framework aibrix accepts -o wide and name, as well as json and yaml") {
  namespace po = boost::program_options;
  for (const char* format : {"wide", "json", "yaml", "name"}) {
    CAPTURE(format);
    cmd::StatusFlags flags;
    po::options_description desc;
    cmd::add_status_flags(desc, flags);
    po::variables_map vm;
    const char* argv[] = {"status", "-o", format};
    po::store(po::parse_command_line(3, argv, desc), vm);
    po::notify(vm);
    cmd::FrameworkFlags framework;
    framework.framework = "aibrix";
    CHECK_NOTHROW(cmd::StormStatusOptions(framework, flags, "team-a").validate());
    CHECK_NOTHROW(cmd::StatusOptions(flags, "team-a").validate());
  }
}

TEST_CASE("delete accepts -o json, yaml and name in both frameworks") {
  namespace po = boost::program_options;
  for (const char* format : {"json", "yaml", "name"}) {
    CAPTURE(format);
    cmd::DeleteFlags flags;
    po::options_description desc;
    cmd::add_delete_flags(desc, flags);
    po::variables_map vm;
    const char* argv[] = {"delete", "-o", format};
    po::store(po::parse_command_line(3, argv, desc), vm);
    po::notify(vm);
    cmd::FrameworkFlags framework;
    framework.framework = "aibrix";
    framework.app = "demo";
    CHECK_NOTHROW(cmd::StormDeleteOptions(framework, flags, "team-a").validate());
    CHECK_NOTHROW(cmd::DeleteOptions(flags, "team-a").validate());
  }
}
