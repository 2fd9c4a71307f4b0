#include "src/memory_audit.h"

#include <fmt/format.h>

#include <optional>

#include "src/error.h"

namespace iostune {

namespace {

bool channels_overlap(const BufferAccess& a, const BufferAccess& b) {
    return a.first_channel < b.first_channel + b.channels &&
           b.first_channel < a.first_channel + a.channels;
}

bool bytes_overlap(const MemoryPlan& plan, const BufferAccess& a, const BufferAccess& b) {
    if (a.buffer == b.buffer) return channels_overlap(a, b);
    const PlannedBuffer& x = plan.buffers[size_t(a.buffer)];
    const PlannedBuffer& y = plan.buffers[size_t(b.buffer)];
    return x.pinned == y.pinned && x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes;
}

// The first pair of accesses of two concurrent launches that touch the same bytes, one of them
// a write.
std::optional<MemoryConflict> conflict_between(const MemoryPlan& plan,
                                               const std::vector<BufferAccess>& first,
                                               const std::vector<BufferAccess>& second) {
    for (const BufferAccess& a : first)
        for (const BufferAccess& b : second)
            if ((a.write || b.write) && bytes_overlap(plan, a, b))
                return MemoryConflict{0, 0, a, b, -1};
    return std::nullopt;
}

// Within one launch, two different buffers whose bytes overlap, one of them written: a
// convolution staging its output into scratch that overlaps the concat it copies into, say.
// (One buffer read and written in place is the op's own business.)
std::optional<MemoryConflict> conflict_within(const MemoryPlan& plan,
                                              const std::vector<BufferAccess>& accesses) {
    for (size_t j = 0; j < accesses.size(); ++j)
        for (size_t i = 0; i < j; ++i) {
            const BufferAccess& a = accesses[i];
            const BufferAccess& b = accesses[j];
            if (a.buffer != b.buffer && (a.write || b.write) && bytes_overlap(plan, a, b))
                return MemoryConflict{0, 0, a, b, -1};
        }
    return std::nullopt;
}

std::string describe_access(const MemoryPlan& plan, const BufferAccess& a) {
    const PlannedBuffer& b = plan.buffers[size_t(a.buffer)];
    const std::string channels =
        a.channels == b.shape.c
            ? std::string()
            : fmt::format(" channels [{}, {})", a.first_channel, a.first_channel + a.channels);
    return fmt::format("{} {}{}", a.write ? "writes" : "reads", plan.describe(a.buffer), channels);
}

}  // namespace

std::vector<MemoryConflict> find_memory_conflicts(const Graph& graph, const MemoryPlan& plan,
                                                  const StreamProgram& program, size_t limit) {
    const auto accesses = launch_accesses(graph, plan, program);
    const bool slots = plan.workspace_slot.size() == program.launches().size();
    std::vector<MemoryConflict> found;
    for (int j = 0; j < int(accesses.size()) && found.size() < limit; ++j) {
        if (auto c = conflict_within(plan, accesses[size_t(j)])) {
            c->launch_a = c->launch_b = j;
            found.push_back(*c);
        }
        for (int i = 0; i < j && found.size() < limit; ++i) {
            if (!program.may_overlap(i, j)) continue;
            if (auto c = conflict_between(plan, accesses[size_t(i)], accesses[size_t(j)])) {
                c->launch_a = i;
                c->launch_b = j;
                found.push_back(*c);
            } else if (slots && plan.workspace_slot[size_t(i)] >= 0 &&
                       plan.workspace_slot[size_t(i)] == plan.workspace_slot[size_t(j)]) {
                found.push_back({i, j, {}, {}, plan.workspace_slot[size_t(i)]});
            }
        }
    }
    return found;
}

std::string describe_conflict(const Graph& graph, const MemoryPlan& plan,
                              const StreamProgram& program, const MemoryConflict& c) {
    if (c.launch_a == c.launch_b)
        return fmt::format(
            "the memory plan gives one launch two buffers that share bytes: {} {} and {}. This "
            "is a bug in iostune's memory planner: please report it with the model and schedule.",
            program.describe(graph, c.launch_a), describe_access(plan, c.a),
            describe_access(plan, c.b));
    const std::string what =
        c.workspace_slot >= 0
            ? fmt::format("{} and {} both use workspace slot {}",
                          program.describe(graph, c.launch_a), program.describe(graph, c.launch_b),
                          c.workspace_slot)
            : fmt::format("{} {}, while {} {}", program.describe(graph, c.launch_a),
                          describe_access(plan, c.a), program.describe(graph, c.launch_b),
                          describe_access(plan, c.b));
    return fmt::format(
        "the memory plan lets two launches that may run at the same time touch the same bytes: "
        "{}; neither waits for the other (no data, event or stream order between them). This "
        "is a bug in iostune's memory planner or stream program: please report it with the "
        "model and schedule.",
        what);
}

void audit_memory(const Graph& graph, const MemoryPlan& plan, const StreamProgram& program) {
    const auto conflicts = find_memory_conflicts(graph, plan, program, 1);
    if (!conflicts.empty())
        throw InternalError(describe_conflict(graph, plan, program, conflicts.front()));
}

}  // namespace iostune
