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


def zero_sum_batch(
    matrices: np.ndarray, row_masks: np.ndarray, column_masks: np.ndarray, iterations: int = 200
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Approximate values and mixed strategies of many zero-sum games at once, each
    ``matrices[k]`` restricted to the rows and columns its masks allow (the row player
    maximises): regret matching+ with alternating updates and linearly weighted averages
    (CFR+), whose exploitability falls about as ``1 / iterations``. Returns ``(values,
    rows, columns)``: ``(n,)``, ``(n, m)`` and ``(n, k)``, zero outside the masks."""
    row_masks = np.asarray(row_masks, dtype=bool)
    column_masks = np.asarray(column_masks, dtype=bool)
    # Solve on the allowed rows and columns only, packed first (smaller matrices).
    row_index, rows_allowed = _packed(row_masks)
    column_index, columns_allowed = _packed(column_masks)
    n = np.arange(len(row_masks))[:, None, None]
    matrices = np.asarray(matrices, dtype=np.float64)[
        n, row_index[:, :, None], column_index[:, None, :]
    ]
    # Padding never matters: the strategies are zero there.
    payoff = np.where(rows_allowed[:, :, None] & columns_allowed[:, None, :], matrices, 0.0)

    def normalised(regrets: np.ndarray, allowed: np.ndarray) -> np.ndarray:
        positive = np.where(allowed, regrets, 0.0)
        total = positive.sum(axis=1, keepdims=True)
        uniform = allowed / allowed.sum(axis=1, keepdims=True)
        return np.where(total > 0, positive / np.maximum(total, 1e-300), uniform)

    row_regret = np.zeros(rows_allowed.shape)
    column_regret = np.zeros(columns_allowed.shape)
    row_sum, column_sum = np.zeros(row_regret.shape), np.zeros(column_regret.shape)
    column = normalised(column_regret, columns_allowed)
    for t in range(1, iterations + 1):
        row = normalised(row_regret, rows_allowed)
        gains = np.einsum("nij,nj->ni", payoff, column)
        value = (gains * row).sum(axis=1, keepdims=True)
        row_regret = np.maximum(row_regret + gains - value, 0.0)
        row = normalised(row_regret, rows_allowed)
        row_sum += t * row
        losses = np.einsum("nij,ni->nj", payoff, row)
        value = (losses * column).sum(axis=1, keepdims=True)
        column_regret = np.maximum(column_regret + value - losses, 0.0)
        column = normalised(column_regret, columns_allowed)
        column_sum += t * column
    row_average = row_sum / row_sum.sum(axis=1, keepdims=True)
    column_average = column_sum / column_sum.sum(axis=1, keepdims=True)
    values = np.einsum("ni,nij,nj->n", row_average, payoff, column_average)
    return (
        values,
        _unpacked(row_average, row_index, row_masks),
        _unpacked(column_average, column_index, column_masks),
    )


def _packed(masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the indices of its allowed entries first, as many columns as the most
    allowed in any row, and which of them are allowed."""
    width = max(int(masks.sum(axis=1).max(initial=1)), 1)
    index = np.argsort(~masks, axis=1, kind="stable")[:, :width]
    return index, np.take_along_axis(masks, index, axis=1)


def _unpacked(packed: np.ndarray, index: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """``packed`` (zero on its padding) back in the masks' columns."""
    out = np.zeros(masks.shape)
    np.put_along_axis(out, index, packed, axis=1)
    return out
