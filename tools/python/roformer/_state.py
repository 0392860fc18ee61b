"""The loaded model's handle and each thread's library objects (pipelines,
a forward context, a tokenizer encoding), and the bookkeeping that lets
close() free them all while other threads may be calling: every call holds
the model open (_Call), close() waits for the calls in progress, and a
thread's objects are freed when that thread ends.
"""

import collections
import threading
from ctypes import byref

from . import _capi as C
from ._errors import Error


class _Slots:
    """One thread's library objects: pipelines by (batch_size, max_length),
    a context for forward, an encoding for tokenize."""

    def __init__(self):
        self.pipelines = collections.OrderedDict()
        self.ctx = None
        self.ctx_batch = self.ctx_len = 0
        self.encoding = C.rf_encoding()

    def free(self):
        for pl in self.pipelines.values():
            C.rf_pipeline_free(pl)
        self.pipelines.clear()
        if self.ctx:
            C.rf_context_free(self.ctx)
            self.ctx = None
        C.rf_encoding_free(byref(self.encoding))


class _Ticket:
    """Lives in one thread's threading.local; when the thread ends it goes,
    and its finalizer hands that thread's _Slots back to the model."""


class _State:
    """The model handle and every thread's slots; what close() frees. Kept
    apart from Model so that finalizers can hold it without holding the
    Model."""

    def __init__(self, handle):
        self.handle = handle
        self.cond = threading.Condition()
        self.active = 0
        self.closed = False
        self.slots = set()

    def enter(self):
        with self.cond:
            if self.closed:
                raise Error("the model is closed")
            self.active += 1

    def leave(self):
        with self.cond:
            self.active -= 1
            self.cond.notify_all()

    def release(self, slot):
        with self.cond:
            if slot in self.slots:
                self.slots.discard(slot)
                slot.free()

    def close(self):
        with self.cond:
            if self.closed:
                return
            self.closed = True
            while self.active:
                self.cond.wait()
            for slot in self.slots:
                slot.free()
            self.slots.clear()
            C.rf_model_free(self.handle)
            self.handle = None


class _Call:
    """`with _Call(model) as slots:` the current thread's slots, the model
    kept open (close() waits) for the duration."""

    def __init__(self, model):
        self.model = model

    def __enter__(self):
        self.model._state.enter()
        return self.model._thread_slots()

    def __exit__(self, *exc):
        self.model._state.leave()
        return False
