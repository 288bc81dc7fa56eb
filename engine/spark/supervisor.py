"""Runs Spark work as supervised jobs owned by a connector task (``docs/ARCHITECTURE.md``,
"Spark supervision").

One SparkSession per worker process, built on first use off the event loop. Each job runs
in a thread of the supervisor's own pool (so long Spark actions never starve the loop's
default executor, which runs sync connector code), tagged with its owner so that pause,
stop, restart and delete can cancel exactly that task's jobs. Job groups and job tags are
thread-local in Spark, hence they are set and cleared inside the job's thread.

pyspark is imported lazily, inside methods: a worker that never runs Spark never loads it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import os
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass, field
from typing import Any, TypeVar

import structlog

from engine.api.errors import ConnectException
from engine.spark.metrics import Outcome, SparkMetrics
from engine.spark.probe import probe
from engine.spark.settings import SparkSettings

T = TypeVar("T")

log = structlog.get_logger(component="spark")

TAG_PREFIX = "connect-engine"
MAX_CONCURRENT_JOBS = 32
# While a cancelled job is still running, the cancel is re-issued at this interval until it ends:
# a job function may start a new action after the first cancel reached Spark, and an action still
# being planned has no Spark job to cancel yet (a cold first write plans for seconds).
_RECANCEL_INTERVAL = 0.2

# JVM loggers that only echo what a job's caller is told anyway (SparkJobCancelled, or SparkJobFailed
# with the Java error as its cause): a cancelled write otherwise prints ~100 lines of stack traces,
# at ERROR, from the writer, the task's thread being interrupted inside Hadoop or Parquet, and the
# scheduler. Silenced on sessions the supervisor builds itself (levels set through py4j).
QUIET_JVM_LOGGERS = (
    "org.apache.spark.sql.execution.datasources",
    "org.apache.spark.util.Utils",
    "org.apache.spark.scheduler.TaskSetManager",
    "org.apache.spark.executor.Executor",
    "org.apache.spark.mapred.SparkHadoopMapRedUtil",
    "org.apache.hadoop",
    "org.apache.parquet",
)


_CANCEL_WAIT_S = 2.0  # how long a cancelled caller waits for its job to raise (target: under 1 s)


@dataclass(frozen=True)
class JobOwner:
    """The task generation a Spark job belongs to; its tag is what Spark cancels by."""

    connector: str
    task: int
    generation: int

    @property
    def tag(self) -> str:
        # Spark rejects commas in job tags. The tag only labels jobs in Spark: cancellation
        # selects jobs by their owner fields, so a lossy replacement here is harmless.
        return f"{TAG_PREFIX}:{self.connector.replace(',', '_')}:{self.task}:{self.generation}"

    def matches(self, prefix: JobOwner | tuple[str, int] | str) -> bool:
        """Whether ``prefix`` (an owner, ``(connector, task)`` or a connector name) covers it."""
        if isinstance(prefix, JobOwner):
            return prefix == self
        if isinstance(prefix, tuple):
            return (self.connector, self.task) == prefix
        return self.connector == prefix


class SparkJobFailed(ConnectException):
    """A supervised Spark job raised; the Spark (or driver-side) error is ``__cause__``."""

    def __init__(self, owner: JobOwner, error: BaseException) -> None:
        super().__init__(
            f"Spark job of connector {owner.connector} task {owner.task} "
            f"(generation {owner.generation}) failed: {type(error).__name__}: {error}"
        )
        self.owner = owner


class SparkJobCancelled(ConnectException):
    """A supervised Spark job was cancelled by its owner's lifecycle; never retried."""

    def __init__(self, owner: JobOwner, reason: str = "cancelled") -> None:
        super().__init__(
            f"Spark job of connector {owner.connector} task {owner.task} "
            f"(generation {owner.generation}) {reason}"
        )
        self.owner = owner


