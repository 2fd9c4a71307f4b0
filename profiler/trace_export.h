// Chrome / Perfetto trace export ("Trace Event Format" JSON, loads in ui.perfetto.dev and
// chrome://tracing): one track per CUDA stream, one slice per kernel or transfer, named after
// the operator that launched it.
#pragma once

#include <string>

#include "profiler/activity_collector.h"
#include "src/graph.h"

namespace iostune {

void write_chrome_trace(const std::string& path, const ActivityTrace& trace, const Graph& graph);

}  // namespace iostune
