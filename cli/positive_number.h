// The check of every count-like option (batch, iterations, r, s, schedule ids): a whole number
// from 1, or from 0 (warm-up launches, a chunk index). CLI11's own PositiveNumber and
// NonNegativeNumber accept 2.5 and report a bad value as "not in range 0 to 1.8e308", which
// tells the user nothing.
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

inline CLI::Validator whole_number_from_zero() {
    return CLI::Validator(
        [](const std::string& value) {
            long long number = 0;
            if (CLI::detail::lexical_cast(value, number) && number >= 0) return std::string();
            return "must be a whole number from 0, got '" + value + "'";
        },
        "N>=0");
}

// Seconds or a ratio: any number from 0.
inline CLI::Validator number_from_zero() {
    return CLI::Validator(
        [](const std::string& value) {
            double number = 0;
            if (CLI::detail::lexical_cast(value, number) && number >= 0) return std::string();
            return "must be a number from 0, got '" + value + "'";
        },
        "X>=0");
}

}  // namespace iostune::cli