@dataclass(eq=False)
class _Job:
    id: int
    owner: JobOwner
    future: Future[Any] | None = None
    cancel_requested: bool = False
    # Spark cancels by this per-job tag (additive, so it survives user code replacing the job
    # group), never by the owner's tag: a job the owner starts after a cancel, such as a sink's
    # stop-time commit, must not be hit by that cancel's re-issues.
    tag: str = field(init=False)

    def __post_init__(self) -> None:
        self.tag = f"{self.owner.tag}:{self.id}"


class SparkSupervisor:
    """Owns the process's SparkSession and every Spark job run through it."""

    def __init__(self, settings: SparkSettings) -> None:
        self.settings = settings
        self.metrics = SparkMetrics()
        self._session: Any = None
        self._owns_session = False
        self._session_lock = threading.Lock()  # loop-agnostic: guards the one build
        self._state_lock = threading.Lock()  # jobs and metrics change in job threads
        self._jobs: dict[int, _Job] = {}
        self._ids = itertools.count(1)
        self._executor: ThreadPoolExecutor | None = None
        self._closed = False
        self._starting = False
        # what cancel() covered while the session was being built: a job these owners ask for
        # before it is up is refused, so a stopping task never waits out Spark's start-up
        self._interrupted: list[JobOwner | tuple[str, int] | str] = []

    @property
    def starting(self) -> bool:
        """Whether the session is being built right now (the first use takes seconds)."""
        return self._starting

    # -- session ---------------------------------------------------------------------------

    async def session(self) -> Any:
        """The process's SparkSession, built once (off the loop) on first call."""
        if self._session is not None:
            return self._session
        return await asyncio.to_thread(self._get_or_create)

    def _get_or_create(self) -> Any:
        with self._session_lock:
            if self._closed:
                raise ConnectException("the Spark supervisor is shut down")
            if self._session is None:
                self._starting = True
                try:
                    self._session = self._build()
                finally:
                    self._starting = False
                    with self._state_lock:
                        self._interrupted.clear()
            return self._session

    def _build(self) -> Any:
        from pyspark.sql import SparkSession  # lazy: see module docstring

        s = self.settings
        probe(s)  # an unreachable master or Connect server fails here, within spark.server.timeout.ms
        builder: Any = SparkSession.builder
        if s.remote is not None:
            builder = builder.remote(s.remote)
        else:
            if s.is_local:
                # Spark's launcher reads this before any conf: without it the driver binds
                # the host's external address.
                os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            # Executors start this Python for Python work (createDataFrame, UDFs): the worker's own
            # interpreter, with the same pyspark, unless the user chose another.
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            builder = builder.master(s.master)
        builder = builder.appName(s.app_name)
        for key, value in s.session_conf().items():
            builder = builder.config(key, value)
        # a session the embedding program made before us is reused and left running at shutdown
        self._owns_session = s.remote is not None or (
            SparkSession.getActiveSession() is None
            and getattr(SparkSession, "_instantiatedSession", None) is None
        )
        started = time.monotonic()
        if s.remote is not None:
            session = _create_connect_session(builder)
            _bound_connect_retries(session, s.server_timeout_ms / 1000)
        else:
            session = builder.getOrCreate()
        if self._owns_session and s.remote is None:
            _quiet_cancellations(session)
        log.info(
            "spark.session_started",
            master=s.master if s.remote is None else None,
            remote=_endpoint(s.remote),
            app_name=s.app_name,
            seconds=round(time.monotonic() - started, 3),
        )
        return session

    # -- jobs ------------------------------------------------------------------------------

    async def run(self, owner: JobOwner, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(spark, *args)`` in a job thread tagged for ``owner``; await its result.

        Raises SparkJobFailed for any error of the job (the error is ``__cause__``), and
        SparkJobCancelled when ``cancel()`` covered it or the supervisor is shut down. If the
        awaiting coroutine itself is cancelled, the Spark job is cancelled too, so nothing
        outlives its task.
        """
        job = _Job(next(self._ids), owner)
        with self._state_lock:
            if self._closed:
                raise SparkJobCancelled(owner, "refused: the Spark supervisor is shut down")
            self._jobs[job.id] = job  # from now on cancel() covers it, even while the session starts
        submitted = False
        try:
            spark = await self._session_for(job)
            submitted = self._submit(spark, job, fn, args)
        except Exception as exc:
            if isinstance(exc, SparkJobCancelled):
                raise
            if not self._shut_down():
                raise SparkJobFailed(owner, exc) from exc
        finally:
            if not submitted:  # a submitted job's thread does its own book-keeping
                with self._state_lock:
                    self._jobs.pop(job.id, None)
        if job.future is None:
            raise SparkJobCancelled(owner, "refused: the Spark supervisor is shut down")
        try:
            # Shielded: cancelling this coroutine must not cancel a queued pool future, or
            # _execute (which does the book-keeping) would never run.
            result: T = await asyncio.shield(_watch(job.future))
        except asyncio.CancelledError:
            job.cancel_requested = True
            self._cancel_until_done(spark, [job])
            # The caller is being paused or stopped: let it go on only once the job has ended (bounded),
            # so no job outlives its task. A second cancellation cuts this wait short.
            with contextlib.suppress(BaseException):
                await asyncio.wait((_watch(job.future),), timeout=_CANCEL_WAIT_S)
            raise
        return result

    async def _session_for(self, job: _Job) -> Any:
        """The session, waiting for its build unless ``job`` is cancelled (or its owner interrupted)
        meanwhile; the build itself goes on."""
        if self._session is not None:
            return self._session
        build = asyncio.ensure_future(asyncio.to_thread(self._get_or_create))
        build.add_done_callback(lambda f: None if f.cancelled() else f.exception())
        while not build.done():
            if job.cancel_requested or self._interrupted_covers(job.owner):
                raise SparkJobCancelled(
                    job.owner, "refused: its task was interrupted while Spark was starting"
                )
            await asyncio.wait((build,), timeout=_RECANCEL_INTERVAL)
        return build.result()

    def _submit(self, spark: Any, job: _Job, fn: Callable[..., Any], args: tuple[Any, ...]) -> bool:
        """Hand the job to a pool thread; False if the supervisor shut down meanwhile."""
        with self._state_lock:
            if self._closed:
                return False
            self.metrics.started()
            if self._executor is None:
                self._executor = ThreadPoolExecutor(MAX_CONCURRENT_JOBS, thread_name_prefix="spark-job")
            ctx = contextvars.copy_context()  # keeps bound log context in the job thread
            job.future = self._executor.submit(ctx.run, self._execute, spark, job, fn, args)
            return True

    def _shut_down(self) -> bool:
        """A call, not the attribute: ``shutdown()`` sets it while ``run()`` awaits the session."""
        return self._closed

    def _interrupted_covers(self, owner: JobOwner) -> bool:
        with self._state_lock:
            return any(owner.matches(prefix) for prefix in self._interrupted)

    def _execute(self, spark: Any, job: _Job, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        """The job thread: tag, run, untag, classify the outcome, book-keep."""
        owner = job.owner
        started = time.monotonic()
        outcome: Outcome = "failed"
        error: BaseException | None = None
        try:
            self._tag_thread(spark, job)
            try:
                _raise_if_cancelled(job, "cancelled before it started")
                result = fn(spark, *args)
            finally:
                self._untag_thread(spark, job)
            # The owner is going away: a result that raced the cancel is discarded.
            _raise_if_cancelled(job, "cancelled")
            outcome = "succeeded"
            return result
        except SparkJobCancelled as exc:
            outcome, error = "cancelled", exc
            raise
        except Exception as exc:
            error = exc
            if job.cancel_requested:
                outcome = "cancelled"
                raise SparkJobCancelled(owner) from exc
            raise SparkJobFailed(owner, exc) from exc
        finally:
            seconds = time.monotonic() - started
            with self._state_lock:
                self._jobs.pop(job.id, None)
                self.metrics.finished(outcome, seconds)
            event = log.warning if outcome == "failed" else log.info
            event(
                f"spark.job_{outcome}",
                connector=owner.connector,
                task=owner.task,
                generation=owner.generation,
                job=job.id,
                seconds=round(seconds, 3),
                error=None if error is None else f"{type(error).__name__}: {error}".splitlines()[0],
            )

    def _tag_thread(self, spark: Any, job: _Job) -> None:
        if self.settings.is_connect:
            spark.addTag(job.owner.tag)
            spark.addTag(job.tag)
            return
        sc = spark.sparkContext
        sc.setJobGroup(job.tag, f"{job.owner.connector} task {job.owner.task}", interruptOnCancel=True)
        sc.addJobTag(job.owner.tag)
        sc.addJobTag(job.tag)
        sc.setInterruptOnCancel(True)

    def _untag_thread(self, spark: Any, job: _Job) -> None:
        """Pool threads are reused: leave no group, tag or description behind."""
        if self.settings.is_connect:
            spark.clearTags()
            return
        sc = spark.sparkContext
        sc.clearJobTags()
        for key in ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel"):
            sc.setLocalProperty(key, None)

    def _cancel_until_done(self, spark: Any, jobs: list[_Job]) -> None:
        """Cancel these jobs in Spark now, and again every interval until each has ended, in a
        daemon thread (py4j and gRPC calls block). Only these jobs: by their own tags."""
        threading.Thread(
            target=self._keep_cancelling, args=(spark, jobs), name="spark-cancel", daemon=True
        ).start()

    def _keep_cancelling(self, spark: Any, jobs: list[_Job]) -> None:
        while True:
            live = [job for job in jobs if job.future is not None and not job.future.done()]
            if not live or self._session is not spark or not self._cancel_in_spark(spark, live):
                return  # ended, or the session is stopping or stopped: the jobs end with it
            wait_futures([job.future for job in live if job.future is not None], timeout=_RECANCEL_INTERVAL)

    def _cancel_in_spark(self, spark: Any, jobs: list[_Job]) -> bool:
        """Ask Spark to cancel these jobs (blocking calls: run off the loop); False if it could not."""
        try:
            if self.settings.is_connect:
                for job in jobs:
                    spark.interruptTag(job.tag)
                return True
            sc = spark.sparkContext
            for job in jobs:
                sc.cancelJobsWithTag(job.tag)
        except Exception as exc:  # a stopped context: the jobs are gone with it
            log.warning("spark.cancel_failed", error=f"{type(exc).__name__}: {exc}".splitlines()[0])
            return False
        return True

    async def cancel(self, owner_prefix: JobOwner | tuple[str, int] | str, timeout: float = 1.0) -> int:
        """Cancel every running job that ``owner_prefix`` covers; wait up to ``timeout``.

        ``owner_prefix`` is a JobOwner (that generation), ``(connector, task)`` (any
        generation) or a connector name (all its tasks). Returns how many jobs were cancelled;
        their ``run()`` calls raise SparkJobCancelled.
        """
        with self._state_lock:
            jobs = [job for job in self._jobs.values() if job.owner.matches(owner_prefix)]
            for job in jobs:
                job.cancel_requested = True
            if self._session is None and self._starting:
                self._interrupted.append(owner_prefix)
        if not jobs:
            return 0
        started = time.monotonic()
        submitted = [
            job for job in jobs if job.future is not None
        ]  # the others are refused before they start
        spark = self._session
        if spark is not None and submitted:
            self._cancel_until_done(spark, submitted)
        pending: set[asyncio.Future[Any]] = {
            _watch(job.future) for job in submitted if job.future is not None
        }
        if pending:
            _, pending = await asyncio.wait(pending, timeout=timeout)
        owners = sorted({(j.owner.connector, j.owner.task) for j in jobs})
        log.info(
            "spark.jobs_cancelled",
            connector=owners[0][0],
            task=owners[0][1] if len(owners) == 1 else None,
            jobs=len(jobs),
            still_running=len(pending),
            seconds=round(time.monotonic() - started, 3),
        )
        return len(jobs)

    def running(self, connector: str | None = None) -> int:
        """How many supervised jobs are running or waiting for the session (for one connector, or all)."""
        with self._state_lock:
            return sum(1 for j in self._jobs.values() if connector is None or j.owner.connector == connector)

    async def shutdown(self) -> None:
        """Cancel running jobs and stop the session if one was made; idempotent, safe unused."""
        with self._state_lock:
            if self._closed:
                return
            self._closed = True
            connectors = {job.owner.connector for job in self._jobs.values()}
        await asyncio.gather(*(self.cancel(connector) for connector in connectors))
        session = await asyncio.to_thread(self._take_session)  # waits out a build in progress
        if session is not None and self._owns_session:
            await asyncio.to_thread(session.stop)
            log.info("spark.session_stopped")
        if self._executor is not None:
            self._executor.shutdown(wait=False)

    def _take_session(self) -> Any:
        with self._session_lock:
            session, self._session = self._session, None
            return session


def _watch(future: Future[T]) -> asyncio.Future[T]:
    """An awaitable view of a pool future whose outcome is always retrieved (no asyncio
    "exception was never retrieved" noise when nobody awaits it to the end)."""
    wrapped = asyncio.wrap_future(future)
    wrapped.add_done_callback(lambda f: None if f.cancelled() else f.exception())
    return wrapped


def _quiet_cancellations(session: Any) -> None:
    """Silence the JVM loggers in ``QUIET_JVM_LOGGERS`` (log4j2, through py4j)."""
    try:
        jvm = session.sparkContext._jvm
        configurator = jvm.org.apache.logging.log4j.core.config.Configurator
        off = jvm.org.apache.logging.log4j.Level.OFF
        for name in QUIET_JVM_LOGGERS:
            configurator.setLevel(name, off)
    except Exception as exc:  # another logging backend: its messages stay as they are
        log.info("spark.jvm_logging_unchanged", error=f"{type(exc).__name__}: {exc}".splitlines()[0])


def _create_connect_session(builder: Any) -> Any:
    """``create()``, not ``getOrCreate()``: another Connect session of this process (another URL) is not ours.

    pyspark marks the whole process as a Connect client (``SPARK_CONNECT_MODE_ENABLED``), which makes
    ``pyspark.sql.functions`` build Connect columns from then on. Right for a worker that only talks to
    Connect; wrong where a classic SparkContext already runs in the process (an embedding program's, or
    a test session's): there the mark is taken back, and Connect jobs use SQL strings or
    ``pyspark.sql.connect.functions``.
    """
    from pyspark import SparkContext

    classic = SparkContext._active_spark_context is not None
    marked = "SPARK_CONNECT_MODE_ENABLED" in os.environ
    session = builder.create()
    if classic and not marked:
        os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)
    return session


def _bound_connect_retries(session: Any, seconds: float) -> None:
    """Retry a failing Connect RPC for about ``seconds`` (the client's default is ten minutes), so a
    server that goes away fails the running job, and with it the task, instead of hanging it."""
    from pyspark.sql.connect.client.retries import DefaultPolicy

    retries, waited, backoff = 0, 0.0, 0.05
    while waited < seconds and retries < 30:
        waited += backoff
        backoff = min(backoff * 4, 2.0)
        retries += 1
    session.client.set_retry_policies([DefaultPolicy(max_retries=retries, max_backoff=2000, jitter=100)])


def _endpoint(remote: str | None) -> str | None:
    """``sc://host:port`` without the URL's parameters (which may hold a token), for logs."""
    return None if remote is None else remote.split("/;")[0].split(";")[0]


def _raise_if_cancelled(job: _Job, reason: str) -> None:
    if job.cancel_requested:
        raise SparkJobCancelled(job.owner, reason)
