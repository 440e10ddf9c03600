"""Models from frontends, as their users write them: input IR for `tune_model`.

JAX (optional extra `iree-autotune[jax]`): `jax.jit(f).lower(*example_args)` gives
StableHLO, which the stock `iree-compile` reads (`--iree-input-type=stablehlo`, added by
`tune_model` when the text is StableHLO).

```python
import jax.numpy as jnp
from autotune_model import tune_model
from autotune_model.frontends import from_jax

def mlp(x, w1, w2):
    return jnp.maximum(x @ w1, 0) @ w2

tuned = tune_model(from_jax(mlp, x, w1, w2))   # x, w1, w2: example arrays
```
"""

from __future__ import annotations

from collections.abc import Callable

from autotune_contracts.errors import DiagnosticError


def from_jax(function: Callable, *example_args, **jit_options) -> str:
    """The StableHLO text of `jax.jit(function, **jit_options)` lowered for the example
    arguments (arrays or `jax.ShapeDtypeStruct`s: only their shapes and types count). The
    module's public function is `@main`."""
    try:
        import jax
    except ImportError:
        raise DiagnosticError("from_jax needs JAX: pip install 'iree-autotune[jax]'") from None
    return jax.jit(function, **jit_options).lower(*example_args).as_text()
