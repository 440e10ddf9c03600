"""Export the real-model corpus from the libraries' own model code, as their users export.

Small configurations and random weights (nothing is downloaded); every model's input IR is
written next to this file exactly as its frontend emitted it:

- `bert_flax.mlir`, `vit_flax.mlir`, `vit_bf16_flax.mlir` (weights, inputs and compute
  in bf16), `resnet_flax.mlir` (batch 1, its stem's max pooling included): transformers'
  Flax classes, `jax.jit(f).lower(...).as_text()` (StableHLO).
- `gpt2_onnx.mlir`, `squeezenet_onnx.mlir`: transformers' `GPT2Model` and torchvision's
  `squeezenet1_1` at batch 1, `torch.onnx.export` then `iree-import-onnx` (torch dialect
  with `torch.onnx_meta` attributes).
- `mobilenet_turbine.mlir`: torchvision's `mobilenet_v2` (depthwise convolutions) at batch 1,
  `iree.turbine.aot.export(...)` (torch dialect).
- `mobilenet_turbine_dynamic.mlir`: the same MobileNetV2 with its batch dynamic
  (`torch.export.Dim`): `?x3x64x64xf32` in.
- `bert_torch_dynamic.mlir`: transformers' `BertModel` (torch) with its batch and sequence
  length dynamic (`torch.export.Dim`), `iree.turbine.aot.export(...)`: token ids
  `?x?xi64` in, `?x?x128xf32` out.
- `whisper_turbine.mlir`: transformers' `WhisperModel` (torch) encoder, two layers of width
  128, on 40 mel bins x 128 frames, `iree.turbine.aot.export(...)`: its attention is
  `scaled_dot_product_attention`, which IREE makes one `iree_linalg_ext.attention` dispatch.
- `convnext_turbine.mlir`: transformers' `ConvNextModel` (torch; widths 16-128, one block
  a stage) at batch 1 on 64x64 images, `iree.turbine.aot.export(...)`: depthwise 7x7
  convolutions and channel-last layer norms between permutes.
- `qwen2_turbine_dynamic.mlir`: transformers' `Qwen2Model` (torch; two layers of width 64,
  grouped-query attention) with its sequence length dynamic, `iree.turbine.aot.export(...)`:
  token ids and attention mask `1x?xi64` in (given the mask, transformers builds the
  causal and padding masks as i1 tensors; without it, it calls `torch.diff`, which IREE's
  torch frontend does not lower), `1x?x64xf32` out.
- `clip_f16_turbine.mlir`: transformers' `CLIPVisionModel` (torch) in float16 (`.half()`),
  two layers of width 64 on 32x32 images, `iree.turbine.aot.export(...)`.
- `bart_flax.mlir`: transformers' `FlaxBartModel`, an encoder-decoder of one layer each
  (width 64), `jax.jit(f).lower(...).as_text()`: 32 token ids and 16 decoder token ids
  (`i32`) in.

Each model is built once as a `Frontend` (its framework's function or module and its
example arguments), from which its export is made; `benchmarks/peer_worker.py` runs the
same `Frontend` under the framework's own runtime (B14).

Run with the pinned frontends of `requirements.txt` (`make frontends`):
    .venv-frontends/bin/python tests/data/models/export.py [NAME ...]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 0


@dataclass
class Frontend:
    """A model as its framework holds it: `kind` `jax` (a function, exported by
    `jax.jit(f).lower(...)`), `onnx` (a torch module, exported by `torch.onnx.export` then
    `iree-import-onnx`) or `turbine` (a torch module, exported by
    `iree.turbine.aot.export`); `example` its example arguments (the export's shapes)."""

    kind: str
    model: object
    example: tuple
    dynamic_shapes: dict | None = None
    onnx_stem: str = "model"

    def mlir(self) -> str:
        """The model's input IR, as its frontend writes it."""
        if self.kind == "jax":
            import jax

            return jax.jit(self.model).lower(*self.example).as_text()
        if self.kind == "onnx":
            return _onnx_to_mlir(self.model, self.example, self.onnx_stem)
        from iree.turbine import aot

        if self.dynamic_shapes is None:
            return str(aot.export(self.model, *self.example).mlir_module)
        exported = aot.export(self.model, *self.example, dynamic_shapes=self.dynamic_shapes)
        return str(exported.mlir_module)


def small_bert(heads: int, positions: int):
    """A two-layer BERT of hidden size 128 (transformers' config)."""
    from transformers import BertConfig

    return BertConfig(
        vocab_size=1000,
        hidden_size=128,
        num_hidden_layers=2,
        num_attention_heads=heads,
        intermediate_size=512,
        max_position_embeddings=positions,
    )


def bert_flax() -> Frontend:
    import jax.numpy as jnp
    from transformers import FlaxBertModel

    model = FlaxBertModel(small_bert(heads=4, positions=64), seed=SEED)

    def encode(input_ids):
        return model(input_ids, params=model.params).last_hidden_state

    return Frontend("jax", encode, (jnp.zeros((1, 64), jnp.int32),))


def vit_flax() -> Frontend:
    import jax.numpy as jnp
    from transformers import FlaxViTModel, ViTConfig

    config = ViTConfig(
        image_size=64,
        patch_size=8,
        hidden_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=512,
    )
    model = FlaxViTModel(config, seed=SEED)

    def encode(pixel_values):
        return model(pixel_values, params=model.params).last_hidden_state

    return Frontend("jax", encode, (jnp.zeros((1, 3, 64, 64), jnp.float32),))


def vit_bf16_flax() -> Frontend:
    import jax
    import jax.numpy as jnp
    from transformers import FlaxViTModel, ViTConfig

    config = ViTConfig(
        image_size=32,
        patch_size=8,
        hidden_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=256,
    )
    model = FlaxViTModel(config, seed=SEED, dtype=jnp.bfloat16)
    params = jax.tree_util.tree_map(lambda p: p.astype(jnp.bfloat16), model.params)

    def encode(pixel_values):
        return model(pixel_values, params=params).last_hidden_state

    return Frontend("jax", encode, (jnp.zeros((1, 3, 32, 32), jnp.bfloat16),))


def _onnx_to_mlir(model, example, name: str) -> str:
    import torch

    with tempfile.TemporaryDirectory() as folder:
        onnx_path = Path(folder) / f"{name}.onnx"
        torch.onnx.export(model, example, str(onnx_path), dynamo=True)
        importer = Path(sys.executable).with_name("iree-import-onnx")
        out = subprocess.run(
            [str(importer), str(onnx_path), "-o", "-"], check=True, capture_output=True
        )
    return out.stdout.decode()


def resnet_flax() -> Frontend:
    import jax.numpy as jnp
    from transformers import FlaxResNetModel, ResNetConfig

    config = ResNetConfig(
        embedding_size=16, hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1], layer_type="basic"
    )
    model = FlaxResNetModel(config, seed=SEED)

    def classify(pixel_values):
        return model(pixel_values, params=model.params, train=False).pooler_output

    return Frontend("jax", classify, (jnp.zeros((1, 3, 64, 64), jnp.float32),))


