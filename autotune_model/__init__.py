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

from autotune_model.pipeline import TunedModel, TuneOptions, tune_model
from autotune_model.report import TuneReport

__all__ = ["TuneOptions", "TuneReport", "TunedModel", "tune_model"]
