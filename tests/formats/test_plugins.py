"""The one registry shape (`ground_truth.registry`) and its three uses: format adapters, judges and
resolution checks. A broken third-party plugin (its module fails to import, or its object fails
the protocol) is a warning naming it and its distribution and is skipped; no command dies of it.
The plugins here are real installed distributions: a `.dist-info` in a folder on `sys.path`."""

from __future__ import annotations

import json
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
from helpers import EXAMPLE

from ground_truth import (
    Action,
    IncidentSpec,
    PluginError,
    PluginWarning,
    Registry,
    Submission,
    Trajectory,
    UnknownName,
)
from judge import make_judge
from judge.cli import main
from judge.judges import registered_judges
from judge.resolution import check_resolution

MODULE = """
from pathlib import Path


class Widget:
    pass


def good_check(spec, trajectory):
    return len(trajectory.actions) > 0


class KeywordJudge:
    name = "keyword"

    def describe(self):
        return {"name": "keyword", "model": "keyword", "params": {}}

    def judge(self, task):
        raise NotImplementedError


NOT_CALLABLE = 42


class Zoo:
    name = "zoo"
    looks_for = {"specs": "*.zoo files", "submissions": "*.zoo files"}

    def sniff(self, path, kind):
        return 1.0 if Path(path).suffix == ".zoo" else 0.0

    def load_specs(self, path):  # one incident id a line; no `source`: the loader names it
        from ground_truth.models import IncidentSpec

        ids = Path(path).read_text().split()
        return [IncidentSpec(id=i, ground_truth="the cart ran out of memory") for i in ids]

    def load_submissions(self, path):
        return []
"""


def install(root: Path, monkeypatch: pytest.MonkeyPatch, module: str, **groups: str) -> Path:
    """Install the distribution `shiny-plugins 2.0`: the module `module` (MODULE's text) and a
    `.dist-info` whose entry_points.txt has `groups` (group -> its lines), on sys.path."""
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{module}.py").write_text(textwrap.dedent(MODULE))
    info = root / "shiny_plugins-2.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shiny-plugins\nVersion: 2.0\n")
    text = "".join(f"[{group}]\n{lines}\n" for group, lines in groups.items())
    (info / "entry_points.txt").write_text(text)
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delitem(sys.modules, module, raising=False)
    return root


def widgets() -> Registry[type]:
    def check(obj: object, name: str) -> type:
        if not isinstance(obj, type):
            raise TypeError(f"{obj!r} is not a class")
        return obj

    return Registry("widget", "diagnosis_judge.test_widgets", check)


# ------------------------------------------------------------------ the shape


