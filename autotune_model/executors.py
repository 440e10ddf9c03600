"""Where the jobs of tuning run: local workers (every core) or a Ray cluster.

Both run the same job functions on the same job data (`bench`) and return results in the
order of the jobs, calling `done(result)` as each finishes (the progress bar). A job that
must have its device to itself (a benchmark) runs `alone`: locally, one after the other in
this process; on a Ray cluster, as a task that asks for one GPU (`gpu`) or for as many
CPUs as a machine has, so that Ray never runs two on the same device.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Protocol

from autotune_contracts.errors import DiagnosticError

Job = Any
Result = Any


class Executor(Protocol):
    """Runs jobs: `alone` ones each with a device to itself (`gpu`: a GPU, else a CPU)."""

    name: str

    def run(
        self,
        function: Callable[[Job], Result],
        jobs: Sequence[Job],
        done: Callable[[Result], None] = lambda r: None,
        alone: bool = False,
        gpu: bool = False,
    ) -> list[Result]: ...

    def close(self) -> None: ...


class LocalExecutor:
    """One worker per core (or `workers`) on this machine. A worker is a thread that
    drives the job's own process (`iree-compile` is a child process per job), so that the
    jobs use every core while nothing is forked from this process, which may be running
    threads of its own (JAX's, IREE's) that a fork would leave in a broken state."""

    name = "local"

    def __init__(self, workers: int | None = None):
        self.workers = workers or os.cpu_count() or 1

    def run(self, function, jobs, done=lambda r: None, alone=False, gpu=False):
        if alone or len(jobs) <= 1 or self.workers == 1:
            return SerialExecutor().run(function, jobs, done)
        results: list[Result] = [None] * len(jobs)
        with ThreadPoolExecutor(min(self.workers, len(jobs))) as pool:
            # each job in a copy of this thread's context (`driver.user_flags`)
            futures = {
                pool.submit(contextvars.copy_context().run, function, job): i
                for i, job in enumerate(jobs)
            }
            for future in as_completed(futures):
                results[futures[future]] = future.result()
                done(results[futures[future]])
        return results

    def close(self) -> None:
        pass


class SerialExecutor:
    """The jobs one after the other in this process (benchmarks that must not share the
    machine with other jobs, and tests)."""

    name = "serial"

    def run(self, function, jobs, done=lambda r: None, alone=False, gpu=False):
        results = []
        for job in jobs:
            results.append(function(job))
            done(results[-1])
        return results

    def close(self) -> None:
        pass


class RayExecutor:
    """The jobs as Ray tasks: `address="auto"` joins a running cluster, an address names
    one, `None` starts a local one (stopped by `close`)."""

    name = "ray"

    def __init__(self, address: str | None = "auto", **init_options):
        try:
            import ray
        except ImportError:
            raise DiagnosticError(
                "the Ray executor needs Ray: pip install 'iree-autotune[ray]'"
            ) from None
        self.ray = ray
        self.started = not ray.is_initialized()
        if self.started:
            try:
                ray.init(
                    address=address, include_dashboard=False, log_to_driver=False, **init_options
                )
            except (ConnectionError, RuntimeError, ValueError) as err:
                where = (
                    "a local Ray cluster" if address is None else f"the Ray cluster at {address}"
                )
                message = (str(err).strip().splitlines() or [type(err).__name__])[0]
                raise DiagnosticError(f"cannot start or join {where}: {message}") from None

    def run(self, function, jobs, done=lambda r: None, alone=False, gpu=False):
        ray = self.ray
        if alone and gpu:
            task = ray.remote(num_gpus=1)(function)
        elif alone:
            task = ray.remote(num_cpus=self.machine_cpus())(function)
        else:
            task = ray.remote(function)
        pending = {task.remote(job): i for i, job in enumerate(jobs)}
        results: list[Result] = [None] * len(jobs)
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                index = pending.pop(ref)
                results[index] = ray.get(ref)
                done(results[index])
        return results

    def machine_cpus(self) -> float:
        """The CPUs of the largest machine of the cluster (a task asking for them all runs
        alone there)."""
        alive = [n["Resources"].get("CPU", 0) for n in self.ray.nodes() if n.get("Alive")]
        return max(alive, default=1) or 1

    def close(self) -> None:
        if self.started:
            self.ray.shutdown()


def executor_for(ray: str | None, workers: int | None = None) -> Executor:
    """`LocalExecutor`, or a `RayExecutor` when `ray` is `auto`, `local` (a cluster of
    this machine alone) or a cluster address."""
    if ray is None:
        return LocalExecutor(workers)
    return RayExecutor(None if ray == "local" else ray)
