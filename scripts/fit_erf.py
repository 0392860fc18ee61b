#!/usr/bin/env python3
"""fit_erf.py — the coefficients of the vector erf in src/kernels/vecmath.h.

erf(z) = z P(z^2) / Q(z^2) for |z| <= 3.925 (beyond, erf rounds to +-1 in
float32), P of degree 5 and Q of degree 5 with Q(0) = 1, fitted for the
smallest largest relative error of P / Q against erf(z) / z by iteratively
reweighted least squares (Lawson) on the linearized problem
P(u) - f(u) (Q(u) - 1) = f(u), f(u) = erf(sqrt u) / sqrt u, on 4000
Chebyshev points of u in [0, 3.925^2]. Prints the fit's largest relative
error and the coefficients rounded to float32; tests/kernels/test_kernels.c checks
the float32 evaluation against libm's erf.

    python3 scripts/fit_erf.py
"""
import math

import numpy as np

CLAMP = 3.925
DEG_P, DEG_Q = 5, 5


def target(u):
    z = np.sqrt(u)
    return np.array([math.erf(t) / t if t > 0 else 2 / math.sqrt(math.pi) for t in z])


def fit(n=4000, iters=60):
    k = np.arange(n)
    u = (1 - np.cos(np.pi * (k + 0.5) / n)) / 2 * CLAMP * CLAMP
    y = target(u)
    powers_p = u[:, None] ** np.arange(DEG_P + 1)
    powers_q = u[:, None] ** np.arange(1, DEG_Q + 1)
    weights, q_prev, best = np.ones(n), np.ones(n), None
    for it in range(iters):
        a = np.hstack([powers_p, -y[:, None] * powers_q])
        row_w = weights / (y * q_prev)  # relative error of P / Q, not of P - f Q
        coef = np.linalg.lstsq(a * row_w[:, None], y * row_w, rcond=None)[0]
        p, q = coef[:DEG_P + 1], np.concatenate([[1.0], coef[DEG_P + 1:]])
        q_prev = np.polyval(q[::-1], u)
        err = np.abs(np.polyval(p[::-1], u) / q_prev - y) / y
        if best is None or err.max() < best[0]:
            best = (err.max(), p, q)
        if it >= 5:  # Lawson: weight the points where the error is largest
            weights = weights * np.sqrt(err / err.max()) + 1e-12
            weights /= weights.sum()
    return best


def main():
    err, p, q = fit()
    print("largest relative error of P/Q: %.3g" % err)
    print("P:", ", ".join("%.9ef" % np.float32(c) for c in p))
    print("Q:", ", ".join("%.9ef" % np.float32(c) for c in q))


if __name__ == "__main__":
    main()
