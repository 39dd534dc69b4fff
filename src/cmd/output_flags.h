// -o/--output as one type, after kubectl's PrintFlags: the value given and the formats a command prints, so that
// validation, --help and shell completion read one list.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

namespace mindie::cmd {

/// A command's -o flag: the formats it prints and the value given.
class OutputFlags {
 public:
  /// `formats`: the -o values, in the order --help and completion list them. The help line is `lead` + ": " + the
  /// formats ("json, yaml or name") + `tail`. `refusal`: the message for any other value where the kubectl command
  /// this one follows has its own (kubectl version's "--output must be 'yaml' or 'json'"); "" means kubectl's
  /// printer message (validate()).
  OutputFlags(std::vector<std::string> formats, std::string lead, std::string tail = "", std::string refusal = "");
  /// Binds -o/--output to `desc`, filling this object.
  void bind(boost::program_options::options_description& desc);
  /// The value given; "" when -o was not given (the command's default, human output).
  const std::string& format() const { return value_; }
  /// The accepted values, in the order given to the constructor.
  const std::vector<std::string>& formats() const { return formats_; }
  /// Refuses a value that is not among formats(). No I/O. Throws UsageError with kubectl's text (PrintFlags'
  /// NoCompatiblePrinterError): unable to match a printer suitable for the output format "X", allowed formats are:
  /// a,b,c — the formats sorted, as kubectl sorts them; or with `refusal` when one was given.
  void validate() const;

 private:
  std::vector<std::string> formats_;
  std::string help_;
  std::string refusal_;
  std::string value_;
};

}  // namespace mindie::cmd
