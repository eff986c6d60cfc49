"""The job on Spark (``local[2]``) through Beam's Spark job server, against the DirectRunner
of the same Beam version (the apache-beam 2.62.0 venv; tests/engines/provision.py).

The job server runs Spark inside its own JVM; SDK workers are separate processes that
Spark's executors start through Beam's ``boot`` (PROCESS environment).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engines import provision
from tests.engines.conftest import Mixed, Output, assert_same_output, kebab_run

pytestmark = pytest.mark.slow

#: Spark 3.5 on Java 17 needs these packages opened (what spark-submit adds by itself);
#: the job server is started by Beam with ``java -jar``, so they go in JAVA_TOOL_OPTIONS.
SPARK_JAVA17_OPENS = " ".join(
    f"--add-opens=java.base/{p}=ALL-UNNAMED"
    for p in (
        "java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net",
        "java.nio", "java.util", "java.util.concurrent", "java.util.concurrent.atomic",
        "sun.nio.ch", "sun.nio.cs", "sun.security.action", "sun.util.calendar",
    )
)  # fmt: skip


@pytest.fixture(scope="module")
def spark(
    tmp_path_factory: pytest.TempPathFactory, mixed_corpus: Mixed, beam262_bin: Path,
    boot262: Path,
) -> Output:  # fmt: skip
    jar = provision.spark_job_server_jar()
    out = tmp_path_factory.mktemp("spark") / "out"
    return kebab_run(
        beam262_bin,
        mixed_corpus.root,
        out,
        "--runner=SparkRunner",
        "--spark_master_url=local[2]",
        f"--spark_job_server_jar={jar}",
        "--environment_type=PROCESS",
        f'--environment_config={{"command": "{boot262}"}}',
        JAVA_TOOL_OPTIONS=SPARK_JAVA17_OPENS,
        RUN_PYTHON_SDK_IN_DEFAULT_ENVIRONMENT="1",
    )


def test_spark_output_is_byte_identical_to_the_direct_runner(
    spark: Output, direct262: Output
) -> None:
    assert_same_output(spark, direct262)
    assert spark.manifest["accounting"]["closes"] is True
    assert spark.manifest["counts"]["files_matched"] > 50
