"""The job on Prism, Beam's portable local runner, built from the Go module proxy at the
main environment's Beam version, against that environment's DirectRunner.

Prism runs the pipeline through the Fn API like any portable runner (job submission,
fused stages, gRPC data plane) with the Python SDK harness in its default environment;
Prism 2.77 cannot provision SDK workers of the PROCESS environment (its worker pool does
not register them; docs/internals/decisions.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.engines import provision
from tests.engines.conftest import Mixed, Output, assert_same_output, kebab_run

pytestmark = pytest.mark.slow


def test_prism_output_is_byte_identical_to_the_direct_runner(
    tmp_path: Path, mixed_corpus: Mixed, direct_main: Output
) -> None:
    prism = provision.prism()
    out = kebab_run(
        Path(sys.executable).parent,
        mixed_corpus.root,
        tmp_path / "out",
        "--runner=PrismRunner",
        f"--prism_location={prism}",
        "--verbose",  # Beam's INFO lines name the runner that ran the job
    )
    assert "PrismRunner" in out.log  # the run went through Prism, not a fallback runner
    assert_same_output(out, direct_main)
