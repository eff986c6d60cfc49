"""``python -m fuzz.atheris_target TARGET [libFuzzer flags and corpus dirs]``.

Runs one target under atheris (coverage-guided libFuzzer). The parser package and the
library that does the parsing are instrumented for coverage; a crash (see
:func:`fuzz.targets.check`) stops the run with the input saved by libFuzzer.
"""

from __future__ import annotations

import logging
import sys

import atheris

#: Third-party modules worth instrumenting per media type (pure Python parts).
_LIBRARIES = {
    "text/markdown": ["mistune"],
    "application/pdf": ["pypdf"],
    "text/html": [],
    "text/csv": [],
    "text/tab-separated-values": [],
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ["docx"],
    "application/vnd.docling+json": [],
}


def main() -> None:
    name, libfuzzer_args = sys.argv[1], sys.argv[2:]
    from fuzz.targets import targets

    target = targets()[name]
    instrumented = ["kebab_chunk", *_LIBRARIES.get(target.media_type, [])]
    with atheris.instrument_imports(include=instrumented):
        from kebab_chunk.parsers.registry import get_parser_by_version

        get_parser_by_version(target.version, target.media_type)  # import it instrumented
        from fuzz.targets import check

    logging.disable(logging.WARNING)  # chunkers log trimmed contexts; not crashes

    def test_one_input(data: bytes) -> None:
        check(target, data)

    atheris.Setup([sys.argv[0], *libfuzzer_args], test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
