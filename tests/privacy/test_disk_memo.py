"""The calibration memo on disk (mpdp.privacy.disk_memo; issues 45, 58): a stored value is returned
bit for bit without computing again, in another process too; a key changes with the arguments and
with the code's fingerprint; a damaged entry is computed again; a raising call is never stored; a
folder or entry that is not the user's alone is not used; a planted σ, α or RDP curve is refused."""

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

    @disk_memo.persistent(verify=lambda value, x: None)
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


# --- trust (issue 58): the folder must be the user's alone; a value read back is re-verified ---


@pytest.fixture()
def fresh_checks(monkeypatch):
    """This process's folder checks and warnings forgotten (each test is a new process)."""
    monkeypatch.setattr(disk_memo, "_FOLDERS", {})
    monkeypatch.setattr(disk_memo, "_WARNED", set())
    monkeypatch.setattr(disk_memo, "_BAD_SUBFOLDERS", set())
    monkeypatch.setenv(disk_memo.SAID_ENV, "")  # recorded as absent before: restored so after the test
    monkeypatch.delenv(disk_memo.SAID_ENV)


def test_the_memo_creates_its_folders_and_entries_private(memo_dir, fresh_checks):
    """Even under a umask of 002 (user private groups) the memo's folders are 0700 and its entries
    0600, so the memo never refuses what it wrote itself."""
    previous = os.umask(0o002)
    try:
        lookup, _ = counted({"x": 0.5})
        lookup("x")
    finally:
        os.umask(previous)
    (path,) = entries(memo_dir)
    assert [oct(p.stat().st_mode & 0o777) for p in (memo_dir, path.parent, path)] == ["0o700", "0o700", "0o600"]


@pytest.mark.parametrize("where", ["folder", "sub-folder", "entry"])
def test_a_memo_writable_by_others_is_not_used(memo_dir, fresh_checks, capsys, where):
    """A planted value in a folder (or sub-folder, or entry) that others may write is never read:
    the value is computed, one line says why and how to fix it."""
    lookup, _ = counted({"x": 0.5})
    lookup("x")
    (path,) = entries(memo_dir)
    stored = json.loads(path.read_text())
    path.write_text(json.dumps({**stored, "value": {"float": "9.0"}}))  # planted, with the right key
    target = {"folder": memo_dir, "sub-folder": path.parent, "entry": path}[where]
    target.chmod(target.stat().st_mode | 0o020)
    disk_memo._FOLDERS.clear()  # a new process
    again, calls = counted({"x": 0.5})
    assert again("x") == 0.5 and again("x") == 0.5 and calls == ["x"]
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is writable by its group" in err[0] and "chmod" in err[0] and "go-w" in err[0], err
    assert {"folder": f"folder {memo_dir} is writable", "sub-folder": f"{memo_dir}: 1 of its sub-folders are not "
            f"used, e.g. {path.parent.name} is writable", "entry": f"entry {path} is writable"}[where] in err[0], err
    if where == "folder":
        assert "not used, the calibrations are computed in this process only" in err[0]
    assert json.loads(path.read_text())["value"] == {"float": "9.0"}  # not read, and not written either
    if where != "entry":  # a job started after the warning (it inherits the environment) is quiet
        disk_memo._FOLDERS.clear()
        disk_memo._WARNED.clear()
        disk_memo._BAD_SUBFOLDERS.clear()
        third, calls = counted({"x": 0.5})
        assert third("x") == 0.5 and calls == ["x"] and capsys.readouterr().err == ""


def test_a_memo_of_another_user_is_not_used(memo_dir, fresh_checks, capsys, monkeypatch):
    lookup, _ = counted({"x": 0.5})
    lookup("x")
    (path,) = entries(memo_dir)
    path.write_text(json.dumps({**json.loads(path.read_text()), "value": {"float": "9.0"}}))
    me = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: me + 1)  # as if the folder were another user's
    disk_memo._FOLDERS.clear()  # a new process
    again, calls = counted({"x": 0.5})
    assert again("x") == 0.5 and calls == ["x"]
    err = capsys.readouterr().err
    assert f"calibration memo folder {memo_dir} belongs to user id {me}, not to you ({me + 1})" in err


