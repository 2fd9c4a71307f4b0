// The check of every count-like option (batch, iterations, r, s, schedule ids): a whole number
// from 1. CLI11's own PositiveNumber accepts 2.5 and reports a bad value as "not in range 0 to
// 1.8e308", which tells the user nothing.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace iostune::cli {

inline CLI::Validator positive_whole_number() {
    return CLI::Validator(
        [](const std::string& value) {
            long long number = 0;
            if (CLI::detail::lexical_cast(value, number) && number > 0) return std::string();
            return "must be a whole number from 1, got '" + value + "'";
        },
        "N>=1");
}

}  // namespace iostune::cli
