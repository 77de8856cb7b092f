"""The zero-sum matrix game as a linear program, written once for every solver."""

from __future__ import annotations

import numpy as np


def zero_sum_lp(matrix: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Value and optimal mixed strategies of the zero-sum game ``matrix`` (the row player
    maximises), by linear programming (``scipy.optimize.linprog``, HiGHS): maximise ``v``
    subject to ``x @ matrix >= v``, ``x`` a distribution; the column player's strategy is
    the LP's dual."""
    from scipy.optimize import linprog  # scipy only where a game is solved

    matrix = np.asarray(matrix, dtype=np.float64)
    m, n = matrix.shape
    cost = np.zeros(m + 1)
    cost[-1] = -1.0  # maximise v
    a_ub = np.hstack([-matrix.T, np.ones((n, 1))])  # v <= x . M[:, j] for every column j
    a_eq = np.ones((1, m + 1))
    a_eq[0, -1] = 0.0
    bounds = [(0.0, None)] * m + [(None, None)]
    result = linprog(cost, a_ub, np.zeros(n), a_eq, [1.0], bounds=bounds, method="highs")
    if result.status != 0:
        raise RuntimeError(f"the matrix game's LP failed: {result.message}")
    row = np.clip(result.x[:m], 0.0, None)
    column = np.clip(-result.ineqlin.marginals, 0.0, None)
    return float(result.x[-1]), row / row.sum(), column / column.sum()