def test_register_by_decorator_by_object_or_lazily(tmp_path, monkeypatch) -> None:
    (tmp_path / "lazy_widgets.py").write_text("class Lazy:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = widgets()

    @registry.register("decorated")
    class Decorated:
        pass

    class Plain:
        pass

    assert registry.register("plain", Plain) is Plain
    registry.register("lazy", "lazy_widgets:Lazy")
    assert registry.names() == ["decorated", "plain", "lazy"]
    assert "lazy_widgets" not in sys.modules  # listing imports nothing
    assert registry.get("decorated") is Decorated
    assert registry.get("lazy").__name__ == "Lazy"
    assert "lazy_widgets" in sys.modules
    assert [name for name, _ in registry.items()] == ["decorated", "plain", "lazy"]


def test_the_protocol_is_checked_at_once_for_objects_and_on_use_for_strings() -> None:
    registry = widgets()
    with pytest.raises(TypeError, match="is not a class"):
        registry.register("number", 3)
    registry.register("function", "json:dumps")
    with pytest.raises(TypeError, match="is not a class"):
        registry.get("function")
    with pytest.raises(ValueError, match="not a 'module:attr' string"):
        registry.register("bad", "not a reference")


def test_a_name_is_taken_once_unless_replaced() -> None:
    registry = widgets()
    registry.register("w", int)
    registry.register("w", int)  # the same object again is fine
    with pytest.raises(ValueError, match="a widget named 'w' is already registered"):
        registry.register("w", float)
    registry.register("w", float, replace=True)
    assert registry.get("w") is float
    registry.unregister("w")
    assert registry.find("w") is None


def test_an_unknown_name_lists_the_names() -> None:
    registry = widgets()
    registry.register("a", int)
    registry.register("b", "json:JSONDecoder")
    with pytest.raises(UnknownName, match=r"^unknown widget 'c' \(expected one of: a, b\)$"):
        registry.get("c")


def test_entry_points_are_found_and_a_broken_one_is_skipped_with_a_warning(
    tmp_path, monkeypatch
) -> None:
    install(
        tmp_path,
        monkeypatch,
        "shiny_widgets",
        **{
            "diagnosis_judge.test_widgets": "\n".join(
                [
                    "good = shiny_widgets:Widget",
                    "gone = shiny_widgets_not_installed:Widget",
                    "wrong = shiny_widgets:NOT_CALLABLE",
                    "taken = shiny_widgets:Widget",
                ]
            )
        },
    )
    registry = widgets()
    registry.register("taken", int)
    assert registry.names() == ["taken", "gone", "good", "wrong"]
    assert "shiny_widgets" not in sys.modules
    assert registry.origins()["good"] == "entry point shiny_widgets:Widget"
    with pytest.warns(PluginWarning) as caught:
        found = dict(registry.items())
    assert list(found) == ["taken", "good"] and found["good"].__name__ == "Widget"
    dist = "distribution shiny-plugins 2.0"
    assert sorted(str(w.message) for w in caught) == [
        f"widget plugin 'gone' (entry point shiny_widgets_not_installed:Widget, {dist})"
        " skipped: ModuleNotFoundError: No module named 'shiny_widgets_not_installed'",
        f"widget plugin 'taken' (entry point shiny_widgets:Widget, {dist})"
        " skipped: the name 'taken' is taken",
        f"widget plugin 'wrong' (entry point shiny_widgets:NOT_CALLABLE, {dist})"
        " skipped: TypeError: 42 is not a class",
    ]
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        dict(registry.items())
    assert again == []  # each is said once per process
    with pytest.raises(PluginError, match=rf"'gone' .*{dist}\) cannot be used: ModuleNotFound"):
        registry.get("gone")


# ------------------------------------------------------------------ formats


def broken_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = ["broken = shiny_formats_not_installed:Adapter", "zoo = shiny_formats:Zoo"]
    install(
        tmp_path / "site",
        monkeypatch,
        "shiny_formats",
        **{"diagnosis_judge.formats": "\n".join(lines)},
    )


def test_a_broken_format_plugin_does_not_take_the_commands_down(
    tmp_path, monkeypatch, capsys
) -> None:
    broken_format(tmp_path, monkeypatch)
    gt, outputs = EXAMPLE / "ground_truth", EXAMPLE / "outputs"
    for fmt in ["native", "auto"]:
        assert main(["check", "--ground-truth", str(gt), "--format", fmt]) == 0
    result = tmp_path / "result.json"
    args = ["--result-file", str(result), "--no-progress", "--format", "native"]
    assert main(["eval", "--ground-truth", str(gt), "--outputs", str(outputs), *args]) == 0
    assert json.loads(result.read_text())["cases"]
    capsys.readouterr()
    assert main(["check", "--ground-truth", str(gt), "--format", "broken"]) == 2
    err = capsys.readouterr().err
    assert "format plugin 'broken' (entry point shiny_formats_not_installed:Adapter" in err
    assert "distribution shiny-plugins 2.0) cannot be used: ModuleNotFoundError" in err


def test_a_broken_format_plugin_is_a_warning_where_detection_asks_it(
    tmp_path, monkeypatch, capsys
) -> None:
    broken_format(tmp_path, monkeypatch)
    cases = tmp_path / "cases.zoo"
    cases.write_text("cart-oom\n")
    assert main(["check", "--ground-truth", str(cases), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["ground_truth"]["format"] == ["zoo"]  # not "native"
    assert found["warnings"] == [
        "format plugin 'broken' (entry point shiny_formats_not_installed:Adapter, distribution"
        " shiny-plugins 2.0) skipped: ModuleNotFoundError: No module named"
        " 'shiny_formats_not_installed'"
    ]
    mystery = tmp_path / "mystery.csv"
    mystery.write_text("a,b\n1,2\n")
    assert main(["check", "--ground-truth", str(mystery)]) == 2
    err = capsys.readouterr().err
    assert "not a recognised ground truth format" in err and "\n  zoo: *.zoo files" in err
    assert "\n  broken: a plugin that cannot be used (ModuleNotFoundError: No module named" in err


# ------------------------------------------------------------------ judges


def test_a_broken_judge_plugin_fails_only_when_it_is_asked_for(tmp_path, monkeypatch) -> None:
    install(
        tmp_path,
        monkeypatch,
        "shiny_judges",
        **{
            "diagnosis_judge.judges": "\n".join(
                [
                    "keyword = shiny_judges:KeywordJudge",
                    "gone = shiny_judges_not_installed:Judge",
                    "wrong = shiny_judges:NOT_CALLABLE",
                ]
            )
        },
    )
    assert make_judge("keyword").name == "keyword"
    assert make_judge("rules").name == "rules"
    assert {"keyword", "gone", "wrong"} <= set(registered_judges())
    with pytest.raises(ValueError, match=r"judge plugin 'gone' .*shiny-plugins 2.0\) cannot be"):
        make_judge("gone")
    with pytest.raises(ValueError, match=r"'wrong' .* TypeError: the factory .* not callable"):
        make_judge("wrong")


def test_the_cli_names_a_broken_judge_plugin_and_exits_2(tmp_path, monkeypatch, capsys) -> None:
    install(
        tmp_path / "site",
        monkeypatch,
        "shiny_judges",
        **{"diagnosis_judge.judges": "gone = shiny_judges_not_installed:Judge"},
    )
    gt, outputs = EXAMPLE / "ground_truth", EXAMPLE / "outputs"
    args = ["--judge-model", "gone", "--no-progress", "--result-file", str(tmp_path / "r.json")]
    assert main(["eval", "--ground-truth", str(gt), "--outputs", str(outputs), *args]) == 2
    assert "judge plugin 'gone'" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


# ------------------------------------------------------------------ resolution checks


def test_resolution_checks_from_entry_points_and_a_broken_one_skipped(
    tmp_path, monkeypatch
) -> None:
    install(
        tmp_path,
        monkeypatch,
        "shiny_checks",
        **{
            "diagnosis_judge.checks": "\n".join(
                [
                    "shinysim.acted = shiny_checks:good_check",
                    "shinysim.gone = shiny_checks_not_installed:check",
                    "othersim.never = shiny_checks_not_installed:other",
                ]
            )
        },
    )
    spec = IncidentSpec(id="inc", ground_truth="disk full", source={"format": "shinysim"})
    sub = Submission(
        incident_id="inc", diagnosis="disk", trajectory=Trajectory(actions=[Action(raw="df")])
    )
    with pytest.warns(PluginWarning) as caught:
        result = check_resolution(spec, sub)
    assert result is not None and result.checks["acted"].passed is True
    assert "gone" not in result.checks
    assert [str(w.message).split(" (")[0] for w in caught] == [
        "resolution check plugin 'shinysim.gone'"  # othersim's is never loaded
    ]
