// fmt's compiled part, built once for the whole project. Debian ships fmt as a shared library
// that the GPU machine does not have, so nothing links libfmt; header-only mode (what the build
// used before) compiled this part into every file that formats a message: 4 of the 14 s a CLI
// file took on a two-core machine. Every library of ours links it through iostune::core.
#include <fmt/format-inl.h>

// The templates fmt's headers declare but define only here (format-inl.h), for the types fmt
// itself formats with them: floating point, the locale, char and wchar_t separators.
FMT_BEGIN_NAMESPACE
namespace detail {
template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template auto decimal_point_impl(locale_ref) -> char;
template auto decimal_point_impl(locale_ref) -> wchar_t;
}  // namespace detail
FMT_END_NAMESPACE
