// -o/--output as one type; see output_flags.h.
#include "cmd/output_flags.h"

#include <algorithm>
#include <utility>

#include "cmd/common.h"
#include "util/strings.h"

namespace mindie::cmd {

namespace po = boost::program_options;

OutputFlags::OutputFlags(std::vector<std::string> formats, std::string lead, std::string tail, std::string refusal)
    : formats_(std::move(formats)), refusal_(std::move(refusal)) {
  std::string listed;
  for (std::size_t i = 0; i < formats_.size(); ++i)
    listed += (i == 0 ? "" : i + 1 == formats_.size() ? " or " : ", ") + formats_[i];
  help_ = lead + ": " + listed + tail;
}

void OutputFlags::bind(po::options_description& desc) {
  desc.add_options()("output,o", po::value(&value_), help_.c_str());
}

void OutputFlags::validate() const {
  if (value_.empty() || std::find(formats_.begin(), formats_.end(), value_) != formats_.end()) return;
  if (!refusal_.empty()) throw UsageError(refusal_);
  std::vector<std::string> sorted = formats_;
  std::sort(sorted.begin(), sorted.end());
  throw UsageError("unable to match a printer suitable for the output format \"" + value_ +
                   "\", allowed formats are: " + util::join(sorted, ","));
}

}  // namespace mindie::cmd
