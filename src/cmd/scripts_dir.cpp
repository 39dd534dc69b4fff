// cmd::ScriptsDir (common.h): what a --scripts-dir holds for motor-config.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "cmd/common.h"
#include "mindie/deployer_scripts.h"
#include "mindie/env_script.h"
#include "util/strings.h"

namespace mindie::cmd {

namespace {

namespace fs = std::filesystem;

// The folders a layout reads, each with the deployer folder a key must come from there (nullopt: any key).
struct ScannedFolder {
  fs::path path;    // absolute or as given
  std::string rel;  // relative to the --scripts-dir ("" for itself), or the folder's path when outside it
  std::optional<deployer_scripts::Folder> folder;
};

std::vector<ScannedFolder> scanned_folders(const std::string& dir, std::string& layout) {
  using deployer_scripts::Folder;
  std::error_code ec;
  const fs::path d(dir);
  if (fs::is_directory(d / "startup", ec)) {
    layout = "PyMotor's deployer folder";
    return {{d / "startup", "startup/", Folder::Startup},
            {d / "startup" / "roles", "startup/roles/", Folder::Roles},
            {d / "probe", "probe/", Folder::Probe}};
  }
  if (fs::is_directory(d / "roles", ec)) {
    layout = "the deployer's startup folder";
    // probe/ beside the startup folder itself, also when DIR is a symbolic link to it.
    const fs::path probe = fs::weakly_canonical(d, ec).parent_path() / "probe";
    return {{d, "", Folder::Startup},
            {d / "roles", "roles/", Folder::Roles},
            {probe, probe.string() + "/", Folder::Probe}};
  }
  layout = "a flat folder";
  return {{d, "", std::nullopt}};
}

/// The folder no stored file may resolve outside: the --scripts-dir itself, or the deployer folder holding it when
/// the layout is its startup/ folder (probe/ beside it is read). Links are resolved, so a --scripts-dir that is
/// itself a link is the folder it names.
fs::path allowed_root(const std::string& dir, const std::vector<ScannedFolder>& folders) {
  std::error_code ec;
  const fs::path d = fs::weakly_canonical(dir, ec);
  return folders.front().rel.empty() && folders.size() > 1 ? d.parent_path() : d;
}

/// "REL -> TARGET" when `entry` resolves outside `root` (a link of its own, or a file inside a linked folder);
/// nullopt when it stays inside.
std::optional<std::string> outside_link(const fs::directory_entry& entry, const fs::path& root,
                                        const std::string& rel) {
  std::error_code ec;
  const fs::path resolved = fs::canonical(entry.path(), ec);
  if (ec) return rel + " -> (unresolvable: " + ec.message() + ")";
  const fs::path inside = resolved.lexically_relative(root);
  if (!inside.empty() && *inside.begin() != "..") return std::nullopt;
  return rel + " -> " + (entry.is_symlink(ec) ? fs::read_symlink(entry.path(), ec).string() : resolved.string());
}

}  // namespace

std::string ScriptsDir::expected_path(const std::string& key) const {
  fs::path folder = dir;
  if (const auto* s = deployer_scripts::find(key)) {
    std::string ignored;
    for (const auto& f : scanned_folders(dir, ignored))
      if (!f.folder || *f.folder == s->folder) folder = f.path;
  }
  return (folder / key).lexically_normal().string();
}

std::string ScriptsDir::left_out_notice() const {
  if (left_out.empty()) return "";
  return "--scripts-dir " + dir + " (" + layout + "): stored the " + std::to_string(scripts.size()) +
         " files deploy.py stores; left out " + util::join(left_out, ", ");
}

ScriptsDir read_scripts(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw CommandError("--scripts-dir " + dir + " is not a directory");
  ScriptsDir out;
  out.dir = dir;
  const auto folders = scanned_folders(dir, out.layout);
  std::map<std::string, std::string> found_at;  // key -> relative path, for duplicates
  std::set<fs::path> scanned_paths;
  for (const auto& f : folders) scanned_paths.insert(fs::weakly_canonical(f.path, ec));
  const fs::path root = allowed_root(dir, folders);
  std::vector<std::string> outside;  // stored files that resolve outside root
  for (const auto& f : folders) {
    if (!fs::is_directory(f.path, ec)) continue;
    std::vector<fs::directory_entry> entries;
    for (const auto& entry : fs::directory_iterator(f.path, ec)) entries.push_back(entry);
    if (ec) throw CommandError("cannot list --scripts-dir " + f.path.string() + ": " + ec.message());
    std::sort(entries.begin(), entries.end());
    for (const auto& entry : entries) {
      const std::string name = entry.path().filename().string();
      const std::string rel = f.rel + name;
      std::error_code st;
      // A dangling link would otherwise vanish silently from what the pods see.
      if (entry.is_symlink(st) && !fs::exists(entry.path(), st))
        throw CommandError("--scripts-dir " + dir + ": " + rel + " is a broken symbolic link; nothing was written");
      if (entry.is_directory(st)) {
        // A folder the layout reads itself is not left out.
        if (!scanned_paths.count(fs::weakly_canonical(entry.path(), st))) out.left_out.push_back(rel + "/");
        continue;
      }
      // The tool writes this key from env.json; a file of that name would be silently replaced.
      if (name == env_script::kEnvFunctionsKey)
        throw CommandError("--scripts-dir " + dir + ": " + rel +
                           " is generated by kubectl-mindie from env.json (the "
                           "set_*_env functions); remove it from the folder; nothing was written");
      // deploy.py flattens the files of its three folders to their base names, wherever each one is.
      const auto* script = deployer_scripts::find(name);
      if (!script || !entry.is_regular_file(st)) {
        out.left_out.push_back(rel);
        continue;
      }
      if (const auto it = found_at.find(name); it != found_at.end())
        throw CommandError("--scripts-dir " + dir + ": " + it->second + " and " + rel +
                           " would both be motor-config "
                           "key " +
                           name + "; remove one; nothing was written");
      found_at[name] = rel;
      // motor-config is mounted by every pod of the namespace: a link out of the folder (to a private key, say)
      // would publish what it points to. Never read, so never printed.
      if (auto link = outside_link(entry, root, rel)) {
        outside.push_back(*link);
        continue;
      }
      out.scripts[name] = read_file(entry.path().string());
    }
  }
  if (!outside.empty())
    throw CommandError("--scripts-dir " + dir + ": these files resolve to outside " + root.string() +
                       " (symbolic links); motor-config, which every pod of the namespace reads, would store what "
                       "they point to:\n  " +
                       util::join(outside, "\n  ") + "\ncopy the files into the folder instead; nothing was written");
  // The deployer folder's own top-level files (deploy.py, README.md, ...) are what it leaves out too.
  if (folders.front().rel == "startup/")
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (name == "startup" || name == "probe") continue;
      std::error_code st;
      out.left_out.push_back(name + (entry.is_directory(st) ? "/" : ""));
    }
  std::sort(out.left_out.begin(), out.left_out.end());
  return out;
}

void check_needed_scripts(const ScriptsDir& given, const std::vector<std::string>& needed) {
  std::string missing;
  for (const auto& key : needed)
    if (!given.scripts.count(key)) missing += "\n  " + key + " (looked for " + given.expected_path(key) + ")";
  if (!missing.empty())
    throw CommandError("--scripts-dir " + given.dir + " (" + given.layout +
                       ") lacks files this deployment's pods "
                       "run from motor-config:" +
                       missing +
                       "\npass PyMotor's deployer folder (examples/deployer), its "
                       "startup/ folder or a folder holding these files; nothing was written");
}

}  // namespace mindie::cmd
