"""Noise regimes: what disturbs a run, and the workload flags that produce it.

A regime is written as one spec string (in a matrix file or on the command line):

  none                                       no injected noise
  inject:p=0.2,frac=0.2[,core=random|N][,seed=S]
                                             each timed step, with probability p, one CPU of the
                                             team is taken for δ = frac × the workload's quiet
                                             median step time (measured by a calibration run)
  inject:p=0.2,us=1500[,core=…][,seed=…]     the same with δ given in microseconds
  background:cpu=1,duty=0.5[,period_us=10000]
                                             a spinner takes `duty` of every period on one CPU

Each regime has a short name for tables and file names ("none", "inject-p0.2-f0.2",
"bg-cpu1-d0.5") and translates to the app flags --noise-p/--noise-us/--noise-core/
--noise-seed/--background (apps/README.md).
"""
from __future__ import annotations

import dataclasses

KINDS = ("none", "inject", "background")
_KEYS = {
    "none": set(),
    "inject": {"p", "frac", "us", "core", "seed"},
    "background": {"cpu", "duty", "period_us"},
}


class RegimeError(ValueError):
    """A malformed regime spec; the message names the spec and what is wrong."""


@dataclasses.dataclass(frozen=True)
class Regime:
    spec: str
    kind: str
    p: float | None = None
    frac: float | None = None
    us: int | None = None
    core: str | None = None       # "random" or a CPU number; None: the app's default
    seed: int | None = None
    cpu: int | None = None
    duty: float | None = None
    period_us: int | None = None

    @property
    def name(self) -> str:
        """Short name for tables and file names."""
        if self.kind == "none":
            return "none"
        if self.kind == "inject":
            size = f"f{_num(self.frac)}" if self.frac is not None else f"us{self.us}"
            name = f"inject-p{_num(self.p)}-{size}"
            if self.core is not None and self.core != "random":
                name += f"-core{self.core}"
            if self.seed is not None:
                name += f"-s{self.seed}"
            return name
        name = f"bg-cpu{self.cpu}-d{_num(self.duty)}"
        if self.period_us is not None:
            name += f"-per{self.period_us}"
        return name

    @property
    def needs_calibration(self) -> bool:
        """True when δ is a fraction of the quiet step time, which must be measured first."""
        return self.kind == "inject" and self.frac is not None

    def delta_us(self, quiet_step_s: float | None = None) -> int | None:
        """The injected delay in µs (None for regimes that inject nothing)."""
        if self.kind != "inject":
            return None
        if self.us is not None:
            return self.us
        if quiet_step_s is None or quiet_step_s <= 0:
            raise RegimeError(f"regime '{self.spec}': δ = frac × quiet step time needs a "
                              "calibration run, and none succeeded")
        return max(1, round(self.frac * quiet_step_s * 1e6))

    def app_flags(self, quiet_step_s: float | None = None) -> list[str]:
        """The workload flags for this regime (quiet_step_s: calibration median, in s)."""
        if self.kind == "inject":
            flags = ["--noise-p", _num(self.p), "--noise-us", str(self.delta_us(quiet_step_s))]
            if self.core is not None:
                flags += ["--noise-core", self.core]
            if self.seed is not None:
                flags += ["--noise-seed", str(self.seed)]
            return flags
        if self.kind == "background":
            value = f"{self.cpu}:{_num(self.duty)}"
            if self.period_us is not None:
                value += f":{self.period_us}"
            return ["--background", value]
        return []


def parse(spec: str) -> Regime:
    """Parses one regime spec; raises RegimeError naming the spec."""
    text = spec.strip()
    kind, _, body = text.partition(":")
    if kind not in KINDS:
        raise RegimeError(f"regime '{spec}': unknown kind '{kind}' (expected one of "
                          f"{', '.join(KINDS)})")
    if kind == "none":
        if body:
            raise RegimeError(f"regime '{spec}': 'none' takes no parameters")
        return Regime(spec=text, kind="none")
    values: dict[str, str] = {}
    for item in body.split(","):
        key, eq, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key or not value:
            raise RegimeError(f"regime '{spec}': '{item}' is not key=value")
        if key not in _KEYS[kind]:
            raise RegimeError(f"regime '{spec}': unknown key '{key}' for {kind} (expected "
                              f"{', '.join(sorted(_KEYS[kind]))})")
        if key in values:
            raise RegimeError(f"regime '{spec}': '{key}' given twice")
        values[key] = value
    return _inject(text, values) if kind == "inject" else _background(text, values)


def _inject(spec: str, v: dict[str, str]) -> Regime:
    if "p" not in v:
        raise RegimeError(f"regime '{spec}': inject needs p=PROBABILITY")
    if ("frac" in v) == ("us" in v):
        raise RegimeError(f"regime '{spec}': inject needs exactly one of frac= or us=")
    p = _number(spec, "p", v["p"], float, low=0.0, high=1.0, low_open=True)
    frac = _number(spec, "frac", v["frac"], float, low=0.0, low_open=True) if "frac" in v else None
    us = _number(spec, "us", v["us"], int, low=1) if "us" in v else None
    core = v.get("core")
    if core is not None and core != "random":
        _number(spec, "core", core, int, low=0)
    seed = _number(spec, "seed", v["seed"], int, low=0) if "seed" in v else None
    return Regime(spec=spec, kind="inject", p=p, frac=frac, us=us, core=core, seed=seed)


def _background(spec: str, v: dict[str, str]) -> Regime:
    for key in ("cpu", "duty"):
        if key not in v:
            raise RegimeError(f"regime '{spec}': background needs {key}=")
    cpu = _number(spec, "cpu", v["cpu"], int, low=0)
    duty = _number(spec, "duty", v["duty"], float, low=0.0, high=1.0, low_open=True)
    period = _number(spec, "period_us", v["period_us"], int, low=1) if "period_us" in v else None
    return Regime(spec=spec, kind="background", cpu=cpu, duty=duty, period_us=period)


def _number(spec, key, text, kind, low=None, high=None, low_open=False):
    try:
        value = kind(text)
    except ValueError:
        raise RegimeError(f"regime '{spec}': {key}='{text}' is not "
                          f"{'an integer' if kind is int else 'a number'}") from None
    if low is not None and (value < low or (low_open and value == low)):
        raise RegimeError(f"regime '{spec}': {key}={text} must be "
                          f"{'>' if low_open else '>='} {_num(low)}")
    if high is not None and value > high:
        raise RegimeError(f"regime '{spec}': {key}={text} must be <= {_num(high)}")
    return value


def _num(x: float) -> str:
    """Shortest plain form of a number: 0.2, 1500, 1."""
    return f"{x:g}"
