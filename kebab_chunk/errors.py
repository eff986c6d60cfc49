"""The one exception tree of kebab-chunk.

Every error the library raises on purpose derives from :class:`KebabError`, and every
message is one sentence that says what is wrong and how to fix it::

    KebabError
    ├── PolicyError            a ChunkPolicy field is out of range or unknown
    ├── UnknownChunkerError    no chunker is registered under the requested label
    ├── UnsupportedDocumentError  a chunker was given a document it does not handle
    ├── TokenizerError         a tokenizer cannot be loaded (missing file or package)
    └── ParseError             the bytes of one document could not be parsed
        ├── EncryptedDocumentError  a PDF needs a password we do not have
        ├── BinaryContentError      bytes with a text extension are not text
        └── LimitExceededError      a configured size, page or time limit was exceeded

``ParseError`` carries ``error_type``, a short stable slug that the pipeline writes into
its error rows, so the errors dataset can be grouped without parsing messages.
"""

from __future__ import annotations

__all__ = [
    "BinaryContentError",
    "EncryptedDocumentError",
    "KebabError",
    "LimitExceededError",
    "ParseError",
    "PolicyError",
    "TokenizerError",
    "UnknownChunkerError",
    "UnsupportedDocumentError",
]


class KebabError(Exception):
    """Base class of every error kebab-chunk raises on purpose."""


class PolicyError(KebabError, ValueError):
    """A chunk policy is invalid; the message names the field and the allowed range."""


class UnknownChunkerError(KebabError, KeyError):
    """No chunker is registered under the requested version label."""

    def __str__(self) -> str:  # KeyError would repr() the message otherwise
        return str(self.args[0]) if self.args else ""


class UnsupportedDocumentError(KebabError, ValueError):
    """A chunker was handed a document outside its contract (e.g. Markdown to pdf-page-v1)."""


class TokenizerError(KebabError, RuntimeError):
    """A tokenizer could not be loaded offline; the message names what to install."""


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
