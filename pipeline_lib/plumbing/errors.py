"""The config's one error type, and how a list of problems becomes one."""
from __future__ import annotations


class ConfigError(ValueError):
    """An invalid configuration; the message names the key path and what is allowed."""


def fail(problems: list[str]) -> None:
    if problems:
        raise ConfigError("invalid config:\n  - " + "\n  - ".join(dict.fromkeys(problems)))
