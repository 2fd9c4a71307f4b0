#include "search/op_resources.h"

#include <fmt/format.h>

#include "src/error.h"

namespace iostune {

const OpResources& OpResourceTable::at(int op_id) const {
    if (op_id < 0 || size_t(op_id) >= ops.size())
        throw Error(fmt::format("resource table '{}' has {} ops, no entry for op {}; profile the "
                                "same graph the schedule is for",
                                source, ops.size(), op_id));
    return ops[size_t(op_id)];
}

}  // namespace iostune
