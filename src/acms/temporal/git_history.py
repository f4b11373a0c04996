"""``acms index --history N``: the last N commits as ``uko:Change`` nodes, and the versions they ended.

One ``git log -p -U0`` for all commits and one ``git cat-file --batch`` for every file version needed,
so a thousand commits cost two subprocesses. A commit touches the files of its diff and the symbols
whose line ranges its hunks hit (the new side mapped onto the commit's version of the file, the old
side onto its parent's). For the innermost touched symbols that existed before the commit, the parent's
body goes to cold as a ``uko:Version`` invalidated by the commit, chained to the next version. Module
bodies are not archived (a module spans its file; git already keeps that). Already ingested commits
are skipped; a plain directory has no history, with a note.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from pyoxigraph import NamedNode, Quad

from acms.errors import GitError
from acms.ingest.emit import int_lit, lit, sha256, time_lit
from acms.ingest.spans import Span, has_spans, spans_for
from acms.privacy.names import redact_path
from acms.sparql import catalog
from acms.store.protocol import GraphStore
from acms.temporal.versions import Update
from acms.validation.batch import validate_batch
from acms.vocab import PROV, RDF, TIER_COLD, UKO, IriMinter

GIT_TIMEOUT = 600
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_SEP = "\x00\x00"
MAX_LINES_PER_FILE = 5000  # a mass rewrite touches everything anyway; cap the line-by-line mapping


@dataclass
class FileDiff:
    old_path: str | None  # None: added
    new_path: str | None  # None: deleted
    old_lines: list[tuple[int, int]] = field(default_factory=list)  # inclusive ranges
    new_lines: list[tuple[int, int]] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""


@dataclass
class Commit:
    hash: str
    parents: list[str]
    author: str
    time: str
    message: str
    files: list[FileDiff] = field(default_factory=list)


@dataclass
class HistoryReport:
    available: bool
    note: str = ""
    commits_listed: int = 0
    commits_ingested: int = 0
    commits_known: int = 0
    versions: int = 0
    touches: int = 0
    triples: int = 0

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def _git(root: Path, *args: str, input_bytes: bytes | None = None) -> bytes:
    try:
        out = subprocess.run(["git", "-c", "core.quotepath=off", "-C", str(root), *args], input=input_bytes,
                             capture_output=True, timeout=GIT_TIMEOUT)
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took longer than {GIT_TIMEOUT} s") from None
    if out.returncode != 0:
        raise GitError(f"git {args[0]} failed: {out.stderr.decode(errors='replace').strip()}")
    return out.stdout


def is_git_checkout(root: Path) -> bool:
    try:
        return _git(root, "rev-parse", "--is-inside-work-tree").strip() == b"true"
    except GitError:
        return False


def recent_hashes(root: Path, n: int) -> list[str]:
    """The last ``n`` commits that touched the project folder, newest first (empty for a new repo)."""
    try:
        return _git(root, "rev-list", f"--max-count={n}", "HEAD", "--", ".").decode().split()
    except GitError as exc:
        if "unknown revision" in exc.message or "bad revision" in exc.message or "ambiguous argument" in exc.message:
            return []
        raise


def read_log(root: Path, n: int) -> list[Commit]:
    """Parse ``git log -p -U0`` of the last ``n`` commits, oldest first."""
    fmt = "%x00%x00%H%x1f%P%x1f%an%x1f%aI%x1f%B%x00"
    raw = _git(root, "log", f"--max-count={n}", f"--format={fmt}", "-p", "-U0", "-M", "--no-color",
               "--no-ext-diff", "--relative", "HEAD", "--", ".")
    text = raw.decode("utf-8", errors="replace")
    commits = [c for c in (_parse_commit(chunk) for chunk in text.split(_SEP) if chunk.strip()) if c]
    return list(reversed(commits))


def _parse_commit(chunk: str) -> Commit | None:
    head, _, patch = chunk.partition("\x00")
    parts = head.split("\x1f")
    if len(parts) < 5:
        return None
    commit = Commit(parts[0].strip(), parts[1].split(), parts[2], parts[3], parts[4].strip() or "(no message)")
    commit.files = list(_parse_patch(patch))
    return commit


def _strip(p: str) -> str:
    p = p.strip()
    if p.startswith('"') and p.endswith('"'):
        # git's C-style quoting: octal escapes of UTF-8 bytes
        raw = p[1:-1].encode("utf-8").decode("unicode_escape", errors="ignore")
        p = raw.encode("latin-1", errors="ignore").decode("utf-8", errors="replace")
    return p


def _header_paths(rest: str) -> tuple[str, str]:
    """``a/X b/Y`` -> (X, Y); when X == Y the split is unambiguous even with spaces in the path."""
    rest = rest.strip()
    if rest.startswith('"'):
        parts = re.findall(r'"((?:[^"\\]|\\.)*)"|(\S+)', rest)
        names = [_strip(f'"{q}"') if q else u for q, u in parts][:2]
        if len(names) == 2:
            return names[0].removeprefix("a/"), names[1].removeprefix("b/")
    half = (len(rest) - 1) // 2
    if rest[half] == " " and rest[2:half] == rest[half + 3 :]:
        return rest[2:half], rest[half + 3 :]
    a, _, b = rest.partition(" b/")
    return a.removeprefix("a/"), b


def _parse_patch(patch: str) -> Iterator[FileDiff]:
    current: FileDiff | None = None
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            if current:
                yield current
            old, new = _header_paths(line[len("diff --git "):])
            current = FileDiff(old_path=old, new_path=new)  # empty files have no ---/+++ lines
        elif current is None:
            continue
        elif line.startswith("--- "):
            src = _strip(line[4:])
            current.old_path = None if src == "/dev/null" else src.removeprefix("a/")
        elif line.startswith("+++ "):
            dst = _strip(line[4:])
            current.new_path = None if dst == "/dev/null" else dst.removeprefix("b/")
        elif line.startswith("rename from "):
            current.old_path = _strip(line[len("rename from "):])
        elif line.startswith("rename to "):
            current.new_path = _strip(line[len("rename to "):])
        elif line.startswith("new file mode"):
            current.old_path = None
        elif line.startswith("deleted file mode"):
            current.new_path = None
        elif line.startswith("@@"):
            m = _HUNK.match(line)
            if m:
                a, b = int(m.group(1)), int(m.group(2) or "1")
                c, d = int(m.group(3)), int(m.group(4) or "1")
                if b:
                    current.old_lines.append((a, a + b - 1))
                if d:
                    current.new_lines.append((c, c + d - 1))
    if current:
        yield current


def read_blobs(root: Path, names: list[str]) -> dict[str, str | None]:
    """``rev:path`` -> text (None when missing or binary), in one ``git cat-file --batch``."""
    if not names:
        return {}
    raw = _git(root, "cat-file", "--batch", input_bytes=("\n".join(names) + "\n").encode())
    out: dict[str, str | None] = {}
    pos = 0
    for name in names:
        end = raw.index(b"\n", pos)
        header = raw[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] != b"blob":
            out[name] = None
            continue
        size = int(header[2])
        body = raw[pos : pos + size]
        pos += size + 1
        try:
            out[name] = None if b"\x00" in body[:8000] else body.decode("utf-8")
        except UnicodeDecodeError:
            out[name] = None
    return out


def _symbols(path: str, text: str, known_paths: set[str]) -> list[Span]:
    """Classes, functions and methods (not the module: it spans the file, and git keeps files), in
    any language acms extracts symbols from."""
    return spans_for(path, text, known_paths)


def _hit(symbols: list[Span], ranges: list[tuple[int, int]], text: list[str]) -> tuple[set[Span], set[Span]]:
    """(every symbol whose range a changed line falls in, the innermost such symbol per line).

    Blank lines are skipped: deleting a method takes the blank line before it, which belongs to the
    class around it only, and would otherwise count as a change of the class."""
    touched: set[Span] = set()
    innermost: set[Span] = set()
    budget = MAX_LINES_PER_FILE
    for a, b in ranges:
        for line in range(a, b + 1):
            budget -= 1
            if budget < 0:
                return touched, innermost
            if 0 < line <= len(text) and not text[line - 1].strip():
                continue
            hits = [s for s in symbols if s.start <= line <= s.end]
            if hits:
                touched.update(hits)
                innermost.add(min(hits, key=lambda s: (s.end - s.start, s.start)))
    return touched, innermost


def ingest(store: GraphStore, root: Path, minter: IriMinter, n: int,
           progress: Callable[[str, int, int], None] | None = None, *, keep_secrets: bool = False) -> HistoryReport:
    """Ingest the last ``n`` commits not yet in the store: one validated transaction."""
    if not is_git_checkout(root):
        return HistoryReport(False, "not a git checkout: no history ingested")
    hashes = recent_hashes(root, n)
    known = {r["hash"].value for r in store.select(catalog.text("history/known-commits"))}
    report = HistoryReport(True, commits_listed=len(hashes), commits_known=sum(h in known for h in hashes))
    if not hashes:
        report.note = "the repository has no commits yet"
        return report
    if all(h in known for h in hashes):
        report.note = "no new commits"
        return report
    commits = [c for c in read_log(root, n) if c.hash not in known]
    prefix = _git(root, "rev-parse", "--show-prefix").decode().strip()
    known_paths = {r["path"].value for r in store.select(catalog.text("ingest/stored-files"))}
    if not keep_secrets:  # old bodies and messages are stored too: no secret in them either
        from acms.privacy import scrub

        commits = [replace(c, message=scrub(c.message).text) for c in commits]
    quads, updates = _build(root, prefix, commits, minter, store, known_paths, report, progress,
                            keep_secrets=keep_secrets)
    if quads:
        validate_batch(store, quads)
        store.replace(updates, quads)
        store.flush()
    report.commits_ingested = len(commits)
    report.triples = len(quads)
    return report


def blob_names(commits: list[Commit], prefix: str = "") -> list[str]:
    """``rev:path`` of every code file version the commits' hunks are mapped onto (after, and before)."""
    names: list[str] = []
    for c in commits:
        for f in c.files:
            if f.new_path and has_spans(f.new_path):
                names.append(f"{c.hash}:{prefix}{f.new_path}")
            if f.old_path and has_spans(f.old_path) and c.parents:
                names.append(f"{c.parents[0]}:{prefix}{f.old_path}")
    return list(dict.fromkeys(names))


