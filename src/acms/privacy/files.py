"""What kind of file a path is: which rules can fire on a line depends on it."""

from __future__ import annotations

from functools import lru_cache
from pathlib import PurePosixPath


_CODE_EXT = frozenset(
    "py pyi pyw js jsx mjs cjs ts tsx go java kt kts scala rb rs c h cc cpp hpp cs php swift m mm"
    " lua pl pm r jl dart ex exs erl clj groovy vue svelte".split()
)
_CONFIG_EXT = frozenset(
    "json json5 jsonc yaml yml toml ini cfg conf cnf properties tfvars tf hcl xml plist env"
    " npmrc pypirc netrc pgpass gitconfig".split()
)
_SHELL_EXT = frozenset("sh bash zsh fish ksh ps1 psm1 bat cmd".split())
_DOC_EXT = frozenset("md markdown rst txt adoc org".split())
_CONFIG_NAMES = frozenset(
    "dockerfile containerfile credentials config .npmrc .yarnrc .pypirc .netrc .pgpass .envrc"
    " .gitconfig .git-credentials .dockercfg makefile procfile".split()
)


def _file_class(path: str) -> str:
    """``code``, ``config``, ``shell``, ``doc`` or ``any``: code files get no unquoted-value rules
    (there ``password = pw`` names a variable), everything else does."""
    return _class_of_name(PurePosixPath(path.replace("\\", "/")).name.lower())


@lru_cache(maxsize=4096)
def _class_of_name(name: str) -> str:
    """By file name, not path: a server indexing many projects sees each name once (a cache by path
    grew with every file it was ever given)."""
    if not name:
        return "any"
    if name.startswith(".env") or name.endswith(".env") or name in _CONFIG_NAMES:
        return "config"
    ext = name.rsplit(".", 1)[-1] if "." in name else ""
    if ext in _CODE_EXT:
        return "code"
    if ext in _CONFIG_EXT or name.endswith((".env.example", ".env.sample")):
        return "config"
    if ext in _SHELL_EXT:
        return "shell"
    if ext in _DOC_EXT:
        return "doc"
    return "any"


_LOCK_FILES = frozenset({"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock",
                         "pipfile.lock", "cargo.lock", "gemfile.lock", "composer.lock",
                         "packages.lock.json", "go.sum", "uv.lock", "bun.lock"})
