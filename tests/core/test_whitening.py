import numpy as np
import pytest

from kit.core.whitening import Whitening


def test_whitening_gives_identity_covariance_on_its_fitting_data():
    x = np.random.default_rng(0).normal(size=(500, 8)) @ np.random.default_rng(1).normal(size=(8, 8)) + 3.0
    w = Whitening.fit(x)
    z = w(x).astype(np.float64)
    np.testing.assert_allclose(np.cov(z.T, bias=True), np.eye(8), atol=1e-4)
    np.testing.assert_allclose(z.mean(0), 0, atol=1e-4)
    assert Whitening.fit(x, dim=3)(x).shape == (500, 3)
    with pytest.raises(ValueError, match="more fitting embeddings"):
        Whitening.fit(x[:5])


def test_directions_the_fitting_embeddings_do_not_span_are_left_out():
    """Rows that sum to zero, as LayerNorm outputs do before its affine map, span d - 1 dimensions. Whitening keeps
    those, and a float32 nudge of an input moves its whitened form by about the nudge, instead of by the nudge
    over the square root of a rounding-sized variance (which made BIOSSES scores move with the machine)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(500, 8)).astype(np.float32)
    x -= x.mean(1, keepdims=True)
    w = Whitening.fit(x)
    assert w.matrix.shape == (8, 7)
    nudged = x * np.float32(1 + 1e-6)
    assert np.abs(w(nudged) - w(x)).max() < 1e-3
    np.testing.assert_allclose(np.cov(w(x).astype(np.float64).T, bias=True), np.eye(7), atol=1e-4)