def gpt2_onnx() -> Frontend:
    import torch
    from transformers import GPT2Config, GPT2Model

    torch.manual_seed(SEED)
    config = GPT2Config(vocab_size=1000, n_positions=64, n_embd=128, n_layer=2, n_head=4)
    model = GPT2Model(config).eval()
    model.config.use_cache = False
    return Frontend("onnx", model, (torch.zeros((1, 32), dtype=torch.int64),), onnx_stem="gpt2")


def squeezenet_onnx() -> Frontend:
    import torch
    import torchvision

    torch.manual_seed(SEED)
    model = torchvision.models.squeezenet1_1(weights=None, num_classes=10).eval()
    return Frontend("onnx", model, (torch.zeros((1, 3, 64, 64)),), onnx_stem="squeezenet")


def lstm_onnx() -> Frontend:
    """A two-layer torch LSTM over a sequence of 16 steps and a linear head: ONNX's `LSTM`
    op, which the importer turns into a loop over the steps in the host code."""
    import torch

    class Tagger(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(64, 128, num_layers=2, batch_first=True)
            self.head = torch.nn.Linear(128, 10)

        def forward(self, steps):
            outputs, _ = self.lstm(steps)
            return self.head(outputs[:, -1])

    torch.manual_seed(SEED)
    return Frontend("onnx", Tagger().eval(), (torch.zeros((4, 16, 64)),), onnx_stem="lstm")


def mobilenet_turbine() -> Frontend:
    import torch
    import torchvision

    torch.manual_seed(SEED)
    model = torchvision.models.mobilenet_v2(weights=None, width_mult=0.35, num_classes=10)
    return Frontend("turbine", model.eval(), (torch.zeros((1, 3, 64, 64)),))


def mobilenet_turbine_dynamic() -> Frontend:
    import torch
    import torchvision

    torch.manual_seed(SEED)
    model = torchvision.models.mobilenet_v2(weights=None, width_mult=0.35, num_classes=10)
    batch = torch.export.Dim("batch", min=1, max=16)
    return Frontend("turbine", model.eval(), (torch.zeros((2, 3, 64, 64)),), {"x": {0: batch}})


def bert_torch_dynamic() -> Frontend:
    import torch
    from transformers import BertModel

    torch.manual_seed(SEED)
    config = small_bert(heads=2, positions=128)

    class LastHiddenState(torch.nn.Module):
        def __init__(self, bert: torch.nn.Module):
            super().__init__()
            self.bert = bert

        def forward(self, ids):
            return self.bert(input_ids=ids).last_hidden_state

    batch = torch.export.Dim("batch", min=1, max=16)
    length = torch.export.Dim("length", min=2, max=128)
    return Frontend(
        "turbine",
        LastHiddenState(BertModel(config).eval()),
        (torch.zeros((2, 16), dtype=torch.int64),),
        {"ids": {0: batch, 1: length}},
    )


def whisper_turbine() -> Frontend:
    import torch
    from transformers import WhisperConfig, WhisperModel

    torch.manual_seed(SEED)
    config = WhisperConfig(
        d_model=128,
        encoder_layers=2,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=256,
        decoder_ffn_dim=256,
        num_mel_bins=40,
        max_source_positions=64,
    )

    class Encoder(torch.nn.Module):
        def __init__(self, encoder: torch.nn.Module):
            super().__init__()
            self.encoder = encoder

        def forward(self, features):
            return self.encoder(features).last_hidden_state

    encoder = WhisperModel(config).get_encoder().eval()
    return Frontend("turbine", Encoder(encoder), (torch.zeros((1, 40, 128)),))


def convnext_turbine() -> Frontend:
    import torch
    from transformers import ConvNextConfig, ConvNextModel

    torch.manual_seed(SEED)
    config = ConvNextConfig(hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1], image_size=64)

    class Pooled(torch.nn.Module):
        def __init__(self, convnext: torch.nn.Module):
            super().__init__()
            self.convnext = convnext

        def forward(self, pixels):
            return self.convnext(pixels).pooler_output

    return Frontend("turbine", Pooled(ConvNextModel(config).eval()), (torch.zeros((1, 3, 64, 64)),))


