"""Scale benchmark: the whole job on N real documents, DirectRunner and a Flink cluster.

Run it with ``./run_local.sh bench scale [--docs N]`` (``python -m benchmarks scale``). It
is not part of ``./run_local.sh bench`` (nor ``--quick``) and never part of the test suite:
at the default 100,000 documents it takes an hour or more on two cores.

**Corpus.** N files built from real documents repeated under distinct paths
(``dNNN/NNNNNN-<name>``, hard links to one copy of each source, so every path is its own
document with its own ``doc_id``). Nothing is downloaded. The pools, each kept only if it
parses and yields at least one chunk in this environment:

- *markdown* (70%): the Markdown long descriptions of the installed distributions (what
  ``bench_peers`` races on), every UTF-8 ``*.md`` under ``fixtures/``, and the non-empty
  ``fixtures/corpus/notes/*.txt``;
- *html* (18%): ``fixtures/html/*.html``;
- *pdf* (10%): every fixture PDF (``fixtures/corpus/pdf``, ``fixtures/pdf``), deduplicated;
- *docx* (2%): ``fixtures/docx/*.docx``.

Kinds are assigned by exact counts in a seeded shuffle, sources round-robin within a kind.
The pools and their sizes go into the results (the README pool depends on what is
installed).

**Configurations** (all in the apache-beam 2.62.0 venv of ``tests/engines/provision.py``,
``kebab-chunk run`` from its ``bin/``, default chunking):

- ``direct_in_memory`` and ``direct_multi_processing_2`` (``--direct_num_workers=2``);
- ``flink_1tm`` and ``flink_2tm``: a standalone Flink 1.19 session cluster on loopback
  (``tests/engines/flink.py``) with 1 or 2 one-slot TaskManagers and ``--parallelism`` to
  match, Beam's Flink job server jar, the PROCESS environment through Beam's Go ``boot``,
  as ``tests/engines/test_flink.py`` runs it;
- ``direct_in_memory_incremental_1pct`` (last): 1% of the documents (text kinds) get one
  appended paragraph, then the in-memory job runs again with ``--previous`` set to the
  ``direct_in_memory`` output: every file is read and hashed, only changed ones parsed,
  the others' records carried forward. Its start-up is the 20-document job run against its
  own earlier output (everything reused).
- ``direct_in_memory_update_1pct`` (after it): ``kebab-chunk run --update`` (issue 30) on a
  hard-link copy (``cp -al``) of the ``direct_in_memory`` output, after the same 1% churn
  (applied once, whichever incremental configuration runs first). The update only adds
  files (``s<n>-part-*``, a delete file, a change feed, ``_snapshots/*.json``) and replaces
  ``manifest.json`` by a rename, so the copy's links never change the original's bytes. Every
  file is read and hashed, joined with the base snapshot's documents table, and only new or
  changed documents are read again, parsed and written. Its start-up is the 20-document
  update of a copy of the 20-document ``direct_in_memory`` output (everything reused). Its
  output bytes are those of the files the update added.

``flink_2tm_update_1pct`` is the same update on a fresh 2-TaskManager cluster, of a hard-link
copy of the ``flink_2tm`` output (so it needs that configuration in the same run).

For every incremental configuration the results also hold its wall seconds and peak RSS
against the full run of its runner (``incremental_vs_full``) next to the issue 30 targets
(wall <= 10% of the full run's, every process <= 1 GB at 100,000 documents, <= 1.5 GB at
1,000,000).

Each configuration runs the job on the first 20 documents (a warm-up that fails fast; on a
fresh Flink cluster it is slower than later jobs), then on all N, then on the 20 again: that
last job is the start-up (job server, SDK workers, helpers, first bundle).
``steady_docs_per_s`` and ``marginal_cpu_s_per_doc`` subtract it from the N-document job.

**Measurements.** Wall seconds of ``kebab-chunk run`` (submission to exit; the Flink
cluster is started beforehand). While a job runs, a thread samples every 0.5 s the
process tree of the launcher, of the JobManager and of each TaskManager (JVM -> ``boot``
-> SDK worker ``python`` -> parse/chunk helper ``python``): ``VmHWM`` from
``/proc/PID/status`` (max kept per process, reported per role) and utime+stime from
``/proc/PID/stat``. CPU seconds per tree are the larger of (a) the sum over every process
seen of its last sampled CPU, minus what it had before the job, and (b) for the launcher
tree, this process's ``RUSAGE_CHILDREN`` delta (exact for descendants that were waited
for). (a) misses at most the last 0.5 s of each process that ends between samples.
``cores`` is min(parallelism, CPUs); ``cpu_busy_cores`` is CPU seconds / wall seconds.

Results: ``benchmarks/results/scale.json`` and ``scale.md`` for a run at the default size
or larger; smaller runs write ``scale-quick.json`` / ``scale-quick.md`` (not tracked, as
``quick.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import corpora

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
RESULTS = Path(__file__).resolve().parent / "results"

DEFAULT_DOCS = 100_000
STARTUP_DOCS = 20
CHURN = 0.01
SAMPLE_S = 0.5
SEED = 15
RUN_TIMEOUT_S = 8 * 3600
TM_MEMORY = "2048m"
MIX: dict[str, float] = {"markdown": 0.70, "html": 0.18, "pdf": 0.10, "docx": 0.02}
TEXT_KINDS = ("markdown", "html")
CONFIGS = (
    "direct_in_memory",
    "direct_multi_processing_2",
    "flink_1tm",
    "flink_2tm",
    "direct_in_memory_incremental_1pct",
    "direct_in_memory_update_1pct",
    "flink_2tm_update_1pct",
)
#: Each incremental configuration and the full run of the same runner it is compared with.
INCREMENTAL = {
    "direct_in_memory_incremental_1pct": "direct_in_memory",
    "direct_in_memory_update_1pct": "direct_in_memory",
    "flink_2tm_update_1pct": "flink_2tm",
}
#: Issue 30's acceptance: at 100,000 documents incremental wall <= 10% of a full run's and
#: peak RSS of every process <= 1 GB; at 1,000,000 documents peak RSS <= 1.5 GB.
TARGET_WALL_RATIO = 0.10
TARGET_PROCESS_MB = 1024.0
TARGET_PROCESS_MB_1M = 1536.0
IN_MEMORY = ["--direct_running_mode=in_memory"]
MULTI_2 = ["--direct_running_mode=multi_processing", "--direct_num_workers=2"]
_CLK = os.sysconf("SC_CLK_TCK")


# --- corpus ----------------------------------------------------------------------------------


def _yields_chunks(doc: corpora.Document) -> bool:
    """Parses and gives at least one chunk with the default chunkers (this environment)."""
    from kebab_chunk.chunkers.registry import DEFAULT_LABELS_BY_MEDIA_TYPE, get_chunker
    from kebab_chunk.model import ChunkPolicy
    from kebab_chunk.parsers.registry import parse_document

    try:
        parsed = parse_document(doc.raw, doc.name)
        for label in DEFAULT_LABELS_BY_MEDIA_TYPE.get(parsed.media_type, ()):
            chunker = get_chunker(label)
            if chunker.accepts(parsed) and list(chunker.chunk(parsed, ChunkPolicy())):
                return True
    except Exception:  # a fixture that is bad on purpose: not part of the mix
        return False
    return False


def _files(pattern: str) -> list[corpora.Document]:
    seen: set[bytes] = set()
    docs = []
    for path in sorted(FIXTURES.glob(pattern)):
        raw = path.read_bytes()
        if raw not in seen:
            seen.add(raw)
            docs.append(corpora.Document(path.relative_to(FIXTURES).as_posix(), raw))
    return docs


def source_pools() -> dict[str, list[corpora.Document]]:
    """The real documents each kind is drawn from (see the module docstring)."""
    markdown = [
        *corpora.distribution_readmes().documents,
        *corpora.fixture_markdown().documents,
        *_files("corpus/notes/*.txt"),
    ]
    pools = {
        "markdown": markdown,
        "html": _files("html/*.html"),
        "pdf": list(corpora.fixture_pdfs().documents),
        "docx": _files("docx/*.docx"),
    }
    kept = {kind: [d for d in docs if _yields_chunks(d)] for kind, docs in pools.items()}
    empty = [kind for kind, docs in kept.items() if not docs]
    if empty:
        raise RuntimeError(f"no usable source document for {', '.join(empty)}")
    return kept


@dataclass
class Corpus:
    root: Path
    paths: list[str]  # corpus-relative, in build order
    kinds: list[str]
    n_bytes: int
    summary: dict[str, Any] = field(default_factory=dict)


def build_corpus(
    base: Path, n_docs: int, pools: dict[str, list[corpora.Document]], seed: int = SEED
) -> Corpus:
    """``n_docs`` files under ``base/corpus``: hard links to one copy of each source."""
    sources = base / "sources"
    root = base / "corpus"
    links: dict[str, list[Path]] = {}
    for kind, docs in pools.items():
        links[kind] = []
        for i, doc in enumerate(docs):
            dest = sources / kind / f"{i:04d}-{Path(doc.name).name}"
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(doc.raw)
            links[kind].append(dest)
    counts = {kind: round(n_docs * share) for kind, share in MIX.items()}
    counts["markdown"] += n_docs - sum(counts.values())
    kinds = [kind for kind, count in counts.items() for _ in range(count)]
    random.Random(seed).shuffle(kinds)
    next_of = dict.fromkeys(pools, 0)
    paths, total = [], 0
    bytes_by_kind = dict.fromkeys(pools, 0)
    for i, kind in enumerate(kinds):
        src = links[kind][next_of[kind] % len(links[kind])]
        next_of[kind] += 1
        rel = f"d{i // 1000:03d}/{i:06d}-{src.name.split('-', 1)[1]}"
        dest = root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(src, dest)
        except OSError:
            shutil.copyfile(src, dest)
        size = src.stat().st_size
        total += size
        bytes_by_kind[kind] += size
        paths.append(rel)
    summary = {
        "documents": n_docs,
        "bytes": total,
        "bytes_per_doc": total / n_docs,
        "mix": {
            kind: {
                "documents": counts[kind],
                "share": counts[kind] / n_docs,
                "bytes_per_doc": bytes_by_kind[kind] / counts[kind] if counts[kind] else 0.0,
                "distinct_sources": len(pools[kind]),
                "source_bytes": sum(len(d.raw) for d in pools[kind]),
            }
            for kind in pools
        },
        "sources": {
            "markdown": "Markdown long descriptions of the installed Python distributions "
            "(bench_peers' README corpus) + UTF-8 *.md under fixtures/ + "
            "fixtures/corpus/notes/*.txt",
            "html": "fixtures/html/*.html",
            "pdf": "*.pdf under fixtures/ (deduplicated)",
            "docx": "fixtures/docx/*.docx",
            "filter": "kept only if it parses and yields at least one chunk",
            "layout": "each document a hard link under its own path dNNN/NNNNNN-<name>",
        },
    }
    return Corpus(root, paths, kinds, total, summary)


def subset_corpus(corpus: Corpus, dest: Path, n_docs: int) -> Path:
    """The first ``n_docs`` documents of ``corpus`` under ``dest`` (hard links)."""
    for rel in corpus.paths[:n_docs]:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        os.link(corpus.root / rel, target)
    return dest


def link_copy(src: Path, dest: Path) -> None:
    """``cp -al src dest``: the same tree, every file a hard link (no bytes duplicated)."""
    shutil.copytree(src, dest, copy_function=os.link)


def churn(corpus: Corpus, share: float = CHURN, seed: int = SEED) -> int:
    """Appends one paragraph to ``share`` of the documents (text kinds), in place.

    The file is replaced (a new inode), so the other paths linked to its source keep
    their bytes. Returns how many documents changed.
    """
    candidates = [rel for rel, kind in zip(corpus.paths, corpus.kinds, strict=True)
                  if kind in TEXT_KINDS]
    changed = random.Random(seed + 1).sample(candidates, min(len(candidates),
                                                             round(len(corpus.paths) * share)))
    for rel in changed:
        path = corpus.root / rel
        tail = (b"\n<p>Revised overnight: one added paragraph.</p>\n" if rel.endswith(".html")
                else b"\n\nRevised overnight: one added paragraph.\n")
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(path.read_bytes() + tail)
        os.replace(tmp, path)
    return len(changed)


# --- process-tree sampling -------------------------------------------------------------------


@dataclass
class _Proc:
    role: str
    cpu0: float  # own utime+stime (s) before the job; 0 for processes started during it
    cpu: float = 0.0  # own utime+stime at the last sample
    hwm_kib: int = 0


def _proc_table() -> dict[int, tuple[int, int, float, float]]:
    """pid -> (ppid, start time in ticks, own utime+stime, reaped children's cutime+cstime;
    seconds), for every process."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            raw = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:
            continue
        fields = raw[raw.rindex(b")") + 2 :].split()  # fields[0] is stat field 3 (state)
        table[int(name)] = (int(fields[1]), int(fields[19]),
                            (int(fields[11]) + int(fields[12])) / _CLK,
                            (int(fields[13]) + int(fields[14])) / _CLK)
    return table


