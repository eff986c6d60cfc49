"""The one exception tree of kebab-chunk.

Every error the library raises on purpose derives from :class:`KebabError`, and every
message is one sentence that says what is wrong and how to fix it::

    KebabError
    ├── UsageError             a command-line option or argument is wrong (exit status 2)
    ├── PolicyError            a ChunkPolicy field is out of range or unknown
    ├── LimitsError            a ParseLimits field is out of range
    ├── UnknownChunkerError    no chunker is registered under the requested label
    ├── UnknownParserVersionError  no parser is registered under the requested version
    ├── UnsupportedDocumentError  a chunker was given a document it does not handle
    ├── NotBytesError          text (or anything else) was given where a file's bytes belong
    ├── TokenizerError         a tokenizer cannot be loaded (missing file or package)
    ├── MissingDependencyError a package of an extra (Beam, numpy, matplotlib) is not installed
    ├── RunSetupError          --input / --output cannot be used as given
    │   └── ClaimBusyError     another live run holds the output or runs folder
    ├── OutputDirError         a directory given as an output to read is not a finished one
    │   └── SnapshotConflictError  another run committed the same snapshot of an output first
    ├── ReadRefused            a corpus entry is not read (not a regular file, a symlink
    │                          out of the corpus); it becomes a read error row
    └── ParseError             the bytes of one document could not be parsed
        ├── EncryptedDocumentError     a PDF needs a password we do not have
        ├── BinaryContentError         bytes with a text extension are not text
        ├── LimitExceededError         a configured size, page or time limit was exceeded
        └── UnsupportedMediaTypeError  no parser reads the document's media type

``ParseError`` carries ``error_type``, a short stable slug that the pipeline writes into
its error rows, so the errors dataset can be grouped without parsing messages.
"""

from __future__ import annotations

__all__ = [
    "BinaryContentError",
    "ClaimBusyError",
    "EncryptedDocumentError",
    "KebabError",
    "LimitExceededError",
    "LimitsError",
    "MissingDependencyError",
    "NotBytesError",
    "OutputDirError",
    "ParseError",
    "PolicyError",
    "ReadRefused",
    "RunSetupError",
    "SnapshotConflictError",
    "TokenizerError",
    "UnknownChunkerError",
    "UnknownParserVersionError",
    "UnsupportedDocumentError",
    "UnsupportedMediaTypeError",
    "UsageError",
]


class KebabError(Exception):
    """Base class of every error kebab-chunk raises on purpose."""


class UsageError(KebabError, ValueError):
    """A command-line problem; the message is the one sentence the CLI prints (exit 2)."""


class PolicyError(KebabError, ValueError):
    """A chunk policy is invalid; the message names the field and the allowed range."""


class LimitsError(KebabError, ValueError):
    """Parse limits are invalid; the message names the field and the allowed range."""


class UnknownChunkerError(KebabError, KeyError):
    """No chunker is registered under the requested version label."""

    def __str__(self) -> str:  # KeyError would repr() the message otherwise
        return str(self.args[0]) if self.args else ""


class UnknownParserVersionError(KebabError, KeyError):
    """No parser is registered under the requested version label."""

    def __str__(self) -> str:  # KeyError would repr() the message otherwise
        return str(self.args[0]) if self.args else ""


class UnsupportedDocumentError(KebabError, ValueError):
    """A chunker was handed a document outside its contract (e.g. Markdown to pdf-page-v1)."""


class NotBytesError(KebabError, TypeError):
    """A parser was given something other than bytes; spans index the decoded bytes, so
    the library never guesses how text was encoded."""


class TokenizerError(KebabError, RuntimeError):
    """A tokenizer could not be loaded offline; the message names what to install."""


class MissingDependencyError(KebabError, ImportError):
    """An optional package is needed (matplotlib for the report's charts); the message says
    how to install it."""

    @classmethod
    def for_extra(cls, what: str, package: str, extra: str) -> MissingDependencyError:
        """``what`` (a command or module) needs ``package`` of the extra ``extra``: the
        sentence says so and gives the install line."""
        return cls(
            f"{what} needs {package}, which is not installed; install it with "
            f"pip install 'kebab-chunk[{extra}]'"
        )


class RunSetupError(KebabError, ValueError):
    """An --input or --output value cannot be used; the message says how to fix it."""


class ClaimBusyError(RunSetupError):
    """The directory is claimed by another live process (the message says which)."""


class OutputDirError(KebabError, ValueError):
    """A path given as a finished output (``diff``, ``inspect``, ``--previous``) is not one."""


class SnapshotConflictError(OutputDirError):
    """Another run committed the snapshot this run was about to commit (``run --update``)."""


class ReadRefused(KebabError):
    """A local corpus entry that is not read; ``error_type`` and ``message`` make its
    error row."""

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message


class ParseError(KebabError):
    """One document's bytes could not be turned into a CanonicalDocument."""

    error_type = "parse_error"


class EncryptedDocumentError(ParseError):
    """The document is encrypted with a password we do not have."""

    error_type = "encrypted"


class BinaryContentError(ParseError):
    """The bytes are binary data although the name promises text."""

    error_type = "binary_content"


class LimitExceededError(ParseError):
    """A configured limit (bytes, pages, elements, time) was exceeded."""

    error_type = "limit_exceeded"


class UnsupportedMediaTypeError(ParseError):
    """No parser is registered for the document's media type."""

    error_type = "unsupported_media_type"
