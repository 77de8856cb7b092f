"""Evaluation: seat-rotated matches and their intervals (``tournament``), the opponent panel
(``panel``) and the benchmark's aggregate statistics (``aggregate``)."""
