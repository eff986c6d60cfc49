"""The one exception tree of kebab-chunk, grouped by how a caller handles an error.

Every error the library raises on purpose derives from :class:`KebabError`, and every
message is one sentence that says what is wrong and how to fix it. The three groups under
it say what to do: fix the call or choose another path (:class:`ConfigurationError`), fix
the machine (:class:`EnvironmentProblem`), or record the one document and go on
(:class:`DocumentError`)::

    KebabError
    ├── ConfigurationError        an option, label, policy or path given is wrong: fix the call
    │   ├── PolicyError            a ChunkPolicy field is out of range or unknown
    │   ├── LimitsError            a ParseLimits field is out of range
    │   ├── UnknownChunkerError    no chunker is registered under the requested label
    │   ├── UnknownParserVersionError  no parser is registered under the requested version
    │   ├── WrongTypeError         a value of the wrong type (text where bytes belong, ...)
    │   │   └── NotBytesError      text (or anything else) was given where a file's bytes belong
    │   ├── RunSetupError          --input / --output cannot be used as given
    │   │   └── ClaimBusyError     another live run holds the output or runs folder
    │   └── OutputDirError         a directory given as an output to read is not a finished one
    │       └── SnapshotConflictError  another run committed the same snapshot first
    ├── EnvironmentProblem        the machine is missing something: install it
    │   ├── TokenizerError         a tokenizer cannot be loaded (missing file or package)
    │   └── MissingDependencyError a package of an extra (Beam, numpy, matplotlib) is missing
    └── DocumentError             one document (or record) cannot be used: record it, go on
        ├── UnsupportedDocumentError  a chunker was given a document it does not handle
        ├── RecordError            a record, row or text given to an adapter cannot be used
        ├── ReadRefused            a corpus entry is not read (not a regular file, a symlink
        │                          out of the corpus); it becomes a read error row
        └── ParseError             the bytes of one document could not be parsed
            ├── EncryptedDocumentError     a PDF needs a password we do not have
            ├── BinaryContentError         bytes with a text extension are not text
            ├── LimitExceededError         a configured size, page or time limit was exceeded
            └── UnsupportedMediaTypeError  no parser reads the document's media type

``UsageError`` is another name of ``ConfigurationError`` (the command line's word for it,
exit status 2). Each class also derives from the built-in exception a caller would catch
without knowing ours (``ValueError``, ``KeyError``, ``TypeError``, ``ImportError``,
``RuntimeError``). ``ParseError`` carries ``error_type``, a short stable slug that the
pipeline writes into its error rows, so the errors dataset can be grouped without parsing
messages.
"""

from __future__ import annotations

__all__ = [
    "BinaryContentError",
    "ClaimBusyError",
    "ConfigurationError",
    "DocumentError",
    "EncryptedDocumentError",
    "EnvironmentProblem",
    "KebabError",
    "LimitExceededError",
    "LimitsError",
    "MissingDependencyError",
    "NotBytesError",
    "OutputDirError",
    "ParseError",
    "PolicyError",
    "ReadRefused",
    "RecordError",
    "RunSetupError",
    "SnapshotConflictError",
    "TokenizerError",
    "UnknownChunkerError",
    "UnknownParserVersionError",
    "UnsupportedDocumentError",
    "UnsupportedMediaTypeError",
    "UsageError",
    "WrongTypeError",
]


class KebabError(Exception):
    """Base class of every error kebab-chunk raises on purpose."""


class ConfigurationError(KebabError, ValueError):
    """What the caller asked for cannot be done as asked (an option, a label, a policy, a
    path); the message says what to change. The command line prints it and exits 2."""


#: The command line's name for :class:`ConfigurationError` (the same class).
UsageError = ConfigurationError


class EnvironmentProblem(KebabError, RuntimeError):
    """Something the machine lacks (a package, a tokenizer file); the message says what to
    install."""


class DocumentError(KebabError):
    """One document or record cannot be used; a run records it and goes on with the others."""


class PolicyError(ConfigurationError):
    """A chunk policy is invalid; the message names the field and the allowed range."""


class LimitsError(ConfigurationError):
    """Parse limits are invalid; the message names the field and the allowed range."""


class UnknownChunkerError(ConfigurationError, KeyError):
    """No chunker is registered under the requested version label."""

    def __str__(self) -> str:  # KeyError would repr() the message otherwise
        return str(self.args[0]) if self.args else ""


class UnknownParserVersionError(ConfigurationError, KeyError):
    """No parser is registered under the requested version label."""

    def __str__(self) -> str:  # KeyError would repr() the message otherwise
        return str(self.args[0]) if self.args else ""


class UnsupportedDocumentError(DocumentError, ValueError):
    """A chunker was handed a document outside its contract (e.g. Markdown to pdf-page-v1)."""


class WrongTypeError(ConfigurationError, TypeError):
    """A value of the wrong type was given (text where a file's bytes belong, a number
    where a record belongs); the message names the type expected."""


class RecordError(DocumentError, ValueError):
    """A record, row or text given to an adapter cannot be used as it is (a field missing,
    flat metadata that cannot be turned back into a record, text UTF-8 cannot encode)."""


class NotBytesError(WrongTypeError):
    """A parser was given something other than bytes; spans index the decoded bytes, so
    the library never guesses how text was encoded."""


class TokenizerError(EnvironmentProblem):
    """A tokenizer could not be loaded offline; the message names what to install."""


class MissingDependencyError(EnvironmentProblem, ImportError):
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


class RunSetupError(ConfigurationError):
    """An --input or --output value cannot be used; the message says how to fix it."""


class ClaimBusyError(RunSetupError):
    """The directory is claimed by another live process (the message says which)."""


class OutputDirError(ConfigurationError):
    """A path given as a finished output (``diff``, ``inspect``, ``--previous``) is not one."""


class SnapshotConflictError(OutputDirError):
    """Another run committed the snapshot this run was about to commit (``run --update``)."""


class ReadRefused(DocumentError):
    """A local corpus entry that is not read; ``error_type`` and ``message`` make its
    error row."""

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message


class ParseError(DocumentError):
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
