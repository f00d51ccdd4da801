"""What every stage command shares (wikiref.cli): a job's failure on bad input is one line and a return code,
never a traceback, and a job's summary line says STAND-IN from its metrics."""

from __future__ import annotations

import argparse

import pytest

from wikiref import cli
from wikiref.examples import ExampleError
from wikiref.schemas import SchemaError


class StepError(Exception):
    pass


def _jobs(exc: Exception | None) -> dict:
    def run(args, params):
        if exc is not None:
            raise exc

    return {"go": (run, "help", "what it does")}


@pytest.fixture
def no_params(monkeypatch):
    monkeypatch.setattr(cli, "params_from_args", lambda args, *keys: {})
    monkeypatch.setattr(cli, "job_keys", lambda step, job: ())


@pytest.mark.parametrize(
    "exc", [SchemaError("bad column"), ExampleError("bad example"), FileNotFoundError("no such file")]
)
def test_bad_input_fails_every_job_with_one_line(no_params, capsys, exc):
    assert cli.run_job(argparse.Namespace(job="go"), "step", _jobs(exc)) == 1
    assert capsys.readouterr().err == f"wikiref step go: {exc}\n"


def test_a_step_failure_keeps_its_own_return_code_ahead_of_the_input_errors(no_params, capsys):
    assert cli.run_job(argparse.Namespace(job="go"), "step", _jobs(StepError("broken")), ((StepError,), 2)) == 2
    assert capsys.readouterr().err == "wikiref step go: broken\n"
    assert cli.run_job(argparse.Namespace(job="go"), "step", _jobs(None), ((StepError,), 2)) == 0


def test_an_error_no_job_expects_is_not_swallowed(no_params):
    with pytest.raises(ZeroDivisionError):
        cli.run_job(argparse.Namespace(job="go"), "step", _jobs(ZeroDivisionError("bug")))


def test_the_standin_label_follows_the_metrics():
    assert cli.standin_label({"standin": True}) == " (STAND-IN)"
    assert cli.standin_label({"standin": False}) == ""
    assert cli.standin_label({}) == ""
