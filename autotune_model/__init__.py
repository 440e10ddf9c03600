"""Tune a whole model: IREE's configuration of every dispatch worth it, candidates around
it compiled and benchmarked alone, the best kept as `autotune.group` variants chosen at
run time (docs/tune_model.md).

```python
from autotune_model import TuneOptions, tune_model

tuned = tune_model(open("model.mlir").read(), TuneOptions(target="llvm-cpu"))
open("model.vmfb", "wb").write(tuned.vmfb)
print(tuned.report.to_json())
```
"""

from typing import TYPE_CHECKING

from autotune_contracts.lazy import lazy_exports

if TYPE_CHECKING:
    from autotune_model.pipeline import TuneOptions, tune_model
    from autotune_model.report import TuneReport
    from autotune_model.tuning_pass import TunedModel

__getattr__ = lazy_exports(
    globals(),
    {
        "TunedModel": "autotune_model.tuning_pass",
        "TuneOptions": "autotune_model.pipeline",
        "tune_model": "autotune_model.pipeline",
        "TuneReport": "autotune_model.report",
    },
)

__all__ = ["TuneOptions", "TuneReport", "TunedModel", "tune_model"]
