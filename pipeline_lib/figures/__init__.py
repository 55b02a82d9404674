"""One plotting function per paper figure; they take xarray datasets and return a Figure.

Figures read artifacts only: they never train or run a model.
"""
