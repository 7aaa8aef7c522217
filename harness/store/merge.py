"""``merge DIR... --into DIR``: results from many machines into one folder.

A result is copied byte for byte where it would have been stored; one already there (same id and
content) is counted once; a file that cannot be used, or whose id is taken by other content, is left
out with one line saying why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import HarnessError, UsageError
from harness.store.files import DocumentProblem, parse_document, read_bounded
from harness.store.results import StoredResult, content_hash, create_file, load_results, result_path


@dataclass
class Merged:
    copied: list[Path] = field(default_factory=list)
    duplicates: int = 0
    problems: list[str] = field(default_factory=list)


def merge(sources: Sequence[Path], into: Path) -> Merged:
    for folder in sources:
        if not folder.is_dir():
            raise UsageError(f"results folder not found: {folder}")
    if into.exists() and not into.is_dir():
        raise UsageError(f"{into} is a file, not a results folder")
    merged = Merged()
    found = load_results(into)[0] if into.is_dir() else []
    # id → (content hash, path in the merged folder)
    present = {r.result.id: (r.content_hash, r.path) for r in found}
    for folder in sources:
        results, problems = load_results(folder)
        merged.problems += [str(p) for p in problems]
        for result in results:
            _take(result, into, present, merged)
    return merged


def _text(path: Path, digest: str, *, follow_links: bool = True) -> str | None:
    """The result file's text within the loader's bounds; None unless it hashes to ``digest``."""
    try:
        data = read_bounded(path, follow_links=follow_links)
        same = content_hash(parse_document(data)) == digest
    except (OSError, DocumentProblem):
        return None
    return data.decode() if same else None


def _take(
    result: StoredResult, into: Path, present: dict[str, tuple[str, Path]], merged: Merged
) -> None:
    identity, digest = result.result.id, result.content_hash
    if identity in present:
        known, where = present[identity]
        if known == digest:
            merged.duplicates += 1
        else:
            merged.problems.append(
                f"{result.path}: id {identity} is already in {where} with other content"
            )
        return
    target = result_path(into, result.result)
    text = _text(result.path, digest)
    if text is None:
        merged.problems.append(
            f"{result.path}: changed while merging (or is no longer a regular file): left out"
        )
        return
    try:
        create_file(target, text)
    except FileExistsError:
        # Another merge into the same folder may have copied this very result since ``into`` was
        # loaded: identical content is the same result, not a conflict.
        if _text(target, digest, follow_links=False) is not None:
            merged.duplicates += 1
        else:  # a file there that the loader could not use, or of other content
            merged.problems.append(f"{result.path}: {target} exists and is not this result")
        return
    except OSError as exc:
        raise HarnessError(
            f"cannot write {target}: {exc.strerror or exc}; results copied so far are kept"
        ) from None
    present[identity] = (digest, target)
    merged.copied.append(target)
