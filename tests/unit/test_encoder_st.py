"""The `[st]` extra: all-MiniLM-L6-v2 on PyTorch counts as the default encoder (same name, the
vectors the reference file holds). Needs `pip install -e '.[st]'`; run with `pytest -m st`
(the default test run deselects it: the default install has no PyTorch)."""

import base64
import json
from pathlib import Path

import numpy as np
import pytest

from tmem_graph.encode import get_encoder

pytestmark = pytest.mark.st
REFERENCE = Path(__file__).parents[1] / "fixtures" / "minilm-torch.json"


def test_the_pytorch_minilm_is_the_same_encoder_as_the_default():
    torch = get_encoder("sentence-transformers/all-MiniLM-L6-v2")
    default = get_encoder()
    assert type(torch) is not type(default)
    assert (torch.name, torch.dim) == (default.name, default.dim) == ("all-MiniLM-L6-v2", 384)
    ref = json.loads(REFERENCE.read_text(encoding="utf-8"))
    expected = np.frombuffer(base64.b64decode(ref["vectors_f32_base64"]), dtype="<f4").reshape(-1, ref["dim"])
    got = np.array(torch.encode(ref["texts"]))
    assert ((got * expected).sum(axis=1) > 0.99999).all()
    assert [torch.count_tokens(t) for t in ref["texts"]] == [default.count_tokens(t) for t in ref["texts"]]
