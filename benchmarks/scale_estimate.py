"""Paper estimate for 10 million documents on Dataflow and on Flink, from a scale run.

``python -m benchmarks.scale_estimate [RESULTS.json] [--write]`` (default:
``results/scale.json``, else ``results/scale-quick.json``) prints the tables of
docs/guide/scale.md; ``--write`` also puts them between the markers there. Every assumption is
a constant below and is stated in docs/guide/scale.md; the measured inputs come from the JSON
that ``python -m benchmarks scale`` writes.

Model, per document of the target mix:

* parse + chunk CPU ``p_t`` = sum over kinds of share x size x single-core rate (the rates of
  ``bench_markdown`` / ``bench_pdf`` / ``bench_peers``); ``p_b`` = the same work measured in
  the scale run (CPU of the parse/chunk helpers of the in-memory DirectRunner job, start-up
  job subtracted); ``F = p_t / p_b``;
* worker CPU ``c_t = c_w x F``, ``c_w`` = marginal CPU per document of the TaskManager
  process trees (JVM, boot, SDK worker, helpers) in the 2-TaskManager Flink run: the whole
  per-document cost, runner included, is taken to grow with the document like its parsing;
* vCPU-hours = N x c_t / 3600 / UTILISATION; wall = vCPU-hours / (workers x vCPUs) + start;
* nightly run at 1% churn, ``--update`` (``results/scale-update.json``, or ``--nightly``):
  ``R_u`` x the full run's CPU, ``R_u`` = marginal CPU per document of the update job / the
  full in-memory job measured in the same scale run; its shuffle carries each file's
  record (the same ~1 KB as a full run: path, media type, hash and the base document row
  it is joined with) plus the changed documents' bytes;
* the same with ``--previous`` (``R``, from the main results, when they have it): its
  shuffle carries every document's bytes and every previous record.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"

N_DOCS = 10_000_000
CHURN = 0.01
#: Target mix: kind -> (share, average file KB, parse+chunk ms per document on one core).
#: Rates: Markdown parse+chunk 4.5 MB/s (0.22 ms/KB); HTML as hybrid-v1 on Markdown,
#: 2.3 MB/s (0.43 ms/KB, no HTML-specific figure yet); PDF pdf-text-v1 ~440 pages/s
#: (2.3 ms/page), 12 pages of ~20 KB per page.
TARGET_MIX: dict[str, tuple[float, float, float]] = {
    "Markdown": (0.70, 10.0, 10.0 * 0.22),
    "HTML": (0.20, 30.0, 30.0 * 0.43),
    "PDF": (0.10, 250.0, 12 * 2.3),
}
TEXT_KB = {"Markdown": 10.0, "HTML": 8.0, "PDF": 36.0}  # extracted text per document
UTILISATION = 0.7  # busy vCPU / provisioned vCPU over a long run (assumed)
WORKERS, VCPUS = 10, 4  # 10 x 4 vCPU: Dataflow n1-standard-4 / EC2 c6i.xlarge (4 slots)
START_H = 0.1  # worker / cluster start-up, billed
SHUFFLE_KB_PER_DOC_FULL = 1.0  # file records and per-file outcomes (chunks go via spill files)

# Public list prices, taken as of 2026-11 (us-central1 / us-east-1, on-demand, USD).
DATAFLOW_VCPU_H = 0.056
DATAFLOW_GB_H = 0.003557
DATAFLOW_PD_GB_H = 0.000054
DATAFLOW_SHUFFLE_GB = 0.011
DATAFLOW_GB_PER_VCPU = 3.75  # n1-standard
DATAFLOW_PD_GB = 250  # batch default per worker
EC2_TM_H = 0.17  # c6i.xlarge: 4 vCPU, 8 GiB
EC2_JM_H = 0.096  # m6i.large JobManager
GET_PER_1000 = 0.0004  # GCS class B / S3 GET


def _load(path: Path | None) -> tuple[Path, dict[str, Any]]:
    if path is None:
        path = next((p for p in (RESULTS / "scale.json", RESULTS / "scale-quick.json")
                     if p.exists()), RESULTS / "scale.json")
    return path, json.loads(path.read_text(encoding="utf-8"))


UPDATE = "direct_in_memory_update_1pct"
PREVIOUS = "direct_in_memory_incremental_1pct"


def _ratio(results: dict[str, Any] | None, config: str) -> float | None:
    """Marginal CPU per document of ``config`` / of the full in-memory job of one run."""
    configs = (results or {}).get("configurations", {})
    full, incr = configs.get("direct_in_memory", {}), configs.get(config, {})
    if "marginal_cpu_s_per_doc" not in full or "marginal_cpu_s_per_doc" not in incr:
        return None
    return float(incr["marginal_cpu_s_per_doc"] / full["marginal_cpu_s_per_doc"])


def inputs(results: dict[str, Any], nightly: dict[str, Any] | None = None) -> dict[str, Any]:
    """The measured figures the estimate uses (KeyError names what a run lacks);
    ``nightly``: the scale run that measured ``--update`` (default: ``results``)."""
    configs = results["configurations"]
    direct = configs["direct_in_memory"]
    update = _ratio(nightly, UPDATE) if nightly is not None else _ratio(results, UPDATE)
    if update is None:
        raise KeyError(f"no {UPDATE} measurement; run ./run_local.sh bench scale --configs "
                       f"direct_in_memory,{UPDATE}")
    flink = configs["flink_2tm"] if "marginal_cpu_s_per_doc" in configs.get(
        "flink_2tm", {}) else configs["flink_1tm"]
    tms = [t for t in flink["memory"] if t.startswith("tm-")]
    return {
        "documents": results["corpus"]["documents"],
        "bytes_in_per_doc": results["corpus"]["bytes_per_doc"],
        "p_b_ms": direct["marginal_cpu_s_per_doc_by_role"]["launcher/helper"] * 1000,
        "direct_ms": direct["marginal_cpu_s_per_doc"] * 1000,
        "update_ratio": update,
        "update_documents": (nightly or results)["corpus"]["documents"],
        "update_date": (nightly or results)["date"],
        "previous_ratio": _ratio(results, PREVIOUS),
        "c_w_ms": sum(v for t, v in flink["marginal_cpu_s_per_doc_by_tree"].items()
                      if t.startswith("tm-")) * 1000,
        "flink_all_ms": flink["marginal_cpu_s_per_doc"] * 1000,
        "flink_taskmanagers": len(tms),
        "out_bytes_per_doc": direct["output_bytes_per_doc"],
        "records_bytes_per_doc": direct["chunk_bytes_uncompressed_per_doc"],
        "tm_jvm_mb": max(flink["memory"][t]["root_peak_rss_mb"] for t in tms),
        "sdk_worker_mb": max(flink["memory"][t].get("sdk_worker_peak_rss_mb", 0) for t in tms),
        "helper_mb": max(flink["memory"][t].get("helper_peak_rss_mb", 0) for t in tms),
    }


def _costs(vcpu_h: float, wall_h: float, shuffle_gb: float) -> dict[str, float]:
    gets = N_DOCS / 1000 * GET_PER_1000
    dataflow = {
        "vCPU": vcpu_h * DATAFLOW_VCPU_H,
        "memory": vcpu_h * DATAFLOW_GB_PER_VCPU * DATAFLOW_GB_H,
        "disk": WORKERS * DATAFLOW_PD_GB * wall_h * DATAFLOW_PD_GB_H,
        "shuffle": shuffle_gb * DATAFLOW_SHUFFLE_GB,
        "reads": gets,
    }
    flink = {"VMs": wall_h * (WORKERS * EC2_TM_H + EC2_JM_H), "reads": gets}
    return {"dataflow": sum(dataflow.values()), "flink": sum(flink.values()),
            **{f"dataflow {k}": v for k, v in dataflow.items()},
            **{f"flink {k}": v for k, v in flink.items()}}


def estimate(results: dict[str, Any], nightly: dict[str, Any] | None = None) -> dict[str, Any]:
    m = inputs(results, nightly)
    p_t = sum(share * ms for share, _, ms in TARGET_MIX.values())
    kb_t = sum(share * kb for share, kb, _ in TARGET_MIX.values())
    text_kb_t = sum(TARGET_MIX[k][0] * kb for k, kb in TEXT_KB.items())
    factor = p_t / m["p_b_ms"]
    c_t = m["c_w_ms"] * factor
    plans = [
        ("full", c_t, SHUFFLE_KB_PER_DOC_FULL),
        ("nightly 1%, --update", c_t * m["update_ratio"],
         SHUFFLE_KB_PER_DOC_FULL + CHURN * kb_t),
    ]
    if m["previous_ratio"] is not None:
        plans.append(("nightly 1%, --previous", c_t * m["previous_ratio"],
                      kb_t + m["records_bytes_per_doc"] / 1000 * factor
                      + SHUFFLE_KB_PER_DOC_FULL))
    runs = {}
    for name, cpu_ms, shuffle_kb in plans:
        busy_h = N_DOCS * cpu_ms / 1000 / 3600
        vcpu_h = busy_h / UTILISATION
        wall_h = vcpu_h / (WORKERS * VCPUS) + START_H
        shuffle_gb = N_DOCS * shuffle_kb / 1e6
        runs[name] = {"cpu_ms_per_doc": cpu_ms, "busy_vcpu_h": busy_h, "vcpu_h": vcpu_h,
                      "wall_h": wall_h, "shuffle_gb": shuffle_gb,
                      **_costs(vcpu_h, wall_h, shuffle_gb)}
    return {"measured": m, "p_t_ms": p_t, "kb_per_doc": kb_t, "text_kb_per_doc": text_kb_t,
            "factor": factor, "c_t_ms": c_t, "runs": runs,
            "memory_per_tm_mb": m["tm_jvm_mb"] + VCPUS * (m["sdk_worker_mb"] + m["helper_mb"])}


def markdown(results: dict[str, Any], source: str,
             nightly: dict[str, Any] | None = None) -> str:
    e = estimate(results, nightly)
    m = e["measured"]
    small = m["documents"] < 100_000
    lines = [
        *([f"**Measured on {m['documents']:,.0f} documents, fewer than the 100,000 default: "
           "indicative** (redo with `./run_local.sh bench scale`, then "
           "`.venv/bin/python -m benchmarks.scale_estimate --write`).", ""] if small else []),
        f"Measured inputs ({source}, {m['documents']:,.0f} documents, {results['date']}):",
        "",
        "| input | value |",
        "|---|---|",
        f"| bytes in per document (benchmark mix) | {m['bytes_in_per_doc']:,.0f} |",
        f"| p_b: parse+chunk CPU per document (helpers, DirectRunner) | {m['p_b_ms']:.2f} ms |",
        f"| full job CPU per document, DirectRunner in-memory | {m['direct_ms']:.2f} ms |",
        f"| c_w: TaskManager CPU per document, Flink {m['flink_taskmanagers']:.0f} TM "
        f"(all processes: {m['flink_all_ms']:.2f} ms) | {m['c_w_ms']:.2f} ms |",
        f"| R_u: `--update` (1% changed) / full, CPU per document (run of "
        f"{m['update_date']}, {m['update_documents']:,.0f} documents) | "
        f"{m['update_ratio']:.2f} |",
        *([f"| R: `--previous` (1% changed) / full, CPU per document | "
           f"{m['previous_ratio']:.2f} |"] if m["previous_ratio"] is not None else []),
        f"| output (Parquet) / chunk records uncompressed, per document | "
        f"{m['out_bytes_per_doc']:,.0f} / {m['records_bytes_per_doc']:,.0f} bytes |",
        f"| peak RSS: TaskManager JVM / SDK worker / parse helper | {m['tm_jvm_mb']:,.0f} / "
        f"{m['sdk_worker_mb']:,.0f} / {m['helper_mb']:,.0f} MB |",
        "",
        f"Target mix: p_t = {e['p_t_ms']:.1f} ms, {e['kb_per_doc']:.0f} KB per document; "
        f"F = p_t / p_b = {e['factor']:.2f}; c_t = c_w x F = {e['c_t_ms']:.1f} ms per "
        f"document; a {VCPUS}-slot TaskManager needs ~{e['memory_per_tm_mb'] / 1024:.1f} GB.",
        "",
        f"| 10M documents, {WORKERS} workers x {VCPUS} vCPU | CPU ms/doc | busy vCPU-h | "
        "vCPU-h billed | wall h | shuffle GB | Dataflow $ | Flink on EC2 $ |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in e["runs"].items():
        lines.append(
            f"| {name} | {r['cpu_ms_per_doc']:.1f} | {r['busy_vcpu_h']:,.0f} | "
            f"{r['vcpu_h']:,.0f} | {r['wall_h']:.2f} | {r['shuffle_gb']:,.0f} | "
            f"{r['dataflow']:,.2f} | {r['flink']:,.2f} |"
        )
    names = list(e["runs"])

    def parts(prefix: str) -> str:
        return "; ".join(
            f"{k.removeprefix(prefix)} "
            + " / ".join(f"${e['runs'][n][k]:,.2f}" for n in names)
            for k in e["runs"]["full"] if k.startswith(prefix)
        )

    lines += ["", f"Cost parts ({' / '.join(names)}): Dataflow: {parts('dataflow ')}. "
              f"Flink: {parts('flink ')}."]
    return "\n".join(lines)


DOC = Path(__file__).resolve().parents[1] / "docs" / "guide" / "scale.md"
BEGIN, END = "<!-- estimate:begin -->", "<!-- estimate:end -->"


def write_doc(block: str, doc: Path = DOC) -> None:
    """Replaces the block between the estimate markers of docs/guide/scale.md."""
    text = doc.read_text(encoding="utf-8")
    head, _, rest = text.partition(BEGIN)
    _, found, tail = rest.partition(END)
    if not found:
        raise ValueError(f"{doc} has no {BEGIN} ... {END} block")
    doc.write_text(f"{head}{BEGIN}\n{block}\n{END}{tail}", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale_estimate")
    parser.add_argument("results", nargs="?", type=Path,
                        help="a scale run's JSON (default results/scale.json, else "
                        "results/scale-quick.json)")
    parser.add_argument("--nightly", type=Path, default=RESULTS / "scale-update.json",
                        help="the scale run that measured --update (default "
                        "results/scale-update.json)")
    parser.add_argument("--write", action="store_true",
                        help="also replace the estimate block of docs/guide/scale.md")
    args = parser.parse_args(argv)
    path, results = _load(args.results)
    nightly = json.loads(args.nightly.read_text(encoding="utf-8")) if args.nightly.exists() \
        else None
    block = markdown(results, path.name, nightly)
    print(block)
    if args.write:
        write_doc(block)
        print(f"updated {DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
