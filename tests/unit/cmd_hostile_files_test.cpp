// Files an attacker can plant where deploy reads or writes: a --scripts-dir entry that is a symbolic link out of the
// folder (to a private key) must not reach motor-config, which every pod of the namespace mounts; a symbolic link
// planted in --output-dir must not be followed by the write.
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "cmd/common.h"
#include "cmd/deploy.h"
#include "fake_transport.h"
#include "scratch_files.h"

using namespace mindie;
namespace fs = std::filesystem;

namespace {

const std::string kExampleDir = std::string(MINDIE_SOURCE_DIR) + "/examples";

}  // namespace

TEST_CASE("--scripts-dir: a symbolic link that leaves the folder is refused, naming it and where it points") {
  test::TempDir dir;
  const std::string secret = dir.write("home/.ssh/id_rsa", "-----BEGIN PRIVATE KEY-----\n");
  dir.write("scripts/common.sh", "# common\n");
  const fs::path scripts = dir.path / "scripts";
  SUBCASE("a file of the flat folder") {
    fs::create_symlink(secret, scripts / "boot.sh");
    fs::create_symlink("../home/.ssh/id_rsa", scripts / "probe.sh");
    try {
      cmd::read_scripts(scripts.string());
      FAIL("read_scripts accepted a link out of the folder");
    } catch (const cmd::CommandError& e) {
      const std::string what = e.what();
      CHECK_MESSAGE(what.find("boot.sh -> " + secret) != std::string::npos, what);
      CHECK_MESSAGE(what.find("probe.sh -> ../home/.ssh/id_rsa") != std::string::npos, what);
      CHECK(what.find("outside") != std::string::npos);
      CHECK(what.find("nothing was written") != std::string::npos);
      CHECK(what.find("PRIVATE KEY") == std::string::npos);
    }
  }
  SUBCASE("a folder of the deployer layout") {
    dir.write("deployer/startup/boot.sh", "# boot\n");
    dir.write("elsewhere/engine.sh", "# engine\n");
    fs::create_symlink(dir.path / "elsewhere", dir.path / "deployer/startup/roles");
    CHECK_THROWS_WITH_AS(cmd::read_scripts((dir.path / "deployer").string()),
                         doctest::Contains("startup/roles/engine.sh -> "), cmd::CommandError);
  }
  SUBCASE("links inside the folder, and a --scripts-dir that is itself a link, are read") {
    dir.write("scripts/shared/boot.sh", "# boot\n");
    fs::create_symlink("shared/boot.sh", scripts / "boot.sh");
    fs::create_symlink(scripts, dir.path / "link-to-scripts");
    const cmd::ScriptsDir got = cmd::read_scripts((dir.path / "link-to-scripts").string());
    CHECK(got.scripts.at("boot.sh") == "# boot\n");
    CHECK(got.scripts.at("common.sh") == "# common\n");
  }
  SUBCASE("the startup folder's probe/ beside it is inside the deployer folder") {
    dir.write("deployer/startup/boot.sh", "# boot\n");
    dir.write("deployer/startup/roles/engine.sh", "# engine\n");
    dir.write("deployer/probe/probe.sh", "# probe\n");
    const cmd::ScriptsDir got = cmd::read_scripts((dir.path / "deployer/startup").string());
    CHECK(got.scripts.at("probe.sh") == "# probe\n");
  }
  SUBCASE("a link out of the folder that deploy.py would not store is left out, never read") {
    fs::create_symlink(secret, scripts / "notes.txt");
    const cmd::ScriptsDir got = cmd::read_scripts(scripts.string());
    CHECK(got.scripts.count("notes.txt") == 0);
    CHECK(got.left_out == std::vector<std::string>{"notes.txt"});
  }
}

TEST_CASE("--output-dir: a symbolic link planted in the folder is never followed; its target is untouched") {
  test::TempDir dir;
  const std::string victim = dir.write("victim/authorized_keys", "ssh-ed25519 AAAA owner\n");
  fs::create_directories(dir.path / "out");
  fs::create_symlink(victim, dir.path / "out/motor_config.yaml");
  dir.write("out/infer_service.yaml", "old\n");
  cmd::DeployFlags flags;
  flags.config_dir = kExampleDir;
  flags.scripts_dir = kExampleDir + "/scripts";
  flags.dry_run = "client";
  flags.output_dir = (dir.path / "out").string();
  cmd::DeployOptions o(flags, "");
  o.complete();
  o.validate();
  test::FakeTransport t;  // nothing queued: any request would throw
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  const std::string refusal = (dir.path / "out/motor_config.yaml").string() + " is a symbolic link";
  CHECK_THROWS_WITH_AS(o.run(client, printer), doctest::Contains(refusal.c_str()), cmd::CommandError);
  CHECK(dir.read("victim/authorized_keys") == "ssh-ed25519 AAAA owner\n");
  CHECK(fs::is_symlink(dir.path / "out/motor_config.yaml"));
  // No temporary file is left behind.
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path / "out")) ++entries;
  CHECK(entries == 2);
}

TEST_CASE("--output-dir: an existing regular file is replaced by a file of the usual mode") {
  test::TempDir dir;
  dir.write("out/infer_service.yaml", "old\n");
  cmd::DeployFlags flags;
  flags.config_dir = kExampleDir;
  flags.scripts_dir = kExampleDir + "/scripts";
  flags.dry_run = "client";
  flags.output_dir = (dir.path / "out").string();
  cmd::DeployOptions o(flags, "");
  o.complete();
  o.validate();
  test::FakeTransport t;
  kube::Client client(t);
  std::ostringstream out, err;
  cmd::Printer printer(out, err, "");
  o.run(client, printer);
  CHECK(dir.read("out/infer_service.yaml").find("kind: InferServiceSet") != std::string::npos);
  CHECK(dir.read("out/motor_config.yaml").find("kind: ConfigMap") != std::string::npos);
  // The mode any new file gets under the umask (as std::ofstream would create it), not a temporary file's 0600.
  const std::string plain = dir.write("plain", "");
  CHECK(fs::status(dir.path / "out/motor_config.yaml").permissions() == fs::status(plain).permissions());
}
