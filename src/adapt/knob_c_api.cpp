// The knob's C API (include/aloe/aloe.h): thin wrappers over aloe::knob that never let an
// exception escape; errors set the thread's aloe_last_error() message (runtime/c_error.hpp).
#include <aloe/aloe.h>
#include <aloe/error.hpp>
#include <aloe/knob.hpp>

#include "runtime/c_error.hpp"

#include <exception>
#include <optional>
#include <string>
#include <string_view>

struct aloe_knob {
    aloe::knob knob;
};

namespace {

aloe_status fail(aloe_status status, std::string_view where, const std::string& what) {
    return aloe::runtime::c_fail(status, std::string(where) + ": " + what);
}

}  // namespace

extern "C" {

aloe_knob* aloe_knob_create(const char* name, int64_t lo, int64_t hi, int64_t divisors_of, int64_t start,
                            const char* options) {
    constexpr std::string_view where = "aloe_knob_create";
    if (name == nullptr) {
        fail(ALOE_ERROR_ARGUMENT, where, "name is NULL");
        return nullptr;
    }
    try {
        std::optional<aloe::knob_range> range;
        if (divisors_of < 0) {
            fail(ALOE_ERROR_ARGUMENT, where, "divisors_of=" + std::to_string(divisors_of) +
                                                 " is negative (0: a geometric range; > 0: its divisors)");
            return nullptr;
        }
        if (divisors_of > 0) range.emplace(aloe::knob_range::divisors_of(divisors_of, lo, hi));
        else range.emplace(aloe::knob_range::geometric(lo, hi));
        auto* k = new aloe_knob{aloe::knob(name, std::move(*range), start, options ? options : "")};
        aloe::runtime::c_clear_error();
        return k;
    } catch (const aloe::error& e) {
        fail(ALOE_ERROR_ARGUMENT, where, e.what());
    } catch (const std::exception& e) {
        fail(ALOE_ERROR_INTERNAL, where, e.what());
    }
    return nullptr;
}

int64_t aloe_knob_value(const aloe_knob* knob) { return knob ? knob->knob.value() : 0; }

aloe_status aloe_knob_epoch_done(aloe_knob* knob, double work, double wall_seconds) {
    constexpr std::string_view where = "aloe_knob_epoch_done";
    if (knob == nullptr) return fail(ALOE_ERROR_ARGUMENT, where, "knob is NULL");
    try {
        knob->knob.epoch_done({work > 0 ? work : 1.0, wall_seconds});
        aloe::runtime::c_clear_error();
        return ALOE_OK;
    } catch (const std::exception& e) {
        return fail(ALOE_ERROR_INTERNAL, where, e.what());
    }
}

int aloe_knob_converged(const aloe_knob* knob) {
    if (knob == nullptr) {
        fail(ALOE_ERROR_ARGUMENT, "aloe_knob_converged", "knob is NULL");
        return -1;
    }
    return knob->knob.converged() ? 1 : 0;
}

int64_t aloe_knob_best(const aloe_knob* knob) { return knob ? knob->knob.best() : 0; }

void aloe_knob_destroy(aloe_knob* knob) { delete knob; }

}  // extern "C"
