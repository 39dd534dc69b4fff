// The human views of a status::Report: the role table and the tree InferServiceSet → InferService → role →
// instance → pods that `kubectl mindie status` prints, and the one-line-per-change summary of status --watch.
#pragma once

#include <string>
#include <vector>

#include "mindie/status_report.h"

namespace mindie::status {

/// The role table, the tree (pods as kubectl's READY, STATUS, RESTARTS, AGE columns; `wide` adds NODE and NPUS),
/// then the warning, drift, converging and not-ready lines. Unused roles (Role::unused) are left out.
std::string render_table(const Report& report, bool wide);

/// What status --watch compares between redraws when not on a terminal: a head line
/// ("ready=false prefill=1/2 decode=2/2"), then one line per drift ("drift: ..."), converging and not-ready item.
std::vector<std::string> summary_lines(const Report& report);

}  // namespace mindie::status
