"""The lab's models (decompkit.lab.models): scripted offline, a real one through the env var."""

import asyncio

import pytest
from pydantic_ai.models.function import FunctionModel

from decompkit.lab import models
from decompkit.lab.models import MODEL_ENV, PLANS, ROLES, SCRIPTS, agent, model, model_in_use
from decompkit.lab.rewoo import make_plan
from decompkit.lab.schema import Quote, TypedPlan


@pytest.mark.parametrize("role", ROLES)
def test_every_role_is_scripted_offline(role):
    m = model(role)
    assert isinstance(m, FunctionModel)
    assert m.model_name == f"scripted-{role}-{SCRIPTS[role][0]}"


def test_unknown_role_and_script():
    with pytest.raises(ValueError, match=r"role must be one of .*, got 'critic'"):
        model("critic")
    with pytest.raises(ValueError, match=r"script for the planner must be one of .*, got 'nope'"):
        model("planner", script="nope")


@pytest.mark.parametrize("script", sorted(PLANS))
def test_scripted_planner_writes_its_plan_with_the_goal(script):
    plan = asyncio.run(make_plan("  the goal  ", script=script))
    assert isinstance(plan, TypedPlan)
    assert plan.goal == "the goal"
    assert plan.as_dict()["steps"] == PLANS[script]


def test_scripted_plans_differ_from_the_good_one_where_intended():
    good = {s["id"]: s for s in PLANS["quotes"]}
    for name, changed in (("unknown_tool", {"E5"}), ("cycle", {"E1"}), ("contradiction", {"E7"})):
        steps = {s["id"]: s for s in PLANS[name]}
        assert {sid for sid in good if steps[sid] != good[sid]} == changed


# --- the switch: a real model when DECOMPKIT_MODEL is set --------------------------------------


def test_env_var_is_read_and_passed_through_without_a_call(monkeypatch):
    monkeypatch.setenv(MODEL_ENV, " openai:gpt-4o ")
    assert model("planner") == "openai:gpt-4o"
    assert model("planner", script="cycle") == "openai:gpt-4o"  # scripts are ignored
    built = agent("planner", TypedPlan)
    # Constructed without resolving the provider: no import, no credentials, no request.
    assert built.model == "openai:gpt-4o"
    assert "openai:gpt-4o" in model_in_use()


def test_empty_env_var_means_scripted(monkeypatch):
    monkeypatch.setenv(MODEL_ENV, "  ")
    assert isinstance(model("solver"), FunctionModel)
    assert model_in_use().startswith("scripted models, offline")


def test_the_same_call_runs_the_env_model(monkeypatch):
    # Pydantic AI's offline "test" model stands in for a real one: the planner's cell is
    # unchanged, and its plan now comes from that model, not from the script.
    monkeypatch.setenv(MODEL_ENV, "test")
    plan = asyncio.run(make_plan("goal", script="quotes"))
    assert isinstance(plan, TypedPlan)
    assert plan.as_dict()["steps"] != PLANS["quotes"]


def test_agent_settings():
    built = agent("extractor", Quote, retries=3)
    assert built.name == "extractor"
    assert isinstance(built.model, FunctionModel)
    with pytest.raises(ValueError, match="retries must be an integer >= 0, got -1"):
        agent("extractor", Quote, retries=-1)


def test_instructions_name_every_tool():
    for role in ("planner", "replanner"):
        for tool in ("search", "fetch_page", "compare"):
            assert tool in models._INSTRUCTIONS[role]
