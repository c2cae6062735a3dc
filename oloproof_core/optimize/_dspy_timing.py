"""How long a DSPy program took to make a prediction, timed by DSPy's own callbacks.

Under `dspy.Evaluate` or `dspy.GEPA` the program is called by DSPy, not by oloproof, so
the metric adapter (`DspyMetric`) cannot time the call itself. A callback installed in
DSPy's settings notes when each module call starts and ends; the prediction a call
returned carries its time, the outermost module's (it ends last). The figure is taken
in the process the program runs in: as trustworthy as DSPy's usage tracker, which the
cost comes from, and no more (docs/metrics.md).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any

_KEPT = 4096
"""Predictions whose time is kept at once: the metric reads each one soon after it is made."""


class ProgramTimer:
    """A DSPy callback: the wall time of the module call that returned each prediction."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._started: dict[str, float] = {}
        self._elapsed: OrderedDict[int, tuple[Any, float]] = OrderedDict()

    def on_module_start(self, call_id: str, instance: Any, inputs: Any) -> None:
        with self._lock:
            self._started[call_id] = time.perf_counter()

    def on_module_end(self, call_id: str, outputs: Any, exception: Any = None) -> None:
        ended = time.perf_counter()
        with self._lock:
            started = self._started.pop(call_id, None)
            if started is None or outputs is None:
                return
            # Held, not only its id: an id is reused once its object is gone.
            self._elapsed[id(outputs)] = (outputs, (ended - started) * 1000.0)
            self._elapsed.move_to_end(id(outputs))
            while len(self._elapsed) > _KEPT:
                self._elapsed.popitem(last=False)

    def elapsed_ms(self, prediction: Any) -> float | None:
        with self._lock:
            kept = self._elapsed.get(id(prediction))
        return kept[1] if kept is not None and kept[0] is prediction else None

    def __getattr__(self, name: str) -> Any:
        # DSPy calls every hook of its callback interface; only the module's are needed.
        if name.startswith("on_"):
            return _ignore
        raise AttributeError(name)


def _ignore(*args: Any, **kwargs: Any) -> None:
    return None


_timer: ProgramTimer | None = None
_installing = threading.Lock()


def program_timer(dspy: Any) -> ProgramTimer | None:
    """The timer, installed once among DSPy's callbacks; None where DSPy refuses a setting
    from this thread (its settings belong to the thread that first configured them)."""
    global _timer
    with _installing:
        if _timer is None:
            _timer = ProgramTimer()
        callbacks = list(dspy.settings.get("callbacks") or [])
        if _timer not in callbacks:
            try:
                dspy.settings.configure(callbacks=[*callbacks, _timer])
            except RuntimeError:
                return None
    return _timer
