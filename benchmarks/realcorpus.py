"""The real-content corpus: copies of the bundled real traces (samples/) with fresh ids (issue 11, item 1).

The synthetic corpora of `generate.py` know their answers by construction but flatter every ratio: 98 %
of their tool-result texts hold astral characters (4.5 % in real traces), which slows the orjson
baseline. This corpus keeps real bytes: each copy of samples/ has every id rewritten to a new id of the
same length and alphabet — message ids (`msg_`), request ids (`req_`), tool-use ids (`toolu_`,
`srvtoolu_`), UUIDs (session ids, `uuid`, `parentUuid`, ...) and subagent ids (from the agent file
names, in names and contents alike) — so that no copy shares a call, a session or an agent with another
(cross-session dedup and ccusage's message/request dedup see distinct data), while every other byte,
and so every figure, is the original's.

Layout: a Claude Code config folder, `<root>/projects/-work-real-<p>/...` (copy k goes to project k % 8),
so ccusage reads it with `CLAUDE_CONFIG_DIR=<root>` and contexttrace with `<root>/projects`. Session
files are named by their rewritten session id; `<session>/subagents/agent-<id>.jsonl` files and their
`.meta.json` are copied beside them; flat `agent-<id>.jsonl` files (CLI 2.0.x) go beside their session
with their `sessionId` rewritten to it, so they stay linked; the stream-json and 1.0.x files keep their
sample name with `-<k>` added. `manifest.json` maps each copy's main file to the sample it came from
(the known answers: its figures are the sample's, `tests/test_samples.py`); `stamp.json` is written last.

Deterministic: the same samples and copies give the same bytes (ids from a keyed BLAKE2b of the old id
and the copy number). Generated once into a cache folder (`default_root`) and reused while the
generator version, the copy count and the samples' digest match.

    python benchmarks/realcorpus.py [ROOT] [--mb 300 | --copies N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import shutil
import string
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: Bump when the bytes written change.
GENERATOR_VERSION = 2
ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
PROJECTS = 8
_BASE62 = (string.ascii_uppercase + string.ascii_lowercase + string.digits).encode()
_HEX = b"0123456789abcdef"
_UUID = rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_PREFIXED = rb"(?:srvtoolu|toolu|msg|req)_[A-Za-z0-9]{8,}"


@dataclass(frozen=True)
class RealCorpus:
    """A generated corpus: its config root (`projects/` inside), main files and what each copies."""

    root: Path
    copies: int
    bytes: int  # all .jsonl bytes (main and subagent files), what the baseline reads
    manifest: dict[str, str]  # main file, relative to `projects` -> the sample it copies, relative to samples/

    @property
    def projects(self) -> Path:
        return self.root / "projects"

    def files(self) -> list[str]:
        """Every .jsonl file under projects/, sorted: what the orjson baseline reads."""
        return sorted(str(p) for p in self.projects.rglob("*.jsonl"))

    def sample_of(self, trace: str) -> str:
        """The sample trace a copied trace copies, as `tests/test_samples.py` names it (`x.jsonl#3` for
        the third run of a stream-json file)."""
        main, _, run = trace.partition("#")
        sample = self.manifest[Path(main).relative_to(self.projects).as_posix()]
        return f"{sample}#{run}" if run else sample

    def half(self) -> list[str]:
        """The project folders of the first half (projects 0-3): the scaling figure's half corpus."""
        return [str(self.projects / f"-work-real-{p}") for p in range(PROJECTS // 2)]


def _claude(samples: Path, pattern: str) -> list[Path]:
    """The files of the Claude Code samples (`a-*`, `b-*`) that match `pattern`, sorted: the corpus copies
    those alone (it measures reading Claude Code's traces, beside ccusage, which reads those)."""
    roots = [p for p in sorted(samples.iterdir()) if p.name[:2] in ("a-", "b-")]
    return sorted(f for r in roots for f in ([r] if r.is_file() and r.match(pattern) else r.rglob(pattern)))


def copy_bytes(samples: Path = SAMPLES) -> int:
    """Bytes one copy of the samples writes (its .jsonl files)."""
    return sum(p.stat().st_size for p in _claude(samples, "*.jsonl"))


def _digest(samples: Path) -> str:
    h = hashlib.blake2b(digest_size=16)
    for p in _claude(samples, "*"):
        if p.is_file() and p.suffix in (".jsonl", ".json"):
            h.update(str(p.relative_to(samples)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


class Renamer:
    """The ids of one copy: each old id maps to a new one of the same length and alphabet, the same every
    time it is met (so every reference between lines and files holds)."""

    def __init__(self, copy: int, agent_ids: list[bytes]) -> None:
        self._key = f"contexttrace-realcorpus-{copy}".encode()
        self._memo: dict[bytes, bytes] = {}
        ids = b"|".join(re.escape(a) for a in sorted(agent_ids, key=len, reverse=True))
        # three passes: one alternation of all three with the agents' look-arounds is 3x slower than these
        self._passes = [
            (re.compile(_UUID), self._uuid),
            (re.compile(_PREFIXED), self._prefixed),
            *([(re.compile(b"(?:" + ids + b")"), self._agent)] if ids else []),
        ]

    def _draw(self, old: bytes, keep: Callable[[int], bool], alphabet: Callable[[int], bytes]) -> bytes:
        new = self._memo.get(old)
        if new is None:
            stream = hashlib.shake_256(self._key + b"\0" + old).digest(len(old))
            new = bytes(
                old[i] if keep(i) else alphabet(old[i])[stream[i] % len(alphabet(old[i]))] for i in range(len(old))
            )
            self._memo[old] = new
        return new

    def _prefixed(self, match: re.Match[bytes]) -> bytes:  # prefix_ then base62: keep `msg_01` and the like
        old = match.group(0)
        head = old.index(b"_") + 3
        return self._draw(old, lambda i: i < head, lambda c: _BASE62)

    def _uuid(self, match: re.Match[bytes]) -> bytes:  # dashes, version and variant digits kept
        old = match.group(0)
        return self._draw(old, lambda i: old[i] == 0x2D or i in (14, 19), lambda c: _HEX)

    def _agent(self, match: re.Match[bytes]) -> bytes:
        """An agent id (`acompact-` + hex, `a` + 6 or 16 hex in 2.1.x, 8 hex in 2.0.x), not inside a longer
        run of hex digits."""
        old, data, start, end = match.group(0), match.string, match.start(), match.end()
        if (start and data[start - 1] in _HEX) or (end < len(data) and data[end] in _HEX):
            return old
        if old.startswith(b"acompact-"):
            head = len(b"acompact-")
        else:
            head = 1 if old[:1] == b"a" and len(old) in (7, 17) else 0
        return self._draw(old, lambda i: i < head, lambda c: _HEX)

    def __call__(self, data: bytes) -> bytes:
        for pattern, rename in self._passes:
            data = pattern.sub(rename, data)
        return data

    def name(self, text: str) -> str:
        return self(text.encode()).decode()


def _agent_ids(samples: Path) -> list[bytes]:
    return sorted({p.name[len("agent-") : -len(".jsonl")].encode() for p in _claude(samples, "agent-*.jsonl")})


def _units(samples: Path) -> list[tuple[Path, list[Path], list[Path]]]:
    """Each main file of samples/ with its nested subagent files and its flat agent files (by sessionId)."""
    units = []
    for main in _claude(samples, "*.jsonl"):
        if main.name.startswith("agent-") or "subagents" in main.parts:
            continue
        nested_dir = main.parent / main.stem / "subagents"
        nested = sorted(nested_dir.rglob("agent-*.jsonl")) if nested_dir.is_dir() else []
        flat = [
            p
            for p in sorted(main.parent.glob("agent-*.jsonl"))
            if main.parent != samples and f'"sessionId":"{main.stem}"'.encode() in p.read_bytes()
        ]
        units.append((main, nested, flat))
    return units


def generate(root: Path, copies: int, samples: Path = SAMPLES) -> RealCorpus:
    """Write `copies` copies of the samples under `root/projects` (replacing what is there)."""
    projects = root / "projects"
    if root.exists():
        shutil.rmtree(root)
    projects.mkdir(parents=True)
    agent_ids = _agent_ids(samples)
    units = _units(samples)
    manifest: dict[str, str] = {}
    total = 0
    for k in range(copies):
        rename = Renamer(k, agent_ids)
        folder = projects / f"-work-real-{k % PROJECTS}"
        folder.mkdir(exist_ok=True)

        def write(src: Path, dst: Path, rename: Renamer = rename) -> None:
            nonlocal total
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(rename(src.read_bytes()))
            if dst.suffix == ".jsonl":
                total += dst.stat().st_size

        for main, nested, flat in units:
            stem = rename.name(main.stem)
            if stem == main.stem:  # not named by a session id: keep the sample's name, numbered
                stem = f"{main.stem}-{k}"
            write(main, folder / f"{stem}.jsonl")
            manifest[f"{folder.name}/{stem}.jsonl"] = str(main.relative_to(samples))
            for sub in nested:
                rel = sub.relative_to(main.parent / main.stem)
                dst = folder / stem / rel.parent / rename.name(sub.name)
                write(sub, dst)
                meta = sub.with_name(sub.name[: -len(".jsonl")] + ".meta.json")
                if meta.is_file():
                    write(meta, dst.with_name(dst.name[: -len(".jsonl")] + ".meta.json"))
            for agent in flat:
                write(agent, folder / rename.name(agent.name))
    (root / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
    return RealCorpus(root, copies, total, manifest)


def default_root(copies: int) -> Path:
    """Where a corpus of `copies` copies is kept between runs: `$CT_REAL_DIR`, else the user's cache folder."""
    chosen = os.environ.get("CT_REAL_DIR", "").strip()
    if chosen:
        return Path(chosen).expanduser() / f"real-x{copies}"
    import platformdirs

    return Path(platformdirs.user_cache_dir("contexttrace-bench", appauthor=False)) / f"real-x{copies}"


def copies_for(mb: float, samples: Path = SAMPLES) -> int:
    """The fewest whole copies holding at least `mb` MiB."""
    return max(1, math.ceil(mb * 2**20 / copy_bytes(samples)))


def ensure(copies: int, root: Path | None = None, samples: Path = SAMPLES) -> RealCorpus:
    """The corpus of `copies` copies at `root` (default `default_root`), generated unless one made by this
    generator version from these samples is there already."""
    root = root or default_root(copies)
    stamp = {"generator": GENERATOR_VERSION, "copies": copies, "samples": _digest(samples)}
    stamp_file = root / "stamp.json"
    if stamp_file.is_file() and json.loads(stamp_file.read_text()) == stamp:
        manifest = json.loads((root / "manifest.json").read_text())
        corpus = RealCorpus(root, copies, 0, manifest)
        return RealCorpus(root, copies, sum(os.path.getsize(f) for f in corpus.files()), manifest)
    corpus = generate(root, copies, samples)
    stamp_file.write_text(json.dumps(stamp))  # written last: a half-made corpus is never reused
    return corpus


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", nargs="?", type=Path, help="config folder to write (default: the cache folder)")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--mb", type=float, default=300.0, help="at least this many MiB (default 300)")
    size.add_argument("--copies", type=int, help="this many copies of samples/ instead")
    args = parser.parse_args(argv)
    copies = args.copies or copies_for(args.mb)
    corpus = ensure(copies, args.root)
    print(f"{corpus.projects}: {copies} copies, {len(corpus.files())} files, {corpus.bytes / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
