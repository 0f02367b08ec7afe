"""Where work runs: in this process, in local worker processes (``--jobs N``), or as Ray tasks
(``--ray auto|ADDRESS``). ``sweep``, ``compare`` and ``plan`` all run their simulations here.

A unit of work is a module-level function and a picklable argument; it must depend on nothing
else (every simulation does: same inputs and seed give the same bytes), so where it runs never
changes its result. A :class:`~raidlab.errors.RaidlabError` raised by the work is carried back
as a value and raised again in this process, the same object on every path (Ray would otherwise
wrap it in its own error with a remote traceback).

Ray (https://docs.ray.io, ``pip install 'raidlab[ray]'``): ``auto`` joins the Ray runtime already
running on this machine (``ray start --head``) or starts a local one with ``--jobs`` CPUs (no
dashboard) and stops it at the end; any other value is a cluster address passed to
``ray.init(address=...)``, e.g. ``ray://head:10001``. Every node needs raidlab installed.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import socket
from typing import Any, Callable, Iterable, Iterator, List, Optional, Sequence, Tuple

from raidlab.errors import ConfigError, RaidlabError
from raidlab.workload.units import is_decimal, show

#: Local worker processes at most per CPU (``--jobs`` above it is capped, with a note): a unit
#: of work is CPU-bound, so processes past the CPUs add only memory (each loads the extension,
#: pyarrow and pandas); two per CPU leaves room for a worker waiting on its disk.
WORKERS_PER_CPU = 2
#: Ray tasks in flight per CPU of the cluster: enough to keep every worker busy while results
#: stream back, few enough that the largest sweep (grid.MAX_POINTS points) never holds a future per point.
RAY_TASKS_PER_CPU = 4


def cpu_count() -> int:
    """CPUs this process may use (its affinity mask, as ``nproc`` says)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _ignore_interrupts() -> None:
    """Workers ignore Ctrl-C: the terminal sends SIGINT to the whole process group and only the
    parent answers it (one line, status 130), not every worker with its own traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _call(job: Tuple[Callable[[Any], Any], Any]) -> Tuple[bool, Any]:
    """Runs one unit of work; a RaidlabError comes back as a value."""
    function, item = job
    try:
        return True, function(item)
    except RaidlabError as error:
        return False, error


def _unwrap(outcome: Tuple[bool, Any]) -> Any:
    ok, value = outcome
    if not ok:
        raise value
    return value


class Executor:
    """Runs units of work; use as a context manager (it starts and stops its workers)."""

    def __init__(self, jobs: Optional[int] = None, ray: Optional[str] = None) -> None:
        if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
            raise ConfigError(f"--jobs {jobs!r}: expected a whole number of processes, at least 1")
        if ray is not None and (not isinstance(ray, str) or not ray.strip()):
            raise ConfigError(f"--ray {ray!r}: expected auto or a Ray cluster address")
        self.requested = jobs
        self.jobs = jobs if jobs is not None else cpu_count()
        self.note = ""
        bound = WORKERS_PER_CPU * cpu_count()
        if ray is None and self.jobs > bound:
            self.jobs, self.note = bound, f"--jobs {jobs}: at most {WORKERS_PER_CPU} per CPU"
        self.ray_address = ray
        self._pool = None
        self._ray = None
        self._started_ray = False

    @property
    def workers(self) -> int:
        """How many units run at once (Ray: the cluster's CPUs)."""
        if self._ray is not None:
            return max(1, int(self._ray.cluster_resources().get("CPU", 1)))
        return self.jobs

    def fit(self, count: int, what: str = "unit of work") -> None:
        """At most one local worker per unit of work to come (``count`` of them; ``what`` names
        one in the note when it caps an explicit ``--jobs``)."""
        if self._ray is None and 0 < count < self.jobs:
            if self.requested is not None:
                self.note = f"--jobs {self.requested}: one per {what}"
            self.jobs = count

    def describe(self) -> str:
        if self._ray is not None:
            return f"Ray ({self.workers} CPUs)"
        where = "this process" if self.jobs == 1 else f"{self.jobs} local processes"
        return f"{where} ({self.note})" if self.note else where

    def __enter__(self) -> "Executor":
        if self.ray_address is not None:
            self._ray = _ray_module()
            self._started_ray = _ray_init(self._ray, self.ray_address, self.jobs)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None
        if self._ray is not None and self._started_ray and self._ray.is_initialized():
            self._ray.shutdown()
        self._ray = None

    def _local_pool(self, count: int):
        """The worker processes, started at first use: never more than ``count``, the units of
        work of that first use."""
        processes = min(self.jobs, count)
        if self._pool is None and processes > 1:
            self._pool = multiprocessing.get_context().Pool(processes, initializer=_ignore_interrupts)
        return self._pool

    def as_completed(self, function: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[Tuple[int, Any]]:
        """``(index, function(items[index]))`` as each finishes, in any order."""
        jobs = [(function, item) for item in items]
        if self._ray is not None:
            yield from self._ray_completed(jobs)
            return
        pool = self._local_pool(len(jobs)) if len(jobs) > 1 else None
        if pool is None:
            for index, job in enumerate(jobs):
                yield index, _unwrap(_call(job))
            return
        for index, outcome in pool.imap_unordered(_indexed, list(enumerate(jobs)), chunksize=1):
            yield index, _unwrap(outcome)

    def imap(self, function: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        """``function(item)`` for each item, run in parallel, yielded in order as they come."""
        waiting: dict = {}
        following = 0
        for index, value in self.as_completed(function, list(items)):
            waiting[index] = value
            while following in waiting:
                yield waiting.pop(following)
                following += 1

    def map(self, function: Callable[[Any], Any], items: Iterable[Any]) -> List[Any]:
        """``[function(item) for item in items]``, run in parallel, in order."""
        return list(self.imap(function, items))

    def _ray_completed(self, jobs: List[Tuple[Callable[[Any], Any], Any]]) -> Iterator[Tuple[int, Any]]:
        ray = self._ray
        remote = ray.remote(num_cpus=1)(_call)
        window = self.workers * RAY_TASKS_PER_CPU
        pending: dict = {}
        queue = iter(enumerate(jobs))
        try:
            while True:
                for index, job in queue:
                    pending[remote.remote(job)] = index
                    if len(pending) >= window:
                        break
                if not pending:
                    return
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    yield pending.pop(ref), _unwrap(ray.get(ref))
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)


def _indexed(entry: Tuple[int, Tuple[Callable[[Any], Any], Any]]) -> Tuple[int, Tuple[bool, Any]]:
    index, job = entry
    return index, _call(job)


def _ray_module():
    try:
        import ray  # type: ignore[import-not-found]
    except ImportError:
        raise ConfigError("--ray needs Ray: pip install 'raidlab[ray]'") from None
    return ray


def _ray_init(ray: Any, address: str, jobs: int) -> bool:
    """Joins or starts Ray; True when this process started it (and so stops it)."""
    if ray.is_initialized():
        return False
    # Ray's usage statistics are sent to Anyscale unless disabled; raidlab sends nothing anywhere
    # the user did not ask for (https://docs.ray.io/en/latest/cluster/usage-stats.html)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    quiet = {"logging_level": logging.ERROR, "log_to_driver": False}
    if address != "auto":
        _reachable(address)
        try:
            ray.init(address=address, **quiet)
        except Exception as error:  # noqa: BLE001 - Ray raises many kinds; the user needs one line
            raise ConfigError(f"--ray {address}: cannot join the Ray cluster ({type(error).__name__}: "
                              f"{str(error).splitlines()[0] if str(error) else 'no detail'})") from None
        return False
    try:
        ray.init(address="auto", **quiet)
        return False
    except (ConnectionError, RuntimeError, ValueError):
        pass
    ray.init(num_cpus=jobs, include_dashboard=False, **quiet)
    return True


#: Seconds to wait for a cluster's port to answer before giving up on it.
CONNECT_TIMEOUT_S = 10


def _reachable(address: str) -> None:
    """A cluster's HOST:PORT (or ray://HOST:PORT) answers a TCP connection, checked before
    ray.init, which otherwise waits minutes on an unreachable address printing warnings."""
    host, _, port = address.split("://", 1)[-1].rpartition(":")
    if not host or not is_decimal(port):
        return  # not HOST:PORT: Ray reads it (and refuses it) itself
    if int(port) > 65535:
        raise ConfigError(f"--ray {show(address)}: port {port} is not a TCP port (0-65535)")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as error:
        raise ConfigError(f"--ray {show(address)}: cannot reach the Ray cluster at {show(host)}:{port} "
                          f"({error.strerror or error})") from None
    except ValueError as error:  # a host name the resolver cannot encode (a UnicodeError)
        raise ConfigError(f"--ray {show(address)}: {show(host)} is not a host name ({error})") from None