def _redacted_blob(name: str, prefix: str) -> str:
    """``rev:prefix+path`` with the path's secret-looking names redacted (``symbols`` looks blobs up so)."""
    rev, _, full = name.partition(":")
    return f"{rev}:{prefix}{redact_path(full[len(prefix):])}" if full.startswith(prefix) else name


def _build(root: Path, prefix: str, commits: list[Commit], minter: IriMinter, store: GraphStore,
           known_paths: set[str], report: HistoryReport,
           progress: Callable[[str, int, int], None] | None = None, *,
           keep_secrets: bool = False) -> tuple[list[Quad], list[Update]]:
    blobs = read_blobs(root, blob_names(commits, prefix))
    if not keep_secrets:
        from acms.privacy import scrub

        blobs = {name: None if text is None else scrub(text, name.partition(":")[2]).text for name, text in blobs.items()}
    # secret-looking file names as the listing shows them (redacted); the blobs were read by the real ones
    blobs = {_redacted_blob(name, prefix): text for name, text in blobs.items()}
    commits = [replace(c, files=[replace(f, old_path=f.old_path and redact_path(f.old_path),
                                         new_path=f.new_path and redact_path(f.new_path)) for f in c.files])
               for c in commits]
    parsed: dict[tuple[str, str], list[Span]] = {}

    def symbols(rev: str, path: str) -> tuple[list[Span], list[str]]:
        text = blobs.get(f"{rev}:{prefix}{path}")
        if text is None:
            return [], []
        key = (path, sha256(text))
        if key not in parsed:
            parsed[key] = _symbols(path, text, known_paths)
        return parsed[key], text.splitlines()

    g = TIER_COLD
    q: list[Quad] = []
    last_version: dict[NamedNode, tuple[NamedNode, str]] = {}  # entity -> (latest version, its end time)
    for i, c in enumerate(commits):
        if progress:
            progress("history", i + 1, len(commits))
        change = minter.change(c.hash)
        q += [Quad(change, RDF.type, UKO.Change, g), Quad(change, UKO.commitHash, lit(c.hash), g),
              Quad(change, UKO.message, lit(c.message), g), Quad(change, UKO.authorName, lit(c.author), g),
              Quad(change, PROV.endedAtTime, time_lit(c.time), g)]
        q += [Quad(change, PROV.wasInformedBy, minter.change(p), g) for p in c.parents]
        touched: set[NamedNode] = set()
        for f in c.files:
            for p in {f.old_path, f.new_path} - {None}:
                touched.add(minter.file(p))  # type: ignore[arg-type]
            if not has_spans(f.path):
                continue
            new_syms, new_text = symbols(c.hash, f.new_path) if f.new_path else ([], [])
            old_syms, old_text = symbols(c.parents[0], f.old_path) if f.old_path and c.parents else ([], [])
            t_new, in_new = _hit(new_syms, f.new_lines, new_text)
            t_old, in_old = _hit(old_syms, f.old_lines, old_text)
            touched |= {minter.code(f.new_path, s.qualname) for s in t_new}  # type: ignore[arg-type]
            touched |= {minter.code(f.old_path, s.qualname) for s in t_old}  # type: ignore[arg-type]
            before = {s.qualname: s for s in old_syms}
            ended = {s.qualname for s in in_old} | {s.qualname for s in in_new if s.qualname in before}
            for qn in sorted(ended):
                sym = before[qn]
                entity = minter.code(f.old_path, qn)  # type: ignore[arg-type]
                q += _version(entity, sym, f.old_path, old_text, c, change, last_version, g)  # type: ignore[arg-type]
                report.versions += 1
        q += [Quad(change, UKO.touches, t, g) for t in sorted(touched, key=lambda n: n.value)]
        report.touches += len(touched)
    updates = _link_to_present(store, last_version, first_versions(q), q)
    return list(dict.fromkeys(q)), updates


