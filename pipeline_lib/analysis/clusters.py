"""Counting clusters of embedded points (Fig. 4): k-means, k chosen by the silhouette score."""
from __future__ import annotations

import numpy as np
from sklearn.cluster import KMeans
from sklearn.metrics import silhouette_score


def count_clusters(points: np.ndarray, k_max: int = 24, seed: int = 0) -> tuple[int, np.ndarray, np.ndarray]:
    """Number of clusters maximising the mean silhouette over k-means fits with k = 2..k_max.

    Returns (k, silhouette score per k, each point's cluster label at that k). Points collapsed onto
    fewer than 2 distinct locations count as 1 cluster; with too few points for a silhouette, each
    distinct location is its own cluster.
    """
    locations, location = np.unique(np.round(points, 6), axis=0, return_inverse=True)
    distinct = len(locations)
    if distinct < 2:
        return 1, np.array([]), np.zeros(len(points), dtype=int)
    ks = range(2, min(k_max, distinct, len(points) - 1) + 1)  # k = distinct: every location its own cluster
    scores, fits = [], []
    for k in ks:
        labels = KMeans(n_clusters=k, n_init=4, random_state=seed).fit_predict(points)
        scores.append(silhouette_score(points, labels))
        fits.append(labels)
    if not scores:
        return distinct, np.array([]), location.ravel()
    best = int(np.argmax(scores))
    return int(list(ks)[best]), np.array(scores), fits[best]
