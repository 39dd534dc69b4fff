// Scratch files and environment for unit tests: a temporary directory removed at scope exit, and an environment
// variable set (or unset) for a scope.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace mindie::test {

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents at scope exit.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "mindie-unit-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  /// Writes `text` to the relative path `name` (creating directories; owner-executable when asked) and returns
  /// the absolute path.
  std::string write(const std::string& name, const std::string& text, bool executable = false) const {
    const std::filesystem::path p = path / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    if (executable) std::filesystem::permissions(p, std::filesystem::perms::owner_all);
    return p.string();
  }
  /// The content of the relative path `name` ("" when it cannot be read).
  std::string read(const std::string& name) const {
    std::ifstream in(path / name, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
};

/// Sets (or unsets, with nullopt) an environment variable for the scope, restoring the old value afterwards.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(std::string n, const std::optional<std::string>& value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) old = v;
    if (value) {
      setenv(name.c_str(), value->c_str(), 1);
    } else {
      unsetenv(name.c_str());
    }
  }
  ~ScopedEnv() {
    if (old) {
      setenv(name.c_str(), old->c_str(), 1);
    } else {
      unsetenv(name.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
};

}  // namespace mindie::test
