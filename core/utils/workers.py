"""Thread pools that never outlive the call that started them.

Why: a worker still running when the command ends keeps writing files nobody deletes (the
cleanup ran before it finished), and one still inside pyarrow when the interpreter exits
aborts the process. So every pool here is joined before its block is left -- normally, on an
error, on an interrupt, or when the generator using it is closed -- with the queued tasks
cancelled first and the join itself shielded from signals
(:func:`paimon_cli.core.utils.interrupt.deferred`). Tasks that write files stop at their next
:func:`~paimon_cli.core.utils.interrupt.check`.

Arrow's own CPU pool cannot be joined, so no work is left on it: rows are filtered by a
mask computed on the calling thread (``core.data.predicate.Predicate.filter``), and Acero
plans (a join, a group_by) run with ``use_threads=False``.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import TYPE_CHECKING, TypeVar

from . import interrupt

# concurrent.futures (and the logging it imports) loads when a pool is first made (issue 28).
if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

T = TypeVar("T")
R = TypeVar("R")


@contextlib.contextmanager
def worker_pool(workers: int, name: str) -> Iterator[ThreadPoolExecutor]:
    """A thread pool joined whenever the block is left; on an error or interrupt the tasks not
    started yet are cancelled, the running ones are waited for."""
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix=name)
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        with interrupt.deferred():
            pool.shutdown(wait=True)


def map_ordered(fn: Callable[[T], R], items: Iterable[T], workers: int, name: str) -> list[R]:
    """``[fn(x) for x in items]`` on ``workers`` threads; the first failure cancels the rest."""
    with worker_pool(workers, name) as pool:
        return list(pool.map(fn, items))


def prefetch(fn: Callable[[T], R], items: Iterable[T], ahead: int, name: str) -> Generator[R, None, None]:
    """``fn(x)`` for each item, in order, computed up to ``ahead`` items in advance on worker
    threads (memory stays bounded by ``ahead`` results).

    The pool is joined when the generator ends, fails or is closed: consumers that may stop
    early close it explicitly (``contextlib.closing``) rather than leaving that to the
    garbage collector.
    """
    with worker_pool(ahead, name) as pool:
        it = iter(items)
        pending: deque[Future[R]] = deque()
        for item in it:
            pending.append(pool.submit(fn, item))
            if len(pending) >= ahead:
                break
        while pending:
            box = [pending.popleft().result()]  # not held here while the consumer works on it
            nxt = next(it, _END)
            if nxt is not _END:
                pending.append(pool.submit(fn, nxt))  # type: ignore[arg-type]
            yield box.pop()


_END = object()


__all__ = ["map_ordered", "prefetch", "worker_pool"]
