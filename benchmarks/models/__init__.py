"""The models of benchmark B7, written as their users write them: three in JAX (lowered to
StableHLO by `autotune_model.frontends.from_jax`) and one in linalg with a dynamic batch
size, as torch-mlir emits it. Sizes fit a 2-core CPU: each call takes milliseconds."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent


@dataclass(frozen=True)
class Model:
    """A benchmark model: its input IR and its example input shapes (for dynamic sizes)."""

    name: str
    text: str
    input_shapes: tuple[tuple[int, ...], ...] | None = None
    real: bool = False  # exported by a frontend from a library's model code


CORPUS = HERE.parent.parent / "tests" / "data" / "models"
REAL = (
    "bert_flax",
    "vit_flax",
    "vit_bf16_flax",
    "gpt2_onnx",
    "squeezenet_onnx",
    "lstm_onnx",
    "mobilenet_turbine",
    "whisper_turbine",
)
"""The real models of the tests' corpus (`tests/data/models/export.py` made them)."""
STATIC_REAL = (
    "bert_flax",
    "vit_flax",
    "vit_bf16_flax",
    "resnet_flax",
    "bart_flax",
    "gpt2_onnx",
    "squeezenet_onnx",
    "lstm_onnx",
    "mobilenet_turbine",
    "whisper_turbine",
    "convnext_turbine",
    "clip_f16_turbine",
)
"""The corpus's models without a dynamic size (B14, B15)."""


def real_model(name: str) -> Model:
    return Model(name, (CORPUS / f"{name}.mlir").read_text(), real=True)


def _params(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)


def mlp(quick: bool = False) -> Model:
    """A 3-layer MLP with ReLU: batch 64, 512 -> 1024 -> 1024 -> 256."""
    import jax.numpy as jnp

    from autotune_model.frontends import from_jax

    batch, sizes = (16, (128, 256, 256, 64)) if quick else (64, (512, 1024, 1024, 256))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    weights = [_params(rng, a, b) for a, b in zip(sizes, sizes[1:], strict=False)]
    biases = [np.zeros(b, np.float32) for b in sizes[1:]]

    def forward(x, w1, b1, w2, b2, w3, b3):
        h = jnp.maximum(x @ w1 + b1, 0)
        h = jnp.maximum(h @ w2 + b2, 0)
        return h @ w3 + b3

    args = [x, weights[0], biases[0], weights[1], biases[1], weights[2], biases[2]]
    return Model("mlp", from_jax(forward, *args))


def convnet(quick: bool = False) -> Model:
    """A small conv net (NHWC): two 3x3 convolutions with ReLU, global average pooling and
    a dense classifier; a batch of 2 48x48x16 images."""
    import jax
    import jax.numpy as jnp

    from autotune_model.frontends import from_jax

    size, c0, c1, c2 = (16, 8, 16, 16) if quick else (48, 16, 32, 64)
    rng = np.random.default_rng(1)
    image = rng.standard_normal((2, size, size, c0)).astype(np.float32)
    k1 = _params(rng, 3, 3, c0, c1)
    k2 = _params(rng, 3, 3, c1, c2)
    dense = _params(rng, c2, 10)
    numbers = ("NHWC", "HWIO", "NHWC")

    def forward(image, k1, k2, dense):
        h = jax.lax.conv_general_dilated(image, k1, (1, 1), "SAME", dimension_numbers=numbers)
        h = jnp.maximum(h, 0)
        h = jax.lax.conv_general_dilated(h, k2, (1, 1), "SAME", dimension_numbers=numbers)
        h = jnp.maximum(h, 0)
        return jnp.mean(h, axis=(1, 2)) @ dense

    return Model("convnet", from_jax(forward, image, k1, k2, dense))


def encoder(quick: bool = False) -> Model:
    """A transformer encoder block: 4-head self-attention with softmax, residuals, layer
    norms and a ReLU feed-forward layer; sequence 128, width 256, feed-forward 1024."""
    import jax
    import jax.numpy as jnp

    from autotune_model.frontends import from_jax

    seq, width, heads, hidden = (32, 64, 2, 128) if quick else (128, 256, 4, 1024)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((seq, width)).astype(np.float32)
    wq, wk, wv, wo = (_params(rng, width, width) for _ in range(4))
    w1, w2 = _params(rng, width, hidden), _params(rng, hidden, width)

    def norm(h):
        mean = jnp.mean(h, axis=-1, keepdims=True)
        var = jnp.mean((h - mean) ** 2, axis=-1, keepdims=True)
        return (h - mean) / jnp.sqrt(var + 1e-5)

    def forward(x, wq, wk, wv, wo, w1, w2):
        def split(h):
            return h.reshape(seq, heads, width // heads).transpose(1, 0, 2)

        q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
        scores = jnp.einsum("hqd,hkd->hqk", q, k) / np.sqrt(width // heads)
        attention = jnp.einsum("hqk,hkd->hqd", jax.nn.softmax(scores, axis=-1), v)
        h = norm(x + attention.transpose(1, 0, 2).reshape(seq, width) @ wo)
        return norm(h + jnp.maximum(h @ w1, 0) @ w2)

    return Model("encoder", from_jax(forward, x, wq, wk, wv, wo, w1, w2))


def dynamic(quick: bool = False) -> Model:
    """Two linear layers with ReLU over a batch whose size is known only at run time
    (`tensor<?x512xf32>`, linalg), run at batch 96."""
    text = (HERE / "dynamic.mlir").read_text()
    batch = 24 if quick else 96
    return Model("dynamic", text, ((batch, 512), (512, 1024), (1024, 512)))


MODELS = (mlp, convnet, encoder, dynamic)


def whole_models(quick: bool, chosen: Callable[[Iterable[str]], list[str]]) -> list[Model]:
    """The models B7 and B13 tune: the own ones and the corpus's real ones (`REAL`), or
    with `quick` the MLP at its small size; of those, the ones `chosen` keeps
    (`Settings.chosen`)."""
    makers = MODELS[:1] if quick else MODELS
    names = set(chosen(make.__name__ for make in makers))
    models = [make(quick=quick) for make in makers if make.__name__ in names]
    return models + [real_model(name) for name in chosen(() if quick else REAL)]


def known() -> list[str]:
    """Every model a run may name: the own models, then the corpus's."""
    return [make.__name__ for make in MODELS] + sorted(p.stem for p in CORPUS.glob("*.mlir"))
