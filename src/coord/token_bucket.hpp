// A token bucket: lets an action happen at most `rate_hz` times a second on average, with
// up to `burst` in a row after a quiet spell. SCAF caps each client's messages to the
// daemon (5 Hz) and its counter reads (32 Hz) with two of these (thesis notes §2.8): UA on
// the Xeon Phi enters ~1,000 regions a second, and unthrottled it ran at < 48× instead of
// 75.6×; capped, within 0.5% of stock. A skipped message keeps the old allocation, a
// skipped read reuses the last value.
//
// take(now): add elapsed × rate to the tokens, capped at burst, then take one if at least
// one is there. The bucket starts full, so the first take succeeds. With burst 1 the cap
// comes before the take, so a caller that asks every Δ seconds gets one action per
// ⌈1/(rate·Δ)⌉ asks (in exact arithmetic): the rate is quantised to the caller's period,
// never exceeded.
// No clock inside: the caller passes the time (any origin, seconds), so tests are exact.
// A time earlier than the latest seen adds nothing and is not remembered (a clock that
// steps back neither credits nor costs tokens).
#pragma once

#include <algorithm>
#include <cmath>

namespace aloe::coord {

/// Not thread-safe: one owner.
class token_bucket {
public:
    /// rate_hz < 0, NaN or +inf: unlimited (take() always succeeds); 0: only the initial
    /// burst. A burst below 1 or non-finite is taken as 1 (below 1 nothing could happen).
    explicit token_bucket(double rate_hz, double burst = 1.0) noexcept
        : rate_hz_(rate_hz), burst_(std::isfinite(burst) && burst >= 1 ? burst : 1.0), tokens_(burst_) {}

    /// Whether the action may happen at `now_seconds`; if so, a token is spent. A
    /// non-finite time adds nothing.
    bool take(double now_seconds) noexcept {
        if (unlimited()) return true;
        if (std::isfinite(now_seconds)) {
            if (started_ && now_seconds > last_seconds_)
                tokens_ = std::min(burst_, tokens_ + (now_seconds - last_seconds_) * rate_hz_);
            if (!started_ || now_seconds > last_seconds_) last_seconds_ = now_seconds;
            started_ = true;
        }
        if (tokens_ < 1) return false;
        tokens_ -= 1;
        return true;
    }

    bool unlimited() const noexcept { return !(rate_hz_ >= 0) || std::isinf(rate_hz_); }
    double tokens() const noexcept { return tokens_; }

private:
    double rate_hz_;
    double burst_;
    double tokens_;
    double last_seconds_ = 0;
    bool started_ = false;  // last_seconds_ holds a time
};

}  // namespace aloe::coord
