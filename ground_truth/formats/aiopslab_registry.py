"""AIOpsLab's problem registry, read from its Python source with `ast` (never imported or run).

A user with an AIOpsLab checkout has `aiopslab/orchestrator/problems/registry.py`:
`ProblemRegistry.__init__` maps each problem id to a problem class, or to a `lambda:` calling it
with literal arguments (`faulty_service="user-service"`). Each class, in a module beside the
registry, sets its facts in `__init__` (often through a base task's `__init__`), injects in
`inject_fault` (`injector._inject(fault_type=...)`) and hard-codes the expected answer in `eval`
(`expected_solution = "Yes"`, `is_exact_match_lower(soln.get("system_level", ""), "Virtualization")`).

Only literals are followed: assignments of constants and of the constructor's parameters,
base-class `__init__` calls, and `if self.x == "literal"` branches. The application's namespace
comes from its metadata JSON (`aiopslab/paths.py` names the file). A fact the source computes
in any other way stays unknown (the `aiopslab` adapter warns about a missing faulty component);
a registered class defined nowhere beside the registry is skipped, with one warning. The result
has the shape `aiopslab` specs are read from. On AIOpsLab ddf7e40 all 89 registered problems are
read, and their task, faulty component, injector and expected answers equal the hand extraction
in the shared corpus for every one.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from ..errors import InputError
from ..reading import input_files, read_text
from .files import warn_format

REGISTRY = Path("aiopslab") / "orchestrator" / "problems" / "registry.py"
TASK_BASES = {
    "DetectionTask": "detection",
    "LocalizationTask": "localization",
    "AnalysisTask": "analysis",
    "MitigationTask": "mitigation",
}
COMPONENT_ATTRS = ("faulty_service", "faulty_services", "faulty_component", "faulty_pod")
PLACEHOLDERS = {"PLACEHOLDER", ""}
_COMPARISONS = (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)
MAX_INIT_DEPTH = 20
# `expected_solution = "Yes"` and the like in `eval`: (task, variable) -> problem field.
_EXPECTED_VARIABLES = {
    ("detection", "expected_solution"): "expected_detection",
    ("analysis", "expected_system_level"): "expected_system_level",
    ("analysis", "expected_fault_type"): "expected_fault_type",
}
UNKNOWN = object()


def registry_file(path: Path) -> Path | None:
    """The registry of an AIOpsLab checkout, of its problems folder, or the file itself."""
    return find_registry(path, REGISTRY, _declares_registry)


def find_registry(path: Path, relative: Path, declares: Callable[[Path], bool]) -> Path | None:
    """The registry file `relative` (from a checkout's root) found at `path`: a checkout, the
    registry's own folder, its parent package folder, or the file itself, if `declares` it."""
    candidates = (
        [path]
        if path.is_file()
        else [path / relative, path / relative.name, path / Path(*relative.parts[1:])]
    )
    return next(
        (f for f in candidates if f.name == relative.name and f.is_file() and declares(f)), None
    )


def _declares_registry(file: Path) -> bool:
    try:
        text = read_text(file)
        return "PROBLEM_REGISTRY" in text and "aiopslab." in text
    except InputError:
        return False


@dataclass
class PythonSource:
    """The parsed problem modules: classes by name, and where each came from."""

    classes: dict[str, tuple[ast.ClassDef, Path]] = field(default_factory=dict)
    namespaces: dict[str, str] = field(default_factory=dict)
    constants: dict[Path, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def of_folder(cls, folder: Path) -> PythonSource:
        """Every `.py` module of `folder` (the registry's problems package), parsed."""
        source = cls()
        for file in input_files(folder, lambda p: p.suffix == ".py"):
            source.add(file)
        return source

    def add(self, file: Path) -> None:
        """A module's classes and its literal module-level constants (`BAD_RANGE = "..."`)."""
        constants = self.constants.setdefault(file, {})
        for node in parse_module(file).body:
            if isinstance(node, ast.ClassDef):
                self.classes.setdefault(node.name, (node, file))
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                name, value = getattr(node.targets[0], "id", None), literal(node.value)
                if name and value is not UNKNOWN:
                    constants[name] = value


def extract_problems(path: Path) -> list[dict[str, Any]]:
    """One problem dict per registry entry, in registry order."""
    registry = registry_file(path)
    if registry is None:
        raise InputError(path, f"holds no AIOpsLab problem registry ({REGISTRY})")
    source = PythonSource.of_folder(registry.parent)
    root = _checkout_root(registry)
    if root is not None:
        source.namespaces = app_namespaces(root)
    listed = list(entries(registry, parse_module(registry)))
    unknown = [pid for pid, cls, _ in listed if cls not in source.classes]
    if unknown:
        warn_format(
            registry,
            f"{len(unknown)} of {len(listed)} registered problems name classes not defined in"
            f" any module beside the registry (e.g. {unknown[0]}): skipped",
        )
    return [
        _problem(pid, cls, kwargs, source, root)
        for pid, cls, kwargs in listed
        if cls in source.classes
    ]


def parse_module(file: Path) -> ast.Module:
    """The Python file parsed (not run); InputError naming the line if it is not valid Python."""
    try:
        return ast.parse(read_text(file), filename=str(file))
    except SyntaxError as exc:
        raise InputError(
            file, f"not valid Python ({exc.msg})", field=f"line {exc.lineno}"
        ) from None


def _checkout_root(registry: Path) -> Path | None:
    parents = registry.parents
    root = parents[len(REGISTRY.parts) - 1] if len(parents) >= len(REGISTRY.parts) else None
    return root if root is not None and (root / "aiopslab").is_dir() else None


def entries(registry: Path, module: ast.Module) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Each `PROBLEM_REGISTRY` entry as (problem id, class name, literal constructor arguments,
    positional ones under `__args__`); non-literal arguments are UNKNOWN, non-string keys are
    skipped. InputError if the module assigns no such dict.
    """
    table = next(
        (
            node.value
            for node in ast.walk(module)
            if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Dict)
            and any(getattr(t, "attr", None) == "PROBLEM_REGISTRY" for t in node.targets)
        ),
        None,
    )
    if table is None:
        raise InputError(registry, "no `self.PROBLEM_REGISTRY = {...}` dict found")
    for key, value in zip(table.keys, table.values, strict=True):
        if not isinstance(key, ast.Constant) or not isinstance(key.value, str):
            continue
        call = value.body if isinstance(value, ast.Lambda) else value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
            kwargs = {k.arg: literal(k.value) for k in call.keywords if k.arg}
            yield key.value, call.func.id, {"__args__": [literal(a) for a in call.args], **kwargs}
        elif isinstance(call, ast.Name):
            yield key.value, call.id, {}


def literal(node: ast.AST) -> Any:
    """The value of a literal expression, or the UNKNOWN sentinel when it is not one."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return UNKNOWN


# ---------------------------------------------------------------- one problem class


class LiteralReader:
    """Follows one class's `__init__` chain and methods, literals only."""

    def __init__(self, source: PythonSource):
        self.source = source
        self.attrs: dict[str, Any] = {}

    def mro(self, name: str, seen: frozenset[str] = frozenset()) -> list[ast.ClassDef]:
        if name in seen or name not in self.source.classes:
            return []
        cls = self.source.classes[name][0]
        order = [cls]
        for base in cls.bases:
            if isinstance(base, ast.Name):
                order += [c for c in self.mro(base.id, seen | {name}) if c not in order]
        return order

    def method(self, name: str, cls: str) -> ast.FunctionDef | None:
        found = self.method_owner(name, cls)
        return found[0] if found else None

    def method_owner(self, name: str, cls: str) -> tuple[ast.FunctionDef, str] | None:
        for klass in self.mro(cls):
            for node in klass.body:
                if isinstance(node, ast.FunctionDef) and node.name == name:
                    return node, klass.name
        return None

    def construct(self, cls: str, kwargs: dict[str, Any], depth: int = 0) -> None:
        found = self.method_owner("__init__", cls)
        if found is None or depth > MAX_INIT_DEPTH:
            return
        init, owner = found
        file = self.source.classes[owner][1]
        if depth == 0:
            for base in reversed(self.mro(cls)):
                self.class_attributes(base)
        params: dict[str, Any] = dict(self.source.constants.get(file, {}))
        names = [a.arg for a in init.args.args[1:]]
        defaults = init.args.defaults
        for name, default in zip(names[len(names) - len(defaults) :], defaults, strict=True):
            params[name] = literal(default)
        for arg, kw_default in zip(init.args.kwonlyargs, init.args.kw_defaults, strict=True):
            params[arg.arg] = literal(kw_default) if kw_default is not None else UNKNOWN
        params.update(zip(names, kwargs.get("__args__", []), strict=False))
        given = {k: v for k, v in kwargs.items() if k != "__args__"}
        params.update({k: v for k, v in given.items() if k in names or init.args.kwarg is None})
        if init.args.kwarg is not None:
            params[init.args.kwarg.arg] = {
                "__kwargs__": {k: v for k, v in given.items() if k not in names}
            }
        self.run(init.body, params, owner, depth)

    def run(self, body: list[ast.stmt], params: dict[str, Any], owner: str, depth: int) -> None:
        for stmt in body:
            if isinstance(stmt, ast.Assign):
                value = self.value(stmt.value, params)
                for target in stmt.targets:
                    if is_self_attr(target):
                        self.attrs[target.attr] = value
                    elif isinstance(target, ast.Name):
                        params[target.id] = value  # a local variable
            elif isinstance(stmt, ast.If):
                test = self.value(stmt.test, params)
                if isinstance(test, ast.AST):
                    test = UNKNOWN
                if test is UNKNOWN:
                    self.forget(stmt)
                elif test:
                    self.run(stmt.body, params, owner, depth)
                else:
                    self.run(stmt.orelse, params, owner, depth)
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                self.base_init(stmt.value, params, owner, depth)

    def class_attributes(self, klass: ast.ClassDef) -> None:
        for node in klass.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                name, value = getattr(node.targets[0], "id", None), literal(node.value)
                if name and value is not UNKNOWN:
                    self.attrs[name] = value

    def forget(self, branch: ast.If) -> None:
        """An `if` whose test is unknown: what either side assigns becomes unknown, never the
        value from before the branch."""
        for node in ast.walk(branch):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if is_self_attr(target):
                        self.attrs[target.attr] = UNKNOWN

    def base_init(self, call: ast.Call, params: dict[str, Any], owner: str, depth: int) -> None:
        """`Base.__init__(self, x=...)` or `super().__init__(x=...)` runs that base's
        `__init__` with those arguments."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "__init__"):
            return
        if isinstance(func.value, ast.Name) and func.value.id in self.source.classes:
            base, args = func.value.id, call.args[1:]
        elif isinstance(func.value, ast.Call) and getattr(func.value.func, "id", None) == "super":
            bases = self.source.classes[owner][0].bases
            base = next((b.id for b in bases if isinstance(b, ast.Name)), "")
            args = call.args
        else:
            return
        values = [self.value(a, params) for a in args]
        kwargs = {k.arg: self.value(k.value, params) for k in call.keywords if k.arg}
        self.construct(base, {"__args__": values, **kwargs}, depth + 1)

    def value(self, node: ast.AST, params: dict[str, Any]) -> Any:
        if isinstance(node, ast.Name) and node.id in params:
            return params[node.id]
        if is_self_attr(node):
            return self.attrs.get(node.attr, UNKNOWN)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return {"__class__": node.func.id}
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = self.value(node.func.value, params)
            if isinstance(owner, dict) and "__kwargs__" in owner and node.func.attr == "get":
                key = self.value(node.args[0], params) if node.args else UNKNOWN
                default = self.value(node.args[1], params) if len(node.args) > 1 else None
                return owner["__kwargs__"].get(key, default)
            return self.string_method(node, params)
        if isinstance(node, ast.NamedExpr):
            value = self.value(node.value, params)
            params[node.target.id] = value
            return value
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, right = self.value(node.left, params), self.value(node.comparators[0], params)
            op = node.ops[0]
            if left is UNKNOWN or right is UNKNOWN or not isinstance(op, _COMPARISONS):
                return UNKNOWN
            same = left is right if isinstance(op, ast.Is | ast.IsNot) else left == right
            return same is isinstance(op, ast.Eq | ast.Is)
        if isinstance(node, ast.List | ast.Tuple):
            items = [self.value(e, params) for e in node.elts]
            return UNKNOWN if any(i is UNKNOWN for i in items) else items
        if isinstance(node, ast.JoinedStr):
            return self.fstring(node, params)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.value(node.left, params), self.value(node.right, params)
            both = isinstance(left, str) and isinstance(right, str)
            return left + right if both else UNKNOWN
        if isinstance(node, ast.IfExp):
            test = self.value(node.test, params)
            if isinstance(test, bool):
                return self.value(node.body if test else node.orelse, params)
            return UNKNOWN
        if isinstance(node, ast.Attribute) and node.attr == "namespace":
            owner = self.value(node.value, params)
            if isinstance(owner, dict) and owner.get("__class__") in self.source.namespaces:
                return self.source.namespaces[owner["__class__"]]
            return UNKNOWN
        return literal(node)

    def string_method(self, node: ast.Call, params: dict[str, Any]) -> Any:
        """`", ".join([...])`, `.strip()`, `.lower()`, `.upper()` of known strings."""
        assert isinstance(node.func, ast.Attribute)
        owner = self.value(node.func.value, params)
        args = [self.value(a, params) for a in node.args]
        if not isinstance(owner, str) or node.keywords:
            return UNKNOWN
        name = node.func.attr
        if name == "join" and len(args) == 1 and isinstance(args[0], list):
            items = args[0]
            return owner.join(items) if all(isinstance(i, str) for i in items) else UNKNOWN
        if name in {"strip", "lower", "upper"} and not args:
            return getattr(owner, name)()
        return UNKNOWN

    def fstring(self, node: ast.JoinedStr, params: dict[str, Any]) -> Any:
        parts = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                parts.append(str(part.value))
                continue
            if not isinstance(part, ast.FormattedValue) or part.format_spec is not None:
                return UNKNOWN
            value = self.value(part.value, params)
            if value is UNKNOWN or isinstance(value, dict):
                return UNKNOWN
            parts.append(repr(value) if part.conversion == ord("r") else str(value))
        return "".join(parts)


def is_self_attr(node: ast.AST) -> TypeGuard[ast.Attribute]:
    """Whether `node` is an attribute of `self` (`self.x`)."""
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def _problem(
    pid: str, cls: str, kwargs: dict[str, Any], source: PythonSource, root: Path | None
) -> dict[str, Any]:
    reader = LiteralReader(source)
    reader.construct(cls, kwargs)
    task = next(
        (
            TASK_BASES[b.id]
            for klass in reader.mro(cls)
            for b in klass.bases
            if isinstance(b, ast.Name) and b.id in TASK_BASES
        ),
        None,
    )
    file = source.classes[cls][1]
    problem: dict[str, Any] = {
        "problem_id": pid,
        "task_type": task,
        "class": cls,
        "source_file": str(file.relative_to(root)) if root else file.name,
    }
    app = reader.attrs.get("app")
    if isinstance(app, dict):
        name = app["__class__"]
        namespace = source.namespaces.get(name)
        problem["application"] = f"{name} (namespace {namespace})" if namespace else name
    component = next(
        (reader.attrs[a] for a in COMPONENT_ATTRS if _known(reader.attrs.get(a, UNKNOWN))), None
    )
    if component is not None and component not in PLACEHOLDERS:
        problem["faulty_component"] = component
    problem.update(_injection(reader, cls))
    problem.update(_expected(reader, cls, task))
    return problem


def _known(value: Any) -> bool:
    return isinstance(value, str) or (
        isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)
    )


def _injection(reader: LiteralReader, cls: str) -> dict[str, Any]:
    """`fault_type` of the `_inject(...)` call and the injector class that makes it."""
    out: dict[str, Any] = {}
    inject = reader.method("inject_fault", cls)
    for node in ast.walk(inject) if inject else []:
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None) or ""
        if name.endswith("Injector"):
            out["injector"] = name
        elif name == "_inject":
            value = next(
                (reader.value(k.value, {}) for k in node.keywords if k.arg == "fault_type"), None
            )
            if isinstance(value, str):
                out["fault_type"] = value
        elif name == "inject_fault" and node.args and isinstance(literal(node.args[0]), str):
            out["fault_type"] = literal(node.args[0])  # an otel feature flag: `"adFailure"`
        elif name.startswith("inject_") and "fault_type" not in out:
            out["fault_type"] = name.removeprefix("inject_")  # `inject_container_kill(...)`
    stored = [v["__class__"] for v in reader.attrs.values() if isinstance(v, dict)]
    injectors = [c for c in stored if c.endswith("Injector")]
    if "injector" not in out and injectors:
        out["injector"] = injectors[0]
    return out


def _expected(reader: LiteralReader, cls: str, task: str | None) -> dict[str, Any]:
    """The answer `eval` hard-codes: detection Yes/No, analysis system level and fault type."""
    evaluate = reader.method("eval", cls)
    if evaluate is None:
        return {}
    out: dict[str, Any] = {}
    for node in ast.walk(evaluate):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = getattr(node.targets[0], "id", ""), literal(node.value)
            key = _EXPECTED_VARIABLES.get((task or "", target))
            if isinstance(value, str) and key:
                out[key] = value
        if task == "analysis" and isinstance(node, ast.Call) and len(node.args) == 2:
            asked, expected = node.args
            key = _get_key(asked)
            value = literal(expected)
            if key in {"system_level", "fault_type"} and isinstance(value, str):
                out[f"expected_{key}"] = value
    return out


def _get_key(node: ast.AST) -> str | None:
    """`soln.get("system_level", "")` -> `system_level`."""
    if (
        isinstance(node, ast.Call)
        and getattr(node.func, "attr", None) == "get"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    ):
        return str(node.args[0].value)
    return None


# ---------------------------------------------------------------- application namespaces


def app_namespaces(root: Path, package: str = "aiopslab") -> dict[str, str]:
    """Application class -> namespace, from `super().__init__(X_METADATA)` in
    `<package>/service/apps/*.py`, `X_METADATA = ... / "name.json"` in `<package>/paths.py`, and
    that JSON's `Namespace` (AIOpsLab and SREGym, which forked it, share this layout)."""
    paths, apps = root / package / "paths.py", root / package / "service" / "apps"
    if not paths.is_file() or not apps.is_dir():
        return {}
    files: dict[str, str] = {}
    for node in parse_module(paths).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            leaf = node.value
            while isinstance(leaf, ast.BinOp):
                leaf = leaf.right
            if isinstance(leaf, ast.Constant) and str(leaf.value).endswith(".json"):
                files[node.targets[0].id] = str(leaf.value)
    out = {}
    for file in input_files(apps, lambda p: p.suffix == ".py", recursive=False):
        for cls in (n for n in parse_module(file).body if isinstance(n, ast.ClassDef)):
            namespace = _namespace_of(cls, files, root / package)
            if namespace:
                out[cls.name] = namespace
    return out


def _namespace_of(cls: ast.ClassDef, files: dict[str, str], root: Path) -> str | None:
    for node in ast.walk(cls):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", None) == "__init__"
            and node.args
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in files
        ):
            metadata = root / "service" / "metadata" / files[node.args[0].id]
            try:
                data = json.loads(read_text(metadata)) if metadata.is_file() else {}
            except (InputError, ValueError):
                return None
            namespace = data.get("Namespace") if isinstance(data, dict) else None
            return str(namespace) if namespace else None
    return None
