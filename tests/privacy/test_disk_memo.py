"""The calibration memo on disk (mpdp.privacy.disk_memo; issue 45): a stored value is returned bit
for bit without computing again, in another process too; a key changes with the arguments and with
the code's fingerprint; a damaged entry is computed again; a raising call is never stored."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from mpdp.privacy import disk_memo, pure_dp
from mpdp.privacy import subsampled_gaussian as sg
from mpdp.privacy.calibration import PrivacyParameterError


@pytest.fixture()
def memo_dir(tmp_path, monkeypatch):
    folder = tmp_path / "memo"
    monkeypatch.setenv(disk_memo.ENV, str(folder))
    return folder


def counted(values):
    """A persistent function returning ``values[x]`` and counting its real calls."""
    calls = []

    @disk_memo.persistent
    def lookup(x):
        calls.append(x)
        if x == "bad":
            raise PrivacyParameterError("bad argument")
        return values[x]

    return lookup, calls


def entries(folder):
    return sorted(folder.rglob("*.json"))


def test_a_stored_value_is_returned_bit_for_bit_without_computing_again(memo_dir):
    curve = np.array([0.1, 1 / 3, np.inf, 1e-300, 2.5e17])
    values = {"f": 0.1 + 0.2, "a": curve, "inf": float("inf")}
    first, calls = counted(values)
    assert [first(k) is not None for k in values] == [True] * 3 and calls == ["f", "a", "inf"]
    assert len(entries(memo_dir)) == 3
    second, calls2 = counted(values)  # a new process's function: its memory is empty
    out = second("f"), second("a"), second("inf")
    assert calls2 == []  # read from disk
    assert out[0] == 0.1 + 0.2 and out[0].hex() == (0.1 + 0.2).hex()
    assert out[1].dtype == np.float64 and out[1].tobytes() == curve.tobytes()
    assert out[2] == float("inf")
    out[1][0] = -1.0  # the caller's copy: the memo is not changed through it
    assert second("a")[0] == 0.1


def test_the_key_holds_the_arguments_and_the_code_fingerprint(memo_dir, monkeypatch):
    lookup, calls = counted({1: 1.0, 2: 3.0})
    assert (lookup(1), lookup(1.0), lookup(2), lookup(1)) == (1.0, 1.0, 3.0, 1.0)
    assert calls == [1, 1.0, 2] and len(entries(memo_dir)) == 3  # 1 and 1.0 are different calls
    # another fingerprint (a change of the code or of dp-accounting): computed again
    monkeypatch.setattr(disk_memo, "fingerprint", lambda module_file: "another version of the code")
    again, calls2 = counted({1: 5.0})
    assert again(1) == 5.0 and calls2 == [1]
    # the fingerprint covers the privacy layer's sources and the libraries' versions
    monkeypatch.undo()
    monkeypatch.setenv(disk_memo.ENV, str(memo_dir))
    disk_memo.fingerprint.cache_clear()
    base = disk_memo.fingerprint(pure_dp.__file__)
    disk_memo.fingerprint.cache_clear()
    monkeypatch.setattr(disk_memo, "_versions", lambda: ("dp-accounting 0.0",))
    assert disk_memo.fingerprint(pure_dp.__file__) != base
    disk_memo.fingerprint.cache_clear()


@pytest.mark.parametrize("damage", ["", "{", "[1, 2]", '{"key": "other", "value": {"float": "1.0"}}',
                                    '{"value": {"float": "x"}}'])
def test_a_damaged_entry_is_computed_again_and_replaced(memo_dir, damage):
    lookup, _ = counted({"x": 0.25})
    lookup("x")
    (path,) = entries(memo_dir)
    path.write_text(damage)
    again, calls = counted({"x": 0.25})
    assert again("x") == 0.25 and calls == ["x"]
    assert json.loads(path.read_text())["value"] == {"float": repr(0.25)}


def test_a_call_that_raises_is_not_stored_and_off_turns_the_memo_off(memo_dir, monkeypatch):
    lookup, calls = counted({})
    for _ in range(2):
        with pytest.raises(PrivacyParameterError):
            lookup("bad")
    assert calls == ["bad", "bad"] and entries(memo_dir) == []
    monkeypatch.setenv(disk_memo.ENV, "off")
    assert disk_memo.folder() is None
    off, calls = counted({"y": 1.5})
    assert off("y") == 1.5 and calls == ["y"] and entries(memo_dir) == []


def test_a_folder_that_cannot_be_written_leaves_the_value_correct(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv(disk_memo.ENV, str(blocked / "memo"))
    lookup, calls = counted({"z": 2.0})
    assert lookup("z") == 2.0 and lookup("z") == 2.0 and calls == ["z"]


def test_the_calibrations_read_from_another_process_equal_a_fresh_computation(memo_dir):
    """The memoised calibrations (ADMM's per-step α, DP-SGD's σ) stored by one process are what a
    process without the memo computes, bit for bit."""
    script = ("from mpdp.privacy import pure_dp, subsampled_gaussian as sg;"
              "print(pure_dp.per_step_alpha(0.5, 20, 1e-5, 'pld').hex(),"
              " sg.calibrate_noise_multiplier(1.0, 0.05, 30, 1e-5).hex())")
    env = {**os.environ, disk_memo.ENV: str(memo_dir)}
    stored = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert len(entries(memo_dir)) == 2
    read = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    fresh = subprocess.run([sys.executable, "-c", script], env={**env, disk_memo.ENV: "off"},
                           capture_output=True, text=True, check=True)
    assert stored.stdout == read.stdout == fresh.stdout
    alpha, sigma = (float.fromhex(x) for x in fresh.stdout.split())
    assert pure_dp.composed_pure_epsilon(alpha, 20, 1e-5, "pld") <= 0.5
    assert sg.epsilon(0.05, sigma, 30, 1e-5) <= 1.0
