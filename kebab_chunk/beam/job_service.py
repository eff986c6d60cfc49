# mypy: disallow-untyped-calls=False
# (Beam ships partial type hints: its runners are untyped.)
"""The two ways a portable runner fails before the job starts, each as one sentence.

Flink, Spark and the ``PortableRunner`` submit the job to a job service
(docs/guide/runners.md). Beam reaches one in two ways, and neither fails helpfully:

- ``--job_endpoint=HOST:PORT``: Beam waits ``--job_server_timeout`` (300 s by default)
  for the channel without a word, then raises a bare ``FutureTimeoutError``.
  :func:`check_job_endpoint` waits for it first, ``JOB_ENDPOINT_WAIT_S`` unless
  ``--job_server_timeout`` is given, and says what is missing.
- no endpoint: ``FlinkRunner``/``SparkRunner`` start a job server from a jar, downloaded
  from Maven Central unless ``--flink_job_server_jar``/``--spark_job_server_jar`` names
  one. Maven Central serves no such jar for recent Beam versions (HTTP 404), and a
  machine without internet access gets none at all. :func:`job_server_jar_error` turns
  Beam's error for that into the sentence naming the two ways out.
- ``PrismRunner`` without ``--prism_location`` downloads a Prism binary from the project's
  GitHub releases, which a machine without internet access cannot reach; the same
  function names ``--prism_location`` and how to build Prism with Go.
"""

from __future__ import annotations

import re

import grpc  # type: ignore[import-untyped]  # no stubs shipped
from apache_beam.options.pipeline_options import PipelineOptions, PortableOptions
from apache_beam.runners.portability.portable_runner import PortableRunner

from kebab_chunk.errors import RunSetupError

__all__ = ["JOB_ENDPOINT_WAIT_S", "check_job_endpoint", "job_server_jar_error"]

#: Seconds to wait for a job service at ``--job_endpoint`` unless --job_server_timeout.
JOB_ENDPOINT_WAIT_S = 30.0

_HOW_TO_GET_A_JOB_SERVER = (
    "docs/guide/runners.md, 'Flink, Spark and Prism', says how to build one and how to run "
    "the job through a job server you start"
)


def check_job_endpoint(runner: object, options: PipelineOptions) -> None:
    """For a portable runner given ``--job_endpoint`` (not ``embed``): RunSetupError in
    one sentence unless a gRPC service answers there within the wait."""
    endpoint = options.view_as(PortableOptions).job_endpoint
    if not isinstance(runner, PortableRunner) or not endpoint or endpoint == "embed":
        return
    given = options.get_all_options(drop_default=True).get("job_server_timeout")
    wait = float(given) if given else JOB_ENDPOINT_WAIT_S
    channel = grpc.insecure_channel(endpoint)
    try:
        grpc.channel_ready_future(channel).result(timeout=wait)
    except grpc.FutureTimeoutError:
        raise RunSetupError(
            f"no job service answered at --job_endpoint={endpoint} within {wait:g} s; start "
            "the job server first (e.g. python -m "
            "apache_beam.runners.portability.local_job_service_main --port PORT, or Flink's "
            "job server), check the address, or wait longer with --job_server_timeout=SECONDS."
        ) from None
    finally:
        channel.close()


def job_server_jar_error(exc: BaseException, options: PipelineOptions) -> RunSetupError | None:
    """The sentence for Beam's failure to find or download a job server jar or a Prism
    binary (None for any other exception)."""
    message = str(exc)
    if (prism := _missing(message, "prism binary", "binary")) is not None:
        downloaded, where = prism
        what = (
            f"PrismRunner could not download its Prism binary ({where})"
            if downloaded
            else f"the Prism binary {where!r} does not exist"
        )
        return RunSetupError(
            f"{what}; build Prism at your Apache Beam version with Go (go install "
            "github.com/apache/beam/sdks/v2/go/cmd/prism@vVERSION) and pass "
            f"--prism_location=PATH ({_HOW_TO_GET_A_JOB_SERVER})."
        )
    if (jar := _missing(message, "job server jar", "jar")) is None:
        return None
    downloaded, where = jar
    runner = str(options.get_all_options().get("runner") or "the runner")
    flag = "--spark_job_server_jar" if "spark" in runner.lower() else "--flink_job_server_jar"
    what = (
        f"{runner} could not download its job server jar ({where})"
        if downloaded
        else f"the job server jar {where!r} does not exist"
    )
    return RunSetupError(
        f"{what}; pass {flag}=PATH naming a job server jar of your Apache Beam version, or "
        "start a job server and use --runner=PortableRunner --job_endpoint=HOST:PORT "
        f"({_HOW_TO_GET_A_JOB_SERVER})."
    )


def _missing(message: str, remote: str, local: str) -> tuple[bool, str] | None:
    """(True, URL) for Beam's "Unable to fetch remote <remote> at URL", (False, PATH) for
    its "Unable to parse <local> URL "PATH"", None for any other message."""
    if fetched := re.match(rf"Unable to fetch remote {remote} at (\S+?):? ", message):
        return True, fetched.group(1)
    if parsed := re.match(rf'Unable to parse {local} URL "([^"]*)"', message):
        return False, parsed.group(1)
    return None