def first_versions(quads: list[Quad]) -> dict[NamedNode, NamedNode]:
    """entity -> its earliest version in this batch (the one with no wasRevisionOf inside the batch)."""
    revised = {q.subject for q in quads if q.predicate == PROV.wasRevisionOf}
    out: dict[NamedNode, NamedNode] = {}
    for q in quads:
        if q.predicate == PROV.specializationOf and q.subject not in revised:
            out[q.object] = q.subject  # type: ignore[index]
    return out


def _version(entity: NamedNode, sym: Span, path: str, lines: list[str], c: Commit, change: NamedNode,
             last: dict[NamedNode, tuple[NamedNode, str]], g: NamedNode) -> list[Quad]:
    v = NamedNode(f"{entity.value}/v/git-{c.hash[:12]}")
    body = "\n".join(lines[sym.start - 1 : sym.end])
    digest = sha256(body)
    fr = NamedNode(f"{v.value}/micro/{digest[:16]}")
    ref = f"{path}:{sym.start}-{sym.end}"
    out = [
        Quad(v, RDF.type, UKO.Version, g), Quad(v, PROV.specializationOf, entity, g),
        Quad(v, UKO.entityKind, UKO[sym.kind], g), Quad(v, UKO.path, lit(path), g),
        Quad(v, UKO.sourceRef, lit(ref), g), Quad(v, UKO.name, lit(sym.name), g),
        Quad(v, UKO.qualifiedName, lit(sym.qualname), g), Quad(v, UKO.startLine, int_lit(sym.start), g),
        Quad(v, UKO.endLine, int_lit(sym.end), g), Quad(v, PROV.invalidatedAtTime, time_lit(c.time), g),
        Quad(v, PROV.wasInvalidatedBy, change, g), Quad(v, UKO.hasFragment, fr, g),
        Quad(fr, RDF.type, UKO.Fragment, g), Quad(fr, UKO.text, lit(body), g),
        Quad(fr, UKO.startLine, int_lit(sym.start), g), Quad(fr, UKO.endLine, int_lit(max(sym.start, sym.end)), g),
        Quad(fr, UKO.lod, lit("micro"), g),
    ]
    previous = last.get(entity)
    if previous is not None:  # the version the previous commit ended was followed by this one
        prev_v, prev_end = previous
        out += [Quad(prev_v, UKO.supersededBy, v, g), Quad(v, PROV.wasRevisionOf, prev_v, g),
                Quad(v, PROV.generatedAtTime, time_lit(prev_end), g)]
    last[entity] = (v, c.time)
    return out


def _link_to_present(store: GraphStore, last: dict[NamedNode, tuple[NamedNode, str]],
                     first: dict[NamedNode, NamedNode], quads: list[Quad]) -> list[Update]:
    """The newest version of each entity is superseded by the entity while it exists; a version already
    stored as superseded by the entity is now superseded by this batch's first version."""
    if not last:
        return []
    entities = sorted(last, key=lambda n: n.value)
    current = {r["e"] for r in store.select(catalog.text("history/current-entities"), {"e": entities})}
    for e in entities:
        if e in current:
            quads.append(Quad(last[e][0], UKO.supersededBy, e, TIER_COLD))
    prior = store.select(catalog.text("history/superseded-by-entity"), {"e": entities})
    updates: list[Update] = []
    olds = []
    for r in prior:
        old, e = r["v"], r["e"]
        if e in first and old != first[e]:
            quads += [Quad(old, UKO.supersededBy, first[e], TIER_COLD),  # type: ignore[arg-type]
                      Quad(first[e], PROV.wasRevisionOf, old, TIER_COLD)]  # type: ignore[arg-type]
            olds.append(old)
    if olds:
        updates.append((catalog.text("history/unlink-versions.ru"), {"v": olds}))
    return updates

