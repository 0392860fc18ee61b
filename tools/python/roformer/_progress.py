"""show_progress_bar for encode, predict and rank: inputs done out of the
total on stderr, through tqdm when it is installed (an optional dependency),
else a plain counter.
"""

import sys


def _tqdm():
    """tqdm.tqdm when tqdm is installed, else None."""
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm


class _Progress:
    """Inputs done out of `total` on stderr: a tqdm bar when tqdm is
    installed, else a "\rWHAT: done/total" counter."""

    def __init__(self, show, what, total):
        self.show, self.what, self.total = show, what, total
        self.done = 0
        self.bar = None
        if show:
            tqdm = _tqdm()
            if tqdm is not None and total > 0:
                self.bar = tqdm(total=total, desc=what, unit="input", file=sys.stderr)

    def update(self, done):
        if self.bar is not None:
            self.bar.update(done - self.done)
            if done >= self.total:
                self.bar.close()
        elif self.show:
            sys.stderr.write("\r%s: %d/%d" % (self.what, done, self.total))
            if done >= self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()
        self.done = done