def qwen2_turbine_dynamic() -> Frontend:
    import torch
    from transformers import Qwen2Config, Qwen2Model

    torch.manual_seed(SEED)
    config = Qwen2Config(
        vocab_size=1000,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        use_cache=False,
    )

    class LastHiddenState(torch.nn.Module):
        def __init__(self, decoder: torch.nn.Module):
            super().__init__()
            self.decoder = decoder

        def forward(self, ids, mask):
            outputs = self.decoder(input_ids=ids, attention_mask=mask, use_cache=False)
            return outputs.last_hidden_state

    length = torch.export.Dim("length", min=2, max=128)
    return Frontend(
        "turbine",
        LastHiddenState(Qwen2Model(config).eval()),
        (torch.zeros((1, 16), dtype=torch.int64), torch.ones((1, 16), dtype=torch.int64)),
        {"ids": {1: length}, "mask": {1: length}},
    )


def clip_f16_turbine() -> Frontend:
    import torch
    from transformers import CLIPVisionConfig, CLIPVisionModel

    torch.manual_seed(SEED)
    config = CLIPVisionConfig(
        hidden_size=64,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        image_size=32,
        patch_size=8,
    )

    class Pooled(torch.nn.Module):
        def __init__(self, vision: torch.nn.Module):
            super().__init__()
            self.vision = vision

        def forward(self, pixels):
            return self.vision(pixel_values=pixels).pooler_output

    model = Pooled(CLIPVisionModel(config).eval().half())
    return Frontend("turbine", model, (torch.zeros((1, 3, 32, 32), dtype=torch.float16),))


def bart_flax() -> Frontend:
    import jax.numpy as jnp
    from transformers import BartConfig, FlaxBartModel

    config = BartConfig(
        vocab_size=1000,
        d_model=64,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=128,
        decoder_ffn_dim=128,
        max_position_embeddings=64,
    )
    model = FlaxBartModel(config, seed=SEED)

    def translate(input_ids, decoder_input_ids):
        outputs = model(input_ids, decoder_input_ids=decoder_input_ids, params=model.params)
        return outputs.last_hidden_state

    return Frontend(
        "jax", translate, (jnp.zeros((1, 32), jnp.int32), jnp.zeros((1, 16), jnp.int32))
    )


MODELS = {
    f.__name__: f
    for f in (
        bert_flax,
        vit_flax,
        vit_bf16_flax,
        resnet_flax,
        gpt2_onnx,
        squeezenet_onnx,
        lstm_onnx,
        mobilenet_turbine,
        mobilenet_turbine_dynamic,
        bert_torch_dynamic,
        whisper_turbine,
        convnext_turbine,
        qwen2_turbine_dynamic,
        clip_f16_turbine,
        bart_flax,
    )
}


def main(names: list[str]) -> None:
    for name in names or MODELS:
        text = MODELS[name]().mlir()
        (HERE / f"{name}.mlir").write_text(text)
        print(f"{name}.mlir: {len(text) / 1e6:.1f} MB")


if __name__ == "__main__":
    main(sys.argv[1:])
