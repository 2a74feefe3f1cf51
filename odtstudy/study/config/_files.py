"""Where study files are found by name (the built-in folder and the folders
given to :func:`add_config_dir`) and how one is read."""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "add_config_dir",
    "config_dirs",
    "list_studies",
    "read_toml",
    "remove_config_dir",
    "study_file",
]

_EXTRA_DIRS: list = []


def add_config_dir(folder) -> None:
    """Also find studies by name in ``folder`` (searched after the built-in ones).

    A study ``<name>`` there is the file ``<name>.toml`` or ``<name>/study.toml``.
    A higher layer registers its own studies this way (the reproductions do).

    Parameters
    ----------
    folder : path or importlib.resources.abc.Traversable
    """
    folder = Path(folder) if isinstance(folder, str) else folder
    if folder not in _EXTRA_DIRS:
        _EXTRA_DIRS.append(folder)


def remove_config_dir(folder) -> None:
    """Undo :func:`add_config_dir` (nothing happens for a folder not added)."""
    folder = Path(folder) if isinstance(folder, str) else folder
    if folder in _EXTRA_DIRS:
        _EXTRA_DIRS.remove(folder)


def config_dirs() -> list:
    """The folders searched for a study by name, in order: the built-in studies
    of ``odtstudy/study/configs``, then those given to :func:`add_config_dir`."""
    return [resources.files("odtstudy.study").joinpath("configs"), *_EXTRA_DIRS]


def _files_in(folder) -> dict:
    """Study name -> file of the studies in one folder."""
    files = {}
    for entry in folder.iterdir():
        if entry.name.endswith(".toml") and entry.is_file():
            files[entry.name[: -len(".toml")]] = entry
        elif entry.is_dir() and entry.joinpath("study.toml").is_file():
            files[entry.name] = entry.joinpath("study.toml")
    return files


def study_file(name: str):
    """The file of the study ``name`` (the first folder of :func:`config_dirs`
    that holds it), or None when no folder does."""
    for folder in config_dirs():
        found = _files_in(folder).get(name)
        if found is not None:
            return found
    return None


def list_studies() -> list:
    """Names of the studies found by name (see :func:`config_dirs`)."""
    return sorted({name for folder in config_dirs() for name in _files_in(folder)})


def _decoded(data: bytes, origin: str) -> str:
    """A TOML file's text: UTF-8, as TOML requires (a leading byte-order mark
    is dropped)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{origin} is not UTF-8 text (byte {exc.start} is "
            f"{data[exc.start : exc.start + 1]!r}): TOML files are UTF-8; "
            "save it as UTF-8"
        ) from None


def read_toml(name_or_path) -> tuple[dict, str, str, Path]:
    """The parsed file, how messages name it, its default study name and the
    folder its relative paths start from."""
    path = Path(str(name_or_path))
    if path.suffix == ".toml":
        if not path.is_file():
            raise ValueError(f"study config {path} does not exist")
        origin = f"study config {path}"
        text = _decoded(path.read_bytes(), origin)
        folder = path.resolve().parent
    else:
        resource = study_file(str(name_or_path))
        if resource is None:
            raise KeyError(
                f"unknown study {name_or_path!r}; built-in studies: "
                f"{list_studies()} (or pass a path to a .toml file)"
            )
        text, origin = resource.read_text(), f"study config {resource}"
        folder = Path(str(resource)).parent
    try:
        return tomllib.loads(text), origin, path.stem, folder
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"malformed {origin}: {exc}") from None
