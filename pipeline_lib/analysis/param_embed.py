"""2-D embeddings (t-SNE and PCA) of parameter snapshots of several runs, jointly (Fig. 7)."""
from __future__ import annotations

import numpy as np
from sklearn.decomposition import PCA
from sklearn.manifold import TSNE


def embed_points(vectors: np.ndarray, perplexity: float = 30.0, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(t-SNE, PCA) coordinates, each (n, 2), of n parameter vectors embedded together.

    t-SNE runs on the top principal components (at most 50) as is customary; its perplexity is capped
    at (n - 1) / 3 so that few snapshots still embed.
    """
    n = len(vectors)
    X = vectors - vectors.mean(0)
    pca2 = PCA(n_components=2, random_state=seed).fit_transform(X)
    reduced = PCA(n_components=min(50, n, X.shape[1]), random_state=seed).fit_transform(X)
    perp = float(min(perplexity, max(1.0, (n - 1) / 3)))
    tsne = TSNE(n_components=2, perplexity=perp, init="pca", random_state=seed).fit_transform(reduced)
    return tsne, pca2
