"""Noise regime specs, names and app flags."""
import pytest

from aloe_harness import regimes


def test_none():
    r = regimes.parse("none")
    assert (r.name, r.app_flags(), r.needs_calibration) == ("none", [], False)


def test_inject_fraction_uses_the_calibrated_step_time():
    r = regimes.parse("inject:p=0.2,frac=0.2")
    assert r.name == "inject-p0.2-f0.2" and r.needs_calibration
    # quiet median step 8 ms: δ = 0.2 × 8000 µs = 1600 µs
    assert r.delta_us(0.008) == 1600
    assert r.app_flags(0.008) == ["--noise-p", "0.2", "--noise-us", "1600"]
    with pytest.raises(regimes.RegimeError, match="calibration"):
        r.app_flags(None)


def test_inject_fixed_with_core_and_seed():
    r = regimes.parse("inject:p=0.05,us=1500,core=1,seed=7")
    assert r.name == "inject-p0.05-us1500-core1-s7" and not r.needs_calibration
    assert r.app_flags() == ["--noise-p", "0.05", "--noise-us", "1500", "--noise-core", "1",
                             "--noise-seed", "7"]
    assert regimes.parse("inject:p=1,us=10,core=random").app_flags()[-2:] == \
        ["--noise-core", "random"]


def test_background():
    r = regimes.parse("background:cpu=1,duty=0.5")
    assert (r.name, r.app_flags()) == ("bg-cpu1-d0.5", ["--background", "1:0.5"])
    r = regimes.parse("background:cpu=0,duty=0.25,period_us=20000")
    assert (r.name, r.app_flags()) == ("bg-cpu0-d0.25-per20000", ["--background", "0:0.25:20000"])


@pytest.mark.parametrize("spec, words", [
    ("noisy", "unknown kind 'noisy'"),
    ("none:p=1", "takes no parameters"),
    ("inject:frac=0.2", "needs p="),
    ("inject:p=0.2", "exactly one of frac= or us="),
    ("inject:p=0.2,frac=0.1,us=5", "exactly one of frac= or us="),
    ("inject:p=1.5,us=5", "p=1.5 must be <= 1"),
    ("inject:p=0,us=5", "p=0 must be > 0"),
    ("inject:p=0.2,us=x", "us='x' is not an integer"),
    ("inject:p=0.2,us=5,core=big", "core='big'"),
    ("inject:p=0.2,us=5,colour=red", "unknown key 'colour'"),
    ("inject:p=0.2,p=0.3,us=5", "'p' given twice"),
    ("background:cpu=1", "needs duty="),
    ("background:cpu=1,duty", "'duty' is not key=value"),
])
def test_bad_specs_are_named(spec, words):
    with pytest.raises(regimes.RegimeError) as e:
        regimes.parse(spec)
    assert f"'{spec}'" in str(e.value) and words in str(e.value)


def test_issue_4_regimes_a_slow_core_and_heavy_injection():
    slow = regimes.parse("background:cpu=1,duty=1")
    assert (slow.name, slow.app_flags(), slow.needs_calibration) == (
        "bg-cpu1-d1", ["--background", "1:1"], False)
    heavy = regimes.parse("inject:p=0.5,frac=0.5")
    assert heavy.name == "inject-p0.5-f0.5" and heavy.needs_calibration
    # quiet median step 8 ms: δ = 0.5 × 8000 µs, in half the steps
    assert heavy.app_flags(0.008) == ["--noise-p", "0.5", "--noise-us", "4000"]
    with pytest.raises(regimes.RegimeError, match="duty=1.5 must be <= 1"):
        regimes.parse("background:cpu=1,duty=1.5")
