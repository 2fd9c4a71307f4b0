#include "tuning/choices_by_concurrency.h"

#include <map>

namespace iostune {

std::set<int> ops_run_alone(const Schedule& schedule) {
    std::set<int> alone;
    for (const Stage& stage : schedule.flat_stages())
        if (stage.groups.size() == 1) alone.insert(stage.groups[0].begin(), stage.groups[0].end());
    return alone;
}

ConvChoices choices_by_concurrency(const Schedule& schedule, const std::vector<OpPlan>& plans,
                                   const ConvChoices& alone, const ConvChoices& corun,
                                   const ConvChoices& current) {
    const std::set<int> lone_ops = ops_run_alone(schedule);
    std::map<std::string, bool> every_op_alone;  // signature -> whether each op holding it is
    for (const OpPlan& plan : plans)
        for (const std::string& signature : plan.conv_signatures) {
            const bool lone = lone_ops.count(plan.op_id) > 0;
            const auto [it, fresh] = every_op_alone.emplace(signature, lone);
            if (!fresh) it->second = it->second && lone;
        }
    ConvChoices mixed = current;
    for (const auto& [signature, lone] : every_op_alone) {
        const ConvChoices& wanted = lone ? alone : corun;
        if (const auto it = wanted.find(signature); it != wanted.end()) mixed[signature] = it->second;
    }
    return mixed;
}

}  // namespace iostune
