"""roformer.Error and the error policy every job shares: a library status
turned into an exception, and a batch's per-input failures either raised
(errors="raise") or left as None in their place (errors="skip").

Each input's failure travels as None or a (status name, message) pair, the
form the batch runner (Model._run) collects from the library's
rf_item_status array.
"""

from . import _capi as C

_ERRORS = ("raise", "skip")


class Error(Exception):
    """A failure reported by the library. `message` is the library's own
    one-line message; `status` its rf_status name (e.g. "bad input");
    `index` the position of the failing input in a batch call (else None)."""

    def __init__(self, message, status=None, index=None):
        self.message = message
        self.status = status
        self.index = index
        super().__init__(message if index is None else "inputs[%d]: %s" % (index, message))


# shown in tracebacks, and pickled (Dask sends it back from workers), under
# the name the documents give it
Error.__module__ = "roformer"


def _status_name(status):
    s = C.rf_status_string(status)
    return s.decode() if s else str(status)


def _raise(status, err):
    raise Error(err.message.decode("utf-8", "replace"), _status_name(status))


def _check_errors(errors):
    if errors not in _ERRORS:
        raise ValueError('errors must be "raise" or "skip", not %r' % (errors,))


def _settle(results, errs, errors, single):
    """Applies errors="raise"|"skip" to a batch's results (None where an
    input failed) and unwraps a single input."""
    for i, e in enumerate(errs):
        if e is not None and (errors == "raise" or single):
            raise Error(e[1], e[0], None if single else i)
    return results[0] if single else results


def _status_code(name):
    """The rf_status whose rf_status_string is `name`."""
    for code in range(64):
        if _status_name(code) == name:
            return code