def test_an_entry_that_is_a_link_is_not_used(memo_dir, fresh_checks, tmp_path, capsys):
    lookup, _ = counted({"x": 0.5})
    lookup("x")
    (path,) = entries(memo_dir)
    elsewhere = tmp_path / "planted.json"
    elsewhere.write_text(json.dumps({**json.loads(path.read_text()), "value": {"float": "9.0"}}))
    path.unlink()
    path.symlink_to(elsewhere)
    again, _ = counted({"x": 0.5})
    assert again("x") == 0.5 and "is not a regular file" in capsys.readouterr().err


def plant(fn, args, value):
    """Write ``value`` into the memo under the key of ``fn(*args)``, as whoever could write the
    folder could; the function's memory in this process forgotten."""
    key = disk_memo._key(fn.__wrapped__, args, {})
    path = disk_memo.folder() / key[:2] / f"{key}.json"
    stored = json.loads(path.read_text())
    assert stored["key"] == key
    path.write_text(json.dumps({**stored, "value": disk_memo._encode(value)}))
    fn.forget()
    return path


def check_refused(fn, args, honest, planted, capsys):
    path = plant(fn, args, planted)
    again = fn(*args)
    assert np.array_equal(again, honest), "the planted value was used"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "fails its re-verification" in err[0] and str(path) in err[0], err
    assert np.array_equal(disk_memo._decode(json.loads(path.read_text())["value"]), honest)  # replaced
    fn.forget()  # and the honest entry passes its re-verification: read back, no warning
    assert np.array_equal(fn(*args), honest) and capsys.readouterr().err == ""


def test_a_planted_smaller_sigma_is_refused(memo_dir, fresh_checks, capsys):
    args = (1.0, 0.5, 2, 1e-5)
    sg.calibrate_noise_multiplier.forget()
    honest = sg.calibrate_noise_multiplier(*args)
    planted = honest * 0.9
    assert sg.epsilon(0.5, planted, 2, 1e-5) > 1.0  # what the planted σ would have released
    check_refused(sg.calibrate_noise_multiplier, args, honest, planted, capsys)
    assert sg._sigma_meets_target(honest * 1.01, *args) is None  # more noise than needed is private


def test_a_planted_larger_alpha_is_refused(memo_dir, fresh_checks, capsys):
    args = (0.5, 20, 1e-5, "exact")
    pure_dp.per_step_alpha.forget()
    honest = pure_dp.per_step_alpha(*args)
    planted = honest * 1.5
    assert planted < 0.5 and pure_dp.composed_pure_epsilon(planted, 20, 1e-5, "exact") > 0.5
    check_refused(pure_dp.per_step_alpha, args, honest, planted, capsys)
    assert "outside (0, 0.5]" in pure_dp._alpha_meets_target(0.6, 0.5, 1, 1e-5, "exact")


def test_a_planted_lower_rdp_curve_is_refused(memo_dir, fresh_checks, capsys):
    from mpdp.privacy import private_selection as ps
    from mpdp.studies.benchmark import dpsgd

    args = (1.0, 1e-5, ((0.5, 2), (0.2, 5)))
    dpsgd._rdp_curve.forget()
    honest = dpsgd._rdp_curve(*args)
    lowered = honest.copy()
    lowered[ps.ORDERS <= 20] *= 0.8  # the orders that decide its ε at δ
    assert ps.rdp_to_epsilon(lowered, 1e-5) < ps.rdp_to_epsilon(honest, 1e-5)
    check_refused(dpsgd._rdp_curve, args, honest, lowered, capsys)
    assert "not a non-negative RDP curve" in dpsgd._curve_meets_target(honest[:5], *args)
