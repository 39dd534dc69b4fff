// What may reach a terminal: text from files and the cluster with its control characters made visible.
#pragma once

#include <string>
#include <string_view>

namespace mindie::util {

/// `text` with every control character but line feed and tab made visible, so a name (a file's, an object's, an
/// event's message) cannot move the cursor, retitle the window or hide what follows: ESC is "^[" and CR "\r", as
/// kubectl's printers escape them (kubernetes/cli-runtime pkg/printers/terminal.go, EscapeTerminal); the other C0
/// characters and DEL in caret notation ("^G", "^?"); the C1 characters U+0080..U+009F (a CSI is U+009B) as
/// "<U+009B>". Everything else, invalid UTF-8 included, is kept byte for byte.
std::string escape_terminal(std::string_view text);

}  // namespace mindie::util