def _status_kib(pid: int) -> tuple[int, int]:
    """(VmHWM, VmRSS) in KiB; (0, 0) for a zombie or a process that is gone."""
    hwm = rss = 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1])
            elif line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    except OSError:
        pass
    return hwm, rss


def _role(pid: int, root: int, ppid: int) -> str:
    """A process's role in its tree; ``root`` is the daemon, or (the daemon's parent) the
    subreaper it runs under (tests/engines/reaper.py), role ``reaper``."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "root" if pid == root else "other"
    exe = os.path.basename(argv[0].decode(errors="replace")) if argv and argv[0] else ""
    joined = b" ".join(argv)
    if pid == root:
        return "reaper" if b"reaper.py" in joined else "root"
    if exe == "java" and ppid == root and _role(root, root, 0) == "reaper":
        return "root"
    if b"sdk_worker_main" in joined:
        return "sdk_worker"
    if exe.startswith("python"):
        return "helper"  # forkserver, parse/chunk helpers, resource tracker
    if exe == "java":
        return "java"  # the Flink job server the launcher starts
    if exe in ("container", "boot"):
        return "boot"
    return "other"


class TreeSampler:
    """Samples the process trees under named root pids every ``interval`` seconds.

    A tree's CPU (``cpu_s``) is exact while its root lives: the sum over its live processes
    of their own CPU and that of the children they reaped (``cutime``), at the last sample
    minus at the first. A process that ends passes its CPU to its parent's ``cutime``
    when reaped, so nothing is lost between samples, provided no process escapes the tree
    (Flink daemons run under a subreaper, tests/engines/reaper.py, so orphans do not).
    Roles are only sampled: a process that ends between samples loses up to ``interval``
    of CPU from its role, which ``cpu_s_by_role`` reports as the role ``exited``.
    """

    def __init__(self, roots: dict[str, int], fresh: set[str],
                 interval: float = SAMPLE_S) -> None:
        self.roots = roots
        self.fresh = fresh  # trees started with the job: all their CPU is the job's
        self.interval = interval
        self.procs: dict[str, dict[tuple[int, int], _Proc]] = {name: {} for name in roots}
        self.tree_rss_kib: dict[str, int] = dict.fromkeys(roots, 0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._first = True
        self._tree_cpu: dict[str, list[float]] = {name: [] for name in roots}  # first, last

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def sample(self) -> None:
        table = _proc_table()
        children: dict[int, list[int]] = {}
        for pid, (ppid, *_) in table.items():
            children.setdefault(ppid, []).append(pid)
        for name, root in self.roots.items():
            tree, todo = [], [root]
            while todo:
                pid = todo.pop()
                if pid in table:
                    tree.append(pid)
                    todo.extend(children.get(pid, ()))
            rss_sum = 0
            tree_cpu = 0.0
            for pid in tree:
                ppid, start, cpu, reaped = table[pid]
                tree_cpu += cpu + reaped
                key = (pid, start)
                proc = self.procs[name].get(key)
                if proc is None:
                    baseline = self._first and name not in self.fresh
                    proc = _Proc(_role(pid, root, ppid), cpu if baseline else 0.0)
                    self.procs[name][key] = proc
                proc.cpu = max(proc.cpu, cpu)
                hwm, rss = _status_kib(pid)
                proc.hwm_kib = max(proc.hwm_kib, hwm)
                rss_sum += rss
            self.tree_rss_kib[name] = max(self.tree_rss_kib[name], rss_sum)
            if root not in table:  # the root has ended: only the sampled sum is left
                self._tree_cpu[name] = []
            elif self._first or self._tree_cpu[name]:  # a fresh tree started with the job
                first = self._tree_cpu[name] or [0.0 if name in self.fresh else tree_cpu]
                self._tree_cpu[name] = [first[0], tree_cpu]
        self._first = False

    def start(self) -> None:
        self.sample()  # the baseline: CPU that processes already had is not the job's
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()

    def _sampled(self, name: str) -> float:
        return sum(p.cpu - p.cpu0 for p in self.procs[name].values())

    def cpu_s(self, name: str) -> float:
        """The tree's CPU seconds during the job: exact while the root lives (see the
        class docstring), else the sampled sum."""
        if self._tree_cpu[name]:
            first, last = self._tree_cpu[name]
            return last - first
        return self._sampled(name)

    def per_process(self, name: str, *, exclude_root: bool = False) -> list[float]:
        """Each process's own CPU seconds while sampled (the root's too unless excluded)."""
        return [
            p.cpu - p.cpu0
            for p in self.procs[name].values()
            if not (exclude_root and p.role == "root")
        ]

    def cpu_s_by_role(self, name: str) -> dict[str, float]:
        out: dict[str, float] = {}
        for p in self.procs[name].values():
            out[p.role] = out.get(p.role, 0.0) + p.cpu - p.cpu0
        missed = self.cpu_s(name) - self._sampled(name)
        if missed > 0:
            out["exited"] = missed
        return dict(sorted(out.items()))

    def memory(self, name: str) -> dict[str, Any]:
        """Peak RSS (MB) of the root and the largest process of each role, with counts."""
        out: dict[str, Any] = {"tree_peak_rss_mb": self.tree_rss_kib[name] / 1024}
        for proc in self.procs[name].values():
            key = f"{proc.role}_peak_rss_mb"
            out[key] = max(out.get(key, 0.0), proc.hwm_kib / 1024)
            out[f"{proc.role}_processes"] = out.get(f"{proc.role}_processes", 0) + 1
        out.pop("root_processes", None)
        return dict(sorted(out.items()))


# --- one job ---------------------------------------------------------------------------------


class JobFailed(RuntimeError):
    pass


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _files_under(path: Path) -> frozenset[Path]:
    return frozenset(p for p in path.rglob("*") if p.is_file())


def _dir_bytes(path: Path, existing: frozenset[Path] = frozenset()) -> int:
    return sum(p.stat().st_size for p in _files_under(path) - existing)


def _chunk_bytes_uncompressed(path: Path, existing: frozenset[Path] = frozenset()) -> int:
    """Uncompressed size of the chunk records (Parquet row-group metadata)."""
    import pyarrow.parquet as pq

    total = 0
    for part in sorted(set((path / "chunks").rglob("*.parquet")) - existing):
        meta = pq.ParquetFile(part).metadata
        total += sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    return total


def run_job(
    beam_bin: Path, corpus: Path, out: Path, args: list[str], env: dict[str, str],
    cluster_roots: dict[str, int], log: Path, *, update: bool = False,
) -> dict[str, Any]:
    """``kebab-chunk run`` once, sampled; raises JobFailed with the log's end on failure.

    ``update``: ``--update`` of the output already in ``out`` (no ``--overwrite``); the
    output bytes are those of the files the job added."""
    child_env = dict(os.environ, **env)
    child_env["PATH"] = os.pathsep.join([str(beam_bin), child_env.get("PATH", "")])
    # No --default_sdk_harness_log_level=WARNING: the Flink job server rejects it.
    existing = _files_under(out) if update else frozenset()
    cmd = [str(beam_bin / "kebab-chunk"), "run", "--input", str(corpus), "--output", str(out),
           *(["--update"] if update else ["--overwrite"]), *args]
    rusage0 = _children_cpu_s()
    with log.open("wb") as sink:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=out.parent, env=child_env, stdout=sink,
                                stderr=subprocess.STDOUT)
        sampler = TreeSampler({"launcher": proc.pid, **cluster_roots}, fresh={"launcher"})
        sampler.start()
        try:
            code = proc.wait(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        finally:
            wall = time.perf_counter() - start
            sampler.stop()
    if code != 0:
        tail = log.read_text(errors="replace")[-4000:]
        raise JobFailed(f"{' '.join(cmd)} exited {code} (log {log}):\n{tail}")
    cpu = {name: sampler.cpu_s(name) for name in sampler.roots}
    launcher = {"sampled": cpu["launcher"], "rusage_children": _children_cpu_s() - rusage0}
    cpu["launcher"] = max(launcher.values())
    manifest = json.loads((out / "manifest.json").read_text())
    return {
        "wall_s": wall,
        "cpu_s": sum(cpu.values()),
        "cpu_s_by_tree": cpu,
        "launcher_cpu_s_by_method": launcher,
        "sampled_cpu_s_by_role": {name: sampler.cpu_s_by_role(name) for name in sampler.roots},
        "memory": {name: sampler.memory(name) for name in sampler.roots},
        "output_bytes": _dir_bytes(out, existing),
        "chunk_bytes_uncompressed": _chunk_bytes_uncompressed(out, existing),
        "files_matched": manifest["counts"]["files_matched"],
        "chunks": manifest["counts"]["chunks_total"],
        "error_rows": manifest["counts"]["error_rows"],
        "accounting_closes": manifest["accounting"]["closes"],
        "incremental": manifest.get("incremental", {}).get("documents"),
    }


# --- configurations --------------------------------------------------------------------------


@dataclass
class Setting:
    runner: str
    parallelism: int
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)
    roots: dict[str, int] = field(default_factory=dict)  # cluster daemons to sample
    records_per_tm: Callable[[], dict[str, int]] | None = None


@contextmanager
def _direct(args: list[str], parallelism: int) -> Iterator[Setting]:
    yield Setting("DirectRunner", parallelism, args)


@contextmanager
def _flink(work: Path, beam_bin: Path, taskmanagers: int, tm_memory: str,
           beam_on_classpath: bool = False) -> Iterator[Setting]:
    """The cluster of tests/engines/flink.py; ``beam_on_classpath``: deployed as
    docs/guide/runners.md recommends (Beam's jars on the class path, the environment cached
    across a job's stages), else stock."""
    from tests.engines import provision
    from tests.engines.flink import ENVIRONMENT_CACHE_ARG, flink_cluster

    jar, dist, boot = (provision.flink_job_server_jar(), provision.flink_dist(),
                       provision.python_boot())
    with flink_cluster(dist, work, beam_bin, taskmanagers=taskmanagers, tm_memory=tm_memory,
                       beam_jars=jar if beam_on_classpath else None) as cluster:
        args = [
            *([ENVIRONMENT_CACHE_ARG] if beam_on_classpath else []),
            "--runner=FlinkRunner",
            f"--flink_job_server_jar={jar}",
            "--environment_type=PROCESS",
            f'--environment_config={{"command": "{boot}"}}',
            f"--parallelism={taskmanagers}",
            f"--flink_master={cluster.master}",
        ]
        deployed = ", Beam on the class path" if beam_on_classpath else ""
        yield Setting(
            f"FlinkRunner, standalone cluster{deployed}, {taskmanagers} TaskManager(s) x 1 slot",
            taskmanagers, args, {"RUN_PYTHON_SDK_IN_DEFAULT_ENVIRONMENT": "1"},
            {name: p.pid for name, p in cluster.procs.items()},
            lambda: cluster.records_per_taskmanager("Parse and chunk documents"),
        )


def _figures(setting: Setting, main: dict[str, Any], startup: dict[str, Any] | None,
             n_docs: int, n_startup: int) -> dict[str, Any]:
    cores = min(setting.parallelism, os.cpu_count() or 1)
    wall, cpu = main["wall_s"], main["cpu_s"]
    out: dict[str, Any] = {
        "runner": setting.runner,
        "options": setting.args,
        "parallelism": setting.parallelism,
        "cores": cores,
        "documents": n_docs,
        "wall_s": wall,
        "docs_per_s": n_docs / wall,
        "docs_per_s_per_core": n_docs / wall / cores,
        "cpu_s": cpu,
        "cpu_s_per_doc": cpu / n_docs,
        "cpu_busy_cores": cpu / wall,
        "output_bytes": main["output_bytes"],
        "output_bytes_per_doc": main["output_bytes"] / n_docs,
        "chunk_bytes_uncompressed_per_doc": main["chunk_bytes_uncompressed"] / n_docs,
        **{k: main[k] for k in ("cpu_s_by_tree", "launcher_cpu_s_by_method",
                                "sampled_cpu_s_by_role", "memory",
                                "files_matched", "chunks", "error_rows", "accounting_closes")},
    }
    if main.get("incremental"):
        out["incremental"] = main["incremental"]
    if startup is not None:
        out["startup"] = {"documents": n_startup, **{
            k: startup[k] for k in ("wall_s", "cpu_s", "cpu_s_by_tree", "sampled_cpu_s_by_role")}}
        extra = n_docs - n_startup
        steady_wall = wall - startup["wall_s"]
        if extra > 0:
            out["marginal_cpu_s_per_doc"] = (cpu - startup["cpu_s"]) / extra
            out["marginal_cpu_s_per_doc_by_tree"] = {
                tree: (value - startup["cpu_s_by_tree"][tree]) / extra
                for tree, value in main["cpu_s_by_tree"].items()
            }
            out["marginal_cpu_s_per_doc_by_role"] = {
                f"{tree}/{role}": (value - startup["sampled_cpu_s_by_role"][tree].get(role, 0.0))
                / extra
                for tree, roles in main["sampled_cpu_s_by_role"].items()
                for role, value in roles.items()
            }
        # Only meaningful when the N-document job outlasts the start-up job clearly: on a
        # small run or a loaded machine it may not (then there is no steady figure).
        if extra > 0 and steady_wall > 0:
            out["steady_docs_per_s"] = extra / steady_wall
            tm_trees = [t for t in main["cpu_s_by_tree"] if t.startswith("tm-")]
            if tm_trees:  # TaskManager CPU over the slots they offer, start-up job subtracted
                tm_cpu = sum(main["cpu_s_by_tree"][t] - startup["cpu_s_by_tree"][t]
                             for t in tm_trees)
                out["steady_taskmanager_utilisation"] = tm_cpu / steady_wall / len(tm_trees)
    return out


def _rss(fig: dict[str, Any], role: str) -> float | None:
    """The largest peak RSS of ``role`` over the sampled trees (TaskManagers first)."""
    mem = fig.get("memory", {})
    trees = [t for t in mem if t.startswith("tm-")] or ["launcher"]
    values = [mem[t][f"{role}_peak_rss_mb"] for t in trees if f"{role}_peak_rss_mb" in mem[t]]
    return max(values) if values else None


def _largest_process_mb(fig: dict[str, Any]) -> float:
    """The largest peak RSS of any one process the job ran (every sampled tree and role)."""
    return max((value for tree in fig.get("memory", {}).values()
                for key, value in tree.items()
                if key.endswith("_peak_rss_mb") and key != "tree_peak_rss_mb"), default=0.0)


def versus_full(results: dict[str, Any]) -> dict[str, Any]:
    """Each incremental configuration against the full run of its runner, with issue 30's
    targets (the memory target of the corpus size measured)."""
    configs = results["configurations"]
    documents = results.get("corpus", {}).get("documents", DEFAULT_DOCS)
    rss_target = TARGET_PROCESS_MB_1M if documents >= 1_000_000 else TARGET_PROCESS_MB
    out: dict[str, Any] = {}
    for name, full_name in INCREMENTAL.items():
        fig, full = configs.get(name, {}), configs.get(full_name, {})
        if "wall_s" not in fig or "wall_s" not in full:
            continue
        wall = fig["wall_s"] / full["wall_s"]
        largest = _largest_process_mb(fig)
        launcher, launcher_full = _rss(fig, "root"), _rss(full, "root")
        out[name] = {
            "versus": full_name,
            "wall_ratio": wall,
            "cpu_ratio": fig["cpu_s"] / full["cpu_s"],
            "launcher_peak_rss_ratio": launcher / launcher_full
            if launcher and launcher_full else None,
            "largest_process_peak_rss_mb": largest,
            "full_largest_process_peak_rss_mb": _largest_process_mb(full),
            "targets": {"wall_ratio_max": TARGET_WALL_RATIO,
                        "process_peak_rss_mb_max": rss_target,
                        "wall_met": wall <= TARGET_WALL_RATIO,
                        "rss_met": largest <= rss_target,
                        "documents": documents},
        }
    return out


def table(results: dict[str, Any]) -> str:
    """The short Markdown table printed at the end (and written next to the JSON)."""
    def num(value: float | None, fmt: str = ",.1f") -> str:
        return "–" if value is None else format(value, fmt)

    rows = [
        "| configuration | cores | wall s | docs/s | docs/s/core | steady docs/s | "
        "CPU ms/doc | marginal CPU ms/doc | peak RSS MB: TaskManager JVM (else launcher) / "
        "SDK worker / helper | "
        "bytes in/doc | bytes out/doc |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    per_doc_in = results["corpus"]["bytes_per_doc"]
    for name, fig in results["configurations"].items():
        if "failed" in fig:
            rows.append(f"| {name} | failed: {fig['failed'].splitlines()[0][:80]} |")
            continue
        marginal = fig.get("marginal_cpu_s_per_doc")
        peak = " / ".join(num(_rss(fig, role), ",.0f")
                          for role in ("root", "sdk_worker", "helper"))
        rows.append(
            f"| {name} | {fig['cores']} | {num(fig['wall_s'])} | {num(fig['docs_per_s'])} | "
            f"{num(fig['docs_per_s_per_core'])} | {num(fig.get('steady_docs_per_s'))} | "
            f"{num(fig['cpu_s_per_doc'] * 1000, ',.2f')} | "
            f"{num(None if marginal is None else marginal * 1000, ',.2f')} | {peak} | "
            f"{per_doc_in:,.0f} | {num(fig['output_bytes_per_doc'], ',.0f')} |"
        )
    versus = results.get("incremental_vs_full") or {}
    if versus:
        rss = next(iter(versus.values()))["targets"]["process_peak_rss_mb_max"]
        rows += ["", "| incremental configuration | versus | changed docs | wall | CPU | "
                 "launcher peak RSS | largest process peak RSS MB | issue 30 targets "
                 f"(wall <= 10%, every process <= {rss / 1024:.1f} GB) |",
                 "|---|---|---|---|---|---|---|---|"]
        for name, v in versus.items():
            fig = results["configurations"][name]
            met = v["targets"]
            verdict = ("met" if met["wall_met"] and met["rss_met"] else
                       "not met: " + ", ".join(k for k, ok in (("wall", met["wall_met"]),
                                                               ("RSS", met["rss_met"])) if not ok))
            launcher = v["launcher_peak_rss_ratio"]
            rows.append(
                f"| {name} | {v.get('versus', 'direct_in_memory')} | "
                f"{fig.get('changed_documents', '–')} | {v['wall_ratio']:.1%} | "
                f"{v['cpu_ratio']:.1%} | {num(launcher, '.2f')}x | "
                f"{v['largest_process_peak_rss_mb']:,.0f} | {verdict} |")
    scaling = results.get("scaling_2tm_vs_1tm")
    if scaling:
        rows += ["", f"Flink 2 TaskManagers vs 1: {scaling['docs_per_s']:.2f}x docs/s"
                 + (f", {scaling['steady_docs_per_s']:.2f}x steady"
                    if scaling.get("steady_docs_per_s") else "") + "."]
    return "\n".join(rows)


def _machine() -> dict[str, Any]:
    from benchmarks.__main__ import _machine as machine

    return machine()


def run(n_docs: int = DEFAULT_DOCS, configs: tuple[str, ...] = CONFIGS,
        workdir: Path | None = None, tm_memory: str = TM_MEMORY,
        progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    from tests.engines import provision

    if progress is None:
        def progress(line: str) -> None:
            print(line, flush=True)

    beam_bin = provision.beam_env()
    own_tmp = workdir is None
    base = Path(tempfile.mkdtemp(prefix="kebab-scale-")) if workdir is None else workdir
    base.mkdir(parents=True, exist_ok=True)
    if any(base.iterdir()):
        raise SystemExit(f"--workdir {base} is not empty; give an empty or new directory")
    results: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": _machine(),
        "engine": {"beam": provision.ENGINE_BEAM, "flink": provision.FLINK_VERSION,
                   "taskmanager_memory": tm_memory, "sample_interval_s": SAMPLE_S},
        "configurations": {},
    }
    try:
        progress(f"building {n_docs:,} documents under {base}")
        corpus = build_corpus(base, n_docs, source_pools())
        tiny = subset_corpus(corpus, base / "corpus-startup", STARTUP_DOCS)
        results["corpus"] = corpus.summary
        logs = base / "logs"
        logs.mkdir(exist_ok=True)
        outs = base / "out"
        outs.mkdir(exist_ok=True)
        settings: dict[str, Callable[[], Any]] = {
            "direct_in_memory": lambda: _direct(IN_MEMORY, 1),
            "direct_multi_processing_2": lambda: _direct(MULTI_2, 2),
            "flink_1tm": lambda: _flink(base / "flink-1tm", beam_bin, 1, tm_memory),
            "flink_2tm": lambda: _flink(base / "flink-2tm", beam_bin, 2, tm_memory),
        }
        churned: list[int] = []  # the 1% churn, applied once for both incremental configs

        def churn_once() -> int:
            if not churned:
                churned.append(churn(corpus))
            return churned[0]

        for name in (c for c in CONFIGS if c in configs):
            progress(f"== {name}")
            try:
                if name == "direct_in_memory_update_1pct":
                    full = outs / "direct_in_memory"
                    if not (full / "manifest.json").exists():
                        raise JobFailed("needs the direct_in_memory output of this run")
                    changed = churn_once()
                    started = time.perf_counter()
                    link_copy(full, outs / name)
                    copy_s = time.perf_counter() - started
                    link_copy(outs / "direct_in_memory-startup", outs / f"{name}-startup")
                    setting = Setting("DirectRunner", 1, [*IN_MEMORY, "--update"])
                    main = run_job(beam_bin, corpus.root, outs / name, IN_MEMORY, {}, {},
                                   logs / f"{name}.log", update=True)
                    # Start-up: the 20-document update of its own full output (all reused).
                    small = run_job(beam_bin, tiny, outs / f"{name}-startup", IN_MEMORY, {}, {},
                                    logs / f"{name}-startup.log", update=True)
                    fig = _figures(setting, main, small, n_docs, STARTUP_DOCS)
                    fig["changed_documents"] = changed
                    fig["base_copy"] = {"how": "hard links of the direct_in_memory output",
                                        "wall_s": copy_s}
                elif name == "flink_2tm_update_1pct":
                    full = outs / "flink_2tm"
                    if not (full / "manifest.json").exists():
                        raise JobFailed("needs the flink_2tm output of this run")
                    changed = churn_once()
                    link_copy(full, outs / name)
                    link_copy(outs / "flink_2tm-startup", outs / f"{name}-startup")
                    with _flink(base / "flink-2tm-update", beam_bin, 2, tm_memory) as setting:
                        def update(src: Path, label: str, s: Setting = setting) -> dict[str, Any]:
                            return run_job(beam_bin, src, outs / label, s.args, s.env, s.roots,
                                           logs / f"{label}.log", update=True)

                        first = update(tiny, f"{name}-startup")  # a cold cluster, all reused
                        main = update(corpus.root, name)
                        small = update(tiny, f"{name}-startup")  # start-up, warm as main was
                        setting.args = [*setting.args, "--update"]
                        fig = _figures(setting, main, small, n_docs, STARTUP_DOCS)
                        fig["startup"]["first_job_wall_s"] = first["wall_s"]
                    fig["changed_documents"] = changed
                    fig["base"] = "hard links of the flink_2tm output"
                elif name == "direct_in_memory_incremental_1pct":
                    previous = outs / "direct_in_memory"
                    if not (previous / "manifest.json").exists():
                        raise JobFailed("needs the direct_in_memory output of this run")
                    changed = churn_once()
                    setting = Setting("DirectRunner", 1, [*IN_MEMORY, f"--previous={previous}"])
                    main = run_job(beam_bin, corpus.root, outs / name, setting.args, {}, {},
                                   logs / f"{name}.log")
                    # Start-up: the 20-document job against its own earlier output (all reused).
                    small = run_job(beam_bin, tiny, outs / f"{name}-startup",
                                    [*IN_MEMORY, f"--previous={outs / 'direct_in_memory-startup'}"],
                                    {}, {}, logs / f"{name}-startup.log")
                    fig = _figures(setting, main, small, n_docs, STARTUP_DOCS)
                    fig["changed_documents"] = changed
                else:
                    with settings[name]() as setting:
                        def job(src: Path, label: str, s: Setting = setting) -> dict[str, Any]:
                            return run_job(beam_bin, src, outs / label, s.args, s.env, s.roots,
                                           logs / f"{label}.log")

                        first = job(tiny, f"{name}-first")  # fails fast; a cold cluster
                        main = job(corpus.root, name)
                        records: Any = None
                        if setting.records_per_tm is not None:
                            try:
                                records = setting.records_per_tm()
                            except Exception as exc:  # REST shape: reported, not fatal
                                records = f"unavailable: {exc}"
                        small = job(tiny, f"{name}-startup")  # start-up, warm as main was
                        fig = _figures(setting, main, small, n_docs, STARTUP_DOCS)
                        fig["startup"]["first_job_wall_s"] = first["wall_s"]
                        if records is not None:
                            fig["records_per_taskmanager"] = records
            except Exception as exc:  # one failed configuration does not lose the others
                fig = {"failed": f"{type(exc).__name__}: {exc}"}
            results["configurations"][name] = fig
            progress("   " + ", ".join(
                f"{k} {v:,.3f}" if isinstance(v, float) else f"{k} {v.splitlines()[0]}"
                for k, v in fig.items()
                if k in ("wall_s", "docs_per_s", "cpu_s_per_doc", "cpu_busy_cores", "failed")
            ))
        if versus := versus_full(results):
            results["incremental_vs_full"] = versus
        one, two = (results["configurations"].get(k, {}) for k in ("flink_1tm", "flink_2tm"))
        if "docs_per_s" in one and "docs_per_s" in two:
            results["scaling_2tm_vs_1tm"] = {
                "docs_per_s": two["docs_per_s"] / one["docs_per_s"],
                "steady_docs_per_s": (two["steady_docs_per_s"] / one["steady_docs_per_s"]
                                      if "steady_docs_per_s" in one
                                      and "steady_docs_per_s" in two else None),
                "note": f"{os.cpu_count()} CPUs: launcher, job server and JobManager share "
                        "them with the TaskManagers",
            }
    finally:
        if own_tmp:
            shutil.rmtree(base, ignore_errors=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="benchmarks scale",
        description="The job on N real documents: DirectRunner and a Flink cluster "
        "(see benchmarks/scale.py).",
    )
    parser.add_argument("--docs", type=int, default=DEFAULT_DOCS,
                        help=f"documents in the corpus (default {DEFAULT_DOCS:,})")
    parser.add_argument("--configs", default=",".join(CONFIGS),
                        help=f"comma-separated subset of: {', '.join(CONFIGS)}")
    parser.add_argument("--workdir", type=Path,
                        help="keep corpus, outputs and logs here (default: a temporary "
                        "directory, removed at the end)")
    parser.add_argument("--tm-memory", default=TM_MEMORY,
                        help=f"taskmanager.memory.process.size (default {TM_MEMORY})")
    args = parser.parse_args(argv)
    configs = tuple(c.strip() for c in args.configs.split(",") if c.strip())
    unknown = sorted(set(configs) - set(CONFIGS))
    if unknown or args.docs <= STARTUP_DOCS:
        parser.error(f"unknown configuration(s) {unknown}" if unknown
                     else f"--docs must be more than {STARTUP_DOCS}")
    results = run(args.docs, configs, args.workdir, args.tm_memory)
    stem = "scale" if args.docs >= DEFAULT_DOCS else "scale-quick"
    RESULTS.mkdir(exist_ok=True)
    target = RESULTS / f"{stem}.json"
    target.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    md = table(results)
    (RESULTS / f"{stem}.md").write_text(
        f"# Scale benchmark, {results['date']}\n\n{args.docs:,} documents, "
        f"{results['corpus']['bytes'] / 1e6:,.1f} MB, {results['machine']['cpus']} CPUs "
        f"(`python -m benchmarks scale --docs {args.docs}`).\n\n{md}\n", encoding="utf-8")
    print(md)
    print(f"wrote {target.relative_to(REPO)}")
    failed = [n for n, f in results["configurations"].items() if "failed" in f]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
