"""The bot's YAML file, read strictly: a key written twice is refused, and a file that does not
parse is reported as ``file:line:column: problem`` (a tab indenting a line said in plain words,
not as PyYAML's scanner states it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


class ConfigError(ValueError):
    """A configuration that does not load, with the ``log_format`` the YAML asks for (``json``,
    ``text``; None when it does not say) so that the line saying so can be written in it."""

    def __init__(self, message: str, log_format: str | None = None) -> None:
        super().__init__(message)
        self.log_format = log_format


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key written twice in one mapping (PyYAML keeps the last
    silently: a second ``slack:`` section would drop the first one's allow-list)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                continue  # ``<<: *base`` merges; a list or mapping as a key: the loader's error says it
            key = self.construct_object(key_node)  # type: ignore[no-untyped-call]
            line = key_node.start_mark.line + 1
            if key in seen:
                raise ConfigError(f"'{key}' is set twice (lines {seen[key]} and {line}): keep one")
            seen[key] = line
        return super().construct_mapping(node, deep)


def read_yaml(path: str | Path) -> dict[str, Any]:
    """The bot's YAML file as a mapping (empty when the file is)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        loaded = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from exc
    except yaml.MarkedYAMLError as exc:
        raise ConfigError(yaml_problem(path, text, exc)) from exc
    except yaml.YAMLError as exc:  # unmarked (a reader's encoding error): PyYAML's own words
        raise ConfigError(f"config file {path} is not valid YAML: {exc}") from exc
    except ConfigError as exc:
        raise ConfigError(f"config file {path}: {exc}") from None
    if loaded is not None and not isinstance(loaded, dict):
        raise ConfigError(f"config file {path} must be a mapping of settings, not {type(loaded).__name__}")
    return loaded or {}


def yaml_problem(path: str | Path, text: str, exc: yaml.MarkedYAMLError) -> str:
    """``config file <path>:<line>:<column>: not valid YAML: <problem>`` (1-based, as editors
    count), with what the parser was reading and where it started when that is elsewhere."""
    mark = exc.problem_mark or exc.context_mark
    where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
    problem = exc.problem or exc.context or "cannot be parsed"
    if mark is not None and "'\\t'" in problem:
        return f"config file {where}: not valid YAML: {_tab_problem(text, mark)}"
    said = f"config file {where}: not valid YAML: {problem}"
    started = exc.context_mark
    if exc.context and started is not None and (mark is None or started.line != mark.line):
        said += f" ({exc.context}, from line {started.line + 1} column {started.column + 1})"
    return said


def _tab_problem(text: str, mark: Any) -> str:
    """A tab where YAML wants spaces, said plainly: indentation, or between a key and its value."""
    lines = text.splitlines()
    before = lines[mark.line][: mark.column] if mark.line < len(lines) else ""
    if not before.strip():
        return "a tab indents this line; YAML does not allow tabs for indentation: indent with spaces"
    return "a tab separates the text here; YAML does not allow tabs there: use spaces"
